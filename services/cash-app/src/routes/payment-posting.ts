/** The payment posting routes (/v2/payments/{id}/post and /unpost): retrying a posting and removing one from the ERP. */
import { z } from 'zod';
import { idSchema } from '@rp/platform';
import { route } from '../deps.js';
import { requestPostingAndRead } from '../domain/payment-records.js';
import { paymentView } from '../views/payments.js';
import { paymentSchema } from './payments.js';

const OPEN_AMOUNT_RULE =
  'Open amounts: an allocation reduces its invoice\'s ledger `amount_open` until the ERP\'s own figure includes it, i.e. ' +
  'while the payment is not posted, and after posting until the ERP reports the invoice again (a push, or a sync that read ' +
  'it) later than `posted_at`; from then on the ledger figure alone is the open amount, so a payment is never subtracted twice.';

export const paymentPostingRoutes = [
  route({
    method: 'post',
    path: '/v2/payments/{payment_id}/post',
    operationId: 'postPayment',
    summary: 'Post (or retry posting) a payment to the ERP',
    description:
      'Posts an approved payment to the ERP its invoices came from (approval does this by itself; this call retries after a ' +
      '`posting_error`, or after a posting that could not start). The Temporal workflow `payment-posting-<payment_id>` ' +
      '(integrations task queue) records the intent first (a posting record whose id is the idempotency key), then: ' +
      'QuickBooks Online — creates a Payment (`POST /v3/company/<realm>/payment?requestid=<key>`, `CustomerRef`, `TotalAmt` = ' +
      'the deposit, one `Line` per allocation with `LinkedTxn` `{TxnId: <Invoice Id>, TxnType: "Invoice"}` and `Amount` = ' +
      'amount_paid; an unallocated remainder stays unapplied credit on the customer, i.e. on account); a repeated call with the ' +
      'same key returns the same Payment, so a retry never posts twice. `middleware` — the payment is queued for the middleware ' +
      '(GET /v2/integrations/providers/middleware/payments?status=ready_to_post), which answers `posted` or `failed`. ' +
      'The answer shows `posting_status` `pending`; later `posted` (`posted_at`, `erp_payment_id`, `erp_document_number`) or ' +
      '`failed` (`posting_error`, counted by the metrics\' `posting_errors_count`), recorded as the event `payment.posted` or ' +
      '`payment.posting_failed` once per outcome (a repeated ERP answer records nothing). Not approved, already posted or being ' +
      `unposted, or a posting in progress → 409. ${OPEN_AMOUNT_RULE}`,
    tags: ['Cash application'],
    auth: { permission: 'erp-postings:write' },
    params: z.object({ payment_id: idSchema() }),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps, requestId }) =>
      paymentView(await requestPostingAndRead(deps, { organizationId: identity.org, paymentId: params.payment_id, operation: 'post', requestId, scope: identity.bu })),
  }),
  route({
    method: 'post',
    path: '/v2/payments/{payment_id}/unpost',
    operationId: 'unpostPayment',
    summary: 'Remove a posted payment from the ERP',
    description:
      'Removes a posted payment from the ERP where the provider can (`can_unpost` on the payment, from the provider\'s ' +
      '`cash_app_features.can_unpost_payment`): QuickBooks Online deletes the Payment (`POST /v3/company/<realm>/payment?' +
      'operation=delete` with its `Id` and current `SyncToken`). The workflow `payment-posting-<payment_id>` runs it: the answer ' +
      'shows `posting_status` `unposting`; once removed the payment is `unapproved` again with `posting_status` `not_posted` ' +
      '(its allocations can be corrected and approved again, which posts it anew); if the ERP refuses, it stays `posted` with ' +
      'the reason in `posting_error`. Not posted, a provider that cannot unpost (the middleware queue) or a posting in ' +
      `progress → 409. ${OPEN_AMOUNT_RULE}`,
    tags: ['Cash application'],
    auth: { permission: 'erp-postings:write' },
    params: z.object({ payment_id: idSchema() }),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps, requestId }) =>
      paymentView(await requestPostingAndRead(deps, { organizationId: identity.org, paymentId: params.payment_id, operation: 'unpost', requestId, scope: identity.bu })),
  }),
];
