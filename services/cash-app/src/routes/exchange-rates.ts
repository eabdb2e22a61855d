/** The exchange-rate routes (/v2/exchange-rates): storing a batch and listing rates. */
import { z } from 'zod';
import { isoCurrencyCode, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape, isoDate } from '@rp/platform';
import { route } from '../deps.js';
import { exchangeRatePage, storeExchangeRates } from '../domain/exchange-rates.js';
import { rateView } from '../views/exchange-rates.js';

const MAX_PAGE = 500;
const MAX_BATCH = 1000;

const dateField = () => isoDate();

const RATE_DESCRIPTION = 'Units of quote_currency for one unit of base_currency (decimal string, > 0, up to 10 decimals).';

export const exchangeRateSchema = z.object({
  object: z.literal('exchange_rate'),
  id: z.string(),
  base_currency: z.string(),
  quote_currency: z.string(),
  rate_date: z.string(),
  rate: z.string().describe(RATE_DESCRIPTION),
  ...timestampsShape,
})
  .meta({ id: 'ExchangeRate' });

const rateInput = z
  .object({
    base_currency: isoCurrencyCode(),
    quote_currency: isoCurrencyCode(),
    rate_date: dateField(),
    rate: z
      .union([z.string().max(40), z.number()])
      .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
      .refine((v) => /^\d{1,14}(\.\d{1,10})?$/.test(v) && /[1-9]/.test(v), 'must be a positive decimal with at most 10 decimals')
      .describe(RATE_DESCRIPTION),
  })
  .refine((r) => r.base_currency !== r.quote_currency, { message: 'base_currency and quote_currency must differ', path: ['quote_currency'] });

export const exchangeRateRoutes = [
  route({
    method: 'put',
    path: '/v2/exchange-rates',
    operationId: 'loadExchangeRates',
    summary: 'Load exchange rates',
    description:
      `Loads a batch of 1..${MAX_BATCH} rates \`[{base_currency, quote_currency, rate_date, rate}]\` (rate = units of quote per ` +
      'one unit of base). Each is inserted or, when the organization already has a rate for the same pair and date, replaced ' +
      '(idempotent: PUT the same batch again changes nothing). A pair and date may appear once per batch. Returns the stored rates ' +
      'in request order. Bank-transaction metrics convert an amount in X to the base currency B with the latest rate on or before ' +
      'the transaction date of either X→B (multiplied) or B→X (divided).',
    tags: ['Cash application'],
    auth: { permission: 'exchange-rates:write' },
    body: z
      .array(rateInput)
      .min(1)
      .max(MAX_BATCH)
      .superRefine((rates, ctx) => {
        const seen = new Set<string>();
        rates.forEach((r, i) => {
          const key = `${r.base_currency}/${r.quote_currency}/${r.rate_date}`;
          if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, 'rate_date'], message: `${key} appears more than once in the batch` });
          seen.add(key);
        });
      }),
    response: z.object({ data: z.array(exchangeRateSchema) }),
    handler: async ({ body, identity, deps }) => {
      const rows = await storeExchangeRates(deps, identity.org, body);
      return { data: rows.map(rateView) };
    },
  }),
  route({
    method: 'get',
    path: '/v2/exchange-rates',
    operationId: 'listExchangeRates',
    summary: 'List exchange rates',
    description: 'The organization\'s exchange rates, newest rate_date first. Filters: `base_currency`, `quote_currency`, `start_date`/`end_date` (inclusive, on rate_date).',
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      base_currency: isoCurrencyCode().optional(),
      quote_currency: isoCurrencyCode().optional(),
      start_date: dateField().optional(),
      end_date: dateField().optional(),
    }),
    response: pageEnvelopeSchema(exchangeRateSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await exchangeRatePage(
        deps,
        identity.org,
        { baseCurrency: query.base_currency, quoteCurrency: query.quote_currency, startDate: query.start_date, endDate: query.end_date },
        page,
      );
      return pageOf(rows.map(rateView), total, page);
    },
  }),
];
