/**
 * Activity contract for the automatic approval of matched payments, implemented by services/cash-app
 * (createAutoApprovalActivities). The bank-statement workflow calls it after proposePayments: the
 * statement's proposals scored at or above the organization's `auto_approve_threshold` are approved
 * through the same domain path as a user's approval (ERP posting started). Off (threshold null) it
 * approves nothing. Idempotent: only unapproved proposals are approved, each once.
 */
import type { ProposePaymentsInput } from './matching.js';

export interface AutoApproveResult {
  /** payments this call approved */
  approved: number;
  /** proposals at or above the threshold that the approval's re-checks refused (left for a person) */
  refused: number;
}

export interface AutoApprovalActivities {
  autoApproveProposals(input: ProposePaymentsInput): Promise<AutoApproveResult>;
}
