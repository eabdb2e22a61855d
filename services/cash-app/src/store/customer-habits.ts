/** The per-customer cash-app figures of the onboarding extraction, read in set-based statements. */
import type { Db } from '@rp/platform';

/**
 * Per-customer cash-application aggregates of one window (the onboarding extraction's cash-app
 * figures, activities/customer-habits.ts). Dates: a payment's payment_date, else its deposit's
 * booking (else value) date; a remittance's transaction_date, else the day it was received.
 * Payments count while live (`unapproved` or `approved`); their method is the payment_method of the
 * remittance advice matched to them (payments have no method column of their own; a payment with
 * no remittance has no recorded method). Deductions: allocations of those payments written off to
 * an adjustment (adjustment_amount ≠ 0), the adjustment's name being the reason.
 */
const DATED_PAYMENTS = `
  SELECT p.id, p.partner_id, p.currency, lower(btrim(r.payment_method)) AS method,
         COALESCE(p.payment_date, t.booking_date, t.value_date, (p.created_at AT TIME ZONE 'UTC')::date) AS day
  FROM payments p
  JOIN bank_transactions t ON t.id = p.bank_transaction_id
  LEFT JOIN remittances r ON r.id = p.remittance_id AND r.organization_id = p.organization_id
  WHERE p.organization_id = :org AND p.partner_id IS NOT NULL AND p.status IN ('unapproved', 'approved')`;

const DATED_REMITTANCES = `
  SELECT r.id, r.partner_id, COALESCE(r.transaction_date, (r.created_at AT TIME ZONE 'UTC')::date) AS day,
         EXISTS (SELECT 1 FROM remittance_allocations a WHERE a.remittance_id = r.id AND btrim(a.invoice_number) <> '') AS names_invoice
  FROM remittances r
  WHERE r.organization_id = :org AND r.partner_id IS NOT NULL`;

export interface HabitsPartnerRow {
  partner_id: string;
  first_date: string;
  last_date: string;
  payment_count: number;
  remittance_count: number;
  remittances_naming_invoice: number;
}

/** The customers with a payment or remittance dated in [start, end], after `after` by id, at most `limit`. */
export async function habitsPartners(db: Db, org: string, start: string, end: string, after: string | null, limit: number): Promise<HabitsPartnerRow[]> {
  const res = await db.raw(
    `WITH pay AS (SELECT * FROM (${DATED_PAYMENTS}) x WHERE day BETWEEN :start::date AND :end::date),
          rem AS (SELECT * FROM (${DATED_REMITTANCES}) x WHERE day BETWEEN :start::date AND :end::date),
          ev AS (SELECT partner_id, day, 1 AS pay, 0 AS rem, 0 AS named FROM pay
                 UNION ALL SELECT partner_id, day, 0, 1, CASE WHEN names_invoice THEN 1 ELSE 0 END FROM rem)
     SELECT partner_id::text, to_char(min(day), 'YYYY-MM-DD') AS first_date, to_char(max(day), 'YYYY-MM-DD') AS last_date,
            sum(pay)::int AS payment_count, sum(rem)::int AS remittance_count, sum(named)::int AS remittances_naming_invoice
     FROM ev
     WHERE (:after::uuid IS NULL OR partner_id > :after::uuid)
     GROUP BY partner_id ORDER BY partner_id LIMIT :limit`,
    { org, start, end, after, limit },
  );
  return res.rows as HabitsPartnerRow[];
}

/** Payments per customer and recorded method (method null: no remittance states it), of the given customers. */
export async function paymentMethodCounts(db: Db, org: string, start: string, end: string, partners: readonly string[]): Promise<{ partner_id: string; method: string | null; n: number }[]> {
  if (partners.length === 0) return [];
  const res = await db.raw(
    `SELECT partner_id::text, NULLIF(method, '') AS method, count(*)::int AS n
     FROM (${DATED_PAYMENTS}) x
     WHERE day BETWEEN :start::date AND :end::date AND partner_id = ANY(:partners::uuid[])
     GROUP BY 1, 2`,
    { org, start, end, partners: [...partners] },
  );
  return res.rows as { partner_id: string; method: string | null; n: number }[];
}

/**
 * Deductions per customer and reason: count and total converted to the base currency with `factors`
 * (currency → factor to base; a deduction in a currency without a factor is left out, counted apart
 * in `unconvertible`), rounded to the base currency's minor units.
 */
export async function deductionsByReason(
  db: Db,
  org: string,
  start: string,
  end: string,
  partners: readonly string[],
  base: string,
  factors: Map<string, string>,
): Promise<{ partner_id: string; reason: string; n: number; total: string | null; unconvertible: number }[]> {
  if (partners.length === 0) return [];
  const currencies = [...factors.keys()];
  const values = [...factors.values()];
  const res = await db.raw(
    `WITH f AS (SELECT * FROM unnest(:currencies::text[], :values::numeric[]) AS f(currency, factor))
     SELECT x.partner_id::text, adj.name AS reason,
            count(f.factor)::int AS n,
            round(sum(pa.adjustment_amount * f.factor), currency_minor_units(:base))::text AS total,
            (count(*) - count(f.factor))::int AS unconvertible
     FROM (${DATED_PAYMENTS}) x
     JOIN payment_allocations pa ON pa.payment_id = x.id AND pa.organization_id = :org
     JOIN adjustments adj ON adj.id = pa.adjustment_id
     LEFT JOIN f ON f.currency = btrim(x.currency)
     WHERE x.day BETWEEN :start::date AND :end::date AND x.partner_id = ANY(:partners::uuid[]) AND pa.adjustment_amount <> 0
     GROUP BY 1, 2`,
    { org, start, end, partners: [...partners], base, currencies, values },
  );
  return res.rows as { partner_id: string; reason: string; n: number; total: string | null; unconvertible: number }[];
}

/** Decimals of a currency (currency_minor_units; 2 for a code it does not know). */
export async function minorUnits(db: Db, currency: string): Promise<number> {
  const res = await db.raw('SELECT currency_minor_units(?) AS digits', [currency]);
  return Number((res.rows[0] as { digits: number }).digits);
}
