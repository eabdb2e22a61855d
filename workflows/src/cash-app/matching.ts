/**
 * Activity contract for automatic matching of deposits to open invoices, implemented by
 * services/cash-app (createMatchingActivities in src/activities/matching.ts). The bank-statement
 * workflow calls `proposePayments` after the statement's transactions are stored and classified.
 *
 * The activity is idempotent (transactions that already have a payment are skipped) and heartbeats
 * while it works, so callers should give it a heartbeatTimeout.
 */
export interface ProposePaymentsInput {
  organizationId: string;
  statementId: string;
}

export interface ProposePaymentsResult {
  /** payments (status `unapproved`) created by this call */
  proposed: number;
  /** deposits considered by this call for which no invoice could be matched */
  unmatched: number;
}

export interface MatchingActivities {
  proposePayments(input: ProposePaymentsInput): Promise<ProposePaymentsResult>;
}

/** Suggested activity options for callers of proposePayments. */
export const PROPOSE_PAYMENTS_TIMEOUTS = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
} as const;
