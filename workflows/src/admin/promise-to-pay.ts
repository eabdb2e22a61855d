/**
 * A promise to pay's life after it is recorded (workflow id promiseToPayWorkflowId, admin's task
 * queue): a durable timer until the end of the promise's grace period (the end of `promised_date`
 * + PROMISE_GRACE_DAYS, midnight in the organization's timezone), then the promise is judged: kept
 * when the payments approved and the ledger closings on its invoices cover its amount, broken
 * otherwise. Before the deadline the workflow wakes every PROMISE_RECHECK_SECONDS (default a day)
 * to mark a promise kept as soon as it is covered; only the deadline can break it.
 *
 * Payments are cash-app's: their part of the coverage comes from cash-app's activity on its own
 * task queue (DESIGN §4), the judgement (ledger closings, the status and its event) from admin's.
 * A cancelled promise ends the workflow: its cancellation request does, or, if that request was
 * lost, the next check finds the status changed.
 */
import { continueAsNew, isCancellation, log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export interface PromiseToPayInput extends RetryWindowInput {
  organizationId: string;
  promiseId: string;
}

export type PromiseToPayStatus = 'open' | 'kept' | 'broken' | 'cancelled';

/** What the workflow needs to check a promise; `missing` when the creating transaction never committed. */
export type PromiseToPayState =
  | { status: 'missing' }
  | {
      status: PromiseToPayStatus;
      invoiceIds: string[];
      /** ISO instant the promise was made: payments approved from then count */
      createdAt: string;
      /** ISO instant its grace period ends: payments approved after it do not count, and an uncovered promise breaks */
      deadline: string;
      /** seconds between two checks before the deadline */
      recheckSeconds: number;
    };

export interface SettlePromiseToPayInput extends PromiseToPayInput {
  /** per invoice id: what approved payments applied to it (decimal strings) between createdAt and deadline */
  paidByInvoice: Record<string, string>;
}

/** Activity contract, implemented by services/admin (createPromiseToPayActivities). */
export interface PromiseToPayActivities {
  promiseToPayState(input: PromiseToPayInput): Promise<PromiseToPayState>;
  /** Judges an open promise with the payments given and the ledger now: kept, broken (deadline passed) or still open. */
  settlePromiseToPay(input: SettlePromiseToPayInput): Promise<{ status: PromiseToPayStatus | 'missing' }>;
}

export interface PaymentsAppliedInput {
  organizationId: string;
  invoiceIds: string[];
  /** ISO instants: payments approved in [since, until] */
  since: string;
  until: string;
}

/** Activity contract on cash-app's task queue, implemented by services/cash-app (createPromiseCoverageActivities). */
export interface PromiseCoverageActivities {
  /** Per invoice: what the allocations of payments approved in the window (and still approved) relieve; invoices without any are absent. */
  paymentsAppliedToInvoices(input: PaymentsAppliedInput): Promise<Record<string, string>>;
}

/** Pause after a check that could not run (e.g. a worker down beyond the activities' retry window) before the next try. */
const CHECK_FAILED_PAUSE_MS = 10 * 60_000;

export async function promiseToPay(input: PromiseToPayInput): Promise<PromiseToPayStatus | 'missing'> {
  const options = { startToCloseTimeout: '1 minute', retryWindowMinutes: input.retryWindowMinutes } as const;
  const admin = proxyActivities<PromiseToPayActivities>(activityOptions(options));
  const cash = proxyActivities<PromiseCoverageActivities>(activityOptions({ ...options, taskQueue: TASK_QUEUES.cashApp }));
  for (;;) {
    let wait = CHECK_FAILED_PAUSE_MS;
    try {
      const state = await admin.promiseToPayState(input);
      if (state.status !== 'open') return state.status;
      const paidByInvoice = await cash.paymentsAppliedToInvoices({
        organizationId: input.organizationId,
        invoiceIds: state.invoiceIds,
        since: state.createdAt,
        until: state.deadline,
      });
      const settled = await admin.settlePromiseToPay({ ...input, paidByInvoice });
      if (settled.status !== 'open') return settled.status;
      // workflow time: replays compute the same wait
      wait = Math.max(1000, Math.min(Date.parse(state.deadline) - Date.now(), state.recheckSeconds * 1000));
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A promise must still be judged after a long outage: the check is tried again later, and
      // payments approved after the deadline never count, however late the judgement.
      log.warn('promise check failed; trying again later', { promiseId: input.promiseId, error: (err as Error).message });
    }
    await sleep(wait);
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof promiseToPay>(input);
  }
}
