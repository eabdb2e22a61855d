/** The payment routes (/v2/payments…): creating, listing, reading, changing the allocations of and approving payments. */
import { z } from 'zod';
import {
  idSchema,
  isDecimalString,
  pageEnvelopeSchema,
  pageOf,
  pageRequest,
  paginationQueryShape,
  timestampsShape,
  isoDate,
} from '@rp/platform';
import { route } from '../deps.js';
import type { AllocationDraft } from '../domain/payments.js';
import { approvePaymentAndRead, createPaymentAndRead, paymentPage, paymentRecord, replaceAllocationsAndRead } from '../domain/payment-records.js';
import { paymentView } from '../views/payments.js';
import { postingShape } from './posting-fields.js';

const MAX_PAGE = 500;
const money2 = () => z.string().describe('Decimal string with the currency\'s minor units: JPY "1190", EUR "1190.00", KWD "1190.000".');
const dateParam = () => isoDate();
const uuidParam = idSchema;

const allocationSchema = z.object({
  object: z.literal('payment_allocation'),
  id: z.string(),
  invoice_id: z.string().describe('The ledger document: an invoice, or a credit memo whose credit the payment applies (`document_kind`).'),
  document_kind: z
    .enum(['invoice', 'credit_memo'])
    .describe('Extension of the spec: `credit_memo` when the allocation applies a credit memo of the payer (amount_paid = the credit applied, subtracted from the payment\'s cash); `invoice` otherwise.'),
  invoice_number: z.string().nullable().describe('Document number of the invoice (or credit memo) in the ledger.'),
  amount_paid: money2(),
  amount_discount: money2(),
  amount_withheld: money2(),
  adjustment_id: z.string().nullable(),
  adjustment_amount: money2(),
  ...timestampsShape,
})
  .meta({ id: 'PaymentAllocation' });

const transactionSummarySchema = z.object({
  id: z.string(),
  statement_id: z.string(),
  bank_account_id: z.string().nullable(),
  amount: money2(),
  currency: z.string(),
  booking_date: z.string().nullable(),
  value_date: z.string().nullable(),
  counterparty_name: z.string().nullable(),
  counterparty_iban: z.string().nullable(),
  counterparty_account: z.string().nullable(),
  remittance_information: z.string().nullable(),
  bank_reference: z.string().nullable(),
})
  .meta({ id: 'PaymentBankTransaction' });

export const paymentSchema = z.object({
  object: z.literal('payment'),
  id: z.string(),
  status: z.enum(['unapproved', 'approved']),
  bank_transaction_id: z.string(),
  statement_id: z.string(),
  partner_id: z.string().nullable(),
  remittance_id: z.string().nullable(),
  amount: money2().describe('The bank transaction amount (in the currency\'s minor units).'),
  currency: z.string(),
  payment_date: z.string().nullable().describe('Booking date of the transaction (value date when it has none).'),
  allocated_amount: money2().describe('The cash the allocations apply: the invoices\' amount_paid less the credit memos\' amount_paid (their credit applied).'),
  unallocated_amount: money2().describe('amount - allocated_amount.'),
  match_score: z.number().nullable().describe('0..1: confidence of the automatic match; null for payments not proposed by matching.'),
  match_reasons: z.array(z.record(z.string(), z.unknown())).describe('The rules that matched, e.g. `{"rule":"invoice_number","value":"9000001"}`, `{"rule":"iban","partner_id":…}`, `{"rule":"amount_exact"}`.'),
  shortfall: z
    .object({
      amount: money2().describe('What the allocated invoices lack after the cash, in the payment\'s currency (> 0).'),
      reason: z.enum(['fee', 'discount', 'deduction', 'partial']),
    })
    .nullable()
    .describe(
      'Extension of the spec. Why the payment settles its invoices with less cash than they ask, said explicitly: `fee` (a bank fee ' +
        'or short-pay write-off booked to an adjustment, `adjustment_amount`), `discount` (an early-payment discount, ' +
        '`amount_discount`), `deduction` (the customer deducted an amount, `amount_withheld`, for deduction handling), `partial` ' +
        '(the invoices stay partly open). Null when the cash settles what it is allocated to (an overpayment has none; its rest ' +
        'is `unallocated_amount`). Automatic matching states it with its proposal (a proposal stating none gets what its ' +
        'allocations carry: their discount, withheld and adjustment amounts, the largest naming the reason). When allocations are replaced (PATCH, or given ' +
        'on POST) it is recomputed from them: the amount is the allocations\' discount + withheld + adjustment amounts plus what ' +
        'stays open on the allocated invoices (their open amount as PATCH checks it minus what each allocation relieves); the ' +
        'reason is the largest of those four parts (ties: discount, deduction, fee, partial).',
    ),
  auto_approved: z
    .boolean()
    .describe(
      'Extension of the spec. True when the payment was approved automatically: matching proposed it with a `match_score` at or above the ' +
        'organization\'s `auto_approve_threshold` (GET /v2/organization), and it was approved as a user\'s approval would ' +
        'approve it, ERP posting included, with `approved_by` null. False otherwise, and again once an unposting makes the payment unapproved.',
    ),
  posting_error: z.string().nullable().describe('Why the ERP refused the posting or could not be reached (POST /v2/payments/{id}/post retries); null once posted.'),
  posted_at: z.string().nullable().describe('When the ERP was known to have the payment (posted); null otherwise.'),
  ...postingShape,
  approved_by: z.string().nullable().describe('The user who approved the payment; null while unapproved and for an automatic approval (`auto_approved`).'),
  approved_at: z.string().nullable(),
  allocations: z.array(allocationSchema),
  transaction: transactionSummarySchema,
  ...timestampsShape,
})
  .meta({ id: 'Payment' });

const amountInput = () =>
  z
    .union([z.string().max(40), z.number()])
    .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
    .refine((v) => isDecimalString(v) && !v.startsWith('-') && /^\d+(\.\d{1,4})?$/.test(v), 'must be a non-negative decimal amount with at most 4 decimals')
    .describe('Non-negative decimal (string of at most 40 characters, or number) with at most the currency\'s minor units of decimals (JPY none, EUR 2, KWD 3): more → 422 `value_error.decimal_places`.');

const allocationInput = z.object({
  invoice_id: uuidParam().describe('An open invoice of the organization, in the transaction\'s currency; or an open credit memo of the payment\'s payer (extension of the spec: its credit is applied).'),
  amount_paid: amountInput().describe('Cash applied to the invoice (counts against the transaction amount); for a credit memo, the credit applied (reduces the cash the invoices take from the transaction).'),
  amount_discount: amountInput().optional().describe('Discount granted (relieves the invoice, not the transaction). Default 0.'),
  amount_withheld: amountInput().optional().describe('Amount withheld, e.g. tax (relieves the invoice). Default 0.'),
  adjustment_id: uuidParam().nullable().optional().describe('Adjustment (fee, write-off, …) booked for adjustment_amount.'),
  adjustment_amount: amountInput().optional().describe('Amount booked to the adjustment (relieves the invoice). Default 0.'),
});

type AllocationBody = z.output<typeof allocationInput>;

function draftsOf(allocations: AllocationBody[]): AllocationDraft[] {
  return allocations.map((a) => ({
    invoice_id: a.invoice_id,
    amount_paid: a.amount_paid,
    amount_discount: a.amount_discount ?? '0',
    amount_withheld: a.amount_withheld ?? '0',
    adjustment_id: a.adjustment_id ?? null,
    adjustment_amount: a.adjustment_amount ?? '0',
  }));
}

export const paymentRoutes = [
  route({
    method: 'post',
    path: '/v2/payments',
    operationId: 'createPayment',
    summary: 'Create a payment for a deposit',
    description:
      'Creates an unapproved payment for a deposit that has none (typically one automatic matching could not match), with ' +
      'optional allocations under the same rules as PATCH (422 with loc naming the allocation index and field). The ' +
      'transaction must be a deposit (amount > 0) of the organization (422 otherwise); one that already has a payment → 409. ' +
      '`match_score` is null and `match_reasons` empty: the payment was not proposed by matching. Records the event ' +
      '`payment.proposed` (GET /v2/events, webhooks), as a payment proposed by matching does.',
    tags: ['Cash application'],
    auth: { permission: 'payments:write' },
    body: z.object({
      bank_transaction_id: uuidParam().describe('A deposit of the organization without a payment.'),
      allocations: z.array(allocationInput).max(500).default([]),
      partner_id: uuidParam().nullable().optional().describe('The payer; must be a partner of the organization.'),
    }),
    response: paymentSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => {
      return paymentView(
        await createPaymentAndRead(deps, { organizationId: identity.org, bankTransactionId: body.bank_transaction_id, allocations: draftsOf(body.allocations), partnerId: body.partner_id, scope: identity.bu }),
      );
    },
  }),
  route({
    method: 'get',
    path: '/v2/payments',
    operationId: 'listPayments',
    summary: 'List payments',
    description:
      'Payments proposed from bank deposits by automatic matching (status `unapproved`) or approved, newest first, each with its ' +
      'allocations, match score and reasons and a summary of its bank transaction. Filters: `status`, `bank_transaction_id`, ' +
      '`statement_id`, `partner_id`, and `start_date`/`end_date` (inclusive) on `payment_date`. Amounts are strings with the currency\'s minor units (JPY "1190", EUR "1190.00", KWD "1190.000"). ' +
      'Business units: a member sees only payments whose payer and allocated invoices are of their units or of none (others answer 404 and are absent from lists; an invoice or payer of another unit in a body is 422, as for another organization\'s). ' +
      'Events (`payment.proposed`, `payment.approved`, `payment.posted`, `payment.posting_failed`; `data.object` is the payment as ' +
      'GET /v2/payments/{payment_id} answered it then) are read by a member under the same rule, judged when the event was recorded: ' +
      'a payment whose payer and invoices belong to several units is in the event log only for callers who see every unit.',
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(['unapproved', 'approved']).optional(),
      bank_transaction_id: uuidParam().optional(),
      statement_id: uuidParam().optional(),
      partner_id: uuidParam().optional(),
      start_date: dateParam().optional().describe('payment_date on or after (YYYY-MM-DD).'),
      end_date: dateParam().optional().describe('payment_date on or before (YYYY-MM-DD).'),
    }),
    response: pageEnvelopeSchema(paymentSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { records, total } = await paymentPage(
        deps,
        identity.org,
        {
          status: query.status,
          bankTransactionId: query.bank_transaction_id,
          statementId: query.statement_id,
          partnerId: query.partner_id,
          startDate: query.start_date,
          endDate: query.end_date,
          scope: identity.bu,
        },
        page,
      );
      return pageOf(records.map(paymentView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/payments/{payment_id}',
    operationId: 'getPayment',
    summary: 'Get a payment',
    description: 'The payment with its allocations, match score and reasons and its bank transaction. Unknown or another organization\'s → 404 (also a payment of a business unit the member may not access).',
    tags: ['Cash application'],
    params: z.object({ payment_id: idSchema() }),
    response: paymentSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => paymentView(await paymentRecord(deps, identity.org, params.payment_id, identity.bu)),
  }),
  route({
    method: 'patch',
    path: '/v2/payments/{payment_id}',
    operationId: 'updatePayment',
    summary: 'Replace a payment\'s allocations',
    description:
      'Replaces all allocations of an unapproved payment (an empty array removes them). An allocation relieves its invoice by ' +
      'amount_paid + amount_discount + amount_withheld + adjustment_amount; only amount_paid counts against the transaction. ' +
      '422 (loc `["body","allocations",<index>,<field>]`) when an invoice is not an open invoice of the organization in the ' +
      'transaction\'s currency, when an allocation exceeds the invoice\'s open amount (ledger amount_open minus approved payments ' +
      'of other transactions; unapproved proposals do not count), when the amount_paid total exceeds the transaction amount, or for ' +
      'an unknown/inactive adjustment, or when an amount has more decimals than the transaction\'s currency allows (JPY none, ' +
      'EUR 2, KWD 3: `value_error.decimal_places`; the database refuses such an allocation too). ' +
      '`partner_id` sets the payer (default: the invoices\' partner when they have one). ' +
      'An approved payment cannot be changed (409). ' +
      '**Credit memos** (an extension of the spec): an allocation may name an open credit memo of the payer (same currency); its ' +
      '`amount_paid` is the credit applied, and the payment\'s cash is the invoices\' amount_paid less the memos\' credit, so a ' +
      'deposit of 900 settles an invoice of 1000 with a memo of 100. 422 when the memo is another customer\'s or has none ' +
      '(`value_error.credit_memo_partner`), when it carries a discount, withholding or adjustment (`value_error.credit_memo`), ' +
      'when the credit exceeds the memo\'s open credit (its ledger amount_open, less approved payments\' credit: ' +
      '`value_error.exceeds_open_amount`), or when the memos\' credit exceeds the invoices\' amount_paid (a payment\'s cash is never ' +
      'negative: `value_error.credit_exceeds_invoices`); the invoices\' amount_paid less the memos\' credit must not exceed the ' +
      'transaction (`value_error.exceeds_transaction_amount`). A memo whose credit is used up (by approved payments) has no open ' +
      'credit left: it is no longer proposed by matching and a further allocation of it is refused, until the ERP reports it ' +
      'again (a re-push or sync with credit left makes the rest available; the ERP closing it ends it). On approval the memo\'s ' +
      'credit is re-checked like an invoice\'s open amount (409), and posting links it to the ERP payment (QuickBooks Online: a ' +
      'Line with LinkedTxn TxnType `CreditMemo`; the middleware queue: a line with `kind` `credit_memo`).',
    tags: ['Cash application'],
    auth: { permission: 'payments:write' },
    params: z.object({ payment_id: idSchema() }),
    body: z.object({
      allocations: z.array(allocationInput).max(500),
      partner_id: uuidParam().nullable().optional().describe('The payer; must be a partner of the organization.'),
    }),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => {
      return paymentView(
        await replaceAllocationsAndRead(deps, { organizationId: identity.org, paymentId: params.payment_id, allocations: draftsOf(body.allocations), partnerId: body.partner_id, scope: identity.bu }),
      );
    },
  }),
  route({
    method: 'post',
    path: '/v2/payments/{payment_id}/approve',
    operationId: 'approvePayment',
    summary: 'Approve a payment',
    description:
      'Approves an unapproved payment with at least one allocation. The allocations are re-checked against the invoices\' open ' +
      'amounts (ledger amount_open minus approved payments), since another payment may have been approved meanwhile: 409 when an ' +
      'invoice is no longer open or would be over-allocated. Approving records the transaction\'s IBAN (or account number) as an ' +
      'account of the payer, so later deposits from it are matched to that partner first. Already approved → 409. ' +
      'Approval starts the posting to the ERP the invoices came from (workflow `payment-posting-<payment_id>`, ' +
      '`posting_status` `pending` → `posted` or `failed`; see POST /v2/payments/{payment_id}/post). An unallocated remainder is ' +
      'posted on account of the payer where the provider allows it (`cash_app_features.can_post_on_account_payment`); ' +
      '`{"on_account": true}` approves a payment without allocations that has a payer (`partner_id`), to post the whole ' +
      'deposit on account (unapplied cash); without it, or without a payer, a payment without allocations → 409. Open amounts ' +
      'here and in PATCH: an approved payment\'s allocations are subtracted from the ledger amount_open until the ERP\'s own ' +
      'figure includes them (posted, and the invoice reported by the ERP after `posted_at`), never twice. Records the event ' +
      '`payment.approved` with the payment as this call answers it (automatic approval records it too, with `auto_approved`); ' +
      'when the posting cannot even start, also `payment.posting_failed`.',
    tags: ['Cash application'],
    auth: { permission: 'payments:approve' },
    params: z.object({ payment_id: idSchema() }),
    body: z
      .object({ on_account: z.boolean().optional().describe('Approve without allocations: the whole deposit is posted on account of the payer.') })
      .optional(),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps, requestId }) => {
      return paymentView(
        await approvePaymentAndRead(deps, { organizationId: identity.org, userId: identity.sub, paymentId: params.payment_id, onAccount: body?.on_account === true, requestId, scope: identity.bu }),
      );
    },
  }),
];
