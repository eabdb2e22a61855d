import { z } from 'zod';
import { AppError, formatMoney, getOrganizationProfile, idSchema, isoDate, NotFoundError, ValidationError } from '@rp/platform';
import { route } from '../deps.js';
import { aggregateMetrics, depositCurrencies } from '../store/metrics.js';

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

const dateParam = () => isoDate();

const bucket = () => z.object({ count: z.number().int().min(0), total_amount: z.string().describe('Decimal string with 2 decimals.') });

export const bankTransactionMetricsSchema = z.object({
  total_count: z.number().int().min(0),
  potential_payments: bucket(),
  needs_allocation: bucket(),
  ready_to_post: bucket(),
  posting_errors_count: z.number().int().min(0),
  is_multi_currency: z.boolean(),
  currency: z.string(),
})
  .meta({ id: 'BankTransactionMetrics' });

export const metricsRoutes = [
  route({
    method: 'get',
    path: '/v2/analytics/bank-transactions',
    operationId: 'getBankTransactionMetrics',
    summary: 'Bank-transaction metrics',
    description:
      'Metrics over the organization\'s bank transactions, optionally of one bank account (`bank_account_id`) and a date range ' +
      '(`start_date`, `end_date`, both inclusive, on the booking date — the value date for transactions without one). Deposits ' +
      'are transactions with a positive amount. `total_count`: deposits in range. `potential_payments`: deposits whose is_payment ' +
      'is not false and that have no payment yet. `needs_allocation`: deposits having an unapproved payment whose allocated amount ' +
      '(sum of amount_paid) differs from the transaction amount. `ready_to_post`: deposits having an unapproved payment whose ' +
      'allocated amount equals it. `posting_errors_count`: transactions with at least one payment that has a posting error and is ' +
      'not posted. `total_amount` sums the deposit (transaction) amounts, as strings with 2 decimals (rounded half up after summing). ' +
      'When all deposits in range share one currency, amounts are in it (`is_multi_currency` false; with no deposits, the ' +
      'organization\'s base currency). With several currencies each deposit is converted to the organization\'s base currency with ' +
      'the latest stored rate (PUT /v2/exchange-rates) on or before its date; if one is missing the answer is 422 ' +
      '`missing-exchange-rate` naming the currency pair and date — never a silent zero. Another organization\'s bank account ' +
      'simply matches nothing. A member restricted to business units sees the metrics of what they may see: a transaction ' +
      'with a payment outside their units (its payer, or an invoice it is allocated to, belongs to another unit — the payments ' +
      'GET /v2/payments leaves out) is left out of every count and total; transactions without a payment, and those whose ' +
      'payments are all within their units or tied to none, count.',
    tags: ['Analytics'],
    query: z
      .object({
        bank_account_id: idSchema().optional(),
        start_date: dateParam().optional().describe('Inclusive, YYYY-MM-DD.'),
        end_date: dateParam().optional().describe('Inclusive, YYYY-MM-DD.'),
      }),
    response: bankTransactionMetricsSchema,
    errors: [422],
    handler: async ({ query, identity, deps }) => {
      if (query.start_date && query.end_date && query.start_date > query.end_date) {
        throw new ValidationError([{ loc: ['query', 'end_date'], msg: 'must not be before start_date', type: 'value_error.date_range' }]);
      }
      const profile = await getOrganizationProfile(deps.db, identity.org);
      if (!profile) throw new NotFoundError('Organization not found.');
      const base = profile.base_currency.trim();
      const filter = { bankAccountId: query.bank_account_id, startDate: query.start_date, endDate: query.end_date, scope: identity.bu };
      const currencies = await depositCurrencies(deps.db, identity.org, filter);
      const multi = currencies.length > 1;
      const currency = multi ? base : (currencies[0] ?? base);
      const m = await aggregateMetrics(deps.db, identity.org, filter, multi ? base : null);
      if (multi && m.missing_currency) throw new MissingExchangeRateError(m.missing_currency, base, m.missing_date);
      return {
        total_count: Number(m.total_count),
        potential_payments: { count: Number(m.potential_count), total_amount: formatMoney(m.potential_amount) },
        needs_allocation: { count: Number(m.needs_count), total_amount: formatMoney(m.needs_amount) },
        ready_to_post: { count: Number(m.ready_count), total_amount: formatMoney(m.ready_amount) },
        posting_errors_count: Number(m.posting_errors_count),
        is_multi_currency: multi,
        currency,
      };
    },
  }),
];
