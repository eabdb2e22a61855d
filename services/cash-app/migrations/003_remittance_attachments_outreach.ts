import type { Knex } from 'knex';

export const name = '003_remittance_attachments_outreach';

/**
 * - Remittances created from a CSV remittance advice keep the file as their attachment.
 * - Payment receipts: at most one live (pending or sent) receipt per payment, so two concurrent
 *   requests cannot create two records; a failed or skipped receipt may be requested again.
 * - Outreach records count their send attempts (the record is the email's idempotency row).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE remittances
      ADD COLUMN attachment_file_name text,
      ADD COLUMN attachment_content_type text,
      ADD COLUMN attachment_size integer,
      ADD COLUMN attachment_content bytea;
    CREATE INDEX remittances_org_date_idx ON remittances (organization_id, transaction_date);
    CREATE INDEX remittances_org_partner_idx ON remittances (organization_id, partner_id);

    ALTER TABLE outreach_records ADD COLUMN attempts integer NOT NULL DEFAULT 0;
    CREATE UNIQUE INDEX outreach_records_live_receipt_uq ON outreach_records (organization_id, payment_id)
      WHERE outreach_type = 'payment_receipt' AND status IN ('pending', 'sent');
    CREATE INDEX outreach_records_org_payment_idx ON outreach_records (organization_id, payment_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS outreach_records_org_payment_idx;
    DROP INDEX IF EXISTS outreach_records_live_receipt_uq;
    ALTER TABLE outreach_records DROP COLUMN IF EXISTS attempts;
    DROP INDEX IF EXISTS remittances_org_partner_idx;
    DROP INDEX IF EXISTS remittances_org_date_idx;
    ALTER TABLE remittances DROP COLUMN IF EXISTS attachment_file_name, DROP COLUMN IF EXISTS attachment_content_type,
      DROP COLUMN IF EXISTS attachment_size, DROP COLUMN IF EXISTS attachment_content;
  `);
}
