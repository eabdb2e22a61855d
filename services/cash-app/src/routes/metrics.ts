/** The bank-transaction metrics route: its filters and answer schema. */
import { z } from 'zod';
import { idSchema, isoDate, ValidationError } from '@rp/platform';
import { route } from '../deps.js';
import { bankTransactionMetrics } from '../domain/metrics.js';
import { bankTransactionMetricsView } from '../views/metrics.js';

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
      '(sum of amount_paid, a credit memo\'s credit applied counted negative) differs from the transaction amount. `ready_to_post`: deposits having an unapproved payment whose ' +
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
      const filter = { bankAccountId: query.bank_account_id, startDate: query.start_date, endDate: query.end_date, scope: identity.bu };
      return bankTransactionMetricsView(await bankTransactionMetrics(deps, identity.org, filter));
    },
  }),
];
