/** The outreach routes (/v2/cash-app/outreach…): requesting a payment receipt or a remittance request, and reading outreach records. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { outreachPage, outreachRecord, requestPaymentReceipt } from '../domain/outreach.js';
import { requestRemittance } from '../domain/remittance-requests.js';
import { OUTREACH_STATUSES, OUTREACH_TYPES } from '../domain-types/outreach.js';
import { outreachView } from '../views/outreach.js';

const MAX_PAGE = 500;

export const outreachSchema = z.object({
  object: z.literal('outreach_record'),
  id: z.string(),
  outreach_type: z.enum(OUTREACH_TYPES),
  status: z.enum(OUTREACH_STATUSES).describe('`pending` until the email is sent (`sent`), skipped (`skipped`, see skip_reason) or failed after retries (`failed`, see error).'),
  skip_reason: z.string().nullable(),
  error: z.string().nullable().describe('The last sending error (also while retries are pending).'),
  bank_transaction_id: z.string().nullable().describe('The deposit a remittance request asks about (a receipt: its payment\'s bank transaction).'),
  payment_id: z.string().nullable(),
  partner_id: z.string().nullable(),
  email_id: z.string().nullable().describe('Message-ID of the email once sent.'),
  recipient: z.string().nullable(),
  sent_at: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'OutreachRecord' });

export const outreachRoutes = [
  route({
    method: 'post',
    path: '/v2/cash-app/outreach/payment-receipt',
    operationId: 'sendPaymentReceipt',
    summary: 'Send a payment receipt',
    description:
      'Emails the payment\'s customer a receipt (amount, date, the invoices it paid) and returns the outreach record that ' +
      'tracks it, `pending` at first. The email is sent by the Temporal workflow `payment-receipt-<payment_id>` over SMTP; ' +
      'the record then becomes `sent` (`email_id` = the Message-ID), `skipped` (`skip_reason`: the payment has no customer, ' +
      'or the customer no email address) or `failed` after the configured SMTP retries (`error`). One receipt per payment: ' +
      'while the payment has a `pending` or `sent` receipt, this returns that record (200) and sends nothing; after a ' +
      '`failed` or `skipped` one it creates a new record and tries again (a `pending` record whose workflow is no longer ' +
      'running is started again). Only an approved payment gets a receipt: an unapproved proposal (its payer and ' +
      'allocations are a guess) → 409 conflict, nothing recorded or sent. The new record\'s workflow is started before the ' +
      'answer: when the workflow of the payment\'s previous (failed or skipped) receipt is still closing, that run is ' +
      'terminated (it has nothing left to do) and replaced, so the request never waits for it. Unknown or another ' +
      'organization\'s payment: 404. Temporal unavailable (the start gives up after 5 s): 503 `service-unavailable` with ' +
      '`Retry-After`; the new record is left `failed` with an `error` saying so, which does not block the same request ' +
      'later (it creates a new record). SMTP and database outages during sending are retried; `error` is written for users. ' +
      'The record\'s move to `sent` records the event `outreach.sent`, to `failed` `outreach.failed` (once each; `data.object` ' +
      'is the record as GET /v2/cash-app/outreach/{outreach_id} answers it then; a member reads them under that route\'s ' +
      'business-unit rule, judged when they were recorded). `skipped` records no event.',
    tags: ['Cash application'],
    body: z.object({ payment_id: idSchema() }),
    response: outreachSchema,
    errors: [404, 409],
    handler: async ({ body, identity, deps, requestId }) =>
      outreachView(await requestPaymentReceipt(deps, { organizationId: identity.org, userId: identity.sub ?? null, paymentId: body.payment_id, requestId, scope: identity.bu })),
  }),
  route({
    method: 'post',
    path: '/v2/cash-app/outreach/remittance-request',
    operationId: 'sendRemittanceRequest',
    summary: 'Ask the payer of a deposit which invoices it pays',
    description:
      'Emails the likely payer of a deposit that cannot be applied (no payment yet, or only proposals) and asks which invoices it ' +
      'pays, and returns the outreach record (`outreach_type` `remittance_request`, `bank_transaction_id` = the deposit) that tracks ' +
      'it, `pending` at first. Who is asked: the customer named by `partner_id`; else the customer of the deposit\'s proposals when ' +
      'they all name one; else the payer matching identifies from the bank line (a known account of exactly one customer, else the ' +
      'counterparty name, ties rejected); else nobody: 422 on `body.partner_id` saying why (`value_error.payer_unknown`, ' +
      '`value_error.payer_ambiguous` naming the tied customers). A customer without a valid email address: 422 ' +
      '(`value_error.no_email`). The email is sent by the Temporal workflow `remittance-request-<record id>` over SMTP from MAIL_FROM ' +
      'with Reply-To `ar@<the organization\'s inbound host>` (the mailbox setting\'s `inbound_parse_hostname`, else ' +
      '`<organization id>.<MAIL_INBOUND_DOMAIN>`), so the answer reaches the AR inbox and threads back to this record by its ' +
      'Message-ID (`email_id`, `<record id@sender domain>`). Its text: the organization\'s default template of the email-template folder ' +
      'named by cash-app\'s `REMITTANCE_REQUEST_TEMPLATE_FOLDER` (default "Remittance requests"), rendered with the template variables ' +
      'where `payment` is the deposit (amount, currency, date, reference) and `invoices` the customer\'s open invoices; else the ' +
      'built-in request listing the deposit\'s date, amount, currency, reference and payment details and the customer\'s open ' +
      'invoices. Once only: while the deposit has a `pending` or `sent` request, asking again answers that record (200) and sends ' +
      'nothing; naming a different customer then is 409 (as is a live request to a customer outside the caller\'s business units). ' +
      'After a `failed` or `skipped` request a new one creates a new record and tries again. A debit: 422 on ' +
      '`body.bank_transaction_id` (`value_error.not_a_deposit`); a deposit classified as not a customer payment, or already applied ' +
      'by an approved payment: 409, nothing recorded or sent. Unknown or another organization\'s bank transaction: 404. A member ' +
      'names and is answered only customers of their business units (others are as if unknown: 422). The record becomes `sent`, ' +
      '`skipped` (`skip_reason`: the deposit was applied meanwhile, the customer has no address any more) or `failed` after the ' +
      'SMTP retries of a payment receipt (PAYMENT_RECEIPT_MAX_ATTEMPTS; `error`); events `outreach.sent` / `outreach.failed` as for ' +
      'a receipt. Temporal unavailable: 503 with `Retry-After`, the new record left `failed` (it does not block the next request).',
    tags: ['Cash application'],
    body: z.object({
      bank_transaction_id: idSchema().describe('The deposit (a bank transaction with a positive amount).'),
      partner_id: idSchema().optional().describe('The customer to ask; absent: the payer matching identifies for the deposit.'),
    }),
    response: outreachSchema,
    errors: [404, 409],
    handler: async ({ body, identity, deps, requestId }) =>
      outreachView(
        await requestRemittance(deps, {
          organizationId: identity.org,
          userId: identity.sub ?? null,
          bankTransactionId: body.bank_transaction_id,
          partnerId: body.partner_id,
          requestId,
          scope: identity.bu,
        }),
      ),
  }),
  route({
    method: 'get',
    path: '/v2/cash-app/outreach',
    operationId: 'listOutreachRecords',
    summary: 'List outreach records',
    description: 'Outreach records, newest first. Filters: `outreach_type` (`payment_receipt`, `remittance_request`), `status`, `payment_id`, `bank_transaction_id`. Paginated (`page`, `page_size` 1..500). A member sees only records whose customer and payment are within their business units (see GET /v2/payments); others answer 404.',
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      outreach_type: z.enum(OUTREACH_TYPES).optional(),
      status: z.enum(OUTREACH_STATUSES).optional(),
      payment_id: idSchema().optional(),
      bank_transaction_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(outreachSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await outreachPage(deps, identity.org, { outreachType: query.outreach_type, status: query.status, paymentId: query.payment_id, bankTransactionId: query.bank_transaction_id, scope: identity.bu }, page);
      return pageOf(rows.map(outreachView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/cash-app/outreach/{outreach_id}',
    operationId: 'getOutreachRecord',
    summary: 'Get an outreach record',
    description: 'An outreach record (e.g. a payment receipt and whether it was sent). Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ outreach_id: idSchema() }),
    response: outreachSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => outreachView(await outreachRecord(deps, identity.org, params.outreach_id, identity.bu)),
  }),
];
