/** Bank statements, their files and bank accounts in the database: inserts, reads, status moves and locks. */
import type { Knex } from 'knex';
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { ParsedAccount, ParsedStatement, StatementFormat } from '../parsers/types.js';
import type { StatementStatus } from '../domain-types/bank-statements.js';
import type { MatchStatus } from '../domain-types/matching.js';
import { lockOrganizationPayments, paymentInScopeSql } from './payments.js';

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
  /** How many of its deposits have each match status (migration 015), counted when read. */
  match_counts: Record<MatchStatus, number>;
  error: string | null;
  workflow_id: string | null;
  uploaded_by: string | null;
  approved_by: string | null;
  approved_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

/** Per currency: how many credits and debits a statement has and their sums (signed, decimal text). */
export interface StatementTotals {
  currency: string;
  credit_count: number;
  credit_total: string;
  debit_count: number;
  debit_total: string;
}

function statements(db: Conn, organizationId: string) {
  return db('bank_statements as s')
    .leftJoin('bank_accounts as a', 'a.id', 's.bank_account_id')
    .where('s.organization_id', organizationId)
    .select(
      's.id', 's.organization_id', 's.bank_account_id', 'a.account_identifier', 's.source', 's.format', 's.status', 's.file_name',
      's.file_sha256', 's.file_position', 's.encoding', 's.warnings', 's.balance_difference', 's.balance_mismatch_acknowledged_by', 's.balance_mismatch_acknowledged_at', 's.skipped_not_booked', 's.options', 's.statement_number', 's.statement_date', 's.opening_balance', 's.closing_balance', 's.currency',
      's.transaction_count', 's.totals', 's.error', 's.workflow_id', 's.uploaded_by', 's.approved_by', 's.approved_at', 's.created_at', 's.modified_at',
      // counted from the (statement_id, match_status) index: the lines' status is kept current by the database
      db.raw(`(SELECT jsonb_build_object(
                 'unmatched', count(*) FILTER (WHERE t.match_status = 'unmatched'),
                 'proposed', count(*) FILTER (WHERE t.match_status = 'proposed'),
                 'approved', count(*) FILTER (WHERE t.match_status = 'approved'),
                 'not_a_payment', count(*) FILTER (WHERE t.match_status = 'not_a_payment'))
               FROM bank_transactions t WHERE t.statement_id = s.id AND t.match_status IS NOT NULL) AS match_counts`),
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
  /** The statement as parsed by the upload, as JSON text, for processing (see getParsedStatement). */
  parsedJson: string | null;
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
 * Stores an uploaded file once (its hash, and its object key in storage or else its bytes); returns
 * false when the organization already has a file with this hash (a concurrent upload of the same
 * file waits here for the other to commit).
 */
export async function insertStatementFile(
  db: Conn,
  f: { id: string; organizationId: string; sha256: string; content: Buffer | null; objectKey: string | null; statementCount: number },
): Promise<boolean> {
  const res = await db.raw(
    `INSERT INTO bank_statement_files (id, organization_id, file_sha256, content, object_key, statement_count) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, file_sha256) DO NOTHING`,
    [f.id, f.organizationId, f.sha256, f.content, f.objectKey, f.statementCount],
  );
  return (res as { rowCount: number }).rowCount === 1;
}

/** Inserts the statement; returns false when the same statement of the same file (hash, position) is already imported. */
export async function insertStatement(db: Conn, s: NewStatement): Promise<boolean> {
  const res = await db.raw(
    `INSERT INTO bank_statements (id, organization_id, bank_account_id, source, format, status, file_name, file_sha256, file_id, file_position,
       encoding, warnings, balance_difference, skipped_not_booked, parsed_statement, options,
       statement_number, statement_date, opening_balance, closing_balance, currency, workflow_id, uploaded_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::json, ?::jsonb, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, file_sha256, file_position) WHERE file_sha256 IS NOT NULL DO NOTHING`,
    [
      s.id, s.organizationId, s.bankAccountId, s.source, s.format, s.status, s.fileName, s.fileSha256, s.fileId, s.filePosition,
      s.encoding, JSON.stringify(s.warnings), s.balanceDifference, s.skippedNotBooked, s.parsedJson, JSON.stringify(s.options),
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

/** Whether a stored file (committed) keeps its bytes in the object `objectKey`. */
export async function statementFileObjectInUse(db: Conn, organizationId: string, objectKey: string): Promise<boolean> {
  return (await db('bank_statement_files').where({ organization_id: organizationId, object_key: objectKey }).first('id')) !== undefined;
}

/**
 * The statement's file: its object key in storage, or its bytes (bank_statement_files, or the bytes
 * stored on the statement before migration 011).
 */
export async function getStatementContent(db: Conn, organizationId: string, id: string): Promise<{ content: Buffer | null; object_key: string | null } | undefined> {
  return (await db('bank_statements as s')
    .leftJoin('bank_statement_files as f', 'f.id', 's.file_id')
    .select(db.raw('coalesce(f.content, s.content) AS content'), 'f.object_key')
    .where({ 's.organization_id': organizationId, 's.id': id })
    .first()) as { content: Buffer | null; object_key: string | null } | undefined;
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

/**
 * Removes the statement; its transactions, their payments and allocations go with it (ON DELETE
 * CASCADE). `fileObjectKey`: the object of its file, when the file went with its last statement
 * (for the caller to remove from storage once this commits).
 */
export async function deleteStatement(db: Conn, organizationId: string, id: string): Promise<{ deleted: boolean; fileObjectKey: string | null }> {
  const [row] = (await db('bank_statements').where({ organization_id: organizationId, id }).delete().returning('file_id')) as { file_id: string | null }[];
  let fileObjectKey: string | null = null;
  // the file goes with its last statement (then the same file can be uploaded again)
  if (row?.file_id) {
    const [file] = (await db('bank_statement_files as f')
      .where({ 'f.organization_id': organizationId, 'f.id': row.file_id })
      .whereNotExists(db('bank_statements as s').select(db.raw('1')).whereRaw('s.file_id = f.id'))
      .delete()
      .returning('object_key')) as { object_key: string | null }[];
    fileObjectKey = file?.object_key ?? null;
  }
  return { deleted: row !== undefined, fileObjectKey };
}
