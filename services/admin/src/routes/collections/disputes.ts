/** Routes of disputes: open, list, read, resolve. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import { createDispute, DISPUTE_REASONS, disputeOrThrow, disputesOf, resolveDispute } from '../../domain/collections/disputes.js';
import { disputeView } from '../../views/collections/promises.js';
import { amountInput, noteInput, sourceSchema } from './promises.js';

const MAX_PAGE = 500;
const STATUS = z.enum(['open', 'resolved', 'rejected']);
const REASON = z.enum(DISPUTE_REASONS);
const SCOPE = 'Members: only invoices of customers of their business units or of none (others: 404, absent from lists, 422 as a reference).';

export const disputeSchema = z
  .object({
    object: z.literal('dispute'),
    id: z.string(),
    invoice_id: z.string(),
    partner_id: z.string().describe('The invoice\'s customer.'),
    reason_code: REASON,
    amount: z.string().nullable().describe('The contested part, a decimal string with the currency\'s minor units; null: the whole invoice.'),
    currency: z.string().describe('ISO 4217: the invoice\'s currency.'),
    status: STATUS.describe('`open` (the invoice is not chased), `resolved` or `rejected`.'),
    resolution: z.string().nullable().describe('How it was closed; null while open.'),
    note: z.string().nullable(),
    source: sourceSchema(),
    ...timestampsShape,
  })
  .meta({ id: 'Dispute' });

export const disputeRoutes = [
  route({
    method: 'post',
    path: '/v2/disputes',
    operationId: 'createDispute',
    summary: 'Open a dispute on an invoice',
    description:
      'The invoice (open or already closed: a customer may contest a paid invoice) must be an invoice of a customer of the organization (422 at `invoice_id`). ' +
      '`amount` (optional; absent or null: the whole invoice) is in the invoice\'s currency and minor units, > 0 and at most the invoice\'s amount (422). ' +
      'One open dispute per invoice: 409 while it has one, also when two requests race. While open, the collections engine never chases the invoice. ' +
      `Records the event \`dispute.created\`. ${SCOPE}`,
    tags: ['Collections'],
    body: z.object({
      invoice_id: idSchema(),
      reason_code: REASON,
      amount: amountInput().nullable().optional(),
      note: noteInput(),
    }),
    response: disputeSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => disputeView(await createDispute(deps, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/disputes',
    operationId: 'listDisputes',
    summary: 'List disputes',
    description: `Newest first. Filters (combined with AND): \`partner_id\`, \`invoice_id\`, \`status\`, \`reason_code\`. Paginated: \`page\` (0-based), \`page_size\` 1..${MAX_PAGE}. ${SCOPE}`,
    tags: ['Collections'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      partner_id: idSchema().optional(),
      invoice_id: idSchema().optional(),
      status: STATUS.optional(),
      reason_code: REASON.optional(),
    }),
    response: pageEnvelopeSchema(disputeSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { partner_id, invoice_id, status, reason_code } = query;
      const { rows, total } = await disputesOf(deps, identity, { partner_id, invoice_id, status, reason_code }, page);
      return pageOf(rows.map(disputeView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/disputes/{dispute_id}',
    operationId: 'getDispute',
    summary: 'Get a dispute',
    description: SCOPE,
    tags: ['Collections'],
    params: z.object({ dispute_id: idSchema() }),
    response: disputeSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => disputeView(await disputeOrThrow(deps, identity, params.dispute_id)),
  }),
  route({
    method: 'post',
    path: '/v2/disputes/{dispute_id}/resolve',
    operationId: 'resolveDispute',
    summary: 'Resolve or reject a dispute',
    description:
      'Closes an `open` dispute (409 otherwise) as `resolved` (e.g. a credit note was agreed) or `rejected` (the invoice stands), with the `resolution` text. ' +
      `Either way the invoice is chased again from the next run, at the step it was on. Records the event \`dispute.resolved\` (its status says which). ${SCOPE}`,
    tags: ['Collections'],
    params: z.object({ dispute_id: idSchema() }),
    body: z.object({
      status: z.enum(['resolved', 'rejected']),
      resolution: z.string().trim().min(1).max(2000).describe('How it was settled, 1..2000 characters.'),
    }),
    response: disputeSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => disputeView(await resolveDispute(deps, identity, params.dispute_id, body)),
  }),
];
