/** Routes of customer segments: CRUD and the partners a segment matches. v2. */
import { z } from 'zod';
import { CONDITION_DOC, idSchema, MAX_COMPILED_NODES, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, partnerSummarySchema } from '@rp/platform';
import { route } from '../../deps.js';
import { createSegment, patchSegment, removeSegment, segmentOrThrow, segmentPartners, segmentsOf } from '../../domain/collections/segments.js';
import { segmentView } from '../../views/collections/segments.js';
import { segmentConditionSchema, segmentSchema } from './schemas.js';
import { NAME_RULES_DOC, nameSchema } from '../../domain/collections/names.js';

const MAX_PAGE = 500;
const PRIORITY = z.number().int().min(1).max(1_000_000).describe('1 is the highest; unique per organization (409 when taken).');
const NAME = nameSchema(256);
const DESCRIPTION = z.string().max(2000).nullable().describe('At most 2000 characters; null: none.');

const ADMIN_ONLY = 'Organization admins only (members: 403).';

export const segmentRoutes = [
  route({
    method: 'post',
    path: '/v2/customer-segments',
    operationId: 'createCustomerSegment',
    summary: 'Create a customer segment',
    description: `${ADMIN_ONLY} \`conditions\` in the condition language: ${CONDITION_DOC} A \`tag\` leaf must name a tag of the organization, a \`business_unit_id\` one of its business units, an \`assignee_id\` one of its users (422 at its loc). ` +
      `The organization's segments together compile, after tag expansion, to at most ${MAX_COMPILED_NODES} nodes (422 at \`conditions\`). Priorities and names are unique per organization (409). Name: ${NAME_RULES_DOC}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    body: z.object({ name: NAME, description: DESCRIPTION.optional(), priority: PRIORITY, conditions: segmentConditionSchema() }),
    response: segmentSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => segmentView(await createSegment(deps, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/customer-segments',
    operationId: 'listCustomerSegments',
    summary: 'List customer segments',
    description: 'By priority (1 first). Paginated: `page` (0-based), `page_size` 1..500.',
    tags: ['Collections'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(segmentSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await segmentsOf(deps, identity.org, page);
      return pageOf(rows.map(segmentView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/customer-segments/{segment_id}',
    operationId: 'getCustomerSegment',
    summary: 'Get a customer segment',
    tags: ['Collections'],
    params: z.object({ segment_id: idSchema() }),
    response: segmentSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => segmentView(await segmentOrThrow(deps, identity, params.segment_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/customer-segments/{segment_id}',
    operationId: 'updateCustomerSegment',
    summary: 'Update a customer segment',
    description: `${ADMIN_ONLY} Only the fields sent change. A priority or name taken by another segment: 409. Conditions are checked as on create (references and the compiled-size bound, 422).`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ segment_id: idSchema() }),
    body: z.object({ name: NAME.optional(), description: DESCRIPTION.optional(), priority: PRIORITY.optional(), conditions: segmentConditionSchema().optional() }),
    response: segmentSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => segmentView(await patchSegment(deps, identity, params.segment_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/customer-segments/{segment_id}',
    operationId: 'deleteCustomerSegment',
    summary: 'Delete a customer segment',
    description: `${ADMIN_ONLY} Permanent; 204 with no body; 404 when unknown. A segment with a collection policy cannot be deleted: 409 naming the policy (delete the policy or move it to another segment first).`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ segment_id: idSchema() }),
    errors: [404, 409],
    handler: async ({ params, identity, deps }) => removeSegment(deps, identity, params.segment_id),
  }),
  route({
    method: 'get',
    path: '/v2/customer-segments/{segment_id}/partners',
    operationId: 'listCustomerSegmentPartners',
    summary: 'Partners of a customer segment',
    description:
      'A bare JSON array of partner summaries (spec 2.13) matching the segment conditions, ordered by name then id. ' +
      '`page` (0-based), `page_size` 1..500 (default 50; `size` alias). `exclude_higher_priority=true` drops partners matched ' +
      'by any segment of higher priority (smaller number). Members see only partners of their business units or of none. ' +
      'Evaluated in one SQL statement over the ledger, aging as of today in the organization timezone. 404 when the segment is unknown. ' +
      `409 naming the segment when its conditions (with the higher segments when excluding) expand through tags to more than ${MAX_COMPILED_NODES} nodes (possible only when concurrent writes crossed the bound together).`,
    tags: ['Collections'],
    params: z.object({ segment_id: idSchema() }),
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      exclude_higher_priority: z.enum(['true', 'false']).optional().describe('Default false.'),
    }),
    response: z.array(partnerSummarySchema),
    errors: [404, 409],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      return segmentPartners(deps, identity, params.segment_id, page, query.exclude_higher_priority === 'true');
    },
  }),
];
