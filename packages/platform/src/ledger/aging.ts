/**
 * The AR aging report's reads: buckets, the rows per customer and business unit on one snapshot of
 * the ledger, paged by cursor, and the open invoices no stored rate converts.
 */
import type { Knex } from 'knex';
import { LEDGER_TABLES, OPEN_LC_CENTS_SQL } from './tables.js';

/** Aging buckets of the AR aging report: days past net due at the as-of date. */
export const AGING_BUCKETS = [
  { key: 'current', label: 'Current' },
  { key: 'd1_30', label: '1–30' },
  { key: 'd31_60', label: '31–60' },
  { key: 'd61_90', label: '61–90' },
  { key: 'd91_120', label: '91–120' },
  { key: 'over_120', label: 'Over 120' },
] as const;

export interface ArAgingQuery {
  /** as-of date, 'YYYY-MM-DD' (already the date in the organization's timezone) */
  asOfDate: string;
  /** as PredictedOverdueQuery.conversion: currency → factor to the base currency; the rest is not convertible */
  conversion?: { currencies: readonly string[]; factors: readonly string[] };
}

/** One customer × business unit of the aging: open local-currency cents per bucket (exact integers). */
export interface ArAgingRow {
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  /** the invoices' business unit (null: tied to none) */
  business_unit_id: string | null;
  /** cents per AGING_BUCKETS entry, in order */
  buckets: bigint[];
  total: bigint;
  /** open invoices counted (convertible ones) */
  invoice_count: number;
  /** open invoices that cannot be converted to local currency: in no bucket, listed separately */
  unconvertible_count: number;
}

/** An open invoice the aging cannot convert to local currency (no local amount, no stored rate). */
export interface ArAgingUnconvertibleInvoice {
  document_id: string;
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  business_unit_id: string | null;
  document_number: string;
  currency: string;
  /** open amount in the document currency, NUMERIC text (4 decimals as stored) */
  amount_open: string;
  net_due_date: string | null;
  /** as-of − net due (null without a due date) */
  days_past_due: number | null;
}

/**
 * Bucket of each open invoice: as-of − net_due_date ≤ 0 (or no due date) is current, then 1–30,
 * 31–60, 61–90, 91–120 and over 120 days past due. Sums are of integer cents (bigint), signed.
 */
const BUCKET_FILTERS = [
  'age IS NULL OR age <= 0',
  'age BETWEEN 1 AND 30',
  'age BETWEEN 31 AND 60',
  'age BETWEEN 61 AND 90',
  'age BETWEEN 91 AND 120',
  'age > 120',
];

/** Order of the aging rows: by customer name (then account, id), a customer's rows by business unit. */
export const AR_AGING_ORDER = 'partner_name, partner_account_number, partner_id, business_unit_id NULLS FIRST';

/**
 * The bare aging aggregation (also what the benchmark compares with, with `ORDER BY AR_AGING_ORDER`):
 * per (customer, business unit) of the organization's open invoices (kind invoice, status_open, with a
 * partner), their local cents per bucket. `centsSql` is the LC expression (open_lc_cents, or
 * OPEN_LC_CENTS_SQL when some invoice waits for a stored rate). Bindings: as-of, [fx…], organization id.
 */
export function arAgingSql(centsSql: string): string {
  return `SELECT a.partner_id::text AS partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      a.business_unit_id::text AS business_unit_id,
      ${BUCKET_FILTERS.map((_, i) => `coalesce(a.b${i}, 0)::text AS b${i}`).join(', ')},
      a.invoice_count::int AS invoice_count, a.unconvertible_count::int AS unconvertible_count
    FROM (
      SELECT partner_id, business_unit_id,
        ${BUCKET_FILTERS.map((f, i) => `sum(cents) FILTER (WHERE ${f}) AS b${i}`).join(',\n        ')},
        count(cents) AS invoice_count, count(*) - count(cents) AS unconvertible_count
      FROM (SELECT partner_id, business_unit_id, ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL) o
      GROUP BY partner_id, business_unit_id
    ) a
    JOIN ${LEDGER_TABLES.partners} p ON p.id = a.partner_id`;
}

/**
 * A read of the ledger in one snapshot (repeatable read) whose results stream through server-side
 * cursors: `fn` gets the transaction. It writes nothing but temporary tables dropped at its end.
 */
export async function withLedgerSnapshot<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn, { isolationLevel: 'repeatable read' });
}

let cursorSeq = 0;

/** Rows of `sql` in pages of `pageSize` through a server-side cursor (the whole result never sits in memory). */
async function* cursorPages<R>(trx: Knex.Transaction, sql: string, bindings: readonly unknown[], pageSize: number): AsyncGenerator<R[]> {
  const name = `ledger_cursor_${++cursorSeq}`;
  await trx.raw(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, bindings as Knex.RawBinding[]);
  try {
    for (;;) {
      const { rows } = (await trx.raw(`FETCH FORWARD ${Math.max(1, Math.floor(pageSize))} FROM ${name}`)) as { rows: R[] };
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < pageSize) return;
    }
  } finally {
    await trx.raw(`CLOSE ${name}`).catch(() => {});
  }
}

/** Whether some open invoice of the organization waits for a stored rate (no local amount of its own). */
async function anyUnconvertedOpen(trx: Knex.Transaction, organizationId: string): Promise<boolean> {
  const { rows } = await trx.raw(
    `SELECT EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents}
       WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL) AS any`,
    [organizationId],
  );
  return (rows as { any: boolean }[])[0]!.any;
}

/**
 * The AR aging of the organization as of `q.asOfDate`, streamed in pages of (customer, business unit)
 * rows ordered by customer name (AR_AGING_ORDER): inside withLedgerSnapshot. Local currency as predicted overdue: the
 * document's own rate (open_lc_cents), else the stored rate of its currency (`q.conversion`), else
 * not convertible (counted in `unconvertible_count`, in no bucket).
 */
export async function* arAgingPages(trx: Knex.Transaction, organizationId: string, q: ArAgingQuery, pageSize = 2000): AsyncGenerator<ArAgingRow[]> {
  const converting = await anyUnconvertedOpen(trx, organizationId);
  const fx = converting ? [[...(q.conversion?.factors ?? [])], [...(q.conversion?.currencies ?? [])]] : [];
  // The aggregation runs once into a temporary table (CREATE TABLE AS may use parallel workers; a
  // cursor's plan never does), whose one row per customer and unit is then streamed in order through a
  // cursor. No JIT: compiling costs more than this aggregation saves.
  const table = `ar_aging_${++cursorSeq}`;
  await trx.raw('SET LOCAL jit = off');
  await trx.raw(`CREATE TEMPORARY TABLE ${table} ON COMMIT DROP AS ${arAgingSql(converting ? OPEN_LC_CENTS_SQL : 'open_lc_cents')}`, [q.asOfDate, ...fx, organizationId] as Knex.RawBinding[]);
  type Raw = Record<string, string | number | null>;
  for await (const page of cursorPages<Raw>(trx, `SELECT * FROM ${table} ORDER BY ${AR_AGING_ORDER}`, [], pageSize)) {
    yield page.map((r) => {
      const buckets = BUCKET_FILTERS.map((_, i) => BigInt(r[`b${i}`] as string));
      return {
        partner_id: r.partner_id as string,
        partner_name: r.partner_name as string,
        partner_account_number: r.partner_account_number as string | null,
        business_unit_id: r.business_unit_id as string | null,
        buckets,
        total: buckets.reduce((a, b) => a + b, 0n),
        invoice_count: r.invoice_count as number,
        unconvertible_count: r.unconvertible_count as number,
      };
    });
  }
}

/** The open invoices the aging cannot convert (see arAgingPages), streamed, by customer name and document number. */
export async function* arAgingUnconvertiblePages(trx: Knex.Transaction, organizationId: string, q: ArAgingQuery, pageSize = 2000): AsyncGenerator<ArAgingUnconvertibleInvoice[]> {
  const sql = `SELECT d.id::text AS document_id, d.partner_id::text AS partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      d.business_unit_id::text AS business_unit_id, d.document_number, trim(d.open_unconverted_currency) AS currency,
      d.open_unconverted_amount::text AS amount_open, to_char(d.net_due_date, 'YYYY-MM-DD') AS net_due_date,
      ?::date - d.net_due_date AS days_past_due
    FROM ${LEDGER_TABLES.documents} d JOIN ${LEDGER_TABLES.partners} p ON p.id = d.partner_id
    WHERE d.organization_id = ? AND d.open_unconverted_amount IS NOT NULL AND d.partner_id IS NOT NULL
      AND d.kind = 'invoice' AND d.status_open AND d.open_unconverted_currency::text <> ALL(?::text[])
    ORDER BY p.name, p.account_number, d.partner_id, d.document_number, d.id`;
  yield* cursorPages<ArAgingUnconvertibleInvoice>(trx, sql, [q.asOfDate, organizationId, [...(q.conversion?.currencies ?? [])]], pageSize);
}
