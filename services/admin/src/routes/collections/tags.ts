/** Routes of tags (spec 2.9): CRUD, hand-tagging of partners and the partners a tag covers. v2. */
import { z } from 'zod';
import { CONDITION_DOC, idSchema, MAX_COMPILED_NODES, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, partnerSummarySchema } from '@rp/platform';
import { route } from '../../deps.js';
import { createTag, patchTag, removeTag, tagOrThrow, tagPartners, tagPartnersByHand, tagsOf, untagPartners } from '../../domain/collections/tags.js';
import { tagView } from '../../views/collections/tags.js';
import { tagConditionSchema, tagSchema } from './schemas.js';
import { NAME_RULES_DOC, nameSchema } from '../../domain/collections/names.js';

const MAX_PAGE = 500;
const NAME = nameSchema(128);
const COLOR = z.string().max(7).regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour #RRGGBB').describe('`#RRGGBB` (7 characters).');
const V1 = 'Errors use the v1 shapes: validation `{detail: {<location>: {<field>: [msg]}}, message}`, others `{data, error, message}`.';
const ADMIN_ONLY = 'Organization admins only (members: 403).';
const partnerIds = z.array(idSchema()).min(1).max(500);
/**
 * Ids in a query string: at most 100 per call, so the request line (about 37 characters per id)
 * stays well under the 16 KiB that Node's HTTP server (and many proxies, at 8 KiB) accept; 500 ids
 * made a URL the server refused with 431 before any validation.
 */
const partnerIdsInQuery = z.array(idSchema()).min(1).max(100);

export const tagRoutes = [
  route({
    method: 'post',
    path: '/v1/tags',
    operationId: 'createTag',
    summary: 'Create a tag',
    description:
      `${ADMIN_ONLY} \`name\` (1..128): ${NAME_RULES_DOC} \`color\` \`#RRGGBB\`; optional \`rule_condition\` in the ` +
      `condition language (without \`tag\` leaves; \`business_unit_id\` and \`assignee_id\` values must be the organization's, 422 at their loc): ${CONDITION_DOC} A partner carries the tag when tagged by hand or matched by the rule. ${V1}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    body: z.object({ name: NAME, color: COLOR, rule_condition: tagConditionSchema().nullable().optional() }),
    response: tagSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => tagView(await createTag(deps, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v1/tags',
    operationId: 'listTags',
    summary: 'List tags',
    description: `By name. Paginated: \`page\` (0-based), \`page_size\` 1..500. ${V1}`,
    tags: ['Collections'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(tagSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await tagsOf(deps, identity.org, page);
      return pageOf(rows.map(tagView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v1/tags/{tag_id}',
    operationId: 'getTag',
    summary: 'Get a tag',
    description: V1,
    tags: ['Collections'],
    params: z.object({ tag_id: idSchema() }),
    response: tagSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => tagView(await tagOrThrow(deps, identity, params.tag_id)),
  }),
  route({
    method: 'patch',
    path: '/v1/tags/{tag_id}',
    operationId: 'updateTag',
    summary: 'Update a tag',
    description: `${ADMIN_ONLY} Only the fields sent change; \`rule_condition: null\` removes the rule. A new rule that would make the customer segments using the tag compile past the bound (${MAX_COMPILED_NODES} nodes for the organization's segments together) is refused with 422 at \`rule_condition\` naming those segments. ${V1}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ tag_id: idSchema() }),
    body: z.object({ name: NAME.optional(), color: COLOR.optional(), rule_condition: tagConditionSchema().nullable().optional() }),
    response: tagSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => tagView(await patchTag(deps, identity, params.tag_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v1/tags/{tag_id}',
    operationId: 'deleteTag',
    summary: 'Delete a tag',
    description: `${ADMIN_ONLY} Permanent, with its hand-tagged links; 204. A segment condition naming the tag then matches nobody through that leaf. ${V1}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ tag_id: idSchema() }),
    errors: [404],
    handler: async ({ params, identity, deps }) => removeTag(deps, identity, params.tag_id),
  }),
  route({
    method: 'get',
    path: '/v1/tags/{tag_id}/partners',
    operationId: 'listTagPartners',
    summary: 'Partners carrying a tag',
    description: `Partners tagged by hand plus those the rule matches, by name then id, in the caller's business units. Paginated (page, page_size 1..500). ${V1}`,
    tags: ['Collections'],
    params: z.object({ tag_id: idSchema() }),
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(partnerSummarySchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await tagPartners(deps, identity, params.tag_id, page);
      return pageOf(rows, total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v1/tags/{tag_id}/partners',
    operationId: 'addTagPartners',
    summary: 'Tag partners by hand',
    description: `\`partner_ids\` (1..500): partners of the organization in the caller's business units (422 naming each other index). Idempotent; 204. ${V1}`,
    tags: ['Collections'],
    params: z.object({ tag_id: idSchema() }),
    body: z.object({ partner_ids: partnerIds }),
    errors: [404],
    handler: async ({ params, body, identity, deps }) => tagPartnersByHand(deps, identity, params.tag_id, body.partner_ids),
  }),
  route({
    method: 'delete',
    path: '/v1/tags/{tag_id}/partners',
    operationId: 'removeTagPartners',
    summary: 'Untag partners',
    description:
      `Removes hand-tagging. The ids travel in the query (\`partner_ids\`, comma-separated, 1..100 per call: a longer URL would exceed request-line limits) since DELETE bodies are not ` +
      `parsed by every client or proxy; a partner the rule matches keeps the tag. 204. ${V1}`,
    tags: ['Collections'],
    params: z.object({ tag_id: idSchema() }),
    query: z.object({
      partner_ids: z
        .string()
        .max(4000)
        .describe('Comma-separated partner ids, 1..100 (at most 4000 characters).')
        .transform((s) => s.split(',').map((x) => x.trim()))
        .pipe(partnerIdsInQuery),
    }),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => untagPartners(deps, identity, params.tag_id, query.partner_ids),
  }),
];
