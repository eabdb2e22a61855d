/** The predicted-overdue route (spec 4.3 rule 2): its request, the model's documentation and the answer. */
import { z } from 'zod';
import { idSchema, isoDate } from '@rp/platform';
import { route } from '../deps.js';
import { HISTORY_PRIOR_WEIGHT } from '../domain/predicted-overdue.js';
import { predictOverdue } from '../domain/predicted-overdue-report.js';
import { predictedOverdueView } from '../views/predicted-overdue.js';
import { MAX_STATES, MIN_STATES, WORK_BUDGET } from '../domain/tail-probability.js';

const calendarDate = isoDate('not a calendar date YYYY-MM-DD');

const AMOUNT_RE = /^\d{1,18}(\.\d{1,2})?$/;

const tierSchema = z.object({
  days: z.number().int().min(0).max(36_500).describe('Aged more than this many days past net due at `as_of_date`.'),
  amount_lc: z
    .string()
    .regex(AMOUNT_RE, 'expected a non-negative decimal string with at most 2 decimals, e.g. "10000.00"')
    .describe('Threshold in local (base) currency: the tier trips when the aged sum exceeds it.'),
})
  .meta({ id: 'PredictedOverdueTier' });

const bodySchema = z.object({
  as_of_date: calendarDate.describe('The date at which aging is evaluated (typically a quarter end).'),
  tiers: z.array(tierSchema).min(1).max(10).describe('1 to 10 aging tiers.'),
  business_unit_id__in: z.array(idSchema()).max(500).optional().describe('Only invoices of these business units.'),
  evaluated_at: calendarDate
    .optional()
    .describe("\"Today\" for the probabilities (invoices are known to be unpaid on this date); default: today's date in the organization's timezone."),
})
  .meta({ id: 'PredictedOverdueQuery' });

const trippedTierSchema = z.object({
  days: z.string().describe('The tier\'s `days`, as a string (spec 4.3.2), e.g. "30".'),
  amount_threshold_lc: z.string().describe('The tier\'s `amount_lc` with 2 decimals.'),
  amount_lc: z.string().describe('The customer\'s aged sum for the tier, 2 decimals.'),
  invoice_count: z.number().int(),
  trip_probability: z.number().min(0).max(1),
  trip_probability_max_error: z
    .number()
    .min(0)
    .max(0.5)
    .describe('Guaranteed bound: the exact probability lies within ± this of `trip_probability`. 0 (or below 1e-13) when computed exactly.'),
})
  .meta({ id: 'PredictedOverdueTrippedTier' });

const responseSchema = z.object({
  as_of_date: z.string(),
  currency: z.string().describe('The organization base currency: every amount is in it.'),
  tiers: z.array(z.object({ days: z.number().int(), amount_lc: z.string() })),
  customers: z.array(
    z.object({
      partner_id: z.string(),
      partner_name: z.string(),
      partner_account_number: z.string().nullable(),
      total_open_lc: z.string(),
      history_count: z.number().int(),
      unconvertible_invoice_count: z
        .number()
        .int()
        .describe('Open invoices of the customer in scope left out of every sum: no local-currency amount and no exchange rate to the base currency.'),
      tripped_tiers: z.array(trippedTierSchema),
    }),
  ),
  unconvertible_currencies: z
    .array(z.object({ currency: z.string(), invoice_count: z.number().int() }))
    .describe('Over all customers in scope: currencies of open invoices that could not be converted (no stored rate), with how many; empty when every invoice counted.'),
  unconvertible_invoice_count: z.number().int().describe('Their total: open invoices in scope left out of every sum.'),
})
  .meta({ id: 'PredictedOverdue' });

export const predictedOverdueRoutes = [
  route({
    method: 'post',
    path: '/v2/analytics/predicted-overdue',
    operationId: 'predictedOverdue',
    summary: 'Customers predicted to be overdue by aging tier',
    description: [
      'Aging of open invoices at `as_of_date`, per customer and tier, in the organization base currency (`currency`).',
      '',
      '**Which invoices.** Open invoices (kind invoice, `status_open`) of a customer; credit memos and invoices without a',
      'customer are left out. An invoice counts in a tier when it will be more than `days` days past its `net_due_date` at',
      '`as_of_date` (as_of_date − net_due_date > days); invoices without a net due date count only in `total_open_lc`.',
      '`business_unit_id__in` keeps only invoices of those business units (each must be a unit of the organization, and for a',
      'member one of theirs: 422 naming its index otherwise); a user restricted to some business units never',
      'sees invoices of others (unassigned invoices stay visible).',
      '',
      '**Local currency.** An invoice\'s local-currency open amount is `amount_open` (document currency) converted, rounded',
      'half away from zero to cents:',
      '1. at the document\'s own rate (amount_in_local_currency / amount_in_document_currency) when it has a local amount;',
      '2. else 1:1 when its currency is the base currency;',
      '3. else with the stored exchange rates (PUT /v2/exchange-rates): the latest rate on or before `as_of_date` of',
      '   currency/base (multiply) or base/currency (divide), the direct pair winning on the same date.',
      'The free-text `exchange_rate` of a document is not used (its reference is the source system\'s home currency, not',
      'necessarily the organization\'s). Without any of these the invoice is **not convertible**: it is in no sum (never',
      'counted 1:1) and is reported, per customer in `unconvertible_invoice_count` and over all customers in scope in',
      '`unconvertible_currencies` (currency and count) and `unconvertible_invoice_count`.',
      '',
      '**Signed amounts.** Open amounts are signed: a negative open amount on the invoice side (a credit) reduces the sums',
      'and the probability model treats it the same way (below).',
      '',
      '**Tripping.** A tier trips for a customer when the sum (`amount_lc`, with `invoice_count` invoices) exceeds `amount_lc`',
      'of the tier (strictly). In `tripped_tiers`, `days`, `amount_threshold_lc` and `amount_lc` are strings (spec 4.3.2).',
      'Customers with at least one tripped tier are returned, only their tripped tiers listed (request',
      'order), sorted by their largest tripped amount descending, ties by partner id. `total_open_lc` sums all their',
      'convertible open invoices in scope.',
      '',
      '**trip_probability.** The probability that the tier is still exceeded at `as_of_date`, given what is unpaid today',
      '(`evaluated_at`, default today in the organization\'s timezone):',
      '1. Payment history: the customer\'s closed invoices (cleared, with due and clearing dates; all business units),',
      '   lateness L = clearing_date − net_due_date in days; `history_count` is how many. The empirical survival',
      '   S_c(d) = #{L > d} / n is blended with the organization\'s (all closed invoices): S(d) = w·S_c(d) + (1 − w)·S_org(d),',
      `   w = n / (n + ${HISTORY_PRIOR_WEIGHT}), so a customer with little history leans on the organization.`,
      '2. Each invoice aged a = today − due now and t = as_of − due at as_of is still unpaid then with p = S(t) / S(a)',
      '   (conditional survival). When `as_of_date` is not after today the date has passed for invoices open now: p = 1.',
      '   When S(a) = 0 (no history this late) or the organization has no history at all: p = 1.',
      '3. Invoices are independent Bernoulli(p) with their signed amounts: the probability that their sum exceeds the tier',
      '   amount is computed over the distribution of sums in cents, no sampling. **Exact** when the distribution stays small',
      '   (branches below 1e-17 are dropped within a total of 1e-13); `trip_probability_max_error` is then 0 (or that',
      '   dropped mass). **Bounded** otherwise: past N live sums, N = clamp(' + WORK_BUDGET + ' / m, ' + MIN_STATES + ', ' + MAX_STATES + ') for m',
      '   uncertain invoices, the amounts are counted in units of r = ⌈Σ|amount| / N⌉ cents, once rounded down and once up;',
      '   the two results enclose the exact probability, `trip_probability` is their midpoint and `trip_probability_max_error`',
      '   half their distance (a guaranteed bound, per tier and request; below 1e-3 for 40 uncertain invoices of 10,000.00–60,000.00',
      '   around a 1,000,000.00 tier). Large cases run on a small pool of worker threads, not on the API\'s event loop, so',
      '   one heavy request does not delay others.',
      '',
      'Amounts are strings with 2 decimals. 422 for 0 or more than 10 tiers, a bad decimal or date.',
    ].join('\n'),
    tags: ['Analytics'],
    body: bodySchema,
    response: responseSchema,
    errors: [404],
    handler: async ({ body, identity, deps }) => {
      const tiers = body.tiers.map((t) => ({ days: t.days, amount_lc: t.amount_lc }));
      const result = await predictOverdue(deps, { organizationId: identity.org, scope: identity.bu }, {
        asOfDate: body.as_of_date,
        evaluatedAt: body.evaluated_at,
        tiers,
        businessUnitIds: body.business_unit_id__in,
      });
      return predictedOverdueView(body.as_of_date, tiers, result);
    },
  }),
];
