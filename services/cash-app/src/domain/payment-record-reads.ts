/**
 * Payments as their answers show them: the rows with their allocations and the ledger documents
 * those name (for the invoice numbers, and for the business units an event of the payment carries).
 * Takes a transaction as well as the pool, so an event's payment is read inside its change.
 */
import type { Knex } from 'knex';
import { getDocuments, type LedgerDocument } from '@rp/platform';
import { allocationsOf, type AllocationRow, type PaymentRow } from '../store/payments.js';

/** A payment with its allocations and the ledger document numbers of their invoices. */
export interface PaymentRecord {
  row: PaymentRow;
  allocations: AllocationRow[];
  invoiceNumbers: Map<string, string>;
}

/** The records of `rows` (in their order) and the ledger documents their allocations name. */
export async function paymentRecordsOf(db: Knex, organizationId: string, rows: readonly PaymentRow[]): Promise<{ records: PaymentRecord[]; documents: Map<string, LedgerDocument> }> {
  const allocations = await allocationsOf(db, organizationId, rows.map((r) => r.id));
  const documents = await getDocuments(db, organizationId, allocations.map((a) => a.invoice_id));
  const invoiceNumbers = new Map([...documents.values()].map((d) => [d.id, d.document_number]));
  const byPayment = new Map<string, AllocationRow[]>();
  for (const a of allocations) (byPayment.get(a.payment_id) ?? byPayment.set(a.payment_id, []).get(a.payment_id)!).push(a);
  return { records: rows.map((row) => ({ row, allocations: byPayment.get(row.id) ?? [], invoiceNumbers })), documents };
}
