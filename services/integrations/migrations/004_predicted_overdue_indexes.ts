import type { Knex } from 'knex';

export const name = '004_predicted_overdue_indexes';

/**
 * What predicted-overdue analytics (cash-app, through the kernel ledger module) needs to answer in
 * one pass over an organization's open invoices:
 *
 * - `documents.open_lc_cents` (generated, stored): an open invoice's open amount in local currency,
 *   in cents; NULL for anything else. amount_open is in document currency and is converted at the
 *   document's own rate (amount_in_local_currency / amount_in_document_currency), rounded half up
 *   to cents; without a local amount (or with a zero document amount) amount_open is taken as is.
 *   Computed once on write, so the aging sums integers instead of dividing NUMERICs per row.
 * - `documents_open_invoice_aging_idx`: the open invoices of a customer with every column the
 *   aging reads (covering: index-only scans, rows come grouped by partner, no sort).
 * - `documents_closed_invoice_history_idx`: a customer's closed invoices with due and clearing
 *   dates (its payment history), covering.
 * - `invoice_lateness_counts`: per organization, how many closed invoices were cleared L days after
 *   their net due date (L = clearing_date − net_due_date). The organization-wide payment history is
 *   then a few hundred rows instead of a scan of every closed invoice. Statement-level triggers keep
 *   it exact in the same transaction as every insert, update and delete of documents (set-based
 *   through transition tables, so a batch push costs one aggregate per statement).
 *   A closed invoice here: kind `invoice`, not `status_open`, clearing and net due dates present.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE documents ADD COLUMN open_lc_cents bigint GENERATED ALWAYS AS (
      CASE WHEN kind = 'invoice' AND status_open THEN
        (round(CASE WHEN amount_open = amount_in_document_currency AND amount_in_local_currency IS NOT NULL THEN amount_in_local_currency
                    ELSE amount_open * coalesce(amount_in_local_currency / nullif(amount_in_document_currency, 0), 1) END, 2) * 100)::bigint
      END) STORED;
    CREATE INDEX documents_open_invoice_aging_idx ON documents (organization_id, partner_id)
      INCLUDE (net_due_date, open_lc_cents, business_unit_id)
      WHERE kind = 'invoice' AND status_open AND partner_id IS NOT NULL;
    CREATE INDEX documents_closed_invoice_history_idx ON documents (organization_id, partner_id)
      INCLUDE (net_due_date, clearing_date)
      WHERE kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL;

    CREATE TABLE invoice_lateness_counts (
      organization_id uuid NOT NULL,
      lateness integer NOT NULL,
      invoice_count bigint NOT NULL,
      PRIMARY KEY (organization_id, lateness)
    );

    CREATE FUNCTION invoice_lateness_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE integrations.invoice_lateness_counts c SET invoice_count = c.invoice_count - o.n
        FROM (SELECT organization_id, clearing_date - net_due_date AS lateness, count(*) AS n FROM old_rows
              WHERE kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL
              GROUP BY 1, 2 ORDER BY 1, 2) o
        WHERE c.organization_id = o.organization_id AND c.lateness = o.lateness;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO integrations.invoice_lateness_counts AS c (organization_id, lateness, invoice_count)
        SELECT organization_id, clearing_date - net_due_date, count(*) FROM new_rows
        WHERE kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (organization_id, lateness) DO UPDATE SET invoice_count = c.invoice_count + EXCLUDED.invoice_count;
      END IF;
      RETURN NULL;
    END
    $fn$;

    CREATE TRIGGER documents_lateness_insert AFTER INSERT ON documents
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_lateness_counts_apply();
    CREATE TRIGGER documents_lateness_update AFTER UPDATE ON documents
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_lateness_counts_apply();
    CREATE TRIGGER documents_lateness_delete AFTER DELETE ON documents
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION invoice_lateness_counts_apply();

    INSERT INTO invoice_lateness_counts (organization_id, lateness, invoice_count)
    SELECT organization_id, clearing_date - net_due_date, count(*) FROM documents
    WHERE kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL
    GROUP BY 1, 2;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS documents_lateness_insert ON documents;
    DROP TRIGGER IF EXISTS documents_lateness_update ON documents;
    DROP TRIGGER IF EXISTS documents_lateness_delete ON documents;
    DROP FUNCTION IF EXISTS invoice_lateness_counts_apply();
    DROP TABLE IF EXISTS invoice_lateness_counts;
    DROP INDEX IF EXISTS documents_closed_invoice_history_idx;
    DROP INDEX IF EXISTS documents_open_invoice_aging_idx;
    ALTER TABLE documents DROP COLUMN IF EXISTS open_lc_cents;
  `);
}
