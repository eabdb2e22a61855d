/** The API shape of a payment: its amounts, allocations, bank transaction and ERP posting fields. */
import { isoTime, Money } from '@rp/platform';
import { formatInCurrency } from '../domain/payments.js';
import type { PaymentRecord } from '../domain/payment-records.js';
import type { PaymentRow } from '../store/payments.js';

/** The ERP posting fields of a payment answer (besides `posting_error` and `posted_at`). */
export function postingView(p: PaymentRow) {
  return {
    posting_status: p.posting_status,
    erp_provider: p.erp_provider,
    erp_payment_id: p.erp_payment_id,
    erp_document_number: p.erp_document_number,
    erp_posting_adopted: p.erp_posting_adopted,
    can_unpost: p.posting_status === 'posted' && p.erp_can_unpost,
  };
}

/** The payment answer of a record: every amount as its currency writes it. */
export function paymentView({ row: p, allocations, invoiceNumbers: numbers }: PaymentRecord) {
  // every amount as its currency writes it (JPY 0, EUR 2, KWD 3 decimals)
  const money = (v: string | InstanceType<typeof Money>) => formatInCurrency(v, p.currency);
  return {
    object: 'payment' as const,
    id: p.id,
    status: p.status,
    bank_transaction_id: p.bank_transaction_id,
    statement_id: p.tx_statement_id,
    partner_id: p.partner_id,
    remittance_id: p.remittance_id,
    amount: money(p.amount),
    currency: p.currency.trim(),
    payment_date: p.payment_date,
    allocated_amount: money(p.allocated_amount),
    unallocated_amount: money(new Money(p.amount).minus(p.allocated_amount)),
    match_score: p.match_score === null ? null : Number(p.match_score),
    match_reasons: p.match_reasons as Record<string, unknown>[],
    shortfall: p.shortfall_amount === null || p.shortfall_reason === null ? null : { amount: money(p.shortfall_amount), reason: p.shortfall_reason },
    auto_approved: p.auto_approved,
    posting_error: p.posting_error,
    posted_at: isoTime(p.posted_at),
    ...postingView(p),
    approved_by: p.approved_by,
    approved_at: isoTime(p.approved_at),
    allocations: allocations.map((a) => ({
      object: 'payment_allocation' as const,
      id: a.id,
      invoice_id: a.invoice_id,
      document_kind: a.document_kind,
      invoice_number: numbers.get(a.invoice_id) ?? null,
      amount_paid: money(a.amount_paid),
      amount_discount: money(a.amount_discount),
      amount_withheld: money(a.amount_withheld),
      adjustment_id: a.adjustment_id,
      adjustment_amount: money(a.adjustment_amount),
      created_at: isoTime(a.created_at)!,
      modified_at: isoTime(a.modified_at)!,
    })),
    transaction: {
      id: p.bank_transaction_id,
      statement_id: p.tx_statement_id,
      bank_account_id: p.tx_bank_account_id,
      amount: formatInCurrency(p.tx_amount, p.tx_currency),
      currency: p.tx_currency.trim(),
      booking_date: p.tx_booking_date,
      value_date: p.tx_value_date,
      counterparty_name: p.tx_counterparty_name,
      counterparty_iban: p.tx_counterparty_iban,
      counterparty_account: p.tx_counterparty_account,
      remittance_information: p.tx_remittance_information,
      bank_reference: p.tx_bank_reference,
    },
    created_at: isoTime(p.created_at)!,
    modified_at: isoTime(p.modified_at)!,
  };
}
