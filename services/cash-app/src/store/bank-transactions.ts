/** A statement's bank lines: storing them once per organization, reading them in file order, and the payments proposed for them. */
import type { Knex } from 'knex';
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { MatchOutcome, MatchStatus } from '../domain-types/matching.js';
import type { ParsedTransaction } from '../parsers/types.js';
import { paymentInScopeSql, whereSqlFragment } from './payments.js';

type Conn = Db | Knex.Transaction;

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
  /** derived by the database from the payments and is_payment (migration 015); null for debits */
  match_status: MatchStatus | null;
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


export async function listTransactions(db: Conn, organizationId: string, statementId: string): Promise<TransactionRow[]> {
  return (await db('bank_transactions')
    .select('*')
    .where({ organization_id: organizationId, statement_id: statementId })
    .orderBy(['sequence', 'id'])) as TransactionRow[];
}

/**
 * A page of the statement's transactions in file order (sequence, then id) and how many it has;
 * with `matchStatuses`, only those with one of them (debits, which have none, never).
 */
export async function listTransactionsOffset(
  db: Conn,
  organizationId: string,
  statementId: string,
  offset: number,
  limit: number,
  opts: { matchStatuses?: readonly MatchStatus[] } = {},
): Promise<{ rows: TransactionRow[]; total: number }> {
  const where = { organization_id: organizationId, statement_id: statementId };
  const filtered = (q: Knex.QueryBuilder) => (opts.matchStatuses ? q.whereIn('match_status', [...opts.matchStatuses]) : q);
  const [rows, [{ count }]] = await Promise.all([
    filtered(db('bank_transactions').select('*').where(where)).orderBy(['sequence', 'id']).offset(offset).limit(limit),
    filtered(db('bank_transactions').where(where)).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as TransactionRow[], total: Number(count) };
}

/**
 * What matching decided for deposits it proposed nothing for. `not_a_payment`: the deposit is not a
 * customer payment (a refund, interest, an own transfer, a card settlement), recorded as
 * `is_payment = false`, which makes its match_status `not_a_payment` (the database derives it) and
 * keeps it out of later matching, as the classification's verdict does. `unmatched`: nothing to
 * write — a deposit without a payment whose is_payment is not false is `unmatched` by that rule.
 * A deposit that meanwhile got a payment keeps the payment's status. Returns how many lines changed.
 */
export async function recordMatchOutcomes(db: Conn, organizationId: string, outcomes: readonly MatchOutcome[]): Promise<number> {
  const notPayments = outcomes.flatMap((o) => (o.outcome === 'not_a_payment' ? [o.transaction_id] : []));
  if (notPayments.length === 0) return 0;
  return db('bank_transactions')
    .where({ organization_id: organizationId })
    .whereIn('id', notPayments)
    .andWhere('amount', '>', 0)
    .andWhereRaw('is_payment IS DISTINCT FROM false')
    .update({ is_payment: false, modified_at: db.fn.now() });
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


export interface NewTransaction extends ParsedTransaction {
  uniqueImportId: string;
  sequence: number;
}

/**
 * One set-based INSERT of a chunk, in one round trip whatever its size: each column travels as one
 * array parameter and `unnest` turns them back into rows (a multi-row VALUES list would bind a
 * parameter per cell, 19 per line, and PostgreSQL allows 65,535 per statement). Lines whose unique
 * import id the organization already has (from this statement on a retry, or from an earlier
 * statement) are skipped. Returns how many were new.
 */
export async function insertTransactions(
  db: Conn,
  organizationId: string,
  statementId: string,
  bankAccountId: string | null,
  txs: readonly NewTransaction[],
): Promise<number> {
  if (txs.length === 0) return 0;
  const col = <T>(f: (t: NewTransaction) => T): T[] => txs.map(f);
  const result = (await db.raw(
    `INSERT INTO bank_transactions (id, organization_id, statement_id, bank_account_id, unique_import_id, sequence, amount, currency,
       value_date, booking_date, counterparty_name, counterparty_account, counterparty_iban, counterparty_bank_code,
       remittance_information, bank_reference, end_to_end_id, transaction_code, match_status)
     SELECT l.id, ?::uuid, ?::uuid, ?::uuid, l.unique_import_id, l.sequence, l.amount, l.currency, l.value_date, l.booking_date,
            l.counterparty_name, l.counterparty_account, l.counterparty_iban, l.counterparty_bank_code, l.remittance_information,
            l.bank_reference, l.end_to_end_id, l.transaction_code,
            -- a new line's status (the database would derive the same, row by row: migration 015)
            CASE WHEN l.amount > 0 THEN 'unmatched' END
       FROM unnest(?::uuid[], ?::text[], ?::int[], ?::numeric[], ?::text[], ?::date[], ?::date[], ?::text[], ?::text[], ?::text[],
                   ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
         AS l(id, unique_import_id, sequence, amount, currency, value_date, booking_date, counterparty_name, counterparty_account,
              counterparty_iban, counterparty_bank_code, remittance_information, bank_reference, end_to_end_id, transaction_code)
     ON CONFLICT (organization_id, unique_import_id) DO NOTHING`,
    [
      organizationId,
      statementId,
      bankAccountId,
      col(() => newId()),
      col((t) => t.uniqueImportId),
      col((t) => t.sequence),
      col((t) => t.amount),
      col((t) => t.currency),
      col((t) => t.valueDate),
      col((t) => t.bookingDate),
      col((t) => t.counterpartyName),
      col((t) => t.counterpartyAccount),
      col((t) => t.counterpartyIban),
      col((t) => t.counterpartyBankCode),
      col((t) => t.remittanceInformation),
      col((t) => t.bankReference),
      col((t) => t.endToEndId),
      col((t) => t.transactionCode),
    ] as Knex.Value[],
  )) as { rowCount: number | null };
  return result.rowCount ?? 0;
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
