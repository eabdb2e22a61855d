/**
 * Bank-transaction metrics (spec 2.14) in SQL: one pass over the organization's transactions in the
 * range, with per-transaction flags from its payments, and — for several currencies — a conversion
 * of each deposit through the latest stored exchange rate on or before its date.
 */
import type { Knex } from 'knex';
import type { BusinessUnitScope, Db } from '@rp/platform';
import { paymentInScopeSql, SIGNED_PAID } from './payments.js';

export interface MetricsFilter {
  bankAccountId?: string;
  startDate?: string;
  endDate?: string;
  /**
   * The caller's business units ('*' for all). A transaction with a payment outside them (its payer or
   * an invoice it is allocated to belongs to another unit: see paymentInScopeSql) is left out, as
   * GET /v2/payments leaves that payment out; transactions without payments count for everyone.
   */
  scope?: BusinessUnitScope;
}

/** The organization's transactions in the range with their payment flags (CTE `tx`); dates are booking_date, else value_date. */
function txCte(organizationId: string, f: MetricsFilter): { sql: string; bindings: Knex.RawBinding[] } {
  const where = ['t.organization_id = ?'];
  const bindings: Knex.RawBinding[] = [organizationId];
  if (f.bankAccountId) {
    where.push('t.bank_account_id = ?');
    bindings.push(f.bankAccountId);
  }
  if (f.startDate) {
    where.push('COALESCE(t.booking_date, t.value_date) >= ?::date');
    bindings.push(f.startDate);
  }
  if (f.endDate) {
    where.push('COALESCE(t.booking_date, t.value_date) <= ?::date');
    bindings.push(f.endDate);
  }
  const inScope = paymentInScopeSql('sp', f.scope ?? '*');
  if (inScope) {
    where.push(`NOT EXISTS (SELECT 1 FROM payments sp WHERE sp.bank_transaction_id = t.id AND NOT ${inScope.sql})`);
    bindings.push(...inScope.bindings);
  }
  // the payment's cash: a credit memo's credit applied counts negative
  const allocated = `(SELECT COALESCE(SUM(${SIGNED_PAID}), 0) FROM payment_allocations a WHERE a.payment_id = p.id)`;
  const sql = `tx AS (
    SELECT t.id, t.amount, t.currency, COALESCE(t.booking_date, t.value_date) AS d, t.amount > 0 AS deposit,
      (t.is_payment IS DISTINCT FROM false
        AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id)) AS potential,
      EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id AND p.status = 'unapproved' AND ${allocated} <> t.amount) AS needs_allocation,
      EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id AND p.status = 'unapproved' AND ${allocated} = t.amount) AS ready_to_post,
      EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id AND p.posting_error IS NOT NULL AND p.posted_at IS NULL) AS posting_error
    FROM bank_transactions t
    WHERE ${where.join(' AND ')}
  )`;
  return { sql, bindings };
}

/** Distinct currencies of the deposits in range. */
export async function depositCurrencies(db: Db, organizationId: string, f: MetricsFilter): Promise<string[]> {
  const cte = txCte(organizationId, f);
  const res = await db.raw(`WITH ${cte.sql} SELECT DISTINCT trim(currency) AS currency FROM tx WHERE deposit ORDER BY 1`, cte.bindings);
  return (res.rows as { currency: string }[]).map((r) => r.currency);
}

export interface MetricsRow {
  total_count: string;
  potential_count: string;
  potential_amount: string;
  needs_count: string;
  needs_amount: string;
  ready_count: string;
  ready_amount: string;
  posting_errors_count: string;
  missing_currency: string | null;
  missing_date: string | null;
}

/**
 * Aggregate the metrics. With `convertTo` each deposit amount not in that currency is converted with
 * the latest rate on or before its date, X→target (multiply) or target→X (divide), the direct pair
 * winning on the same date; `missing_*` names the first deposit (earliest date) that has no rate.
 */
export async function aggregateMetrics(db: Db, organizationId: string, f: MetricsFilter, convertTo: string | null): Promise<MetricsRow> {
  const cte = txCte(organizationId, f);
  const bindings: Knex.RawBinding[] = [...cte.bindings];
  let amountSql = 'tx.amount';
  let join = '';
  if (convertTo) {
    amountSql = 'CASE WHEN trim(tx.currency) = ? THEN tx.amount ELSE fx.converted END';
    bindings.push(convertTo);
    join = `LEFT JOIN LATERAL (
      SELECT CASE WHEN r.base_currency = tx.currency THEN tx.amount * r.rate ELSE tx.amount / r.rate END AS converted
      FROM exchange_rates r
      WHERE r.organization_id = ? AND r.rate_date <= tx.d
        AND ((r.base_currency = tx.currency AND trim(r.quote_currency) = ?) OR (trim(r.base_currency) = ? AND r.quote_currency = tx.currency))
      ORDER BY r.rate_date DESC, (r.base_currency = tx.currency) DESC
      LIMIT 1
    ) fx ON true`;
    bindings.push(organizationId, convertTo, convertTo);
  }
  const sql = `WITH ${cte.sql},
    dep AS (SELECT tx.*, ${amountSql} AS amt FROM tx ${join} WHERE tx.deposit)
    SELECT
      (SELECT count(*) FROM dep) AS total_count,
      (SELECT count(*) FROM dep WHERE potential) AS potential_count,
      (SELECT COALESCE(SUM(amt), 0)::text FROM dep WHERE potential) AS potential_amount,
      (SELECT count(*) FROM dep WHERE needs_allocation) AS needs_count,
      (SELECT COALESCE(SUM(amt), 0)::text FROM dep WHERE needs_allocation) AS needs_amount,
      (SELECT count(*) FROM dep WHERE ready_to_post) AS ready_count,
      (SELECT COALESCE(SUM(amt), 0)::text FROM dep WHERE ready_to_post) AS ready_amount,
      (SELECT count(*) FROM tx WHERE posting_error) AS posting_errors_count,
      (SELECT trim(currency) FROM dep WHERE amt IS NULL ORDER BY d NULLS FIRST, id LIMIT 1) AS missing_currency,
      (SELECT d::text FROM dep WHERE amt IS NULL ORDER BY d NULLS FIRST, id LIMIT 1) AS missing_date`;
  const res = await db.raw(sql, bindings);
  return (res.rows as MetricsRow[])[0]!;
}
