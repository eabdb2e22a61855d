/**
 * The inputs of predicted overdue (cash-app analytics): per-customer open items and lateness
 * history in one streamed statement, invoices that cannot be converted, and the organization's
 * lateness histogram.
 */
import type { Knex } from 'knex';
import { streamRows } from '../db.js';
import { LEDGER_TABLES, OPEN_LC_CENTS_SQL } from './tables.js';

export interface PredictedOverdueQuery {
  /** as_of date, 'YYYY-MM-DD' */
  asOfDate: string;
  /** tiers: aged more than `days` past net due at as_of; tripped when the LC sum exceeds `amountLc` (decimal string) */
  tiers: readonly { days: number; amountLc: string }[];
  /** only documents of these business units (optional filter) */
  businessUnitIds?: readonly string[];
  /** business units the caller may access ('*' for all); documents of other units are left out, unassigned ones stay */
  accessibleBusinessUnits?: '*' | readonly string[];
  /**
   * How to convert an open invoice without a local-currency amount: its currency → factor to the base
   * currency (decimal strings; the base currency itself with '1'). Without a factor the invoice is not
   * convertible: left out of every sum and counted in `unconvertible_count`. Default: none.
   */
  conversion?: { currencies: readonly string[]; factors: readonly string[] };
}

export interface PredictedOverdueRow {
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  /** LC sum of all the customer's convertible open invoices (in scope), 2 decimals */
  total_open_lc: string;
  /** open invoices in scope that are not convertible (no local amount, no conversion factor): in no sum */
  unconvertible_count: number;
  /** per tier, in request order: LC sum and count of the invoices aged past it */
  tier_amounts: string[];
  tier_counts: number[];
  /** the convertible invoices aged past the smallest tier: as_of − net_due_date (days) and open LC in signed cents */
  invoice_ages: number[];
  invoice_cents: number[];
  /** the customer's closed invoices (whole history, every business unit): lateness of each (days) */
  history_lateness: number[];
}

const LATENESS_COUNTS_TABLE = 'integrations.invoice_lateness_counts';
const CLOSED_INVOICE_SQL = `kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL`;

function conversionBindings(q: PredictedOverdueQuery): unknown[] {
  return [[...(q.conversion?.factors ?? [])], [...(q.conversion?.currencies ?? [])]];
}

function scopeOf(q: Pick<PredictedOverdueQuery, 'businessUnitIds' | 'accessibleBusinessUnits'>): { sql: string; bindings: unknown[] } {
  const scope: string[] = [];
  const bindings: unknown[] = [];
  if (q.businessUnitIds) {
    scope.push('AND business_unit_id = ANY(?::uuid[])');
    bindings.push([...q.businessUnitIds]);
  }
  if (q.accessibleBusinessUnits && q.accessibleBusinessUnits !== '*') {
    scope.push('AND (business_unit_id IS NULL OR business_unit_id = ANY(?::uuid[]))');
    bindings.push([...q.accessibleBusinessUnits]);
  }
  return { sql: scope.join(' '), bindings };
}

/**
 * Predicted overdue, one statement: a single pass over the organization's open invoices (kind
 * invoice, status_open, with a partner; their open amount in local currency per OPEN_LC_CENTS_SQL,
 * NULL when not convertible) aggregates per customer its total, the number of invoices that are not
 * convertible and, per tier, the LC sum and count of the (convertible) invoices more than `days` past
 * net due at as_of; sums are signed (credits on the invoice side reduce them). Only customers with a
 * tripped tier (sum > amount) come back, each with its aged invoices (for the trip probabilities)
 * and its lateness histogram, both read through covering indexes for those customers only.
 */
export async function predictedOverdueRows(
  db: Knex,
  organizationId: string,
  q: PredictedOverdueQuery,
  /**
   * Each customer's row as it arrives (the aggregation emits customers while it scans): the caller's
   * work on them overlaps the statement. Given, the returned list is empty.
   */
  onRow?: (row: PredictedOverdueRow) => void,
): Promise<PredictedOverdueRow[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  return db.transaction(
    async (trx) => {
      // The conversion expression costs once per aggregate that reads it (the planner substitutes it
      // into each of them) on every open invoice. When no open invoice in scope waits for a conversion
      // (every one gives its local amount: the middleware's usual case), open_lc_cents is the same
      // value: read the column. Both statements see one snapshot (repeatable read).
      const { rows: pending } = await trx.raw(
        `SELECT EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents}
           WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL ${scopeSql}) AS any`,
        [organizationId, ...scopeBindings] as Knex.RawBinding[],
      );
      return predictedOverdueStatement(trx, organizationId, q, (pending as { any: boolean }[])[0]!.any, onRow);
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

async function predictedOverdueStatement(
  trx: Knex.Transaction,
  organizationId: string,
  q: PredictedOverdueQuery,
  converting: boolean,
  onRow?: (row: PredictedOverdueRow) => void,
): Promise<PredictedOverdueRow[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  const fx = converting ? conversionBindings(q) : [];
  const centsSql = converting ? OPEN_LC_CENTS_SQL : 'open_lc_cents';
  const minDays = Math.min(...q.tiers.map((t) => t.days));
  // Without conversion every open invoice in scope has its cents (no NULLs to leave out): plain counts.
  const counted = converting ? 'count(cents)' : 'count(*)';
  const tierCols = q.tiers.map((_, i) => `sum(cents) FILTER (WHERE age > ?) AS s${i}, ${counted} FILTER (WHERE age > ?) AS c${i}`).join(',\n      ');
  const tierBindings = q.tiers.flatMap((t) => [t.days, t.days]);
  const having = q.tiers.map(() => 'sum(cents) FILTER (WHERE age > ?) > ?::numeric * 100').join(' OR ');
  const havingBindings = q.tiers.flatMap((t) => [t.days, t.amountLc]);
  const sql = `
    WITH agg AS (
      SELECT partner_id, sum(cents) AS total_open_cents, ${converting ? 'count(*) FILTER (WHERE cents IS NULL)' : '0'} AS unconvertible,
      ${tierCols}
      FROM (SELECT partner_id, ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL ${scopeSql}) o
      GROUP BY partner_id
      HAVING ${having}
    )
    SELECT agg.partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      (coalesce(agg.total_open_cents, 0) / 100.0)::numeric(20, 2)::text AS total_open_lc, agg.unconvertible::int AS unconvertible_count,
      ARRAY[${q.tiers.map((_, i) => `(coalesce(agg.s${i}, 0) / 100.0)::numeric(20, 2)::text`).join(', ')}] AS tier_amounts,
      ARRAY[${q.tiers.map((_, i) => `agg.c${i}::int`).join(', ')}] AS tier_counts,
      inv.ages AS invoice_ages, inv.cents AS invoice_cents, hist.lateness AS history_lateness
    FROM agg
    CROSS JOIN LATERAL (SELECT name, account_number FROM ${LEDGER_TABLES.partners} WHERE id = agg.partner_id OFFSET 0) p
    CROSS JOIN LATERAL (
      SELECT string_agg(age::text, ',') AS ages, string_agg(cents::text, ',') AS cents
      FROM (SELECT ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND partner_id = agg.partner_id AND kind = 'invoice' AND status_open
              AND net_due_date < ?::date - ?::int ${scopeSql}) a
      ${converting ? 'WHERE cents IS NOT NULL' : ''}
    ) inv
    CROSS JOIN LATERAL (
      SELECT string_agg((clearing_date - net_due_date)::text, ',') AS lateness
      FROM ${LEDGER_TABLES.documents}
      WHERE organization_id = ? AND partner_id = agg.partner_id AND ${CLOSED_INVOICE_SQL}
    ) hist`;
  const bindings = [
    ...tierBindings, q.asOfDate, ...fx, organizationId, ...scopeBindings, ...havingBindings,
    q.asOfDate, ...fx, organizationId, q.asOfDate, minDays, ...scopeBindings,
    organizationId,
  ];
  // The planner's estimate of tripped customers is far too high (HAVING selectivity), which pushes the
  // statement past the JIT cost thresholds: compiling it costs more than the scan. JIT off, for this statement only.
  await trx.raw('SET LOCAL jit = off');
  // integer lists travel as comma-separated text: much cheaper to parse than Postgres arrays, and read
  // as a JSON array (V8's JSON parser takes a third of the time of split + Number on these lists)
  const numbers = (list: string | null): number[] => (list ? (JSON.parse(`[${list}]`) as number[]) : []);
  const collected: PredictedOverdueRow[] = [];
  const deliver = onRow ?? ((row: PredictedOverdueRow) => void collected.push(row));
  await streamRows<WireRow>(trx, sql, bindings, (r) =>
    deliver({ ...r, invoice_ages: numbers(r.invoice_ages), invoice_cents: numbers(r.invoice_cents), history_lateness: numbers(r.history_lateness) }),
  );
  return collected;
}

/** A predicted-overdue row as PostgreSQL sends it: the integer lists as comma-separated text. */
type WireRow = Omit<PredictedOverdueRow, 'invoice_ages' | 'invoice_cents' | 'history_lateness'> & {
  invoice_ages: string | null;
  invoice_cents: string | null;
  history_lateness: string | null;
};

/**
 * Open invoices (kind invoice, with a partner, in scope) that have no local-currency amount and whose
 * currency is not among `convertible`, per currency: what predicted overdue cannot convert.
 */
export async function unconvertibleOpenInvoices(
  db: Knex,
  organizationId: string,
  q: Pick<PredictedOverdueQuery, 'businessUnitIds' | 'accessibleBusinessUnits'>,
  convertible: readonly string[],
): Promise<{ currency: string; invoice_count: number }[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  const res = await db.raw(
    `SELECT trim(open_unconverted_currency) AS currency, count(*)::int AS invoice_count
     FROM ${LEDGER_TABLES.documents}
     WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL
       AND kind = 'invoice' AND status_open AND open_unconverted_currency::text <> ALL(?::text[]) ${scopeSql}
     GROUP BY 1 ORDER BY 1`,
    [organizationId, [...convertible], ...scopeBindings] as Knex.RawBinding[],
  );
  return res.rows as { currency: string; invoice_count: number }[];
}

/** The organization's whole payment history: lateness (clearing − net due, days) → number of closed invoices. */
export async function organizationLatenessHistogram(db: Knex, organizationId: string): Promise<[lateness: number, count: number][]> {
  const rows = (await db(LATENESS_COUNTS_TABLE)
    .select('lateness', 'invoice_count')
    .where({ organization_id: organizationId })
    .andWhere('invoice_count', '>', 0)) as { lateness: number; invoice_count: string }[];
  return rows.map((r) => [r.lateness, Number(r.invoice_count)]);
}

// ---------------------------------------------------------------- AR aging (scheduled report)
