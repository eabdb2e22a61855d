/** Routes of knowledge proposals (spec 2.11, row 12): list, read, approve, reject. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { approveProposal, getProposal, listProposals, rejectProposal } from '../domain/proposals.js';
import { proposalView } from '../views/proposals.js';
import { proposalSchema } from './review-schemas.js';
import { collectionSchema, KNOWLEDGE_SCOPE_DOC } from './schemas.js';
import { PROPOSAL_STATUSES } from '../types.js';

const MAX_PAGE = 200;
const NOTES = z.string().max(10_000);
const REVIEWED_BY =
  'Optional, at most 256 characters; the reviewer is always recorded from the caller\'s credential (the user id). When sent it must be that id (422 otherwise).';
const PROPOSAL_SCOPE_DOC =
  `${KNOWLEDGE_SCOPE_DOC} A revise or archive proposal is hidden too when its target article's current customer is outside the member's units ` +
  '(approving it would change an article the member cannot see).';
const REVIEW_DOC =
  'A proposal is decided once: approving or rejecting a proposal that is already `approved` or `rejected` is 409 `conflict`, nothing changed. ' +
  '`reviewed_at` is set to now and `reviewed_by` to the caller\'s user id. Any signed-in user of the organization may review. ' +
  'Another organization\'s proposal is 404 `entity-not-found`, and so is a proposal hidden by the caller\'s business units. ' +
  PROPOSAL_SCOPE_DOC;

export const proposalRoutes = [
  route({
    method: 'get',
    path: '/v2/aether/playbook/proposals',
    operationId: 'listKnowledgeProposals',
    summary: 'List knowledge proposals',
    description:
      'Proposals of the organization, newest first, with `stale` computed on read. Filters: `status`, `extraction_id` (the producing job), ' +
      '`collection`, `customer_id` (the proposed customer scope). Paginated: `page` (0-based), `page_size` 1..200 (default 50; `size` alias). ' +
      PROPOSAL_SCOPE_DOC,
    tags: ['Knowledge'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(PROPOSAL_STATUSES).optional(),
      extraction_id: idSchema().optional(),
      collection: collectionSchema.optional(),
      customer_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(proposalSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listProposals(
        deps,
        identity.org,
        identity.bu,
        { status: query.status, extraction_id: query.extraction_id, collection: query.collection, customer_id: query.customer_id },
        page.offset,
        page.pageSize,
      );
      return pageOf(rows.map(proposalView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/aether/playbook/proposals/{proposal_id}',
    operationId: 'getKnowledgeProposal',
    summary: 'Get a knowledge proposal',
    description:
      'Row 12. `stale` is true for a pending revise or archive proposal whose target article has a newer version than the one it was made against. ' +
      '404 `entity-not-found` (title `Entity not found`) when unknown, another organization\'s or hidden by the caller\'s business units. ' +
      PROPOSAL_SCOPE_DOC,
    tags: ['Knowledge'],
    params: z.object({ proposal_id: idSchema() }),
    response: proposalSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => proposalView(await getProposal(deps, identity.org, identity.bu, params.proposal_id)),
  }),
  route({
    method: 'post',
    path: '/v2/aether/playbook/proposals/{proposal_id}/approve',
    operationId: 'approveKnowledgeProposal',
    summary: 'Approve a knowledge proposal',
    description:
      'Applies the action atomically with the decision: `create` makes a new article (version 1; the proposal\'s `article_id` then names it); ' +
      '`revise` writes the target article\'s next version with the proposal\'s content (title, description, type and collection from the ' +
      'proposal where given, else kept; customer and segment scope from the proposal); `archive` archives the target (a version of its own, ' +
      'content unchanged). A stale proposal (the target moved past the version it was made against) is 409 unless `{"force": true}`. ' +
      'A target that was deleted or is archived: 409 even with force. Concurrent approvals touching one article serialize on a row lock ' +
      'of the article: the later one sees the new version and is stale. ' +
      REVIEW_DOC +
      ' The body is optional.',
    tags: ['Knowledge'],
    params: z.object({ proposal_id: idSchema() }),
    body: z
      .strictObject({
        force: z.boolean().optional().describe('Approve even when stale (default false).'),
        review_notes: NOTES.nullable().optional().describe('Optional notes on the decision, at most 10000 characters.'),
        reviewed_by: z.string().max(256).optional().describe(REVIEWED_BY),
      })
      .optional(),
    response: proposalSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) =>
      proposalView(await approveProposal(deps, identity, params.proposal_id, { force: body?.force ?? false, review_notes: body?.review_notes ?? null, reviewed_by: body?.reviewed_by })),
  }),
  route({
    method: 'post',
    path: '/v2/aether/playbook/proposals/{proposal_id}/reject',
    operationId: 'rejectKnowledgeProposal',
    summary: 'Reject a knowledge proposal',
    description: `Records the decision and \`review_notes\` (required: why it was rejected); no article changes. ${REVIEW_DOC}`,
    tags: ['Knowledge'],
    params: z.object({ proposal_id: idSchema() }),
    body: z.strictObject({
      review_notes: NOTES.trim().min(1, 'must say why the proposal is rejected').describe('Why the proposal is rejected (required), at most 10000 characters.'),
      reviewed_by: z.string().max(256).optional().describe(REVIEWED_BY),
    }),
    response: proposalSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => proposalView(await rejectProposal(deps, identity, params.proposal_id, body.review_notes, body.reviewed_by)),
  }),
];
