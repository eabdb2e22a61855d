/** The API shape of the bank-transaction metrics. */
import { formatMoney } from '@rp/platform';
import type { BankTransactionMetrics } from '../domain/metrics.js';

export function bankTransactionMetricsView({ metrics: m, isMultiCurrency, currency }: BankTransactionMetrics) {
  return {
    total_count: Number(m.total_count),
    potential_payments: { count: Number(m.potential_count), total_amount: formatMoney(m.potential_amount) },
    needs_allocation: { count: Number(m.needs_count), total_amount: formatMoney(m.needs_amount) },
    ready_to_post: { count: Number(m.ready_count), total_amount: formatMoney(m.ready_amount) },
    posting_errors_count: Number(m.posting_errors_count),
    is_multi_currency: isMultiCurrency,
    currency,
  };
}
