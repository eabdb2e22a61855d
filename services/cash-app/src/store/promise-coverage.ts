/** SQL of what approved payments applied to given invoices in a window (a promise to pay's coverage, asked by admin's workflow). */
import type { Db } from '@rp/platform';

/**
 * Per invoice: amount paid + discount + withheld + adjustment of the invoice allocations of payments
 * approved in [since, until] and still approved now (an unposted payment is unapproved again and
 * stops counting). Decimal strings; invoices without such allocations are absent.
 */
export async function appliedToInvoices(db: Db, organizationId: string, invoiceIds: readonly string[], since: Date, until: Date): Promise<Map<string, string>> {
  if (invoiceIds.length === 0) return new Map();
  const r = (await db.raw(
    `SELECT a.invoice_id, sum(a.amount_paid + a.amount_discount + a.amount_withheld + a.adjustment_amount)::text AS applied
       FROM payment_allocations a
       JOIN payments p ON p.id = a.payment_id
      WHERE a.organization_id = ? AND p.organization_id = ? AND a.document_kind = 'invoice' AND a.invoice_id = ANY(?::uuid[])
        AND p.status = 'approved' AND p.approved_at >= ? AND p.approved_at <= ?
      GROUP BY a.invoice_id`,
    [organizationId, organizationId, [...new Set(invoiceIds)], since, until],
  )) as { rows: { invoice_id: string; applied: string }[] };
  return new Map(r.rows.map((row) => [row.invoice_id, row.applied]));
}
