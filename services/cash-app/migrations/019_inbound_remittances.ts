import type { Knex } from 'knex';

export const name = '019_inbound_remittances';

/**
 * Remittance advice received by email (the AR inbox) and remittance requests.
 *
 * - A remittance read from an inbox message names it (`inbox_message_id`, the part it was read
 *   from in `source_part`: `body` or `attachment:<position>`) and carries the message summary
 *   (`email`, jsonb) and, for an attachment, its object key (`attachment_object_key`); the file
 *   stays in object storage, not in the row. One remittance per (message, part): a retried
 *   activity finds the row it wrote.
 * - At most one live (pending or sent) remittance request per bank transaction: "once only".
 * - `outbound_messages`: cash-app's read contract for threading replies (kernel
 *   outbound-messages.ts is its one reader outside cash-app): the Message-ID of every email
 *   cash-app sent (`outreach_records.email_id` holds it once sent), with what it was about.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE remittances
      ADD COLUMN inbox_message_id uuid,
      ADD COLUMN source_part text,
      ADD COLUMN email jsonb,
      ADD COLUMN attachment_object_key text,
      ADD CONSTRAINT remittances_inbox_part_check CHECK ((inbox_message_id IS NULL) = (source_part IS NULL));
    CREATE UNIQUE INDEX remittances_inbox_part_uq ON remittances (organization_id, inbox_message_id, source_part) WHERE inbox_message_id IS NOT NULL;

    CREATE UNIQUE INDEX outreach_records_live_remittance_request_uq ON outreach_records (organization_id, bank_transaction_id)
      WHERE outreach_type = 'remittance_request' AND status IN ('pending', 'sent');

    CREATE INDEX outreach_records_email_id_idx ON outreach_records (email_id) WHERE email_id IS NOT NULL;
    CREATE VIEW outbound_messages AS
      SELECT o.organization_id, o.email_id AS message_id, 'outreach_record'::text AS ref_object, o.id AS ref_id,
             o.outreach_type, o.partner_id, o.bank_transaction_id, o.payment_id, o.sent_at
        FROM outreach_records o
       WHERE o.email_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP VIEW IF EXISTS outbound_messages;
    DROP INDEX IF EXISTS outreach_records_email_id_idx;
    DROP INDEX IF EXISTS outreach_records_live_remittance_request_uq;
    DROP INDEX IF EXISTS remittances_inbox_part_uq;
    ALTER TABLE remittances DROP CONSTRAINT IF EXISTS remittances_inbox_part_check,
      DROP COLUMN IF EXISTS inbox_message_id, DROP COLUMN IF EXISTS source_part, DROP COLUMN IF EXISTS email,
      DROP COLUMN IF EXISTS attachment_object_key;
  `);
}
