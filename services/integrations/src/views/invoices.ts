/**
 * The invoice (ledger document) as events show it: every field the push and the syncs write, its
 * line items and its early-payment discounts. Amounts are exact decimal strings: document-currency
 * amounts with the currency's ISO minor units ("1190.50" EUR, "1000" JPY), the local amount,
 * quantities and unit amounts without trailing zeros.
 */
import { currencyMinorUnits, isoTime, Money } from '@rp/platform';
import type { DocumentViewRow } from '../store/ledger-views.js';

const plain = (v: string | null) => (v === null ? null : new Money(v).toFixed());

export function invoiceView(d: DocumentViewRow) {
  const minor = currencyMinorUnits(d.currency);
  const inCurrency = (v: string | null) => (v === null ? null : new Money(v).toFixed(minor));
  return {
    object: 'invoice' as const,
    id: d.id,
    kind: d.kind,
    origin: d.origin,
    remote_id: d.remote_id,
    company_code: d.company_code,
    fiscal_year: d.fiscal_year,
    document_number: d.document_number,
    customer_code: d.customer_code,
    partner_id: d.partner_id,
    business_unit_id: d.business_unit_id,
    currency: d.currency,
    document_type: d.document_type,
    invoice_doc_type: d.invoice_doc_type,
    exchange_rate: d.exchange_rate,
    reference: d.reference,
    assignment: d.assignment,
    text: d.text,
    reason_code: d.reason_code,
    clearing_document_number: d.clearing_document_number,
    document_date: d.document_date,
    net_due_date: d.net_due_date,
    posting_date: d.posting_date,
    clearing_date: d.clearing_date,
    amount_in_document_currency: inCurrency(d.amount_in_document_currency)!,
    amount_in_local_currency: plain(d.amount_in_local_currency),
    amount_open: inCurrency(d.amount_open)!,
    status_open: d.status_open,
    remote_deleted_at: isoTime(d.remote_deleted_at),
    discount_terms: d.discount_terms.map((t) => ({ due_date: t.due_date, percent: t.percent })),
    line_items: d.line_items.map((l) => ({
      line_number: l.line_number,
      description: l.description,
      quantity: plain(l.quantity),
      unit_amount: plain(l.unit_amount),
      total_amount: inCurrency(l.total_amount),
    })),
    created_at: isoTime(d.created_at)!,
    modified_at: isoTime(d.modified_at)!,
  };
}

export type InvoiceView = ReturnType<typeof invoiceView>;
