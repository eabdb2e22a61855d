import type { Knex } from 'knex';

export const name = '007_payment_postings';

/**
 * ERP posting of applied cash (workflow `payment-posting-<paymentId>`).
 *
 * `payment_postings`: one row per attempt to post a cash-app payment to the ERP its invoices came
 * from. The row is written BEFORE the ERP is called (intent) and its id is the idempotency key of
 * that call (QuickBooks Online `requestid`), so a retried call after a lost answer or a failed
 * result write returns the same ERP payment instead of creating a second one. For push-based ERPs
 * (`middleware`) the row is the posting queue: `ready_to_post` until the middleware reports
 * `posted` (with its document number) or `failed`. `payload` is what is posted (amount, currency,
 * date, customer, invoice lines), so the middleware reads it without touching cash-app's schema.
 * At most one live (not failed, not unposted) posting per payment.
 *
 * `documents.erp_reported_at`: when the ERP last reported the document's figures (the push's
 * arrival, or the moment a sync read the page). cash-app's open-amount rule compares it with a
 * payment's `posted_at`: once the ERP reported the document after the posting, its `amount_open`
 * includes the payment and the allocation is no longer subtracted again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE payment_postings (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      payment_id uuid NOT NULL,
      origin text NOT NULL,
      provider_name text NOT NULL,
      connection_id uuid,
      status text NOT NULL CONSTRAINT payment_postings_status_check
        CHECK (status IN ('posting', 'ready_to_post', 'posted', 'failed', 'unposting', 'unposted')),
      payload jsonb NOT NULL,
      erp_payment_id text,
      erp_document_number text,
      erp_sync_token text,
      error text,
      posted_at timestamptz,
      unposted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT payment_postings_posted_check CHECK (status NOT IN ('posted', 'unposting') OR posted_at IS NOT NULL),
      CONSTRAINT payment_postings_failed_check CHECK (status <> 'failed' OR error IS NOT NULL)
    );
    CREATE UNIQUE INDEX payment_postings_live_uq ON payment_postings (organization_id, payment_id)
      WHERE status IN ('posting', 'ready_to_post', 'posted', 'unposting');
    CREATE INDEX payment_postings_queue_idx ON payment_postings (organization_id, provider_name, status, created_at, id);

    ALTER TABLE documents ADD COLUMN erp_reported_at timestamptz NOT NULL DEFAULT now();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE documents DROP COLUMN IF EXISTS erp_reported_at;
    DROP TABLE IF EXISTS payment_postings;
  `);
}
