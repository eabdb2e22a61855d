/**
 * Starting the ERP posting of a payment: workflow `payment-posting-<paymentId>` on the integrations
 * task queue (it calls back cash-app's activities to read the payment and record the outcome).
 * One posting workflow per payment at a time: a request while one runs is a conflict. The payment's
 * `posting_status` is set (pending / unposting) in a transaction that commits only after the start
 * (commitWithPosting); a start that fails leaves a visible posting error instead of a payment that
 * waits forever.
 */
import type { Knex } from 'knex';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { activityRetryWindowMinutes, ConflictError, isUuid, NotFoundError, type BusinessUnitScope, type Db, withTemporalDeadline } from '@rp/platform';
import { businessSearchAttributes, paymentPosting, paymentPostingWorkflowId, PAYMENT_POSTING_TASK_QUEUE, type PostingOperation } from '@rp/workflows';
import { markPostingNotStarted, markPostingPending, markUnpostingRequested, revertUnposting } from '../store/payment-posting.js';
import { getPayment, lockOrganizationPayments } from '../store/payments.js';
import { recordPaymentEvents, type PaymentEventType } from './events.js';

export class PostingInProgressError extends ConflictError {
  constructor(paymentId: string) {
    super(`A posting of payment ${paymentId} to the ERP is in progress; wait for it to finish.`);
  }
}

/**
 * Whether the payment's posting workflow is running. One that is just closing (it has recorded its
 * outcome and returns) is given `waitMs` to close before the answer is yes.
 */
export async function postingWorkflowRunning(temporal: Client, paymentId: string, waitMs = 3_000): Promise<boolean> {
  const handle = temporal.workflow.getHandle(paymentPostingWorkflowId(paymentId));
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return false;
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, waitMs))]);
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Test seam: runs after the posting workflow has started and before the payment's new state commits (a crash there). */
export interface PostingHooks {
  beforeCommit?: (paymentId: string) => Promise<void>;
}

/**
 * The events of a posting request, recorded last in its transaction (the payment as it commits):
 * `started` false when the workflow could not start, which a `post` records as payment.posting_failed
 * (the payment now shows that error), as the posting's own failure would.
 */
async function recordRequestEvents(trx: Knex.Transaction, input: { organizationId: string; paymentId: string; operation: PostingOperation }, started: boolean, before: readonly PaymentEventType[]): Promise<void> {
  for (const type of before) await recordPaymentEvents(trx, input.organizationId, type, [input.paymentId]);
  if (!started && input.operation === 'post') await recordPaymentEvents(trx, input.organizationId, 'payment.posting_failed', [input.paymentId]);
}

/**
 * Waits (bounded) for a posting workflow of the payment that is still closing (e.g. an unposting
 * writing its last record) so that a start right after does not collide with it. True when it has
 * closed or none runs.
 */
export async function awaitPostingWorkflowClosed(temporal: Client, paymentId: string, waitMs = 5_000): Promise<boolean> {
  return !(await postingWorkflowRunning(temporal, paymentId, waitMs));
}

/** Start the workflow once; a workflow of the payment that is still running → PostingInProgressError. */
export async function startPostingWorkflow(temporal: Client, input: { organizationId: string; paymentId: string; operation: PostingOperation; requestId?: string }): Promise<void> {
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.workflow.start(paymentPosting, {
        taskQueue: PAYMENT_POSTING_TASK_QUEUE,
        workflowId: paymentPostingWorkflowId(input.paymentId),
        args: [{ ...input, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(input.organizationId, input.paymentId),
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new PostingInProgressError(input.paymentId);
    throw err;
  }
}

/**
 * Change a payment's posting state and start its posting workflow, atomically in effect
 * (start-then-commit, as the bank-statement upload does): `change` checks and writes the new state
 * (`pending` / `unposting`) in a transaction, the workflow is started, and only then does the
 * transaction commit. A crash before the commit leaves the payment as it was (the request can be
 * repeated); the workflow it may have started finds the payment in another state and ends
 * `skipped` (its first activity waits briefly for a commit it cannot see yet). A start that fails
 * is not a failed request: the state is put back in the same transaction with the reason as the
 * posting error (POST /v2/payments/{id}/post or /unpost tries again), as before.
 *
 * The caller has waited for a previous workflow of the payment to close (so no lock is held while
 * waiting); the transaction holds the organization's payment lock only for the start call. `events`
 * (e.g. payment.approved) are recorded after the start, in the same transaction, so they carry the
 * payment as it commits (see recordRequestEvents).
 */
export async function commitWithPosting<T>(
  deps: { db: Db; temporal: Client },
  input: { organizationId: string; paymentId: string; operation: PostingOperation; requestId?: string },
  change: (trx: Knex.Transaction) => Promise<T>,
  hooks: PostingHooks = {},
  events: readonly PaymentEventType[] = [],
): Promise<T> {
  return deps.db.transaction(async (trx) => {
    const result = await change(trx);
    try {
      await startPostingWorkflow(deps.temporal, input);
    } catch (err) {
      const reason = `Could not start the ERP ${input.operation === 'post' ? 'posting' : 'unposting'}: ${(err as Error).message}`;
      if (input.operation === 'post') await markPostingNotStarted(trx, input.organizationId, input.paymentId, reason);
      else await revertUnposting(trx, input.organizationId, input.paymentId, reason);
      await recordRequestEvents(trx, input, false, events);
      return result;
    }
    await recordRequestEvents(trx, input, true, events);
    await hooks.beforeCommit?.(input.paymentId);
    return result;
  });
}

/**
 * POST /v2/payments/{id}/post (retry a failed posting, or one that could not start) and
 * /unpost: checks under the organization's payment lock, sets `pending` / `unposting`, starts the
 * workflow and commits (commitWithPosting). A posting workflow still running → 409.
 */
export async function requestPaymentPosting(
  deps: { db: Db; temporal: Client },
  request: { organizationId: string; paymentId: string; operation: PostingOperation; requestId?: string; scope?: BusinessUnitScope },
  hooks: PostingHooks = {},
): Promise<void> {
  const { organizationId: org, paymentId, operation, scope } = request;
  // The payment first: another organization's payment (or one outside the caller's business units)
  // answers 404 even while its posting workflow runs, never 409.
  if (!isUuid(paymentId) || !(await getPayment(deps.db, org, paymentId, { scope }))) throw new NotFoundError(`No payment ${paymentId}.`);
  if (await postingWorkflowRunning(deps.temporal, paymentId)) throw new PostingInProgressError(paymentId);
  await commitWithPosting(
    deps,
    request,
    async (trx) => {
      await lockOrganizationPayments(trx, org);
      const payment = await getPayment(trx, org, paymentId, { forUpdate: true, scope });
      if (!payment) throw new NotFoundError(`No payment ${paymentId}.`);
      if (operation === 'post') {
        if (payment.status !== 'approved') throw new ConflictError('Only an approved payment is posted; approve it first.');
        if (payment.posting_status === 'posted') throw new ConflictError('The payment is already posted to the ERP.');
        if (payment.posting_status === 'unposting') throw new ConflictError('The payment is being removed from the ERP.');
        await markPostingPending(trx, org, payment.id);
      } else {
        if (payment.posting_status !== 'posted') throw new ConflictError(`The payment is not posted to the ERP (posting_status ${payment.posting_status}).`);
        if (!payment.erp_can_unpost) {
          throw new ConflictError(`The ERP (${payment.erp_provider ?? 'unknown provider'}) cannot take a posted payment back through this platform; reverse it in the ERP.`);
        }
        await markUnpostingRequested(trx, org, payment.id);
      }
    },
    hooks,
  );
}
