import { z } from 'zod';
import { ConflictError, isUuid, NotFoundError } from '@rp/platform';
import { route } from '../deps.js';
import { PostingInProgressError, postingWorkflowRunning, requestPosting } from '../domain/payment-posting.js';
import { markPostingPending, markUnpostingRequested } from '../store/payment-posting.js';
import { getPayment, lockOrganizationPayments } from '../store/payments.js';
import { loadView, paymentSchema } from './payments.js';

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
      '`failed` (`posting_error`, counted by the metrics\' `posting_errors_count`). Not approved, already posted or being ' +
      `unposted, or a posting in progress → 409. ${OPEN_AMOUNT_RULE}`,
    tags: ['Cash application'],
    params: z.object({ payment_id: z.string() }),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps, requestId }) => {
      const org = identity.org;
      if (!isUuid(params.payment_id)) throw new NotFoundError(`No payment ${params.payment_id}.`);
      if (await postingWorkflowRunning(deps.temporal, params.payment_id)) throw new PostingInProgressError(params.payment_id);
      await deps.db.transaction(async (trx) => {
        await lockOrganizationPayments(trx, org);
        const payment = await getPayment(trx, org, params.payment_id, { forUpdate: true });
        if (!payment) throw new NotFoundError(`No payment ${params.payment_id}.`);
        if (payment.status !== 'approved') throw new ConflictError('Only an approved payment is posted; approve it first.');
        if (payment.posting_status === 'posted') throw new ConflictError('The payment is already posted to the ERP.');
        if (payment.posting_status === 'unposting') throw new ConflictError('The payment is being removed from the ERP.');
        await markPostingPending(trx, org, payment.id);
      });
      await requestPosting(deps, { organizationId: org, paymentId: params.payment_id, operation: 'post', requestId });
      return loadView(deps.db, org, params.payment_id);
    },
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
    params: z.object({ payment_id: z.string() }),
    response: paymentSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps, requestId }) => {
      const org = identity.org;
      if (!isUuid(params.payment_id)) throw new NotFoundError(`No payment ${params.payment_id}.`);
      if (await postingWorkflowRunning(deps.temporal, params.payment_id)) throw new PostingInProgressError(params.payment_id);
      await deps.db.transaction(async (trx) => {
        await lockOrganizationPayments(trx, org);
        const payment = await getPayment(trx, org, params.payment_id, { forUpdate: true });
        if (!payment) throw new NotFoundError(`No payment ${params.payment_id}.`);
        if (payment.posting_status !== 'posted') throw new ConflictError(`The payment is not posted to the ERP (posting_status ${payment.posting_status}).`);
        if (!payment.erp_can_unpost) {
          throw new ConflictError(`The ERP (${payment.erp_provider ?? 'unknown provider'}) cannot take a posted payment back through this platform; reverse it in the ERP.`);
        }
        await markUnpostingRequested(trx, org, payment.id);
      });
      await requestPosting(deps, { organizationId: org, paymentId: params.payment_id, operation: 'unpost', requestId });
      return loadView(deps.db, org, params.payment_id);
    },
  }),
];
