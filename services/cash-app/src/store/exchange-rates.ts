/** Exchange rates in the database: the idempotent batch upsert, pages of rates and the conversion factors to a currency. */
import { newId, type Db } from '@rp/platform';

export interface ExchangeRateRow {
  id: string;
  organization_id: string;
  base_currency: string;
  quote_currency: string;
  rate_date: string;
  rate: string;
  created_at: Date;
  modified_at: Date;
}

export interface ExchangeRateInput {
  base_currency: string;
  quote_currency: string;
  rate_date: string;
  rate: string;
}

/** Insert or update rates by (base, quote, date), set-based; returns the stored rows in input order. */
export async function upsertExchangeRates(db: Db, organizationId: string, rates: readonly ExchangeRateInput[]): Promise<ExchangeRateRow[]> {
  if (rates.length === 0) return [];
  const rows = (await db('exchange_rates')
    .insert(rates.map((r) => ({ id: newId(), organization_id: organizationId, ...r })))
    .onConflict(['organization_id', 'base_currency', 'quote_currency', 'rate_date'])
    .merge({ rate: db.raw('excluded.rate'), modified_at: db.fn.now() })
    .returning('*')) as ExchangeRateRow[];
  const key = (r: { base_currency: string; quote_currency: string; rate_date: string }) => `${r.base_currency.trim()}/${r.quote_currency.trim()}/${r.rate_date}`;
  const byKey = new Map(rows.map((r) => [key(r), r]));
  return rates.map((r) => byKey.get(key(r))!);
}

export interface ExchangeRateFilter {
  baseCurrency?: string;
  quoteCurrency?: string;
  startDate?: string;
  endDate?: string;
}

export async function listExchangeRates(db: Db, organizationId: string, f: ExchangeRateFilter, offset: number, limit: number) {
  const scoped = () => {
    const q = db('exchange_rates').where({ organization_id: organizationId });
    if (f.baseCurrency) q.andWhere('base_currency', f.baseCurrency);
    if (f.quoteCurrency) q.andWhere('quote_currency', f.quoteCurrency);
    if (f.startDate) q.andWhere('rate_date', '>=', f.startDate);
    if (f.endDate) q.andWhere('rate_date', '<=', f.endDate);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    scoped().select('*').orderBy([{ column: 'rate_date', order: 'desc' }, { column: 'base_currency' }, { column: 'quote_currency' }]).offset(offset).limit(limit),
    scoped().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ExchangeRateRow[], total: Number(count) };
}

/**
 * Factors to `base` for every currency with a stored rate on or before `onOrBefore`: the latest rate
 * of X/base (factor = rate) or base/X (factor = 1 / rate), the direct pair winning on the same date
 * (the rule of the bank-transaction metrics). The base currency itself has factor 1.
 */
export async function conversionFactorsTo(db: Db, organizationId: string, base: string, onOrBefore: string): Promise<Map<string, string>> {
  const res = await db.raw(
    `SELECT DISTINCT ON (currency) currency, (CASE WHEN inverse THEN 1 / rate ELSE rate END)::text AS factor
     FROM (SELECT trim(base_currency) AS currency, rate, false AS inverse, rate_date FROM exchange_rates
           WHERE organization_id = ? AND trim(quote_currency) = ? AND rate_date <= ?::date
           UNION ALL
           SELECT trim(quote_currency), rate, true, rate_date FROM exchange_rates
           WHERE organization_id = ? AND trim(base_currency) = ? AND rate_date <= ?::date) r
     ORDER BY currency, rate_date DESC, inverse`,
    [organizationId, base, onOrBefore, organizationId, base, onOrBefore],
  );
  const factors = new Map<string, string>((res.rows as { currency: string; factor: string }[]).map((r) => [r.currency, r.factor]));
  factors.set(base, '1');
  return factors;
}
