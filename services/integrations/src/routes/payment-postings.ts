/**
 * The middleware's posting queue of applied cash and its `posted` / `failed` answers.
 */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { middlewareQueue, MIDDLEWARE_QUEUE_STATUSES as QUEUE_STATUSES, reportMiddlewarePosting } from '../domain/middleware-postings.js';
import { middlewarePaymentView as view } from '../views/middleware-payments.js';

const MAX_PAGE = 100;

const money = () => z.string().describe('Decimal string with the currency\'s minor units.');

const middlewarePaymentSchema = z.object({
  object: z.literal('middleware_payment'),
  id: z.string().describe('The cash-app payment id (use it in the posted/failed calls).'),
  posting_id: z.string().describe('This posting attempt (a repost after `failed` is a new attempt with a new id).'),
  posting_key: z
    .string()
    .describe(
      'The payment\'s posting key (`RP` + 19 characters, 21 in all): the same for every attempt of this payment. Write it into the ERP ' +
        'document (its reference) and, before creating one, look it up in the ERP: when the ERP already holds a document with this key ' +
        '(an earlier attempt whose answer was lost), answer `posted` with that document instead of creating a second one.',
    ),
  status: z.enum(QUEUE_STATUSES).describe('`ready_to_post` until the middleware reports `posted` or `failed`.'),
  amount: money().describe('The whole deposit.'),
  currency: z.string(),
  payment_date: z.string().nullable(),
  bank_reference: z.string().nullable(),
  customer: z
    .object({ partner_id: z.string(), customer_code: z.string().describe('The customer\'s `customer_code` as pushed.'), name: z.string() })
    .nullable(),
  unallocated_amount: money().describe('amount − the lines\' cash (Σ invoice amount_paid − Σ credit memo amount_paid): post it on account of the customer (unapplied cash).'),
  lines: z.array(
    z.object({
      invoice_id: z.string(),
      kind: z
        .enum(['invoice', 'credit_memo'])
        .describe('Extension of the spec: `credit_memo` when the line applies a credit memo of the customer (its amount_paid is the credit applied, to be cleared against the invoices of the same payment); `invoice` otherwise.'),
      document_number: z.string(),
      company_code: z.string(),
      fiscal_year: z.string(),
      amount_paid: money().describe('Cash applied to the invoice.'),
      amount_discount: money(),
      amount_withheld: money(),
      adjustment_amount: money(),
    }),
  ),
  erp_document_number: z.string().nullable().describe('Set by `posted`.'),
  error: z.string().nullable().describe('Set by `failed`.'),
  posted_at: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'MiddlewarePayment' });

const COMMON =
  'Authenticated with the organization\'s API key (user tokens get 403). Answers the posting of a payment that is ' +
  '`ready_to_post` (the newest posting of that payment); the payment\'s `payment-posting-<id>` workflow then records the ' +
  'result on the cash-app payment (`posted_at` and `erp_document_number`, or `posting_error`, which `posting_errors_count` ' +
  'counts; POST /v2/payments/{id}/post queues it again). Repeating the same answer is harmless (200, nothing changes); a ' +
  'different answer to a posting that is no longer `ready_to_post` → 409. Unknown payment → 404.';

export const paymentPostingRoutes = [
  route({
    method: 'get',
    path: '/v2/integrations/providers/middleware/payments',
    operationId: 'listMiddlewarePayments',
    summary: 'Posting queue of applied cash (integration middleware)',
    description:
      'Approved payments whose invoices the middleware pushed, for the middleware to post into the ERP, oldest first. ' +
      'Authenticated with the organization\'s API key (user tokens get 403). `status=ready_to_post` is the work to do; each ' +
      'entry carries the deposit (amount, currency, date, bank reference), the customer (`customer_code` as pushed), the ' +
      'invoices with the cash applied (`amount_paid`) and the non-cash reductions (discount, withheld, adjustment), and ' +
      '`unallocated_amount`, to post on account of the customer. Answer each with `POST …/payments/{id}/posted` ' +
      '`{erp_document_number}` or `POST …/payments/{id}/failed` `{error}`. A posting cannot be taken back through the ' +
      'queue (`cash_app_features.can_unpost_payment` is false for `middleware`). Open amounts: until the middleware ' +
      'reports `posted` and then pushes the invoice again, the platform subtracts the payment from the pushed open amount ' +
      'itself; push the invoice with the ERP\'s new open amount after posting.',
    tags: ['Integrations'],
    auth: { credentials: ['api_key'] },
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(QUEUE_STATUSES).optional().describe('Only postings in this status (default: all).'),
    }),
    response: pageEnvelopeSchema(middlewarePaymentSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await middlewareQueue(deps, identity.org, query.status, page);
      return pageOf(rows.map(view), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/integrations/providers/middleware/payments/{payment_id}/posted',
    operationId: 'reportMiddlewarePaymentPosted',
    summary: 'Report a payment posted in the ERP (integration middleware)',
    description: `${COMMON} \`erp_document_number\`: the ERP's document of the posting (shown on the payment).`,
    tags: ['Integrations'],
    auth: { credentials: ['api_key'] },
    params: z.object({ payment_id: idSchema() }),
    body: z.object({ erp_document_number: z.string().trim().min(1).max(100) }),
    response: middlewarePaymentSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps, log }) => {
      return view(
        await reportMiddlewarePosting(deps, log, { organizationId: identity.org, paymentId: params.payment_id, answer: { status: 'posted', erpDocumentNumber: body.erp_document_number } }),
      );
    },
  }),
  route({
    method: 'post',
    path: '/v2/integrations/providers/middleware/payments/{payment_id}/failed',
    operationId: 'reportMiddlewarePaymentFailed',
    summary: 'Report that the ERP refused a payment (integration middleware)',
    description: `${COMMON} \`error\`: why the ERP refused it, shown as the payment's \`posting_error\`.`,
    tags: ['Integrations'],
    auth: { credentials: ['api_key'] },
    params: z.object({ payment_id: idSchema() }),
    body: z.object({ error: z.string().trim().min(1).max(2000) }),
    response: middlewarePaymentSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps, log }) => {
      return view(await reportMiddlewarePosting(deps, log, { organizationId: identity.org, paymentId: params.payment_id, answer: { status: 'failed', error: body.error } }));
    },
  }),
];
