/**
 * Bank statements: statuses and their moves, the unique import id of a transaction, the
 * classification of deposits as payments (rules that need no database), and the upload and delete of
 * a statement with its processing workflow.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  AppError,
  ConflictError,
  ForbiddenError,
  Money,
  newId,
  NotFoundError,
  OUTAGE_RETRY_AFTER_SECONDS,
  pageOf,
  ServiceUnavailableError,
  withTemporalDeadline,
  type BusinessUnitScope,
  type PageRequest,
} from '@rp/platform';
import { bankStatement, bankStatementWorkflowId, businessSearchAttributes, TASK_QUEUES } from '@rp/workflows';
import type { CashAppDeps } from '../deps.js';
import type { ParsedFile, ParsedStatement, ParsedTransaction, StatementFormat } from '../parsers/types.js';
import {
  bankAccountCurrency,
  countApprovedPayments,
  countPaymentsOutOfScope,
  deleteStatement,
  getStatement,
  insertStatement,
  insertStatementFile,
  listTransactionsOffset,
  lockStatementForApproval,
  lockStatementForDelete,
  markApproved,
  money,
  paymentsOfTransactions,
  previousStatementOfAccount,
  statementsByFileHash,
  statementView,
  transactionView,
  transition,
  upsertBankAccount,
  type StatementRow,
  type TransactionPaymentRow,
  type TransactionRow,
} from '../store/bank-statements.js';

/**
 * Statuses. `uploaded`: file stored, processing not started. `processing`: the bankStatement workflow
 * is storing, classifying and matching the transactions. `ready`: processed, payments proposed,
 * waiting for approval. `approved`: accepted by a user (cannot be deleted). `failed`: processing
 * failed after retries (`error` says why). `synced`: arrived through a bank connection.
 */
export const STATEMENT_STATUSES = ['uploaded', 'processing', 'ready', 'approved', 'synced', 'failed'] as const;
export type StatementStatus = (typeof STATEMENT_STATUSES)[number];

export const STATUS_DESCRIPTION =
  '`uploaded` (file stored, processing queued) → `processing` (workflow storing, classifying and matching ' +
  'transactions) → `ready` (payments proposed) → `approved` (accepted; can no longer be deleted). `failed`: ' +
  'processing failed after retries, `error` says why. `synced`: the statement arrived through a bank ' +
  'connection rather than an upload (only organization admins may delete it).';

/**
 * The unique import ids of a statement's transactions, in order. A bank line is imported once per
 * organization; the id must name one real line, never something a bank reuses (daily counters that
 * restart at "1"):
 *
 * - A statement with its own identity (CAMT `Stmt/Id`), as OCA bank-statement-import's camt parser
 *   does: `<account>:stmt:<statement id>:<entry reference>:<entry position>[.<transaction position>]`.
 *   The same statement imported again (a re-export of it) maps onto the same ids; another day's
 *   statement has another id, so its lines are new even when the bank reuses references.
 * - Otherwise (MT940, BAI2, CSV, JSON, or a CAMT statement without `Stmt/Id`), the line's content:
 *   with a bank reference `<account>:ref:<reference>:<booking date>:<amount>`, without one
 *   `<account>:sha256:<contentHash>:<n>`. A reference the bank reuses on another day, or for another
 *   amount, is another line; an overlapping file (the same lines exported again with new ones) stores
 *   only the new lines. The nth line with the same id inside one file gets `#n` (`:n` for hashes).
 */
export function uniqueImportIds(statement: Pick<ParsedStatement, 'account' | 'statementId' | 'transactions'>): string[] {
  const account = statement.account.identifier;
  const statementId = statement.statementId?.trim() || null;
  const refSeen = new Map<string, number>();
  const hashSeen = new Map<string, number>();
  return statement.transactions.map((t) => {
    if (statementId && t.lineKey) return `${account}:stmt:${statementId}:${t.lineKey}`;
    if (t.bankReference) {
      const key = `${account}:ref:${t.bankReference}:${t.bookingDate ?? t.valueDate ?? ''}:${t.amount}`;
      const n = (refSeen.get(key) ?? 0) + 1;
      refSeen.set(key, n);
      return n > 1 ? `${key}#${n}` : key;
    }
    const hash = contentHash(account, t);
    const n = (hashSeen.get(hash) ?? 0) + 1;
    hashSeen.set(hash, n);
    return `${account}:sha256:${hash}:${n}`;
  });
}

/**
 * SHA-256 of what identifies a line without a bank reference: account, amount, currency, dates,
 * counterparty, remittance information, end-to-end id and transaction code. Identical lines in one
 * file are told apart by their ordinal (the nth identical line gets `:n`), so re-importing the same
 * lines maps each onto its earlier copy.
 */
export function contentHash(accountIdentifier: string, t: ParsedTransaction): string {
  const fields = [
    accountIdentifier,
    t.amount,
    t.currency,
    t.valueDate,
    t.bookingDate,
    t.counterpartyName,
    t.counterpartyAccount,
    t.remittanceInformation,
    t.endToEndId,
    t.transactionCode,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

export interface ClassifiableTransaction {
  amount: string;
  counterpartyName: string | null;
  counterpartyAccount: string | null;
  counterpartyIban: string | null;
  remittanceInformation: string | null;
  transactionCode: string | null;
}

export type Classification = { isPayment: boolean; reason: string };

const TEXT_RULES: [RegExp, string][] = [
  [/\b(credit interest|interest (credit|payment|paid)|interest|habenzinsen|zinsen|intérêts)\b/i, 'interest'],
  [/\b(refund|refunded|rückerstattung|erstattung|rebate|remboursement)\b/i, 'refund'],
  [/\b(internal transfer|own account|account transfer between|umbuchung|sweep|cash pooling|zba)\b/i, 'internal transfer'],
  [/\b(reversal|reversed|storno|chargeback|returned|return of|rücklastschrift|rückbuchung)\b/i, 'reversal'],
];

/** Bank transaction codes that mean interest, a return/reversal or an internal (ZBA) transfer. */
const CODE_RULES: [RegExp, string][] = [
  [/^R:/, 'reversal'], // the statement marks the entry as a reversal (MT940 RC/RD, CAMT RvslInd)
  [/(^|\/)INTR$|^NINT$|^354$/, 'interest'], // ISO BkTxCd sub-family INTR, SWIFT NINT, BAI2 354 Interest Credit
  [/(^|\/)(RRTN|ARET|RPCR)$|^NRTI$/, 'reversal'], // ISO returns/reversals, SWIFT returned item
  [/^275$/, 'internal transfer'], // BAI2 275 ZBA Credit
];

/**
 * Is a deposit a customer payment? Debits and zero amounts are not. A credit is a payment unless it
 * comes from one of the organization's own bank accounts (internal transfer), its bank transaction
 * code says interest / return / reversal / ZBA transfer, or its remittance text or counterparty name
 * says interest, refund, internal transfer or reversal (English, German and French words).
 */
export function classifyDeposit(t: ClassifiableTransaction, ownAccounts: ReadonlySet<string>): Classification {
  if (!(Number(t.amount) > 0)) return { isPayment: false, reason: 'not a deposit' };
  for (const acct of [t.counterpartyIban, t.counterpartyAccount]) {
    if (acct && ownAccounts.has(acct.replace(/\s+/g, '').toUpperCase())) return { isPayment: false, reason: 'internal transfer' };
  }
  if (t.transactionCode) {
    for (const [re, reason] of CODE_RULES) if (re.test(t.transactionCode)) return { isPayment: false, reason };
  }
  const text = [t.remittanceInformation, t.counterpartyName].filter(Boolean).join(' ');
  for (const [re, reason] of TEXT_RULES) if (re.test(text)) return { isPayment: false, reason };
  return { isPayment: true, reason: 'deposit' };
}

// ---------------------------------------------------------------------------------------------
// Upload and delete: the statement row and its processing workflow

/** What an upload stores: the file, its parse (every statement of the file) and who sent it. */
export interface StatementUpload {
  organizationId: string;
  uploadedBy: string | null;
  format: StatementFormat;
  fileName: string | null;
  content: Buffer;
  options: Record<string, unknown>;
  parsed: ParsedFile;
}

/** Workflow starts an upload of a multi-statement file sends at once. */
const PARALLEL_STARTS = 16;

/** Test seam: runs after the workflows have started and before the statement rows commit (a crash there). */
export interface UploadHooks {
  beforeCommit?: (statementId: string) => Promise<void>;
}

/** Starts `bank-statement-<id>`; Temporal unavailable fails within WORKFLOW_START_DEADLINE_MS (503), not after ~20 s. */
async function startProcessing(temporal: Client, organizationId: string, statementId: string): Promise<void> {
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.workflow.start(bankStatement, {
        taskQueue: TASK_QUEUES.cashApp,
        workflowId: bankStatementWorkflowId(statementId),
        args: [{ organizationId, statementId, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(organizationId, statementId),
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return; // idempotent: the id is the statement's
    throw err;
  }
}

/**
 * A statement left `uploaded` with no running workflow (the upload of an earlier version committed
 * the row and died before starting the workflow, or its workflow gave up waiting for a commit that
 * came too late): start processing it now, under its own workflow id. False when its workflow runs.
 */
async function resumeStranded(deps: Pick<CashAppDeps, 'temporal'>, row: StatementRow): Promise<boolean> {
  const workflowId = row.workflow_id ?? bankStatementWorkflowId(row.id);
  try {
    const d = await withTemporalDeadline(deps.temporal, () => deps.temporal.workflow.getHandle(workflowId).describe());
    if (d.status.name === 'RUNNING') return false;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  await startProcessing(deps.temporal, row.organization_id, row.id);
  return true;
}

/**
 * The same file uploaded again after its statement `failed`: processing resumes on the stored
 * statement (status back to `uploaded`, error cleared, `bank-statement-<id>` started again; the
 * transactions already stored are kept and not stored twice). A file the parser refused fails again
 * with the same error. Temporal unavailable: the statement stays `failed` as it was (503).
 */
async function retryFailed(deps: Pick<CashAppDeps, 'db' | 'temporal'>, row: StatementRow): Promise<StatementRow> {
  const org = row.organization_id;
  // Committed before the start (a worker must not see `failed` and skip the storing); a crash between
  // the two leaves it `uploaded` without a workflow, which the next upload of the file resumes.
  if (await transition(deps.db, org, row.id, ['failed'], 'uploaded', { error: null })) {
    try {
      await startProcessing(deps.temporal, org, row.id);
    } catch (err) {
      await transition(deps.db, org, row.id, ['uploaded'], 'failed', { error: row.error });
      throw err;
    }
  }
  return (await getStatement(deps.db, org, row.id)) ?? row;
}

/**
 * Warnings for a statement that only the stored state can raise (the file itself cannot contradict
 * them): the bank account is known with another currency than the statement's; the account's
 * previous statement (the latest dated before this one) closed with another balance than this one
 * opens with, so a statement may be missing.
 */
async function accountWarnings(db: Parameters<typeof bankAccountCurrency>[0], org: string, bankAccountId: string, statement: ParsedStatement): Promise<string[]> {
  const warnings: string[] = [];
  const known = await bankAccountCurrency(db, org, bankAccountId);
  const ccy = statement.account.currency ?? statement.currency;
  if (known && ccy && known !== ccy) warnings.push(`the account ${statement.account.identifier} is kept in ${known}; this statement is in ${ccy}`);
  if (statement.openingBalance != null && statement.statementDate) {
    const prev = await previousStatementOfAccount(db, org, bankAccountId, statement.statementDate);
    if (prev && !new Money(prev.closing_balance).eq(statement.openingBalance)) {
      warnings.push(
        `the statement opens with ${money(statement.openingBalance, ccy)}, but the account's previous statement ${prev.id}` +
          `${prev.statement_number ? ` (number ${prev.statement_number})` : ''} of ${prev.statement_date} closed with ${money(prev.closing_balance, ccy)}: a statement may be missing`,
      );
    }
  }
  return warnings;
}

/**
 * Stores an uploaded file with every statement in it (one statement row each, in file order, each
 * with its own processing workflow `bank-statement-<id>`), atomically in effect: the file and the rows
 * are inserted in one transaction, the workflows are started, and only then does the transaction
 * commit (start-then-commit). A crash before the commit leaves nothing (the same file can be uploaded
 * again; the started workflows find no statement and end `missing`); a failed start rolls everything
 * back. The store activity waits briefly for a row it cannot see yet.
 *
 * The same file again (same SHA-256): 409 naming its statements, unless some of them are stranded in
 * `uploaded` without a workflow (their processing is started) or `failed` (resumed, see retryFailed):
 * then the file's statements are returned (`resumed`).
 */
export async function uploadStatement(
  deps: Pick<CashAppDeps, 'db' | 'temporal'>,
  upload: StatementUpload,
  hooks: UploadHooks = {},
): Promise<{ statements: StatementRow[]; resumed: boolean }> {
  const { db } = deps;
  const org = upload.organizationId;
  const sha256 = createHash('sha256').update(upload.content).digest('hex');
  const duplicate = async (rows: StatementRow[]) => {
    let resumed = false;
    for (const [i, row] of rows.entries()) {
      if (row.status === 'uploaded' && (await resumeStranded(deps, row))) resumed = true;
      else if (row.status === 'failed') {
        rows[i] = await retryFailed(deps, row);
        resumed = true;
      }
    }
    if (resumed) return { statements: rows, resumed };
    const names = rows.map((r) => `${r.id} (status ${r.status})`).join(', ');
    throw new ConflictError(`This file was already imported as bank statement${rows.length > 1 ? 's' : ''} ${names || 'unknown'}.`);
  };
  const already = await statementsByFileHash(db, org, sha256);
  if (already.length) return duplicate(already);

  const statements = upload.parsed.statements.map((parsed) => ({ id: newId(), parsed }));
  const fileId = newId();
  let started = false;
  const inserted = await db
    .transaction(async (trx) => {
      // false: the same file committed by a concurrent upload (this insert waited for it)
      if (!(await insertStatementFile(trx, { id: fileId, organizationId: org, sha256, content: upload.content, statementCount: statements.length }))) return false;
      for (const [i, { id, parsed }] of statements.entries()) {
        const bankAccountId = await upsertBankAccount(trx, org, parsed.account);
        const warnings = [...(parsed.warnings ?? []), ...(await accountWarnings(trx, org, bankAccountId, parsed))];
        const ok = await insertStatement(trx, {
          id,
          organizationId: org,
          bankAccountId,
          source: 'upload',
          format: upload.format,
          status: 'uploaded',
          fileName: upload.fileName,
          fileSha256: sha256,
          fileId,
          filePosition: i + 1,
          encoding: upload.parsed.encoding ?? null,
          warnings,
          balanceDifference: parsed.balanceMismatch?.difference ?? null,
          skippedNotBooked: parsed.skipped?.notBooked ?? 0,
          // processing stores these lines: the file is not parsed again for each of its statements
          parsed,
          options: upload.options,
          statementNumber: parsed.statementNumber,
          statementDate: parsed.statementDate,
          openingBalance: parsed.openingBalance,
          closingBalance: parsed.closingBalance,
          currency: parsed.currency,
          workflowId: bankStatementWorkflowId(id),
          uploadedBy: upload.uploadedBy,
        });
        if (!ok) return false; // a statement row of the same file stored before migration 011
      }
      // Started side by side (a few at a time): the rows commit only after the last start, and a workflow's
      // store activity waits a few seconds at most for its row (see MISSING_ROW_ATTEMPTS).
      for (let i = 0; i < statements.length; i += PARALLEL_STARTS) {
        await Promise.all(statements.slice(i, i + PARALLEL_STARTS).map(({ id }) => startProcessing(deps.temporal, org, id)));
        started = true;
      }
      await hooks.beforeCommit?.(statements[0].id);
      return true;
    })
    .catch((err: unknown) => {
      if (started || err instanceof AppError) throw err;
      throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, 'Processing of the statement could not be started; nothing was stored. Upload the file again.');
    });
  if (!inserted) return duplicate(await statementsByFileHash(db, org, sha256));
  const rows = await Promise.all(statements.map(async ({ id }) => (await getStatement(db, org, id))!));
  return { statements: rows, resumed: false };
}

/** How long a DELETE waits for a cancelled processing workflow to close before terminating it. */
const CANCEL_WAIT_MS = 20_000;

/** Cancels the statement's processing workflow if it runs, and waits (bounded) until it has closed. */
async function stopProcessing(deps: Pick<CashAppDeps, 'temporal'>, workflowId: string, log?: Logger): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(workflowId);
  try {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return;
    await handle.cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    handle.result().then(
      () => true,
      () => true, // CancelledFailure (expected) or any other ending: the workflow is closed
    ),
    new Promise<false>((r) => (timer = setTimeout(() => r(false), CANCEL_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!closed) {
    log?.warn({ workflow_id: workflowId }, 'statement workflow did not close after cancellation; terminating it');
    await handle.terminate('bank statement deleted').catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    });
  }
}

/**
 * Deletes a statement with its transactions and their (unapproved) payments. Refused (409) when the
 * statement or one of its payments is approved; `synced` statements need an admin. A running
 * processing workflow is cancelled and awaited first. The final check and the delete run under the
 * organization's payment lock, the lock a payment approval holds: an approval racing the delete
 * either commits first (the delete then sees it and refuses) or waits and finds the payment gone
 * (404) — an approved payment is never removed by the cascade.
 */
export async function deleteUploadedStatement(
  deps: Pick<CashAppDeps, 'db' | 'temporal'>,
  who: { organizationId: string; role: string | null; scope?: BusinessUnitScope },
  statementId: string,
  log?: Logger,
): Promise<void> {
  const org = who.organizationId;
  const row = await statementOf(deps, org, statementId);
  const refuse = async (db: Parameters<typeof countApprovedPayments>[0], status: StatementStatus) => {
    if (status === 'approved') throw new ConflictError('An approved bank statement cannot be deleted.');
    if ((await countApprovedPayments(db, org, row.id)) > 0) throw new ConflictError('The statement has approved payments; it cannot be deleted.');
    // a member may not remove payments of business units they may not access
    if ((await countPaymentsOutOfScope(db, org, row.id, who.scope ?? '*')) > 0) {
      throw new ConflictError('The statement has payments of business units you may not access; an organization admin may delete it.');
    }
  };
  if (row.status === 'synced' && who.role !== 'admin') throw new ForbiddenError('Only organization admins may delete a statement synced from a bank connection.');
  await refuse(deps.db, row.status);
  await stopProcessing(deps, row.workflow_id ?? bankStatementWorkflowId(row.id), log);
  await deps.db.transaction(async (trx) => {
    const now = await lockStatementForDelete(trx, org, row.id);
    if (!now) throw new NotFoundError(`No bank statement ${statementId}.`);
    await refuse(trx, now.status);
    await deleteStatement(trx, org, row.id);
  });
}

/**
 * Approves a `ready` statement (409 for any other status). A statement whose balances do not
 * reconcile (`balance_mismatch`) is approved only with `acknowledgeBalanceMismatch`: 409 otherwise,
 * naming the difference and its currency; the acknowledgement is recorded with who gave it.
 */
export async function approveStatement(
  deps: Pick<CashAppDeps, 'db'>,
  who: { organizationId: string; userId: string | null },
  statementId: string,
  opts: { acknowledgeBalanceMismatch: boolean },
): Promise<StatementRow> {
  const org = who.organizationId;
  const row = await statementOf(deps, org, statementId);
  // the row is locked from the check to the update: a delete or another approval waits (or finds it moved)
  await deps.db.transaction(async (trx) => {
    const now = await lockStatementForApproval(trx, org, row.id);
    if (!now) throw new NotFoundError(`No bank statement ${statementId}.`);
    if (now.status !== 'ready') throw new ConflictError(`Only a ready statement can be approved; this one is ${now.status}.`);
    const mismatch = now.balance_difference != null;
    if (mismatch && !opts.acknowledgeBalanceMismatch) {
      const ccy = now.currency?.trim() ?? '';
      throw new ConflictError(
        `The statement's balances do not reconcile: its closing balance differs from the opening balance plus its entries by ${money(now.balance_difference, ccy)} ${ccy}. ` +
          'Check it against the bank, then approve it with acknowledge_balance_mismatch: true.',
      );
    }
    await markApproved(trx, org, row.id, who.userId, mismatch);
  });
  return (await getStatement(deps.db, org, row.id))!;
}

// ---------------------------------------------------------------------------------------------
// Reading statements: counts and totals, and their transactions page by page

/** Most transactions GET /v2/bank-statements/{id} answers inline; the rest are paged (…/transactions). */
export const INLINE_TRANSACTIONS_MAX = 1000;

async function transactionViews(deps: Pick<CashAppDeps, 'db'>, organizationId: string, txs: readonly TransactionRow[], scope: BusinessUnitScope) {
  const payments = await paymentsOfTransactions(deps.db, organizationId, txs.map((t) => t.id), scope);
  const byTx = new Map<string, TransactionPaymentRow[]>();
  for (const p of payments) (byTx.get(p.bank_transaction_id) ?? byTx.set(p.bank_transaction_id, []).get(p.bank_transaction_id)!).push(p);
  return txs.map((t) => transactionView(t, byTx.get(t.id)));
}

/** The organization's statement, or 404 (statement ids are validated as ids by the routes). */
export async function statementOf(deps: Pick<CashAppDeps, 'db'>, organizationId: string, statementId: string): Promise<StatementRow> {
  const row = await getStatement(deps.db, organizationId, statementId);
  if (!row) throw new NotFoundError(`No bank statement ${statementId}.`);
  return row;
}

/**
 * One statement with its counts and totals and, with `transactions: 'inline'`, its first
 * INLINE_TRANSACTIONS_MAX transactions (`transactions_truncated` says whether there are more).
 */
export async function statementDetail(deps: Pick<CashAppDeps, 'db'>, organizationId: string, statementId: string, opts: { transactions: 'inline' | 'omit'; scope: BusinessUnitScope }) {
  const row = await statementOf(deps, organizationId, statementId);
  const view = statementView(row);
  if (opts.transactions === 'omit') return view;
  const { rows, total } = await listTransactionsOffset(deps.db, organizationId, row.id, 0, INLINE_TRANSACTIONS_MAX);
  return { ...view, transactions: await transactionViews(deps, organizationId, rows, opts.scope), transactions_truncated: total > rows.length };
}

/** A page of the statement's transactions in file order (`sequence`, then id), with their payments. */
export async function statementTransactions(deps: Pick<CashAppDeps, 'db'>, organizationId: string, statementId: string, page: PageRequest, scope: BusinessUnitScope) {
  const row = await statementOf(deps, organizationId, statementId);
  const { rows, total } = await listTransactionsOffset(deps.db, organizationId, row.id, page.offset, page.pageSize);
  return pageOf(await transactionViews(deps, organizationId, rows, scope), total, page);
}
