/** Routes of deduction knowledge (spec 2.7, row 9): customer and global entries per operation. */
import { z } from 'zod';
import { idSchema } from '@rp/platform';
import { route } from '../deps.js';
import {
  deleteCustomerEntry,
  deleteGlobalEntry,
  effectiveEntries,
  listGlobalEntries,
  putCustomerEntry,
  putGlobalEntry,
} from '../domain/deduction-knowledge.js';
import { DEDUCTION_OPERATIONS } from '../types.js';
import { entryView, partnerEntriesView } from '../views/deduction-knowledge.js';
import { deductionKnowledgeSchema, deductionOperationSchema, partnerDeductionKnowledgeSchema } from './review-schemas.js';

const OPERATIONS_DOC = `\`operation\` is one of ${DEDUCTION_OPERATIONS.map((o) => `\`${o}\``).join(', ')} (rule 4.3.7); anything else is 422 listing them.`;
const PARTNER_DOC = 'The partner is a ledger partner (customer) of the organization; unknown, another organization\'s or outside a member\'s business units: 404.';
const body = z.strictObject({
  content: z.string().max(100_000).nullable().optional().describe('The saved content, at most 100000 characters; omitted or null saves an entry without content.'),
});

export const deductionKnowledgeRoutes = [
  route({
    method: 'put',
    path: '/v2/deductions/knowledge/partners/{partner_id}/{operation}',
    operationId: 'putPartnerDeductionKnowledge',
    summary: 'Create or update a customer deduction knowledge entry',
    description:
      `Row 9. Creates the customer-scoped entry of the partner and operation, or replaces its content (same \`id\`); 200 either way, ` +
      `\`scope\` \`customer\`, \`partner_name\` from the ledger. ${OPERATIONS_DOC} ${PARTNER_DOC}`,
    tags: ['Deductions'],
    params: z.object({ partner_id: idSchema(), operation: deductionOperationSchema }),
    body,
    response: deductionKnowledgeSchema,
    errors: [404],
    handler: async ({ params, body: b, identity, deps }) => {
      const { entry, partner } = await putCustomerEntry(deps, identity, params.partner_id, params.operation, b.content ?? null);
      return entryView(entry, partner);
    },
  }),
  route({
    method: 'get',
    path: '/v2/deductions/knowledge/partners/{partner_id}',
    operationId: 'getPartnerDeductionKnowledge',
    summary: 'Effective deduction knowledge of a customer',
    description:
      'For each operation (in the order of rule 4.3.7) the effective entry: the partner\'s own (`scope` `customer`), else the organization\'s ' +
      'global one (`scope` `global`, `partner_id` null). Operations with neither are not in `data`; they are listed in ' +
      `\`operations_without_entry\`. ${PARTNER_DOC}`,
    tags: ['Deductions'],
    params: z.object({ partner_id: idSchema() }),
    response: partnerDeductionKnowledgeSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      const { partner, entries, missing } = await effectiveEntries(deps, identity, params.partner_id);
      return partnerEntriesView(partner, entries, missing);
    },
  }),
  route({
    method: 'delete',
    path: '/v2/deductions/knowledge/partners/{partner_id}/{operation}',
    operationId: 'deletePartnerDeductionKnowledge',
    summary: 'Delete a customer deduction knowledge entry',
    description: `204 with no body; the partner then falls back to the global entry. 404 when the partner has no entry of its own for the operation. ${OPERATIONS_DOC} ${PARTNER_DOC}`,
    tags: ['Deductions'],
    params: z.object({ partner_id: idSchema(), operation: deductionOperationSchema }),
    errors: [404],
    handler: async ({ params, identity, deps }) => deleteCustomerEntry(deps, identity, params.partner_id, params.operation),
  }),
  route({
    method: 'get',
    path: '/v2/deductions/knowledge',
    operationId: 'listGlobalDeductionKnowledge',
    summary: 'Global deduction knowledge entries',
    description: 'The organization\'s global entries (at most one per operation), in the order of rule 4.3.7. A bare array.',
    tags: ['Deductions'],
    response: z.array(deductionKnowledgeSchema),
    handler: async ({ identity, deps }) => (await listGlobalEntries(deps, identity)).map((r) => entryView(r, null)),
  }),
  route({
    method: 'put',
    path: '/v2/deductions/knowledge/{operation}',
    operationId: 'putGlobalDeductionKnowledge',
    summary: 'Create or update a global deduction knowledge entry',
    description:
      'The organization-wide entry of the operation (`scope` `global`, `partner_id` and `partner_name` null): created, or its content ' +
      `replaced (same \`id\`); 200 either way. It applies to every customer without an entry of its own. ${OPERATIONS_DOC}`,
    tags: ['Deductions'],
    params: z.object({ operation: deductionOperationSchema }),
    body,
    response: deductionKnowledgeSchema,
    handler: async ({ params, body: b, identity, deps }) => entryView(await putGlobalEntry(deps, identity, params.operation, b.content ?? null), null),
  }),
  route({
    method: 'delete',
    path: '/v2/deductions/knowledge/{operation}',
    operationId: 'deleteGlobalDeductionKnowledge',
    summary: 'Delete a global deduction knowledge entry',
    description: `204 with no body; 404 when there is no global entry for the operation. ${OPERATIONS_DOC}`,
    tags: ['Deductions'],
    params: z.object({ operation: deductionOperationSchema }),
    errors: [404],
    handler: async ({ params, identity, deps }) => deleteGlobalEntry(deps, identity, params.operation),
  }),
];
