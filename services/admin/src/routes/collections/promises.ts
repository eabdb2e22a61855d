/** Routes of promises to pay: record, list, read, cancel. v2. */
import { z } from 'zod';
import { idSchema, isDecimalString, isoDate, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import { cancelPromise, createPromise, MAX_PROMISE_DAYS_AHEAD, MAX_PROMISE_INVOICES, promiseOrThrow, promisesOf } from '../../domain/collections/promises.js';
import { promiseView } from '../../views/collections/promises.js';

const MAX_PAGE = 500;
const STATUS = z.enum(['open', 'kept', 'broken', 'cancelled']);
const SCOPE = 'Members: only customers of their business units or of none (others: 404, absent from lists, 422 as a reference).';

/** A positive decimal amount, as a string (at most 40 characters) or a number; its currency's minor units are checked against the invoices. */
export const amountInput = () =>
  z
    .union([z.string().max(40), z.number()])
    .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
    .refine((v) => isDecimalString(v) && /^\d+(\.\d{1,4})?$/.test(v), 'must be a positive decimal amount with at most 4 decimals')
    .describe('Decimal string of at most 40 characters (or a number) in the currency\'s minor units (JPY none, EUR 2, KWD 3 decimals; more → 422 `value_error.decimal_places`).');

export const noteInput = () => z.string().max(2000).nullable().optional().describe('Free text, at most 2000 characters; null: none.');

/** Where a promise or dispute came from: the inbox message it was read from. */
export const sourceSchema = () =>
  z
    .object({ object: z.literal('inbox_message'), id: z.string() })
    .nullable()
    .describe(
      'The inbox message it was read from (the inbox records a promise or dispute by itself when it reads the customer, the invoices and, for a promise, the date with enough confidence; ' +
        'else it leaves a suggestion on the message); null when recorded through the API.',
    );

export const promiseSchema = z
  .object({
    object: z.literal('promise_to_pay'),
    id: z.string(),
    partner_id: z.string(),
    invoice_ids: z.array(z.string()),
    amount: z.string().describe('Decimal string with the currency\'s minor units.'),
    currency: z.string().describe('ISO 4217: the invoices\' currency.'),
    promised_date: z.string().describe('YYYY-MM-DD'),
    status: STATUS.describe(
      '`open` (holds the chasing of its invoices), `kept` (covered in time), `broken` (its grace period ended uncovered; chasing resumes at the step it was on), `cancelled`.',
    ),
    note: z.string().nullable(),
    created_by: z.string().nullable().describe('The user who recorded it; null when it was read from a customer\'s email (see `source`) or recorded with an API key.'),
    source: sourceSchema(),
    ...timestampsShape,
  })
  .meta({ id: 'PromiseToPay' });

const PROMISE_RULES =
  'Kept when the payments approved on its invoices since it was recorded (what their allocations take off the invoices: paid, discount, withheld, adjustment) ' +
  'or the ledger\'s reductions of those invoices since then (a closed invoice counts 0 open), whichever is larger per invoice, cover `amount` by the end of ' +
  '`promised_date` + the grace period (3 days by default, the deployment\'s PROMISE_GRACE_DAYS; midnight in the organization\'s timezone; a payment approved after it does not count). A workflow timer ' +
  'judges it then: covered → `kept`, else `broken` (events `promise_to_pay.kept` / `promise_to_pay.broken`); before that, a daily check (PROMISE_RECHECK_SECONDS) marks it `kept` as ' +
  'soon as it is covered. While `open`, the collections engine does not chase its invoices; once broken, chasing resumes at the step it was on.';

export const promiseRoutes = [
  route({
    method: 'post',
    path: '/v2/promises-to-pay',
    operationId: 'createPromiseToPay',
    summary: 'Record a promise to pay',
    description:
      `A customer's promise to pay \`amount\` on some of its open invoices by \`promised_date\`. 422 at the field's loc when: the partner is not one of the organization ` +
      `(or not of the caller's business units); an invoice is listed twice or is not an open invoice of that partner; the invoices are in more than one currency ` +
      `(the promise's currency is theirs); the amount is not > 0, has more decimals than the currency's minor units or exceeds the invoices' open total; ` +
      `\`promised_date\` is before today or more than ${MAX_PROMISE_DAYS_AHEAD} days after it (today in the organization's timezone). 409 when an invoice is under ` +
      `another open promise (one open promise per invoice: cancel it first). Records the event \`promise_to_pay.created\`. ${PROMISE_RULES} ${SCOPE}`,
    tags: ['Collections'],
    body: z.object({
      partner_id: idSchema().describe('The customer (ledger partner).'),
      invoice_ids: z.array(idSchema()).min(1).max(MAX_PROMISE_INVOICES).describe(`1..${MAX_PROMISE_INVOICES} distinct open invoices of the partner, in one currency.`),
      amount: amountInput(),
      promised_date: isoDate().describe(`YYYY-MM-DD: today .. today + ${MAX_PROMISE_DAYS_AHEAD} days in the organization's timezone.`),
      note: noteInput(),
    }),
    response: promiseSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => promiseView(await createPromise(deps, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/promises-to-pay',
    operationId: 'listPromisesToPay',
    summary: 'List promises to pay',
    description: `Newest first. Filters: \`partner_id\`, \`status\`. Paginated: \`page\` (0-based), \`page_size\` 1..${MAX_PAGE}. ${SCOPE}`,
    tags: ['Collections'],
    query: z.object({ ...paginationQueryShape(MAX_PAGE), partner_id: idSchema().optional(), status: STATUS.optional() }),
    response: pageEnvelopeSchema(promiseSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await promisesOf(deps, identity, { partner_id: query.partner_id, status: query.status }, page);
      return pageOf(rows.map(promiseView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/promises-to-pay/{promise_id}',
    operationId: 'getPromiseToPay',
    summary: 'Get a promise to pay',
    description: `${PROMISE_RULES} ${SCOPE}`,
    tags: ['Collections'],
    params: z.object({ promise_id: idSchema() }),
    response: promiseSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => promiseView(await promiseOrThrow(deps, identity, params.promise_id)),
  }),
  route({
    method: 'post',
    path: '/v2/promises-to-pay/{promise_id}/cancel',
    operationId: 'cancelPromiseToPay',
    summary: 'Cancel a promise to pay',
    description: `Only an \`open\` promise (409 otherwise). Its invoices are chased again from the next run, at the step they were on; it is never judged kept or broken. ${SCOPE}`,
    tags: ['Collections'],
    params: z.object({ promise_id: idSchema() }),
    response: promiseSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps, log }) => promiseView(await cancelPromise({ ...deps, log }, identity, params.promise_id)),
  }),
];
