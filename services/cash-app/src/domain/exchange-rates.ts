/**
 * The organization's exchange rates: storing a batch by (base, quote, date), idempotently, and
 * reading them back; bank-transaction metrics and reports convert with them.
 */
import type { PageRequest } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import { listExchangeRates, upsertExchangeRates, type ExchangeRateFilter, type ExchangeRateInput, type ExchangeRateRow } from '../store/exchange-rates.js';

/** Inserts or updates the batch's rates; answers the stored rates in request order. */
export async function storeExchangeRates(deps: Pick<CashAppDeps, 'db'>, organizationId: string, rates: readonly ExchangeRateInput[]): Promise<ExchangeRateRow[]> {
  return upsertExchangeRates(deps.db, organizationId, rates);
}

/** A page of the organization's rates, newest rate_date first. */
export async function exchangeRatePage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: ExchangeRateFilter, page: Pick<PageRequest, 'offset' | 'pageSize'>) {
  return listExchangeRates(deps.db, organizationId, filter, page.offset, page.pageSize);
}
