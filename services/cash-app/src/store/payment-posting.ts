/**
 * The ERP posting state of payments (cash-app migration 007): what the posting workflow
 * (payment-posting-<paymentId>, run by integrations) reads and records through cash-app's
 * activities, and what the post/unpost routes change. Every query is scoped by organization.
 */
import type { Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { PostingOperation, PostingOutcome } from '@rp/workflows';

type Conn = Db | Knex.Transaction;

/** Approved payment → posting requested (`pending`), clearing an earlier error. */
export async function markPostingPending(db: Conn, organizationId: string, paymentId: string): Promise<boolean> {
  const n = await db('payments')
    .where({ organization_id: organizationId, id: paymentId, status: 'approved' })
    .whereIn('posting_status', ['not_posted', 'failed', 'pending'])
    .update({ posting_status: 'pending', posting_error: null, modified_at: db.fn.now() });
  return n > 0;
}

/** A posting that could not even start (workflow start failed): shown as the posting error. */
export async function markPostingNotStarted(db: Conn, organizationId: string, paymentId: string, error: string): Promise<void> {
  await db('payments')
    .where({ organization_id: organizationId, id: paymentId, posting_status: 'pending' })
    .update({ posting_status: 'failed', posting_error: error, modified_at: db.fn.now() });
}

export async function markUnpostingRequested(db: Conn, organizationId: string, paymentId: string): Promise<boolean> {
  const n = await db('payments')
    .where({ organization_id: organizationId, id: paymentId, status: 'approved', posting_status: 'posted' })
    .update({ posting_status: 'unposting', modified_at: db.fn.now() });
  return n > 0;
}

/** An unposting that could not start: the payment stays posted, with the error. */
export async function revertUnposting(db: Conn, organizationId: string, paymentId: string, error: string): Promise<void> {
  await db('payments')
    .where({ organization_id: organizationId, id: paymentId, posting_status: 'unposting' })
    .update({ posting_status: 'posted', posting_error: error, modified_at: db.fn.now() });
}

/**
 * Store a posting workflow's outcome. Idempotent: only a payment in the state the operation left
 * it in (`pending` for post, `unposting` for unpost) changes, so a retried activity changes nothing.
 * Unposted → the payment is `unapproved` again (its allocations can be corrected and approved, which
 * posts it anew).
 */
export async function recordPostingOutcome(db: Conn, organizationId: string, paymentId: string, operation: PostingOperation, outcome: PostingOutcome): Promise<number> {
  const scope = db('payments').where({ organization_id: organizationId, id: paymentId });
  const now = db.fn.now();
  if (operation === 'post') {
    void scope.andWhere('posting_status', 'pending');
    if (outcome.status === 'posted') {
      return scope.update({
        posting_status: 'posted',
        posting_id: outcome.postingId,
        erp_provider: outcome.provider,
        erp_can_unpost: outcome.canUnpost,
        erp_payment_id: outcome.erpPaymentId,
        erp_document_number: outcome.erpDocumentNumber,
        erp_posting_adopted: outcome.adopted ?? false,
        posted_at: outcome.postedAt,
        posting_error: null,
        modified_at: now,
      });
    }
    if (outcome.status === 'failed') {
      return scope.update({ posting_status: 'failed', posting_id: outcome.postingId, erp_provider: outcome.provider, posting_error: outcome.error, modified_at: now });
    }
    return 0;
  }
  void scope.andWhere('posting_status', 'unposting');
  if (outcome.status === 'unposted') {
    return scope.update({
      status: 'unapproved',
      approved_by: null,
      approved_at: null,
      auto_approved: false,
      posting_status: 'not_posted',
      posting_id: null,
      erp_provider: null,
      erp_can_unpost: false,
      erp_payment_id: null,
      erp_document_number: null,
      erp_posting_adopted: false,
      posted_at: null,
      posting_error: null,
      modified_at: now,
    });
  }
  if (outcome.status === 'unpost_failed') {
    return scope.update({ posting_status: 'posted', posting_error: `Unposting failed: ${outcome.error}`, modified_at: now });
  }
  return 0;
}
