import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';
import type { MatchingActivities } from './matching.js';

export const BANK_STATEMENT_TASK_QUEUE = TASK_QUEUES.cashApp;

export function bankStatementWorkflowId(statementId: string): string {
  return `bank-statement-${statementId}`;
}

export interface BankStatementInput {
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
  /** Status → processing; re-parses the stored file and stores its transactions in chunks (heartbeats, resumes). */
  storeStatementTransactions(input: BankStatementInput): Promise<StoreTransactionsResult>;
  /** Sets is_payment on the statement's transactions (see classifyDeposit). */
  classifyStatementDeposits(input: BankStatementInput): Promise<ClassifyDepositsResult>;
  markStatementReady(input: BankStatementInput): Promise<void>;
  markStatementFailed(input: BankStatementInput & { error: string }): Promise<void>;
}

// Cancellation (a DELETE of the statement) must reach the activity and be acknowledged before the
// workflow closes: the delete removes rows only after that, so nothing is written afterwards.
const store = proxyActivities<BankStatementActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['StatementParseError'] },
});

const quick = proxyActivities<BankStatementActivities>({
  startToCloseTimeout: '2 minutes',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

// Matching a large statement against a large ledger takes minutes (100,000 lines against 200,000 open
// invoices: see bench cash-app-large-statement); the heartbeat timeout, not this bound, detects a
// stuck or lost worker.
const matching = proxyActivities<MatchingActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '20 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

function reason(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure || e instanceof Error) return e.message;
  return String(e);
}

/**
 * Processes an uploaded bank statement: store its transactions → classify deposits → propose
 * payments (matching) → ready. A failure after the activities' retries sets the statement `failed`
 * with the error. Cancellation (statement deleted) is propagated: the workflow ends CANCELLED.
 */
export async function bankStatement(input: BankStatementInput): Promise<BankStatementResult> {
  try {
    const stored = await store.storeStatementTransactions(input);
    if (stored.missing) return { status: 'missing' };
    const classified = await quick.classifyStatementDeposits(input);
    const matched = await matching.proposePayments({ organizationId: input.organizationId, statementId: input.statementId });
    await quick.markStatementReady(input);
    return { status: 'ready', total: stored.total, stored: stored.stored, payments: classified.payments, proposed: matched.proposed, unmatched: matched.unmatched };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const error = reason(err);
    await CancellationScope.nonCancellable(() => quick.markStatementFailed({ ...input, error }));
    return { status: 'failed', error };
  }
}
