/**
 * Outreach records and requesting a payment's receipt: the record that tracks it and its Temporal workflow
 * `payment-receipt-<paymentId>` (which renders and sends the email, see activities/payment-receipt).
 * Everything that must happen is done before the request answers: no promise is left running in
 * the API process.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { activityRetryWindowMinutes, ConflictError, isUuid, NotFoundError, withTemporalDeadline, type BusinessUnitScope, type Db, type PageRequest } from '@rp/platform';
import { businessSearchAttributes, paymentReceipt, paymentReceiptWorkflowId, TASK_QUEUES, type PaymentReceiptInput } from '@rp/workflows';
import type { CashAppDeps } from '../deps.js';
import { claimReceiptRecord, getOutreach, getReceiptPayment, listOutreach, markFailed, markSent, type OutreachFilter, type OutreachRow } from '../store/outreach.js';
import { recordOutreachEvent } from './events.js';

/**
 * Make sure the payment's receipt workflow runs for this `pending` outreach record.
 *
 * - It already runs for this record (the record id is the workflow's memo `outreachId`; a concurrent
 *   request started it): nothing to do.
 * - None runs: it is started (this also restarts a `pending` record whose workflow is gone: the API
 *   stopped between writing the record and starting the workflow, or an operator terminated it).
 * - The workflow of an earlier receipt of the payment still runs: while this record is `pending`,
 *   that earlier record is closed (`failed` or `skipped`; the database allows one live receipt per
 *   payment), so its workflow has nothing left to do that matters. That run (by its run id) is
 *   terminated and this record's workflow started in its place, before the request answers. This
 *   record is re-read first: if it is no longer pending (a race closed it), nothing is started.
 *
 * The old run is terminated by run id, then the new one started with the default conflict policy
 * (fail if one runs), rather than one start with `workflowIdConflictPolicy: 'TERMINATE_EXISTING'`:
 * two concurrent requests for the same record would otherwise both start, the second terminating
 * the run the first had just started for this very record. Here the loser sees "already started",
 * looks again and finds its record's run. Should the process stop between the terminate and the
 * start, the record is `pending` without a workflow, which the next request for the payment starts.
 */
export async function ensureReceiptWorkflow(db: Db, temporal: Client, input: PaymentReceiptInput): Promise<void> {
  const workflowId = paymentReceiptWorkflowId(input.paymentId);
  const handle = temporal.workflow.getHandle(workflowId);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const d = await handle.describe();
      if (d.status.name === 'RUNNING') {
        if (d.memo?.outreachId === input.outreachId) return;
        const own = await getOutreach(db, input.organizationId, input.outreachId);
        if (own?.status !== 'pending') return; // this record closed meanwhile: the running workflow is not ours to replace
        await temporal.workflow
          .getHandle(workflowId, d.runId)
          .terminate(`the payment's previous receipt is closed; replaced by the workflow of outreach record ${input.outreachId}`)
          .catch((err: unknown) => {
            if (!(err instanceof WorkflowNotFoundError)) throw err; // it closed meanwhile
          });
      }
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    try {
      await temporal.workflow.start(paymentReceipt, {
        taskQueue: TASK_QUEUES.cashApp,
        workflowId,
        args: [input],
        memo: { outreachId: input.outreachId },
        typedSearchAttributes: businessSearchAttributes(input.organizationId, input.paymentId),
      });
      return;
    } catch (err) {
      // Another request started a workflow between our describe and start: look again.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  throw new Error(`the receipt workflow ${workflowId} could not be started`);
}

/**
 * The receipt accepted by the SMTP server: the record moves to sent and outreach.sent is recorded in
 * the same transaction, once (the "sent" write runs twice on purpose, and a retry may repeat it).
 */
export async function recordReceiptSent(db: Db, outreachId: string, messageId: string): Promise<void> {
  await db.transaction(async (trx) => {
    const moved = await markSent(trx, outreachId, messageId);
    if (moved) await recordOutreachEvent(trx, 'outreach.sent', moved);
  });
}

/** The receipt failed for good: the pending record moves to failed and outreach.failed is recorded with it, once. */
export async function recordReceiptFailed(db: Db, organizationId: string, outreachId: string, error: string): Promise<void> {
  await db.transaction(async (trx) => {
    const moved = await markFailed(trx, organizationId, outreachId, error);
    if (moved) await recordOutreachEvent(trx, 'outreach.failed', moved);
  });
}

/** Stored on a receipt whose sending could not be started (the workflow engine was unavailable). */
export const RECEIPT_NOT_STARTED = 'Sending the receipt could not be started because a service of the platform was unavailable. Request the receipt again.';

/**
 * Ask for a payment's receipt: the payment's live (pending or sent) receipt record is returned as
 * is (its workflow started again when a pending one has none), or a new `pending` record is created
 * and its workflow started before this returns. Unknown payment → 404; not approved → 409.
 */
export async function requestPaymentReceipt(
  deps: Pick<CashAppDeps, 'db' | 'temporal' | 'config'>,
  request: { organizationId: string; userId: string | null; paymentId: string; requestId?: string; scope?: BusinessUnitScope },
): Promise<OutreachRow> {
  const { db, temporal, config } = deps;
  const org = request.organizationId;
  const payment = isUuid(request.paymentId) ? await getReceiptPayment(db, org, request.paymentId, request.scope) : null;
  if (!payment) throw new NotFoundError(`No payment ${request.paymentId}.`);
  if (payment.status !== 'approved') {
    throw new ConflictError(`Payment ${payment.id} is not approved: a receipt is sent only for an approved payment (approve it first with POST /v2/payments/${payment.id}/approve).`);
  }
  const { record, created } = await claimReceiptRecord(db, org, {
    paymentId: payment.id,
    partnerId: payment.partner_id,
    bankTransactionId: payment.bank_transaction_id,
    requestedBy: request.userId,
  });
  const input: PaymentReceiptInput = {
    organizationId: org,
    outreachId: record.id,
    paymentId: payment.id,
    requestId: request.requestId,
    retry: { maximumAttempts: config.PAYMENT_RECEIPT_MAX_ATTEMPTS, initialIntervalSeconds: config.PAYMENT_RECEIPT_RETRY_SECONDS },
    retryWindowMinutes: activityRetryWindowMinutes(),
  };
  // Temporal unavailable: fail within the start deadline (503 + Retry-After), not after ~20 s.
  const ensure = () => withTemporalDeadline(temporal, () => ensureReceiptWorkflow(db, temporal, input));
  if (created) {
    try {
      await ensure();
    } catch (err) {
      // Nothing will send it: do not leave a pending record that blocks the next request (which
      // makes a new record). Users read this error; the technical one goes to the log via the 503.
      await recordReceiptFailed(db, org, record.id, RECEIPT_NOT_STARTED);
      throw err;
    }
    return record;
  }
  if (record.status === 'pending') await ensure();
  return (await getOutreach(db, org, record.id)) ?? record;
}

/** A page of the organization's outreach records within the filter's business units, newest first. */
export async function outreachPage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: OutreachFilter, page: Pick<PageRequest, 'offset' | 'pageSize'>) {
  return listOutreach(deps.db, organizationId, filter, page.offset, page.pageSize);
}

/** The outreach record within the caller's business units, or 404. */
export async function outreachRecord(deps: Pick<CashAppDeps, 'db'>, organizationId: string, id: string, scope: BusinessUnitScope): Promise<OutreachRow> {
  const row = await getOutreach(deps.db, organizationId, id, scope);
  if (!row) throw new NotFoundError(`No outreach record ${id}.`);
  return row;
}
