/**
 * Bank-transaction metrics: counts and sums of the deposits by stage, in their one currency or, when
 * there are several, converted to the organization's base currency with its exchange rates.
 */
import { AppError, getOrganizationProfile, NotFoundError } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import { aggregateMetrics, depositCurrencies, type MetricsFilter, type MetricsRow } from '../store/metrics.js';

/** 422 when a deposit cannot be converted to the target currency: no stored rate on or before its date. */
export class MissingExchangeRateError extends AppError {
  constructor(from: string, to: string, date: string | null) {
    super({
      status: 422,
      type: 'missing-exchange-rate',
      title: 'Exchange rate missing',
      detail:
        `No exchange rate ${from}/${to} (or ${to}/${from}) on or before ${date ?? '(transaction without a date)'}: load one with ` +
        'PUT /v2/exchange-rates to convert the deposits to the organization\'s base currency.',
    });
  }
}

export interface BankTransactionMetrics {
  metrics: MetricsRow;
  isMultiCurrency: boolean;
  /** The deposits' one currency, or the base currency they are converted to. */
  currency: string;
}

/** The metrics of the deposits the filter selects; a deposit without a rate to convert it is a 422. */
export async function bankTransactionMetrics(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: MetricsFilter): Promise<BankTransactionMetrics> {
  const profile = await getOrganizationProfile(deps.db, organizationId);
  if (!profile) throw new NotFoundError('Organization not found.');
  const base = profile.base_currency.trim();
  const currencies = await depositCurrencies(deps.db, organizationId, filter);
  const multi = currencies.length > 1;
  const currency = multi ? base : (currencies[0] ?? base);
  const m = await aggregateMetrics(deps.db, organizationId, filter, multi ? base : null);
  if (multi && m.missing_currency) throw new MissingExchangeRateError(m.missing_currency, base, m.missing_date);
  return { metrics: m, isMultiCurrency: multi, currency };
}
