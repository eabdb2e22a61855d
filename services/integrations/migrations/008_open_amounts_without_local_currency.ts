import type { Knex } from 'knex';

export const name = '008_open_amounts_without_local_currency';

/** An open invoice whose document gives its local-currency amount (and so its own rate). */
const HAS_LOCAL = `kind = 'invoice' AND status_open AND amount_in_local_currency IS NOT NULL AND amount_in_document_currency <> 0`;
/** …converted at that rate, in cents (NUMERIC; see the guard below). */
const LOCAL_VALUE = `round(CASE WHEN amount_open = amount_in_document_currency THEN amount_in_local_currency
                                ELSE amount_open * amount_in_local_currency / amount_in_document_currency END, 2) * 100`;

/**
 * Predicted overdue without 1:1 sums of foreign amounts. Migration 004's `open_lc_cents`
 * took `amount_open` as local when a document had no local-currency amount (QuickBooks syncs never
 * set one), so a EUR 10,000 invoice counted as 10,000 of the base currency. Now:
 *
 * - `open_lc_cents`: only when the document itself gives the rate (a local amount and a non-zero
 *   document amount): `amount_open` at that rate, rounded half away from zero to cents; NULL
 *   otherwise (and NULL rather than a failed write when the product would not fit a bigint).
 * - `open_unconverted_amount`, `open_unconverted_currency`: for every other open invoice, its
 *   `amount_open` and document currency. The reader converts them with the stored exchange rates
 *   (1:1 only when the currency is the organization's base currency) or reports them as not
 *   convertible. Both are NULL for documents with a local amount, so they cost the aging index
 *   nothing there but its null bitmap.
 * - `documents_open_invoice_aging_idx` (dropped with the old column) again covers every column the
 *   aging reads, now with the two new ones.
 * - `documents_open_unconverted_idx`: the open invoices waiting for a stored rate, per currency
 *   (how many cannot be converted, without scanning the documents that have a local amount).
 * - `converted_cents(amount, factor)`: the reader's conversion, amount · factor rounded half away
 *   from zero to cents, as a bigint (so the aging keeps summing integers); NULL without a factor or
 *   when the result would not fit a bigint.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE documents DROP COLUMN open_lc_cents;
    ALTER TABLE documents
      ADD COLUMN open_lc_cents bigint GENERATED ALWAYS AS (
        CASE WHEN ${HAS_LOCAL} AND abs(${LOCAL_VALUE}) < 9000000000000000000 THEN (${LOCAL_VALUE})::bigint END) STORED,
      ADD COLUMN open_unconverted_amount numeric(20, 4) GENERATED ALWAYS AS (
        CASE WHEN kind = 'invoice' AND status_open AND NOT (${HAS_LOCAL}) THEN amount_open END) STORED,
      ADD COLUMN open_unconverted_currency char(3) GENERATED ALWAYS AS (
        CASE WHEN kind = 'invoice' AND status_open AND NOT (${HAS_LOCAL}) THEN currency END) STORED;
    CREATE INDEX documents_open_invoice_aging_idx ON documents (organization_id, partner_id)
      INCLUDE (net_due_date, open_lc_cents, business_unit_id, open_unconverted_amount, open_unconverted_currency)
      WHERE kind = 'invoice' AND status_open AND partner_id IS NOT NULL;
    CREATE INDEX documents_open_unconverted_idx ON documents (organization_id, open_unconverted_currency)
      INCLUDE (business_unit_id)
      WHERE open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL;
    CREATE FUNCTION converted_cents(amount numeric, factor numeric) RETURNS bigint
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN CASE WHEN abs(round(amount * factor, 2)) < 90000000000000000 THEN (round(amount * factor, 2) * 100)::bigint END;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION IF EXISTS converted_cents(numeric, numeric);
    DROP INDEX IF EXISTS documents_open_unconverted_idx;
    ALTER TABLE documents DROP COLUMN open_unconverted_amount, DROP COLUMN open_unconverted_currency, DROP COLUMN open_lc_cents;
    ALTER TABLE documents ADD COLUMN open_lc_cents bigint GENERATED ALWAYS AS (
      CASE WHEN kind = 'invoice' AND status_open THEN
        (round(CASE WHEN amount_open = amount_in_document_currency AND amount_in_local_currency IS NOT NULL THEN amount_in_local_currency
                    ELSE amount_open * coalesce(amount_in_local_currency / nullif(amount_in_document_currency, 0), 1) END, 2) * 100)::bigint
      END) STORED;
    CREATE INDEX documents_open_invoice_aging_idx ON documents (organization_id, partner_id)
      INCLUDE (net_due_date, open_lc_cents, business_unit_id)
      WHERE kind = 'invoice' AND status_open AND partner_id IS NOT NULL;
  `);
}
