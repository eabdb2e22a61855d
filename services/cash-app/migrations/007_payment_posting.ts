import type { Knex } from 'knex';

export const name = '007_payment_posting';

/**
 * Posting applied cash to the ERP (workflow `payment-posting-<paymentId>`, run by integrations):
 *
 * - `posting_status`: `not_posted` (unapproved, or unposted again), `pending` (a posting workflow
 *   runs: the ERP call, or the middleware queue waits for its answer), `posted` (the ERP has it:
 *   `posted_at`, `erp_payment_id` / `erp_document_number`), `failed` (the ERP refused or could not be
 *   reached: `posting_error`; POST /v2/payments/{id}/post tries again), `unposting` (removal from the
 *   ERP in progress).
 * - `posting_id`: the integrations posting record of the current attempt (its id is the idempotency
 *   key sent to the ERP, e.g. QuickBooks' `requestid`); results of another attempt are ignored.
 * - `erp_provider` and `erp_can_unpost`: which provider holds the posting and whether it can remove it
 *   (the provider's `cash_app_features.can_unpost_payment`), recorded with the result.
 *
 * Constraints: only an approved payment is pending, posted or unposting; `posted` ⇔ `posted_at`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments
      ADD COLUMN posting_status text NOT NULL DEFAULT 'not_posted'
        CONSTRAINT payments_posting_status_check CHECK (posting_status IN ('not_posted', 'pending', 'posted', 'failed', 'unposting')),
      ADD COLUMN posting_id uuid,
      ADD COLUMN erp_provider text,
      ADD COLUMN erp_payment_id text,
      ADD COLUMN erp_document_number text,
      ADD COLUMN erp_can_unpost boolean NOT NULL DEFAULT false;
    UPDATE payments SET posting_status = 'posted' WHERE posted_at IS NOT NULL;
    UPDATE payments SET posting_status = 'failed' WHERE posted_at IS NULL AND posting_error IS NOT NULL;
    ALTER TABLE payments
      ADD CONSTRAINT payments_posting_needs_approval_check
        CHECK (posting_status IN ('not_posted', 'failed') OR status = 'approved'),
      ADD CONSTRAINT payments_posted_at_check
        CHECK ((posting_status IN ('posted', 'unposting')) = (posted_at IS NOT NULL));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments
      DROP CONSTRAINT IF EXISTS payments_posted_at_check,
      DROP CONSTRAINT IF EXISTS payments_posting_needs_approval_check,
      DROP COLUMN IF EXISTS erp_can_unpost,
      DROP COLUMN IF EXISTS erp_document_number,
      DROP COLUMN IF EXISTS erp_payment_id,
      DROP COLUMN IF EXISTS erp_provider,
      DROP COLUMN IF EXISTS posting_id,
      DROP COLUMN IF EXISTS posting_status;
  `);
}
