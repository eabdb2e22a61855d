/** The v1 API shape of a remittance and its allocations' invoices. */
import { isoTime, Money, type LedgerDocument } from '@rp/platform';
import type { RemittanceStatus } from '../domain-types/remittances.js';
import type { RemittanceRecord } from '../domain/remittance-intake.js';

const num = (v: string | null) => (v === null ? null : Number(v));

function invoiceView(d: LedgerDocument) {
  return {
    id: d.id,
    currency: d.currency,
    amount_due: Number(d.amount_in_document_currency),
    amount_paid: Number(new Money(d.amount_in_document_currency).minus(d.amount_open).toFixed()),
    due_date: d.net_due_date,
  };
}

/** The v1 remittance answer of a record (amounts as JSON numbers, as the v1 contract has them). */
export function remittanceView({ row: r, allocations, invoices, partners, link }: RemittanceRecord) {
  const partner = r.partner_id ? partners.get(r.partner_id) : undefined;
  return {
    object: 'remittance' as const,
    id: r.id,
    status: r.status as RemittanceStatus,
    agent_confidence_score: Number(r.agent_confidence_score ?? 0),
    agent_confidence_reason: r.agent_confidence_reason ?? '',
    agent_error_code: r.agent_error_code,
    agent_uncertainties: r.agent_uncertainties,
    allocations: allocations.map((a) => {
      const invoice = a.invoice_id ? invoices.get(a.invoice_id) : undefined;
      return {
        object: 'remittance_allocation' as const,
        id: a.id,
        remittance_id: a.remittance_id,
        invoice_number: a.invoice_number,
        invoice_id: a.invoice_id,
        amount_paid: Number(a.amount_paid),
        amount_discount: Number(a.amount_discount),
        amount_withheld: Number(a.amount_withheld),
        invoice: invoice ? invoiceView(invoice) : null,
        created_at: isoTime(a.created_at)!,
        modified_at: isoTime(a.modified_at)!,
      };
    }),
    attachment: r.attachment_content_type
      ? {
          object: 'attachment' as const,
          file_name: r.attachment_file_name,
          content_type: r.attachment_content_type,
          size: r.attachment_size ?? 0,
          presigned_url: link?.url ?? null,
          presigned_url_expires_at: link ? isoTime(link.expires_at)! : null,
        }
      : null,
    currency: r.currency,
    email: r.email ?? null,
    partner: partner ? { object: 'partner' as const, id: partner.id, name: partner.name, account_number: partner.account_number, email: partner.email } : null,
    payee_bank_details: r.payee_bank_details,
    payer_bank_details: r.payer_bank_details,
    payer_email: r.payer_email,
    payer_name: r.payer_name,
    payment_method: r.payment_method,
    transaction_amount: num(r.transaction_amount),
    transaction_date: r.transaction_date,
    transaction_number: r.transaction_number,
    source: r.source as 'json' | 'csv' | 'email',
    bank_transaction_id: r.bank_transaction_id,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
