/**
 * Payments as their answers show them (the row, its allocations and their invoice numbers), read
 * within the caller's business units, and each payment change followed by that read.
 */
import { NotFoundError, type BusinessUnitScope, type Db, type PageRequest } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import { getPayment, listPayments, type PaymentFilter, type PaymentRow } from '../store/payments.js';
import { approvePayment, createPayment, replacePaymentAllocations } from './payment-changes.js';
import { requestPaymentPosting } from './payment-posting.js';
import { paymentRecordsOf, type PaymentRecord } from './payment-record-reads.js';

export type { PaymentRecord };

async function recordsOf(db: Db, organizationId: string, rows: PaymentRow[]): Promise<PaymentRecord[]> {
  return (await paymentRecordsOf(db, organizationId, rows)).records;
}

/** The payment; 404 when unknown, another organization's or outside the caller's business units (`scope`). */
export async function paymentRecord(deps: Pick<CashAppDeps, 'db'>, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<PaymentRecord> {
  const row = await getPayment(deps.db, organizationId, id, { scope });
  if (!row) throw new NotFoundError(`No payment ${id}.`);
  return (await recordsOf(deps.db, organizationId, [row]))[0]!;
}

/** A page of the organization's payments the filter selects, and how many it selects. */
export async function paymentPage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: PaymentFilter, page: Pick<PageRequest, 'offset' | 'pageSize'>) {
  const { rows, total } = await listPayments(deps.db, organizationId, filter, page.offset, page.pageSize);
  return { records: await recordsOf(deps.db, organizationId, rows), total };
}

/** createPayment, then the new payment as the caller sees it. */
export async function createPaymentAndRead(deps: Pick<CashAppDeps, 'db'>, request: Parameters<typeof createPayment>[1]): Promise<PaymentRecord> {
  const id = await createPayment(deps.db, request);
  return paymentRecord(deps, request.organizationId, id, request.scope);
}

/** replacePaymentAllocations, then the payment as the caller sees it. */
export async function replaceAllocationsAndRead(deps: Pick<CashAppDeps, 'db'>, request: Parameters<typeof replacePaymentAllocations>[1]): Promise<PaymentRecord> {
  await replacePaymentAllocations(deps.db, request);
  return paymentRecord(deps, request.organizationId, request.paymentId, request.scope);
}

/** approvePayment (which starts its posting), then the payment as the caller sees it. */
export async function approvePaymentAndRead(deps: Pick<CashAppDeps, 'db' | 'temporal'>, request: Parameters<typeof approvePayment>[1]): Promise<PaymentRecord> {
  await approvePayment(deps, request);
  return paymentRecord(deps, request.organizationId, request.paymentId, request.scope);
}

/** requestPaymentPosting (a post retry or an unpost), then the payment as the caller sees it. */
export async function requestPostingAndRead(deps: Pick<CashAppDeps, 'db' | 'temporal'>, request: Parameters<typeof requestPaymentPosting>[1]): Promise<PaymentRecord> {
  await requestPaymentPosting(deps, request);
  return paymentRecord(deps, request.organizationId, request.paymentId, request.scope);
}
