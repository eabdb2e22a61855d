/**
 * Customer-facing totals of a set of invoices that may be in several currencies: what outreach
 * templates (admin's previews and collection emails, cash-app's payment receipts) show as `totals`.
 *
 * Amounts of different currencies are never added up as one figure: the totals are per currency,
 * and a figure in the organization's base currency exists only when every currency involved has a
 * stored exchange rate to it (DESIGN §9: a local-currency figure is converted, never assumed; where
 * no rate exists, the answer says so). Each amount is a decimal string with its currency's minor
 * units (JPY "1190", EUR "1190.00", KWD "1190.000"), rounded half up, no grouping.
 *
 * Exchange rates are cash-app's (`cash_app.exchange_rates`, maintained through /v2/exchange-rates).
 * `exchangeRatesToBase` is the one reader of that table outside cash-app, as ledger.ts is of the
 * integrations ledger.
 */
import type { Knex } from 'knex';
import { Money } from './money.js';
import { currencyMinorUnits } from './reference.js';

export const EXCHANGE_RATES_TABLE = 'cash_app.exchange_rates';

/** The rate a currency is converted to the base currency with. */
export interface RateToBase {
  /** the converted currency */
  currency: string;
  /** base-currency units per one unit of `currency` (exact decimal string) */
  rate: string;
  /** the date of the stored rate used (the latest on or before the as-of date) */
  rate_date: string;
  /** the stored pair the rate comes from, `BASE/QUOTE` as entered (its inverse when stored the other way round) */
  pair: string;
}

/**
 * For each of `currencies` other than `base`: the latest stored rate to `base` on or before
 * `onOrBefore` (X/base as stored, or the inverse of base/X; the direct pair wins on the same date, the
 * rule of cash-app's conversions). A currency without such a rate is absent from the map.
 */
export async function exchangeRatesToBase(db: Knex, organizationId: string, baseCurrency: string, onOrBefore: string, currencies: readonly string[]): Promise<Map<string, RateToBase>> {
  const base = baseCurrency.trim();
  const wanted = [...new Set(currencies.map((c) => c.trim()))].filter((c) => c !== base);
  if (wanted.length === 0) return new Map();
  const res = await db.raw(
    `SELECT DISTINCT ON (currency) currency, (CASE WHEN inverse THEN 1 / rate ELSE rate END)::text AS rate, to_char(rate_date, 'YYYY-MM-DD') AS rate_date, pair
     FROM (SELECT trim(base_currency) AS currency, rate, false AS inverse, rate_date, trim(base_currency) || '/' || trim(quote_currency) AS pair
           FROM ${EXCHANGE_RATES_TABLE}
           WHERE organization_id = ? AND trim(quote_currency) = ? AND trim(base_currency) = ANY(?::text[]) AND rate_date <= ?::date
           UNION ALL
           SELECT trim(quote_currency), rate, true, rate_date, trim(base_currency) || '/' || trim(quote_currency)
           FROM ${EXCHANGE_RATES_TABLE}
           WHERE organization_id = ? AND trim(base_currency) = ? AND trim(quote_currency) = ANY(?::text[]) AND rate_date <= ?::date) r
     ORDER BY currency, rate_date DESC, inverse`,
    [organizationId, base, wanted, onOrBefore, organizationId, base, wanted, onOrBefore],
  );
  return new Map((res.rows as RateToBase[]).map((r) => [r.currency, { currency: r.currency, rate: new Money(r.rate).toString(), rate_date: r.rate_date, pair: r.pair }]));
}

/** `value` with `currency`'s minor units, rounded half up ("1190.5" JPY → "1191"). */
export function formatInMinorUnits(value: string | number | Money, currency: string): string {
  return new Money(value).toFixed(currencyMinorUnits(currency.trim()), Money.ROUND_HALF_UP);
}

export interface TotalsInvoice {
  currency: string;
  /** decimal string */
  amount_open: string;
  is_overdue: boolean;
  days_overdue: number;
}

export interface CurrencyTotal {
  currency: string;
  open_amount: string;
  overdue_amount: string;
  /** invoices with an open amount */
  open_count: number;
  overdue_count: number;
}

export interface BaseTotals {
  currency: string;
  /** the converted sum, or null when a currency has no rate (see `missing_currencies`) */
  open_amount: string | null;
  overdue_amount: string | null;
  /** true when every currency is the base currency or has a rate */
  complete: boolean;
  /** currencies without a stored rate to the base currency on or before the as-of date */
  missing_currencies: string[];
  /** the rates used, one per converted currency */
  rates: RateToBase[];
}

export interface CustomerTotals {
  /** one figure: the single currency's sum, or the converted base sum when complete; else null */
  open_amount: string | null;
  overdue_amount: string | null;
  /** the currency of `open_amount`/`overdue_amount` (null when they are null) */
  currency: string | null;
  open_count: number;
  overdue_count: number;
  max_days_overdue: number;
  /** per currency, ordered by currency code */
  by_currency: CurrencyTotal[];
  base: BaseTotals;
}

/**
 * The totals of `invoices` (see the module comment). `totals.open_amount` (and overdue, currency)
 * stays one figure templates can print: the sum when all invoices share one currency (the base
 * currency when there are none), the converted base-currency sum when there are several and all
 * convert, and null otherwise, never a sum across currencies.
 */
export function customerTotals(invoices: readonly TotalsInvoice[], baseCurrency: string, rates: ReadonlyMap<string, RateToBase>): CustomerTotals {
  const base = baseCurrency.trim();
  const groups = new Map<string, { open: Money; overdue: Money; openCount: number; overdueCount: number }>();
  for (const i of invoices) {
    const c = i.currency.trim();
    const g = groups.get(c) ?? { open: new Money(0), overdue: new Money(0), openCount: 0, overdueCount: 0 };
    const open = new Money(i.amount_open);
    g.open = g.open.plus(open);
    if (!open.isZero()) g.openCount++;
    if (i.is_overdue) {
      g.overdue = g.overdue.plus(open);
      g.overdueCount++;
    }
    groups.set(c, g);
  }
  const currencies = [...groups.keys()].sort();
  const byCurrency: CurrencyTotal[] = currencies.map((c) => {
    const g = groups.get(c)!;
    return { currency: c, open_amount: formatInMinorUnits(g.open, c), overdue_amount: formatInMinorUnits(g.overdue, c), open_count: g.openCount, overdue_count: g.overdueCount };
  });
  const used: RateToBase[] = [];
  const missing: string[] = [];
  let open = new Money(0);
  let overdue = new Money(0);
  for (const c of currencies) {
    const g = groups.get(c)!;
    if (c === base) {
      open = open.plus(g.open);
      overdue = overdue.plus(g.overdue);
      continue;
    }
    const r = rates.get(c);
    if (!r) {
      missing.push(c);
      continue;
    }
    used.push(r);
    open = open.plus(g.open.times(r.rate));
    overdue = overdue.plus(g.overdue.times(r.rate));
  }
  const complete = missing.length === 0;
  const baseTotals: BaseTotals = {
    currency: base,
    open_amount: complete ? formatInMinorUnits(open, base) : null,
    overdue_amount: complete ? formatInMinorUnits(overdue, base) : null,
    complete,
    missing_currencies: missing,
    rates: used,
  };
  const single = byCurrency.length === 1 ? byCurrency[0]! : null;
  const one =
    byCurrency.length === 0
      ? { open_amount: formatInMinorUnits(0, base), overdue_amount: formatInMinorUnits(0, base), currency: base }
      : single
        ? { open_amount: single.open_amount, overdue_amount: single.overdue_amount, currency: single.currency }
        : complete
          ? { open_amount: baseTotals.open_amount, overdue_amount: baseTotals.overdue_amount, currency: base }
          : { open_amount: null, overdue_amount: null, currency: null };
  return {
    ...one,
    open_count: byCurrency.reduce((n, c) => n + c.open_count, 0),
    overdue_count: byCurrency.reduce((n, c) => n + c.overdue_count, 0),
    max_days_overdue: Math.max(0, ...invoices.map((i) => i.days_overdue)),
    by_currency: byCurrency,
    base: baseTotals,
  };
}
