import type { Knex } from 'knex';
import { currencyMinorUnits, isoTime, Money, newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { ParsedAccount, ParsedStatement, ParsedTransaction, StatementFormat } from '../parsers/types.js';
import type { StatementStatus } from '../domain/bank-statements.js';
import { lockOrganizationPayments, paymentInScopeSql, whereSqlFragment } from './payments.js';

type Conn = Db | Knex.Transaction;

export interface StatementRow {
  id: string;
  organization_id: string;
  bank_account_id: string | null;
  account_identifier: string | null;
  source: 'upload' | 'connection';
  format: StatementFormat;
  status: StatementStatus;
  file_name: string | null;
  file_sha256: string | null;
  /** The statement's position in its file (1-based; migration 011). */
  file_position: number;
  /** Character encoding the file was read in (null: stored before migration 011, or the JSON form). */
  encoding: string | null;
  /** What the upload noticed but could not decide. */
  warnings: string[];
  /** Closing balance − (opening balance + entries) where the file's balances do not reconcile (migration 013). */
  balance_difference: string | null;
  balance_mismatch_acknowledged_by: string | null;
  balance_mismatch_acknowledged_at: Date | null;
  /** Entries of the file not imported because they are not booked (migration 013). */
  skipped_not_booked: number;
  options: Record<string, unknown>;
  statement_number: string | null;
  statement_date: string | null;
  opening_balance: string | null;
  closing_balance: string | null;
  currency: string | null;
  transaction_count: number;
  /** Per currency of the stored lines (migration 009), written with transaction_count. */
  totals: StatementTotals[];
  error: string | null;
  workflow_id: string | null;
  uploaded_by: string | null;
  approved_by: string | null;
  approved_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

export interface TransactionRow {
  id: string;
  statement_id: string;
  bank_account_id: string | null;
  unique_import_id: string;
  sequence: number;
  amount: string;
  currency: string;
  is_deposit: boolean;
  is_payment: boolean | null;
  value_date: string | null;
  booking_date: string | null;
  counterparty_name: string | null;
  counterparty_account: string | null;
  counterparty_iban: string | null;
  counterparty_bank_code: string | null;
  remittance_information: string | null;
  bank_reference: string | null;
  end_to_end_id: string | null;
  transaction_code: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface TransactionPaymentRow {
  id: string;
  bank_transaction_id: string;
  status: string;
  amount: string;
  currency: string;
  partner_id: string | null;
  match_score: string | null;
}

/** Amount as a decimal string with the currency's minor units (EUR 2, JPY 0, BHD 3). */
export function money(value: string | null, currency: string | null): string | null {
  if (value == null) return null;
  const ccy = currency?.trim();
  let places = 2;
  try {
    if (ccy) places = currencyMinorUnits(ccy);
  } catch {
    places = 2;
  }
  const m = new Money(value);
  // Keep digits the currency does not have rather than rounding a bank's amount away.
  return m.decimalPlaces() > places ? m.toFixed(m.decimalPlaces()) : m.toFixed(places);
}

/** Per currency: how many credits and debits a statement has and their sums (signed, decimal text). */
export interface StatementTotals {
  currency: string;
  credit_count: number;
  credit_total: string;
  debit_count: number;
  debit_total: string;
}

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

function statements(db: Conn, organizationId: string) {
  return db('bank_statements as s')
    .leftJoin('bank_accounts as a', 'a.id', 's.bank_account_id')
    .where('s.organization_id', organizationId)
    .select(
      's.id', 's.organization_id', 's.bank_account_id', 'a.account_identifier', 's.source', 's.format', 's.status', 's.file_name',
      's.file_sha256', 's.file_position', 's.encoding', 's.warnings', 's.balance_difference', 's.balance_mismatch_acknowledged_by', 's.balance_mismatch_acknowledged_at', 's.skipped_not_booked', 's.options', 's.statement_number', 's.statement_date', 's.opening_balance', 's.closing_balance', 's.currency',
      's.transaction_count', 's.totals', 's.error', 's.workflow_id', 's.uploaded_by', 's.approved_by', 's.approved_at', 's.created_at', 's.modified_at',
    );
}

/** The organization's bank account for `account`, created on first sight (identifier = IBAN or number). */
export async function upsertBankAccount(db: Conn, organizationId: string, account: ParsedAccount): Promise<string> {
  const [row] = (await db.raw(
    `INSERT INTO bank_accounts (id, organization_id, account_identifier, iban, account_number, bank_code, currency, name)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, account_identifier) DO UPDATE SET
       iban = COALESCE(bank_accounts.iban, EXCLUDED.iban),
       account_number = COALESCE(bank_accounts.account_number, EXCLUDED.account_number),
       bank_code = COALESCE(bank_accounts.bank_code, EXCLUDED.bank_code),
       currency = COALESCE(bank_accounts.currency, EXCLUDED.currency),
       name = COALESCE(bank_accounts.name, EXCLUDED.name)
     RETURNING id`,
    [newId(), organizationId, account.identifier, account.iban, account.accountNumber, account.bankCode, account.currency, account.name],
  )).rows as { id: string }[];
  return row.id;
}

/** Identifiers (IBANs and account numbers, upper-case) of the organization's own bank accounts. */
export async function ownAccountIdentifiers(db: Conn, organizationId: string): Promise<Set<string>> {
  const rows = (await db('bank_accounts').select('account_identifier', 'iban', 'account_number').where({ organization_id: organizationId })) as {
    account_identifier: string;
    iban: string | null;
    account_number: string | null;
  }[];
  return new Set(rows.flatMap((r) => [r.account_identifier, r.iban, r.account_number]).filter((v): v is string => !!v).map((v) => v.replace(/\s+/g, '').toUpperCase()));
}

export interface NewStatement {
  id: string;
  organizationId: string;
  bankAccountId: string;
  source: 'upload' | 'connection';
  format: string;
  status: StatementStatus;
  fileName: string | null;
  fileSha256: string | null;
  /** The stored file (bank_statement_files) and the statement's position in it, for uploads. */
  fileId: string | null;
  filePosition: number;
  encoding: string | null;
  warnings: string[];
  /** Closing − (opening + entries) where the balances do not reconcile, else null. */
  balanceDifference: string | null;
  skippedNotBooked: number;
  /** The statement as parsed by the upload, for processing (see getParsedStatement). */
  parsed: ParsedStatement | null;
  options: Record<string, unknown>;
  statementNumber: string | null;
  statementDate: string | null;
  openingBalance: string | null;
  closingBalance: string | null;
  currency: string;
  workflowId: string | null;
  uploadedBy: string | null;
}

/**
 * Stores an uploaded file once (bytes and hash); returns false when the organization already has a
 * file with this hash (a concurrent upload of the same file waits here for the other to commit).
 */
export async function insertStatementFile(db: Conn, f: { id: string; organizationId: string; sha256: string; content: Buffer; statementCount: number }): Promise<boolean> {
  const res = await db.raw(
    `INSERT INTO bank_statement_files (id, organization_id, file_sha256, content, statement_count) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, file_sha256) DO NOTHING`,
    [f.id, f.organizationId, f.sha256, f.content, f.statementCount],
  );
  return (res as { rowCount: number }).rowCount === 1;
}

/** Inserts the statement; returns false when the same statement of the same file (hash, position) is already imported. */
export async function insertStatement(db: Conn, s: NewStatement): Promise<boolean> {
  const res = await db.raw(
    `INSERT INTO bank_statements (id, organization_id, bank_account_id, source, format, status, file_name, file_sha256, file_id, file_position,
       encoding, warnings, balance_difference, skipped_not_booked, parsed_statement, options,
       statement_number, statement_date, opening_balance, closing_balance, currency, workflow_id, uploaded_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, file_sha256, file_position) WHERE file_sha256 IS NOT NULL DO NOTHING`,
    [
      s.id, s.organizationId, s.bankAccountId, s.source, s.format, s.status, s.fileName, s.fileSha256, s.fileId, s.filePosition,
      s.encoding, JSON.stringify(s.warnings), s.balanceDifference, s.skippedNotBooked, s.parsed ? JSON.stringify(s.parsed) : null, JSON.stringify(s.options),
      s.statementNumber, s.statementDate, s.openingBalance, s.closingBalance, s.currency, s.workflowId, s.uploadedBy,
    ],
  );
  return (res as { rowCount: number }).rowCount === 1;
}

/** The statements imported from the file with this hash, in file order. */
export async function statementsByFileHash(db: Conn, organizationId: string, sha256: string): Promise<StatementRow[]> {
  return (await statements(db, organizationId).andWhere('s.file_sha256', sha256).orderBy([{ column: 's.file_position' }, { column: 's.id' }])) as StatementRow[];
}

/** The account's latest statement dated before `statementDate` that has a closing balance (for the sequence warning). */
export async function previousStatementOfAccount(
  db: Conn,
  organizationId: string,
  bankAccountId: string,
  statementDate: string,
): Promise<{ id: string; statement_number: string | null; statement_date: string; closing_balance: string } | undefined> {
  return (await db('bank_statements')
    .select('id', 'statement_number', db.raw(`to_char(statement_date, 'YYYY-MM-DD') AS statement_date`), 'closing_balance')
    .where({ organization_id: organizationId, bank_account_id: bankAccountId })
    .andWhere('statement_date', '<', statementDate)
    .whereNotNull('closing_balance')
    .orderBy([{ column: 'statement_date', order: 'desc' }, { column: 'created_at', order: 'desc' }])
    .first()) as { id: string; statement_number: string | null; statement_date: string; closing_balance: string } | undefined;
}

/** The account's currency as stored (null for an account not seen before or without one). */
export async function bankAccountCurrency(db: Conn, organizationId: string, bankAccountId: string): Promise<string | null> {
  const row = (await db('bank_accounts').select('currency').where({ organization_id: organizationId, id: bankAccountId }).first()) as { currency: string | null } | undefined;
  return row?.currency?.trim() || null;
}

export async function getStatement(db: Conn, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<StatementRow | undefined> {
  if (opts.forUpdate) await db('bank_statements').select('id').where({ organization_id: organizationId, id }).forUpdate();
  return (await statements(db, organizationId).andWhere('s.id', id).first()) as StatementRow | undefined;
}

/** The statement's file: from bank_statement_files, or the bytes stored on the statement before migration 011. */
export async function getStatementContent(db: Conn, organizationId: string, id: string): Promise<{ content: Buffer | null } | undefined> {
  return (await db('bank_statements as s')
    .leftJoin('bank_statement_files as f', 'f.id', 's.file_id')
    .select(db.raw('coalesce(f.content, s.content) AS content'))
    .where({ 's.organization_id': organizationId, 's.id': id })
    .first()) as { content: Buffer | null } | undefined;
}

/**
 * The statement as the upload parsed it (stored with it, so processing does not parse the file again);
 * null for a statement stored before migration 013 or once its lines are stored (then the file is read).
 */
export async function getParsedStatement(db: Conn, organizationId: string, id: string): Promise<ParsedStatement | null> {
  const row = (await db('bank_statements').select('parsed_statement').where({ organization_id: organizationId, id }).first()) as { parsed_statement: ParsedStatement | null } | undefined;
  return row?.parsed_statement ?? null;
}

/** The statement's status, balance difference and currency, its row locked until the transaction ends (for an approval). */
export async function lockStatementForApproval(
  trx: Knex.Transaction,
  organizationId: string,
  id: string,
): Promise<{ status: StatementStatus; balance_difference: string | null; currency: string | null } | undefined> {
  return (await trx('bank_statements')
    .select('status', 'balance_difference', 'currency')
    .where({ organization_id: organizationId, id })
    .forUpdate()
    .first()) as { status: StatementStatus; balance_difference: string | null; currency: string | null } | undefined;
}

/** Sets the statement `approved` by `by`, with the acknowledgement of its balance mismatch when `acknowledgedMismatch`. */
export async function markApproved(trx: Knex.Transaction, organizationId: string, id: string, by: string | null, acknowledgedMismatch: boolean): Promise<void> {
  await trx('bank_statements')
    .where({ organization_id: organizationId, id })
    .update({
      status: 'approved',
      approved_by: by,
      approved_at: trx.fn.now(),
      modified_at: trx.fn.now(),
      ...(acknowledgedMismatch ? { balance_mismatch_acknowledged_by: by, balance_mismatch_acknowledged_at: trx.fn.now() } : {}),
    });
}

export interface StatementFilter {
  status?: StatementStatus;
  bankAccountId?: string;
}

export async function listStatements(db: Db, organizationId: string, f: StatementFilter, offset: number, limit: number): Promise<{ rows: StatementRow[]; total: number }> {
  const filter = (q: Knex.QueryBuilder) => {
    if (f.status) q.andWhere('s.status', f.status);
    if (f.bankAccountId) q.andWhere('s.bank_account_id', f.bankAccountId);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    filter(statements(db, organizationId)).orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.id', order: 'desc' }]).offset(offset).limit(limit),
    filter(db('bank_statements as s').where('s.organization_id', organizationId)).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as StatementRow[], total: Number(count) };
}

export async function listTransactions(db: Conn, organizationId: string, statementId: string): Promise<TransactionRow[]> {
  return (await db('bank_transactions')
    .select('*')
    .where({ organization_id: organizationId, statement_id: statementId })
    .orderBy(['sequence', 'id'])) as TransactionRow[];
}

/** A page of the statement's transactions in file order (sequence, then id) and how many it has. */
export async function listTransactionsOffset(
  db: Conn,
  organizationId: string,
  statementId: string,
  offset: number,
  limit: number,
): Promise<{ rows: TransactionRow[]; total: number }> {
  const where = { organization_id: organizationId, statement_id: statementId };
  const [rows, [{ count }]] = await Promise.all([
    db('bank_transactions').select('*').where(where).orderBy(['sequence', 'id']).offset(offset).limit(limit),
    db('bank_transactions').where(where).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as TransactionRow[], total: Number(count) };
}

/** Payments proposed or approved for the given transactions. */
export async function paymentsOfTransactions(db: Conn, organizationId: string, transactionIds: readonly string[], scope: BusinessUnitScope = '*'): Promise<TransactionPaymentRow[]> {
  if (transactionIds.length === 0) return [];
  const q = db('payments as p').where('p.organization_id', organizationId).whereIn('p.bank_transaction_id', [...transactionIds]);
  return (await whereSqlFragment(q, paymentInScopeSql('p', scope))
    .select('p.id', 'p.bank_transaction_id', 'p.status', 'p.amount', 'p.currency', 'p.partner_id', 'p.match_score')
    .orderBy(['p.created_at', 'p.id'])) as TransactionPaymentRow[];
}

/** Up to `limit` of the statement's transactions after position `afterSequence`, in file order (keyset pages). */
export async function listTransactionsPage(db: Conn, organizationId: string, statementId: string, afterSequence: number, limit: number): Promise<TransactionRow[]> {
  return (await db('bank_transactions')
    .select('*')
    .where({ organization_id: organizationId, statement_id: statementId })
    .andWhere('sequence', '>', afterSequence)
    .orderBy(['sequence', 'id'])
    .limit(limit)) as TransactionRow[];
}

/** Payments proposed or approved for the statement's transactions. */
/** The statement's payments within the caller's business units (`scope`; see paymentInScopeSql). */

/** How many of the statement's payments are outside `scope` (a member's business units; 0 for '*'). */
export async function countPaymentsOutOfScope(db: Conn, organizationId: string, statementId: string, scope: BusinessUnitScope): Promise<number> {
  const inScope = paymentInScopeSql('p', scope);
  if (!inScope) return 0;
  const [{ count }] = await db('payments as p')
    .join('bank_transactions as t', 't.id', 'p.bank_transaction_id')
    .where({ 'p.organization_id': organizationId, 't.statement_id': statementId })
    .andWhereRaw(`NOT ${inScope.sql}`, inScope.bindings)
    .count<{ count: string }[]>({ count: '*' });
  return Number(count);
}

export async function countApprovedPayments(db: Conn, organizationId: string, statementId: string): Promise<number> {
  const [{ count }] = await db('payments as p')
    .join('bank_transactions as t', 't.id', 'p.bank_transaction_id')
    .where({ 'p.organization_id': organizationId, 't.statement_id': statementId, 'p.status': 'approved' })
    .count<{ count: string }[]>({ count: '*' });
  return Number(count);
}

/** Moves the statement to `to` when its status is one of `from`; returns whether it moved. */
export async function transition(
  db: Conn,
  organizationId: string,
  id: string,
  from: readonly StatementStatus[],
  to: StatementStatus,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  const n = await db('bank_statements')
    .where({ organization_id: organizationId, id })
    .whereIn('status', [...from])
    .update({ status: to, modified_at: db.fn.now(), ...extra });
  return n === 1;
}

export interface NewTransaction extends ParsedTransaction {
  uniqueImportId: string;
  sequence: number;
}

/**
 * One set-based INSERT of a chunk; lines whose unique import id the organization already has (from
 * this statement on a retry, or from an earlier statement) are skipped. Returns how many were new.
 */
export async function insertTransactions(
  db: Conn,
  organizationId: string,
  statementId: string,
  bankAccountId: string | null,
  txs: readonly NewTransaction[],
): Promise<number> {
  if (txs.length === 0) return 0;
  const rows = txs.map((t) => ({
    id: newId(),
    organization_id: organizationId,
    statement_id: statementId,
    bank_account_id: bankAccountId,
    unique_import_id: t.uniqueImportId,
    sequence: t.sequence,
    amount: t.amount,
    currency: t.currency,
    value_date: t.valueDate,
    booking_date: t.bookingDate,
    counterparty_name: t.counterpartyName,
    counterparty_account: t.counterpartyAccount,
    counterparty_iban: t.counterpartyIban,
    counterparty_bank_code: t.counterpartyBankCode,
    remittance_information: t.remittanceInformation,
    bank_reference: t.bankReference,
    end_to_end_id: t.endToEndId,
    transaction_code: t.transactionCode,
  }));
  const inserted = (await db('bank_transactions').insert(rows).onConflict(['organization_id', 'unique_import_id']).ignore().returning('id')) as unknown[];
  return inserted.length;
}

/**
 * Writes the statement's `transaction_count` and `totals` (per currency: credit and debit counts and
 * signed sums, ordered by currency) from its stored lines, in one statement.
 */
export async function refreshTransactionCount(db: Conn, organizationId: string, statementId: string): Promise<number> {
  const [row] = (await db.raw(
    `WITH g AS (
       SELECT btrim(currency) AS currency,
              count(*) AS n,
              count(*) FILTER (WHERE amount > 0) AS credit_count,
              coalesce(sum(amount) FILTER (WHERE amount > 0), 0)::text AS credit_total,
              count(*) FILTER (WHERE amount < 0) AS debit_count,
              coalesce(sum(amount) FILTER (WHERE amount < 0), 0)::text AS debit_total
         FROM bank_transactions WHERE statement_id = ? AND organization_id = ?
        GROUP BY btrim(currency))
     UPDATE bank_statements SET
       transaction_count = (SELECT coalesce(sum(n), 0) FROM g),
       totals = (SELECT coalesce(jsonb_agg(jsonb_build_object(
                  'currency', currency, 'credit_count', credit_count, 'credit_total', credit_total,
                  'debit_count', debit_count, 'debit_total', debit_total) ORDER BY currency), '[]'::jsonb) FROM g),
       modified_at = now()
     WHERE id = ? AND organization_id = ? RETURNING transaction_count`,
    [statementId, organizationId, statementId, organizationId],
  )).rows as { transaction_count: number }[];
  return row?.transaction_count ?? 0;
}

export async function setPaymentFlags(db: Conn, organizationId: string, flags: readonly { id: string; isPayment: boolean }[]): Promise<void> {
  if (flags.length === 0) return;
  await db.raw(
    `UPDATE bank_transactions t SET is_payment = v.p, modified_at = now()
     FROM unnest(?::uuid[], ?::boolean[]) AS v(id, p)
     WHERE t.id = v.id AND t.organization_id = ? AND t.is_payment IS DISTINCT FROM v.p`,
    [flags.map((f) => f.id), flags.map((f) => f.isPayment), organizationId],
  );
}

/**
 * For a delete: takes the organization's payment lock (the advisory lock payment approvals and
 * allocation edits hold, lockOrganizationPayments) and then the statement row, and returns the row as
 * it is now. Whatever an approval committed before is visible to the caller's next statements, and
 * no approval can commit until the caller's transaction ends.
 */
export async function lockStatementForDelete(trx: Knex.Transaction, organizationId: string, id: string): Promise<StatementRow | undefined> {
  await lockOrganizationPayments(trx, organizationId);
  return getStatement(trx, organizationId, id, { forUpdate: true });
}

/** Removes the statement; its transactions, their payments and allocations go with it (ON DELETE CASCADE). */
export async function deleteStatement(db: Conn, organizationId: string, id: string): Promise<boolean> {
  const [row] = (await db('bank_statements').where({ organization_id: organizationId, id }).delete().returning('file_id')) as { file_id: string | null }[];
  // the file goes with its last statement (then the same file can be uploaded again)
  if (row?.file_id) {
    await db('bank_statement_files as f')
      .where({ 'f.organization_id': organizationId, 'f.id': row.file_id })
      .whereNotExists(db('bank_statements as s').select(db.raw('1')).whereRaw('s.file_id = f.id'))
      .delete();
  }
  return row !== undefined;
}
