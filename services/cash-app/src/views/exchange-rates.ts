/** The API shape of an exchange rate. */
import { isoTime } from '@rp/platform';
import type { ExchangeRateRow } from '../store/exchange-rates.js';

export function rateView(r: ExchangeRateRow) {
  return {
    object: 'exchange_rate' as const,
    id: r.id,
    base_currency: r.base_currency.trim(),
    quote_currency: r.quote_currency.trim(),
    rate_date: r.rate_date,
    // NUMERIC(24,10) without trailing zeros ("1.0850000000" → "1.085")
    rate: r.rate.includes('.') ? r.rate.replace(/0+$/, '').replace(/\.$/, '') : r.rate,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
