import { ActivityCancellationType, CancellationScope, isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import type { MatchingActivities } from './matching.js';
import type { AutoApprovalActivities } from './auto-approval.js';

export const BANK_STATEMENT_TASK_QUEUE = TASK_QUEUES.cashApp;

/** Marks the workflow's call of autoApproveProposals: histories recorded before it replay without the call. */
export const BANK_STATEMENT_AUTO_APPROVE = 'bank-statement-auto-approve';

export function bankStatementWorkflowId(statementId: string): string {
  return `bank-statement-${statementId}`;
}

export interface BankStatementInput extends RetryWindowInput {
  organizationId: string;
  statementId: string;
}

export interface StoreTransactionsResult {
  /** the statement no longer exists (deleted before processing started) */
  missing: boolean;
  /** transactions in the file */
  total: number;
  /** transactions of this statement stored (lines already imported by another statement are skipped) */
  stored: number;
}

export interface ClassifyDepositsResult {
  payments: number;
  nonPayments: number;
}

export type BankStatementResult =
  | { status: 'ready'; total: number; stored: number; payments: number; proposed: number; unmatched: number }
  | { status: 'failed'; error: string }
  | { status: 'missing' };

/** Activity contract, implemented by services/cash-app (createBankStatementActivities). */
export interface BankStatementActivities {
  /** Status → processing; stores the transactions the upload parsed (the file is not parsed again) in chunks (heartbeats, resumes). */
  storeStatementTransactions(input: BankStatementInput): Promise<StoreTransactionsResult>;
  /** Sets is_payment on the statement's transactions (see classifyDeposit). */
  classifyStatementDeposits(input: BankStatementInput): Promise<ClassifyDepositsResult>;
  markStatementReady(input: BankStatementInput): Promise<void>;
  markStatementFailed(input: BankStatementInput & { error: string }): Promise<void>;
}

// Activity options (./activity-options.ts): outages are retried for the input's retry window,
// business errors (a file that cannot be parsed) are not. Cancellation (a DELETE of the statement)
// must reach the activity and be acknowledged before the workflow closes: the delete removes rows only
// after that, so nothing is written afterwards.
function activities(input: BankStatementInput) {
  const common = { retryWindowMinutes: input.retryWindowMinutes, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };
  return {
    store: proxyActivities<BankStatementActivities>(
      activityOptions({ ...common, startToCloseTimeout: '30 minutes', heartbeatTimeout: '10 seconds', nonRetryableErrorTypes: ['StatementParseError'] }),
    ),
    quick: proxyActivities<BankStatementActivities>(activityOptions({ ...common, startToCloseTimeout: '2 minutes' })),
    // Matching a large statement against a large ledger takes minutes (100,000 lines against 200,000
    // open invoices: see bench cash-app-large-statement); the heartbeat timeout, not this bound,
    // detects a stuck or lost worker.
    matching: proxyActivities<MatchingActivities>(activityOptions({ ...common, startToCloseTimeout: '2 hours', heartbeatTimeout: '20 seconds' })),
    // One approval per payment (each starts its ERP posting): thousands take minutes; it heartbeats per payment.
    approval: proxyActivities<AutoApprovalActivities>(activityOptions({ ...common, startToCloseTimeout: '2 hours', heartbeatTimeout: '20 seconds' })),
  };
}

/** Stored on a statement whose processing failed for another reason than its file (an outage that outlasted the retry window, a defect). */
export const STATEMENT_PROCESSING_FAILED =
  'Processing stopped because a service of the platform was unavailable for too long. Upload the same file again to resume processing; the transactions already stored are kept.';

/**
 * Processes an uploaded bank statement: store its transactions → classify deposits → propose
 * payments (matching) → approve those at or above the organization's auto_approve_threshold → ready. A failure after the activities' retries sets the statement `failed`
 * with the error. Cancellation (statement deleted) is propagated: the workflow ends CANCELLED.
 */
export async function bankStatement(input: BankStatementInput): Promise<BankStatementResult> {
  const { store, quick, matching, approval } = activities(input);
  try {
    const stored = await store.storeStatementTransactions(input);
    if (stored.missing) return { status: 'missing' };
    const classified = await quick.classifyStatementDeposits(input);
    const matched = await matching.proposePayments({ organizationId: input.organizationId, statementId: input.statementId });
    if (patched(BANK_STATEMENT_AUTO_APPROVE)) await approval.autoApproveProposals({ organizationId: input.organizationId, statementId: input.statementId });
    await quick.markStatementReady(input);
    return { status: 'ready', total: stored.total, stored: stored.stored, payments: classified.payments, proposed: matched.proposed, unmatched: matched.unmatched };
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Users read `error`: the file's problem as the parser words it, or a message they can act on;
    // the technical failure stays in this workflow's history and the worker's log.
    const error = userFacingFailure(err, STATEMENT_PROCESSING_FAILED);
    if (error === STATEMENT_PROCESSING_FAILED) log.warn('bank statement processing failed', { statementId: input.statementId, failure: String(err), cause: String((err as { cause?: unknown }).cause) });
    await CancellationScope.nonCancellable(() => quick.markStatementFailed({ ...input, error }));
    return { status: 'failed', error };
  }
}
