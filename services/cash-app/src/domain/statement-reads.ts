/**
 * Reading statements: the statement with its counts and totals, pages of statements, and its
 * transactions page by page with the payments proposed or approved for them.
 */
import { NotFoundError, type BusinessUnitScope, type PageRequest } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import type { MatchStatus } from '../domain-types/matching.js';
import {
  getStatement,
  listStatements,
  type StatementFilter,
  type StatementRow,
} from '../store/bank-statements.js';
import { listTransactionsOffset, paymentsOfTransactions, type TransactionPaymentRow, type TransactionRow } from '../store/bank-transactions.js';

type Page = Pick<PageRequest, 'offset' | 'pageSize'>;

/** Most transactions GET /v2/bank-statements/{id} answers inline; the rest are paged (…/transactions). */
export const INLINE_TRANSACTIONS_MAX = 1000;

/** A bank line with the payments proposed or approved for it that the caller may see. */
export interface TransactionRecord {
  row: TransactionRow;
  payments: TransactionPaymentRow[];
}

/** A statement and, when asked for, its first INLINE_TRANSACTIONS_MAX lines and whether it has more. */
export interface StatementDetail {
  statement: StatementRow;
  inline?: { transactions: TransactionRecord[]; truncated: boolean };
}

async function transactionRecords(deps: Pick<CashAppDeps, 'db'>, organizationId: string, txs: readonly TransactionRow[], scope: BusinessUnitScope): Promise<TransactionRecord[]> {
  const payments = await paymentsOfTransactions(deps.db, organizationId, txs.map((t) => t.id), scope);
  const byTx = new Map<string, TransactionPaymentRow[]>();
  for (const p of payments) (byTx.get(p.bank_transaction_id) ?? byTx.set(p.bank_transaction_id, []).get(p.bank_transaction_id)!).push(p);
  return txs.map((row) => ({ row, payments: byTx.get(row.id) ?? [] }));
}

/** The organization's statement, or 404 (statement ids are validated as ids by the routes). */
export async function statementOf(deps: Pick<CashAppDeps, 'db'>, organizationId: string, statementId: string): Promise<StatementRow> {
  const row = await getStatement(deps.db, organizationId, statementId);
  if (!row) throw new NotFoundError(`No bank statement ${statementId}.`);
  return row;
}

/** A page of the organization's statements, newest first. */
export async function statementPage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: StatementFilter, page: Page) {
  return listStatements(deps.db, organizationId, filter, page.offset, page.pageSize);
}

/**
 * One statement with its counts and totals and, with `transactions: 'inline'`, its first
 * INLINE_TRANSACTIONS_MAX transactions (`truncated` says whether there are more).
 */
export async function statementDetail(
  deps: Pick<CashAppDeps, 'db'>,
  organizationId: string,
  statementId: string,
  opts: { transactions: 'inline' | 'omit'; scope: BusinessUnitScope },
): Promise<StatementDetail> {
  const statement = await statementOf(deps, organizationId, statementId);
  if (opts.transactions === 'omit') return { statement };
  const { rows, total } = await listTransactionsOffset(deps.db, organizationId, statement.id, 0, INLINE_TRANSACTIONS_MAX);
  return { statement, inline: { transactions: await transactionRecords(deps, organizationId, rows, opts.scope), truncated: total > rows.length } };
}

/**
 * A page of the statement's transactions in file order (`sequence`, then id), with their payments;
 * with `matchStatuses`, only the deposits with one of those match statuses.
 */
export async function statementTransactions(
  deps: Pick<CashAppDeps, 'db'>,
  organizationId: string,
  statementId: string,
  page: Page,
  scope: BusinessUnitScope,
  filter: { matchStatuses?: readonly MatchStatus[] } = {},
) {
  const statement = await statementOf(deps, organizationId, statementId);
  const { rows, total } = await listTransactionsOffset(deps.db, organizationId, statement.id, page.offset, page.pageSize, filter);
  return { records: await transactionRecords(deps, organizationId, rows, scope), total };
}
