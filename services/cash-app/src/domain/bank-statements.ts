/**
 * Uploading bank statements: the statement rows of a file and their processing workflows
 * (`bank-statement-<id>`), duplicates of an imported file, and resuming a stranded or failed one.
 */
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  AppError,
  ConflictError,
  Money,
  newId,
  OUTAGE_RETRY_AFTER_SECONDS,
  ServiceUnavailableError,
  withTemporalDeadline,
} from '@rp/platform';
import { bankStatement, bankStatementWorkflowId, businessSearchAttributes, TASK_QUEUES } from '@rp/workflows';
import type { CashAppDeps } from '../deps.js';
import type { ParsedStatement, StatementFormat, StoredStatement } from '../parsers/types.js';
import {
  bankAccountCurrency,
  getStatement,
  insertStatement,
  insertStatementFile,
  previousStatementOfAccount,
  statementsByFileHash,
  transition,
  upsertBankAccount,
  type StatementRow,
} from '../store/bank-statements.js';
import { money } from './statement-money.js';

export { STATEMENT_STATUSES, STATUS_DESCRIPTION, type StatementStatus } from '../domain-types/bank-statements.js';

/** What an upload stores: the file, its parse (every statement of the file) and who sent it. */
export interface StatementUpload {
  organizationId: string;
  uploadedBy: string | null;
  format: StatementFormat;
  fileName: string | null;
  content: Buffer;
  /** where the upload stored the file's bytes as they arrived (object storage); absent: `content` is stored in the row */
  objectKey?: string | null;
  /** the SHA-256 of `content` (hex) when already computed (on the parse thread) */
  sha256?: string;
  options: Record<string, unknown>;
  /** every statement of the file as it is stored (parsers' storedFile) */
  statements: StoredStatement[];
  /** the character encoding the file was read in */
  encoding?: string | null;
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
async function accountWarnings(db: Parameters<typeof bankAccountCurrency>[0], org: string, bankAccountId: string, statement: Omit<ParsedStatement, 'transactions'>): Promise<string[]> {
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
): Promise<{ statements: StatementRow[]; resumed: boolean; fileStored: boolean }> {
  const { db } = deps;
  const org = upload.organizationId;
  const sha256 = upload.sha256 ?? createHash('sha256').update(upload.content).digest('hex');
  const duplicate = async (rows: StatementRow[]) => {
    let resumed = false;
    for (const [i, row] of rows.entries()) {
      if (row.status === 'uploaded' && (await resumeStranded(deps, row))) resumed = true;
      else if (row.status === 'failed') {
        rows[i] = await retryFailed(deps, row);
        resumed = true;
      }
    }
    if (resumed) return { statements: rows, resumed, fileStored: false };
    const names = rows.map((r) => `${r.id} (status ${r.status})`).join(', ');
    throw new ConflictError(`This file was already imported as bank statement${rows.length > 1 ? 's' : ''} ${names || 'unknown'}.`);
  };
  const already = await statementsByFileHash(db, org, sha256);
  if (already.length) return duplicate(already);

  const statements = upload.statements.map(({ head, json }) => ({ id: newId(), parsed: head, json }));
  const fileId = newId();
  let started = false;
  const inserted = await db
    .transaction(async (trx) => {
      // false: the same file committed by a concurrent upload (this insert waited for it)
      if (!(await insertStatementFile(trx, { id: fileId, organizationId: org, sha256, content: upload.objectKey ? null : upload.content, objectKey: upload.objectKey ?? null, statementCount: statements.length }))) return false;
      for (const [i, { id, parsed, json }] of statements.entries()) {
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
          encoding: upload.encoding ?? null,
          warnings,
          balanceDifference: parsed.balanceMismatch?.difference ?? null,
          skippedNotBooked: parsed.skipped?.notBooked ?? 0,
          // processing stores these lines: the file is not parsed again for each of its statements
          parsedJson: json,
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
  return { statements: rows, resumed: false, fileStored: true };
}
