/**
 * Promises to pay (DESIGN §10): a customer promises an amount on some of its open invoices by a date.
 * While open, the promise holds the chasing of those invoices (the collections engine reads this
 * table); its workflow (workflows/src/admin/promise-to-pay.ts) marks it kept once approved payments
 * or ledger closings cover the amount, or broken when the grace period after the promised date ends
 * uncovered, and chasing resumes at the step it was on.
 */
import type { Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  ConflictError,
  currencyMinorUnits,
  getDocuments,
  getPartner,
  Money,
  NotFoundError,
  recordEvent,
  ValidationError,
  withTemporalDeadline,
  type Db,
  type Identity,
  type Logger,
  type ValidationIssue,
} from '@rp/platform';
import { businessSearchAttributes, promiseToPay, promiseToPayWorkflowId, TASK_QUEUES } from '@rp/workflows';
import {
  getPromise,
  insertPromise,
  promiseFromInboxMessage,
  invoicesUnderOpenPromise,
  listPromises,
  lockPartnerPromises,
  closePromise,
  organizationToday,
  type PromiseRow,
  type PromiseStatus,
} from '../../store/collections/promises.js';
import { promiseView } from '../../views/collections/promises.js';

/** How far ahead a promised date may lie (days after the organization's today). */
export const MAX_PROMISE_DAYS_AHEAD = 365;
/** How many invoices one promise may cover. */
export const MAX_PROMISE_INVOICES = 100;

export interface PromiseDeps {
  db: Db;
  temporal: Client;
}

export interface NewPromise {
  partner_id: string;
  invoice_ids: string[];
  /** decimal string */
  amount: string;
  promised_date: string;
  note?: string | null;
  /** the inbox message the promise was read from (not settable through the API) */
  source_inbox_message_id?: string | null;
}

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The amount in the currency's minor units, or the issue saying why not. */
export function amountIssue(amount: string, currency: string, loc: (string | number)[]): ValidationIssue | null {
  const places = currencyMinorUnits(currency);
  const value = new Money(amount);
  if (value.lte(0)) return { loc, msg: 'must be greater than 0', type: 'value_error.number.not_gt' };
  if (value.decimalPlaces() > places) return { loc, msg: `must have at most ${places} decimals in ${currency}`, type: 'value_error.decimal_places' };
  return null;
}

/**
 * Checks a new promise against the ledger: the partner (of the organization, within the caller's
 * business units), each invoice an open invoice of that partner, one currency, an amount in its
 * minor units not above the invoices' open total, a promised date from today to a year ahead in the
 * organization's timezone. Answers the invoices' open amounts (what ledger closings are measured against).
 */
async function checkNewPromise(db: Db, identity: Identity, input: NewPromise) {
  const partner = await getPartner(db, identity.org, input.partner_id, identity.bu);
  if (!partner) throw new ValidationError([{ loc: ['body', 'partner_id'], msg: 'is not a partner of this organization', type: 'value_error.not_found' }]);
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  input.invoice_ids.forEach((id, i) => {
    if (seen.has(id)) issues.push({ loc: ['body', 'invoice_ids', i], msg: 'is listed twice', type: 'value_error.duplicate' });
    seen.add(id);
  });
  const docs = await getDocuments(db, identity.org, input.invoice_ids, identity.bu);
  input.invoice_ids.forEach((id, i) => {
    const d = docs.get(id);
    if (!d || d.kind !== 'invoice' || d.partner_id !== partner.id || !d.status_open || new Money(d.amount_open).lte(0)) {
      issues.push({ loc: ['body', 'invoice_ids', i], msg: 'is not an open invoice of this partner', type: 'value_error.not_found' });
    }
  });
  if (issues.length) throw new ValidationError(issues);
  const currencies = new Set(input.invoice_ids.map((id) => docs.get(id)!.currency.trim()));
  if (currencies.size > 1) throw new ValidationError([{ loc: ['body', 'invoice_ids'], msg: `must all be in one currency (found ${[...currencies].sort().join(', ')})`, type: 'value_error.currency_mismatch' }]);
  const currency = [...currencies][0]!;
  const openAmounts: Record<string, string> = {};
  for (const id of input.invoice_ids) openAmounts[id] = new Money(docs.get(id)!.amount_open).toFixed();
  const openTotal = Object.values(openAmounts).reduce((s, v) => s.plus(v), new Money(0));
  const amountProblem = amountIssue(input.amount, currency, ['body', 'amount']);
  if (amountProblem) issues.push(amountProblem);
  else if (new Money(input.amount).gt(openTotal)) {
    issues.push({ loc: ['body', 'amount'], msg: `must not exceed the invoices' open total ${openTotal.toFixed(currencyMinorUnits(currency))} ${currency}`, type: 'value_error.number.not_le' });
  }
  const org = (await organizationToday(db, identity.org))!;
  if (input.promised_date < org.today) issues.push({ loc: ['body', 'promised_date'], msg: `must not be before today (${org.today} in ${org.timezone})`, type: 'value_error.date.past' });
  else if (input.promised_date > addDays(org.today, MAX_PROMISE_DAYS_AHEAD)) {
    issues.push({ loc: ['body', 'promised_date'], msg: `must be at most ${MAX_PROMISE_DAYS_AHEAD} days after today (${org.today} in ${org.timezone})`, type: 'value_error.date.too_late' });
  }
  if (issues.length) throw new ValidationError(issues);
  return { partner, currency, openAmounts };
}

/**
 * Records a promise and starts its workflow. The workflow is started inside the recording
 * transaction: if Temporal refuses, nothing is recorded (503, the client retries); if the commit
 * fails, the workflow finds no promise and ends.
 */
export async function createPromise(deps: PromiseDeps, identity: Identity, input: NewPromise): Promise<PromiseRow> {
  const { partner, currency, openAmounts } = await checkNewPromise(deps.db, identity, input);
  return deps.db.transaction(async (trx) => {
    await lockPartnerPromises(trx, partner.id);
    // a promise read from a message is recorded once, however often the reading is acted on
    if (input.source_inbox_message_id) {
      const existing = await promiseFromInboxMessage(trx, identity.org, input.source_inbox_message_id);
      if (existing) return existing;
    }
    const held = await invoicesUnderOpenPromise(trx, identity.org, input.invoice_ids);
    if (held.size) throw new ConflictError(`Invoice(s) ${[...held].join(', ')} are under an open promise to pay already; cancel it first.`);
    const row = await insertPromise(trx, {
      organization_id: identity.org,
      partner_id: partner.id,
      business_unit_id: partner.business_unit_id,
      invoice_ids: input.invoice_ids,
      amount: input.amount,
      currency,
      promised_date: input.promised_date,
      open_amounts_at_creation: openAmounts,
      note: input.note ?? null,
      created_by: identity.sub,
      source_inbox_message_id: input.source_inbox_message_id ?? null,
    });
    await recordEvent(trx, { organizationId: identity.org, type: 'promise_to_pay.created', resourceId: row.id, object: promiseView(row), businessUnitId: row.business_unit_id });
    await withTemporalDeadline(deps.temporal, () =>
      deps.temporal.workflow.start(promiseToPay, {
        taskQueue: TASK_QUEUES.admin,
        workflowId: promiseToPayWorkflowId(row.id),
        args: [{ organizationId: identity.org, promiseId: row.id, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(identity.org, row.id),
      }),
    );
    return row;
  });
}

export async function promiseOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<PromiseRow> {
  const row = await getPromise(db, identity.org, id, identity.bu);
  if (!row) throw new NotFoundError(`No promise to pay ${id}.`);
  return row;
}

export async function promisesOf({ db }: { db: Db }, identity: Identity, filters: { partner_id?: string; status?: PromiseStatus }, page: { offset: number; pageSize: number }) {
  return listPromises(db, identity.org, identity.bu, filters, page.offset, page.pageSize);
}

/**
 * Cancels an open promise (409 otherwise); chasing of its invoices resumes at the next run. Its
 * workflow is cancelled after the commit; if that request is lost, the workflow's next check finds
 * the promise cancelled and ends.
 */
export async function cancelPromise(deps: PromiseDeps & { log?: Logger }, identity: Identity, id: string): Promise<PromiseRow> {
  const row = await deps.db.transaction(async (trx) => {
    const current = await getPromise(trx, identity.org, id, identity.bu, true);
    if (!current) throw new NotFoundError(`No promise to pay ${id}.`);
    if (current.status !== 'open') throw new ConflictError(`The promise to pay is ${current.status}; only an open promise can be cancelled.`);
    return (await closePromise(trx, identity.org, id, 'cancelled'))!;
  });
  try {
    await withTemporalDeadline(deps.temporal, () => deps.temporal.workflow.getHandle(promiseToPayWorkflowId(id)).cancel());
  } catch (err) {
    deps.log?.warn({ err, promise_id: id }, 'promise workflow not cancelled; its next check sees the promise cancelled and ends');
  }
  return row;
}
