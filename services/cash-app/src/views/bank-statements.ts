/** The API shape of a bank statement, its totals and its transactions with their payments. */
import { isoTime } from '@rp/platform';
import { money } from '../domain/statement-money.js';
import type { StatementDetail, TransactionRecord } from '../domain/statement-reads.js';
import type { StatementRow, StatementTotals } from '../store/bank-statements.js';
import type { TransactionPaymentRow, TransactionRow } from '../store/bank-transactions.js';

export function totalsView(rows: readonly StatementTotals[]) {
  return rows.map((t) => {
    const ccy = t.currency.trim();
    return {
      currency: ccy,
      credit_count: t.credit_count,
      credit_total: money(t.credit_total, ccy)!,
      debit_count: t.debit_count,
      debit_total: money(t.debit_total, ccy)!,
    };
  });
}

export function statementView(row: StatementRow) {
  const ccy = row.currency?.trim() ?? null;
  return {
    object: 'bank_statement' as const,
    id: row.id,
    status: row.status,
    source: row.source,
    format: row.format,
    file_name: row.file_name,
    file_sha256: row.file_sha256,
    file_position: row.file_position,
    encoding: row.encoding,
    warnings: row.warnings ?? [],
    balance_mismatch:
      row.balance_difference == null
        ? null
        : {
            difference: money(row.balance_difference, ccy)!,
            currency: ccy,
            acknowledged_by: row.balance_mismatch_acknowledged_by,
            acknowledged_at: isoTime(row.balance_mismatch_acknowledged_at),
          },
    skipped_entries: { not_booked: row.skipped_not_booked ?? 0 },
    bank_account_id: row.bank_account_id,
    account_identifier: row.account_identifier,
    currency: ccy,
    statement_number: row.statement_number,
    statement_date: row.statement_date,
    opening_balance: money(row.opening_balance, ccy),
    closing_balance: money(row.closing_balance, ccy),
    transaction_count: row.transaction_count,
    match_counts: { unmatched: row.match_counts.unmatched, proposed: row.match_counts.proposed, approved: row.match_counts.approved, not_a_payment: row.match_counts.not_a_payment },
    totals: totalsView(row.totals ?? []),
    error: row.error,
    workflow_id: row.workflow_id,
    uploaded_by: row.uploaded_by,
    approved_by: row.approved_by,
    approved_at: isoTime(row.approved_at),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

export function transactionView(row: TransactionRow, payments: TransactionPaymentRow[] = []) {
  const ccy = row.currency.trim();
  return {
    object: 'bank_transaction' as const,
    id: row.id,
    statement_id: row.statement_id,
    bank_account_id: row.bank_account_id,
    unique_import_id: row.unique_import_id,
    sequence: row.sequence,
    amount: money(row.amount, ccy)!,
    currency: ccy,
    is_deposit: row.is_deposit,
    is_payment: row.is_payment,
    match_status: row.match_status,
    value_date: row.value_date,
    booking_date: row.booking_date,
    counterparty_name: row.counterparty_name,
    counterparty_account: row.counterparty_account,
    counterparty_iban: row.counterparty_iban,
    counterparty_bank_code: row.counterparty_bank_code,
    remittance_information: row.remittance_information,
    bank_reference: row.bank_reference,
    end_to_end_id: row.end_to_end_id,
    transaction_code: row.transaction_code,
    payments: payments.map((p) => ({
      id: p.id,
      status: p.status,
      amount: money(p.amount, p.currency.trim())!,
      currency: p.currency.trim(),
      partner_id: p.partner_id,
      match_score: p.match_score == null ? null : Number(p.match_score),
    })),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

export function transactionRecordView(t: TransactionRecord) {
  return transactionView(t.row, t.payments);
}

/** The statement answer of GET /v2/bank-statements/{id}: the inline transactions only when they were read. */
export function statementDetailView({ statement, inline }: StatementDetail) {
  const view = statementView(statement);
  if (!inline) return view;
  return { ...view, transactions: inline.transactions.map(transactionRecordView), transactions_truncated: inline.truncated };
}
