import { z } from 'zod';
import { NotFoundError } from '@rp/platform';
import { route } from '../deps.js';
import { daysBetween, HISTORY_PRIOR_WEIGHT, predictedOverdueCustomers } from '../domain/predicted-overdue.js';
import { loadPredictedOverdue } from '../store/predicted-overdue.js';

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const isoDate = z
  .string()
  .regex(DATE_RE, 'expected a date YYYY-MM-DD')
  .refine((v) => {
    const d = new Date(`${v}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
  }, 'not a calendar date');

const AMOUNT_RE = /^\d{1,18}(\.\d{1,2})?$/;

const tierSchema = z.object({
  days: z.number().int().min(0).max(36_500).describe('Aged more than this many days past net due at `as_of_date`.'),
  amount_lc: z
    .string()
    .regex(AMOUNT_RE, 'expected a non-negative decimal string with at most 2 decimals, e.g. "10000.00"')
    .describe('Threshold in local (base) currency: the tier trips when the aged sum exceeds it.'),
});

const bodySchema = z.object({
  as_of_date: isoDate.describe('The date at which aging is evaluated (typically a quarter end).'),
  tiers: z.array(tierSchema).min(1).max(10).describe('1 to 10 aging tiers.'),
  business_unit_id__in: z.array(z.string().uuid()).max(500).optional().describe('Only invoices of these business units.'),
  evaluated_at: isoDate
    .optional()
    .describe("\"Today\" for the probabilities (invoices are known to be unpaid on this date); default: today's date in the organization's timezone."),
});

const trippedTierSchema = z.object({
  days: z.number().int(),
  amount_threshold_lc: z.string(),
  amount_lc: z.string(),
  invoice_count: z.number().int(),
  trip_probability: z.number().min(0).max(1),
});

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
      tripped_tiers: z.array(trippedTierSchema),
    }),
  ),
});

function todayIn(timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

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
      'Its local-currency open amount is `amount_open` (document currency) converted at the document\'s own rate',
      '(amount_in_local_currency / amount_in_document_currency), rounded to cents; without a local amount, `amount_open` as is.',
      '`business_unit_id__in` keeps only invoices of those business units; a user restricted to some business units never',
      'sees invoices of others (unassigned invoices stay visible).',
      '',
      '**Tripping.** A tier trips for a customer when the sum (`amount_lc`, with `invoice_count` invoices) exceeds `amount_lc`',
      'of the tier (strictly). Customers with at least one tripped tier are returned, only their tripped tiers listed (request',
      'order), sorted by their largest tripped amount descending, ties by partner id. `total_open_lc` sums all their open',
      'invoices in scope.',
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
      '3. Invoices are independent Bernoulli(p): the probability that their sum exceeds the tier amount is computed exactly',
      '   over the distribution of sums in cents (no sampling, no approximation; branches below 1e-17 are dropped within a',
      '   total of 1e-13).',
      '',
      'Amounts are strings with 2 decimals. 422 for 0 or more than 10 tiers, a bad decimal or date.',
    ].join('\n'),
    tags: ['Analytics'],
    body: bodySchema,
    response: responseSchema,
    errors: [404],
    handler: async ({ body, identity, deps }) => {
      const tiers = body.tiers.map((t) => ({ days: t.days, amount_lc: t.amount_lc }));
      const data = await loadPredictedOverdue(deps.db, identity.org, {
        asOfDate: body.as_of_date,
        tiers: tiers.map((t) => ({ days: t.days, amountLc: t.amount_lc })),
        businessUnitIds: body.business_unit_id__in,
        accessibleBusinessUnits: identity.bu,
      });
      if (!data.organization) throw new NotFoundError('Unknown organization.');
      const today = body.evaluated_at ?? todayIn(data.organization.timezone);
      const customers = predictedOverdueCustomers(data.rows, data.organizationHistory, tiers, daysBetween(today, body.as_of_date));
      return { as_of_date: body.as_of_date, currency: data.organization.base_currency, tiers, customers };
    },
  }),
];
