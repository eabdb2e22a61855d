/**
 * Judging a promise to pay (its workflow's checks): how much of the promised amount its invoices got,
 * and whether that keeps it, breaks it (the grace period is over) or leaves it open.
 *
 * Coverage, per invoice of the promise, in the promise's currency: the larger of
 * - the ledger's reduction since the promise was made: its open amount then
 *   (`open_amounts_at_creation`) less its `amount_open` now, a closed invoice counting 0 open;
 * - what payments approved since the promise was made (and still approved, until the deadline)
 *   apply to it: amount paid + discount + withheld + adjustment, i.e. what they take off its open
 *   amount (cash-app's figures, passed in by the workflow);
 * the larger, not the sum, because an approved payment reaches the ledger once the ERP reports it;
 * capped at the invoice's open amount when the promise was made. Summed over the invoices, the
 * promise is kept when the coverage reaches its amount.
 */
import { getDocuments, Money, recordEvent, type Db, type LedgerDocument } from '@rp/platform';
import { closePromise, getPromise, promiseDeadline, recordCoverage, type PromiseRow, type PromiseStatus } from '../../store/collections/promises.js';
import { promiseView } from '../../views/collections/promises.js';

export function promiseCoverage(
  promise: Pick<PromiseRow, 'invoice_ids' | 'open_amounts_at_creation'>,
  docs: ReadonlyMap<string, Pick<LedgerDocument, 'status_open' | 'amount_open'>>,
  paidByInvoice: Readonly<Record<string, string>>,
): Money {
  let total = new Money(0);
  for (const id of promise.invoice_ids) {
    const atCreation = new Money(promise.open_amounts_at_creation[id] ?? 0);
    const doc = docs.get(id);
    // an invoice gone from the ledger tells nothing about payment: no reduction
    const now = !doc ? atCreation : doc.status_open ? new Money(doc.amount_open) : new Money(0);
    const reduction = Money.max(0, atCreation.minus(now));
    const paid = new Money(paidByInvoice[id] ?? 0);
    total = total.plus(Money.min(atCreation, Money.max(reduction, paid)));
  }
  return total;
}

export interface PromiseCheckConfig {
  PROMISE_GRACE_DAYS: number;
  PROMISE_RECHECK_SECONDS: number;
}

/** The promise as its workflow reads it before a check (null when it does not exist). */
export async function promiseForCheck(db: Db, config: PromiseCheckConfig, organizationId: string, id: string) {
  const row = await getPromise(db, organizationId, id);
  if (!row) return null;
  const deadline = (await promiseDeadline(db, organizationId, id, config.PROMISE_GRACE_DAYS))!;
  return { row, deadline };
}

/**
 * One check, in one transaction that locks the promise: an open promise covered now is kept; one
 * past its deadline uncovered is broken; either records its event in the same transaction. A check
 * retried after its commit finds the promise closed and changes nothing.
 */
export async function settlePromise(
  db: Db,
  config: PromiseCheckConfig,
  input: { organizationId: string; promiseId: string; paidByInvoice: Record<string, string> },
  now: Date = new Date(),
): Promise<PromiseStatus | 'missing'> {
  return db.transaction(async (trx) => {
    const row = await getPromise(trx, input.organizationId, input.promiseId, '*', true);
    if (!row) return 'missing';
    if (row.status !== 'open') return row.status;
    const docs = await getDocuments(trx, input.organizationId, row.invoice_ids);
    const covered = promiseCoverage(row, docs, input.paidByInvoice).toFixed();
    const deadline = (await promiseDeadline(trx, input.organizationId, row.id, config.PROMISE_GRACE_DAYS))!;
    const outcome = new Money(covered).gte(row.amount) ? 'kept' : now.getTime() >= deadline.getTime() ? 'broken' : null;
    if (!outcome) {
      await recordCoverage(trx, input.organizationId, row.id, covered);
      return 'open';
    }
    const closed = (await closePromise(trx, input.organizationId, row.id, outcome, covered))!;
    await recordEvent(trx, {
      organizationId: input.organizationId,
      type: outcome === 'kept' ? 'promise_to_pay.kept' : 'promise_to_pay.broken',
      resourceId: closed.id,
      object: promiseView(closed),
      businessUnitId: closed.business_unit_id,
    });
    return outcome;
  });
}
