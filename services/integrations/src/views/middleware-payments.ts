/** A middleware posting-queue entry's API shape (`MiddlewarePayment`): the posting and its payment's payload. */
import { isoTime } from '@rp/platform';
import type { MiddlewareQueueStatus } from '../domain/middleware-postings.js';
import { postingKey } from '../domain/payment-posting.js';
import type { PostingRow } from '../store/payment-postings.js';

export function middlewarePaymentView(row: PostingRow) {
  const p = row.payload;
  return {
    object: 'middleware_payment' as const,
    id: row.payment_id,
    posting_id: row.id,
    posting_key: postingKey(row.organization_id, row.payment_id),
    status: row.status as MiddlewareQueueStatus,
    amount: p.amount,
    currency: p.currency,
    payment_date: p.payment_date,
    bank_reference: p.bank_reference,
    customer: p.customer ? { partner_id: p.customer.partner_id, customer_code: p.customer.remote_id, name: p.customer.name } : null,
    unallocated_amount: p.unallocated_amount,
    lines: p.lines.map((l) => ({
      invoice_id: l.invoice_id,
      kind: l.kind ?? 'invoice',
      document_number: l.document_number,
      company_code: l.company_code,
      fiscal_year: l.fiscal_year,
      amount_paid: l.amount_paid,
      amount_discount: l.amount_discount,
      amount_withheld: l.amount_withheld,
      adjustment_amount: l.adjustment_amount,
    })),
    erp_document_number: row.erp_document_number,
    error: row.error,
    posted_at: isoTime(row.posted_at),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
