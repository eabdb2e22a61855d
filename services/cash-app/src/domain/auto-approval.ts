/**
 * Automatic approval: after matching, the statement's proposals scored at or above the
 * organization's `auto_approve_threshold` (admin's setting, read through the kernel) are approved by
 * approvePayment, the function a user's approval calls — the same re-check of open amounts, the
 * payer's account learned, the ERP posting started — with no user (`approved_by` null) and
 * `auto_approved` recorded. A proposal the re-check refuses (an invoice meanwhile closed or taken by
 * another approval) is left unapproved for a person.
 */
import type { Client } from '@temporalio/client';
import { ConflictError, getAutoApproveThreshold, NotFoundError, type Db } from '@rp/platform';
import { approvePayment } from './payment-changes.js';
import { autoApprovalCandidates } from '../store/payments.js';

export async function autoApproveStatementProposals(
  deps: { db: Db; temporal: Client },
  organizationId: string,
  statementId: string,
  opts: { afterEach?: () => Promise<void> } = {},
): Promise<{ approved: number; refused: number }> {
  const threshold = await getAutoApproveThreshold(deps.db, organizationId);
  if (threshold === null) return { approved: 0, refused: 0 };
  let approved = 0;
  let refused = 0;
  for (const paymentId of await autoApprovalCandidates(deps.db, organizationId, statementId, threshold)) {
    try {
      await approvePayment(deps, { organizationId, userId: null, paymentId, onAccount: false, auto: true });
      approved++;
    } catch (err) {
      // approved meanwhile by a user, deleted with its statement, or refused by the re-check
      if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
      refused++;
    }
    await opts.afterEach?.();
  }
  return { approved, refused };
}
