/** The API shape of the predicted-overdue answer. */
import type { PredictedOverdueResult } from '../domain/predicted-overdue-report.js';

export function predictedOverdueView(asOfDate: string, tiers: { days: number; amount_lc: string }[], { currency, customers, unconvertible }: PredictedOverdueResult) {
  return {
    as_of_date: asOfDate,
    currency,
    tiers,
    customers,
    unconvertible_currencies: unconvertible,
    unconvertible_invoice_count: unconvertible.reduce((n, u) => n + u.invoice_count, 0),
  };
}
