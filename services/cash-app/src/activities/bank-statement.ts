import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { storageUnavailableFailure, type Db, type ObjectStorage } from '@rp/platform';
import type { Logger } from 'pino';
import type { BankStatementActivities, BankStatementInput, ClassifyDepositsResult, StoreTransactionsResult } from '@rp/workflows';
import { classifyDeposit, uniqueImportIds } from '../domain/bank-lines.js';
import { recordStatementEvent } from '../domain/events.js';
import { parseStatementSteps, runParseAsync, StatementParseError, type ParsedStatement, type StatementFormat } from '../parsers/index.js';
import {
  getParsedStatement,
  getStatement,
  getStatementContent,
  ownAccountIdentifiers,
  transition,
  type StatementRow,
} from '../store/bank-statements.js';
import { insertTransactions, listTransactionsPage, refreshTransactionCount, setPaymentFlags } from '../store/bank-transactions.js';
import { heartbeatPacer, HEARTBEAT_EVERY_MS, throwIfCancelled } from './pacer.js';

export interface BankStatementDeps {
  db: Db;
  /** where uploaded files are kept (their rows name the object); null: the service has none */
  storage?: ObjectStorage | null;
  log?: Logger;
  /** Transactions per INSERT (and per heartbeat). */
  chunkSize: number;
  /**
   * Pause after each stored chunk, in ms (0 in production). A throttle for operators and the tests
   * that must catch a statement while it is `processing` (delete during processing, worker killed
   * mid-way); the pause is a cancellable activity sleep.
   */
  chunkPauseMs: number;
  /** Heartbeat interval while parsing the file and classifying (default HEARTBEAT_EVERY_MS). */
  heartbeatEveryMs?: number;
}

interface StoreProgress {
  /** index of the next transaction to store */
  next: number;
  /** while the file is re-parsed: lines read so far */
  parsing?: number;
}

/** Transactions classified per page (read, classified, flagged; heartbeat between pages). */
const CLASSIFY_PAGE = 5000;

/**
 * Attempts of the store activity that wait for a statement row that does not exist yet. The upload
 * starts the workflow before it commits the row (start-then-commit, see domain uploadStatement), so a
 * fast worker can look for the row a moment before the commit. A row still missing after that was
 * never committed (the upload failed or crashed between start and commit) or was deleted: the
 * workflow then ends `missing`.
 */
const MISSING_ROW_ATTEMPTS = 3;

export function createBankStatementActivities(deps: BankStatementDeps): BankStatementActivities {
  const { db } = deps;
  const everyMs = deps.heartbeatEveryMs ?? HEARTBEAT_EVERY_MS;

  /**
   * The statement's part of its stored file, parsed here: only for a statement stored without its
   * parse (before migration 013). Parsed in batches of lines with heartbeats in between: a large file
   * must not starve them.
   */
  async function parseStoredFile(ctx: Context, statement: StatementRow, progress: StoreProgress): Promise<ParsedStatement> {
    const file = await getStatementContent(db, statement.organization_id, statement.id);
    if (file?.object_key) {
      if (!deps.storage) throw storageUnavailableFailure('cash-app worker');
      const bytes = await deps.storage.getObjectBytes(file.object_key);
      file.content = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : null;
    }
    if (!file?.content) throw ApplicationFailure.nonRetryable('the statement has no stored file to process', 'StatementParseError');
    try {
      const pace = heartbeatPacer(ctx, () => ({ ...progress }), everyMs);
      // read in the encoding the upload read it in; this statement is the one at its position in the file
      const options = { ...statement.options, charset: statement.options.charset ?? statement.encoding ?? undefined };
      const parsedFile = await runParseAsync(parseStatementSteps(statement.format as StatementFormat, file.content, options), async (lines) => {
        progress.parsing = lines;
        await pace();
      });
      const own = parsedFile.statements[statement.file_position - 1];
      if (!own) throw new StatementParseError(`statement ${statement.file_position}`, `the file holds ${parsedFile.statements.length} statement(s)`);
      return own;
    } catch (err) {
      if (err instanceof StatementParseError) throw ApplicationFailure.nonRetryable(err.message, 'StatementParseError');
      throw err;
    }
  }

  return {
    async storeStatementTransactions({ organizationId, statementId }: BankStatementInput): Promise<StoreTransactionsResult> {
      const ctx = Context.current();
      const log = deps.log?.child({ organization_id: organizationId, statement_id: statementId, activity: 'storeStatementTransactions' });
      const previous = ctx.info.heartbeatDetails as StoreProgress | undefined;
      const progress: StoreProgress = { next: Math.max(0, previous?.next ?? 0) };
      // (heartbeat copies: the SDK may serialize details after this call returns)
      ctx.heartbeat({ ...progress });
      const statement = await getStatement(db, organizationId, statementId);
      if (!statement) {
        if (ctx.info.attempt < MISSING_ROW_ATTEMPTS) {
          throw ApplicationFailure.retryable(`bank statement ${statementId} is not committed yet`, 'StatementNotCommitted');
        }
        return { missing: true, total: 0, stored: 0 };
      }
      if (!['uploaded', 'processing'].includes(statement.status)) {
        // Already past this step (a retry after the step completed): nothing to do.
        return { missing: false, total: statement.transaction_count, stored: statement.transaction_count };
      }
      await transition(db, organizationId, statementId, ['uploaded'], 'processing');
      // The upload parsed the file and stored each statement's part with it: a file of many statements
      // is parsed once, not once per statement.
      const parsed = (await getParsedStatement(db, organizationId, statementId)) ?? (await parseStoredFile(ctx, statement, progress));
      delete progress.parsing;
      ctx.heartbeat({ ...progress });
      throwIfCancelled(ctx);
      const ids = uniqueImportIds(parsed);
      const start = Math.min(progress.next, parsed.transactions.length);
      if (start > 0) log?.info({ resume_from: start }, 'resuming statement storage');
      for (let i = start; i < parsed.transactions.length; i += deps.chunkSize) {
        throwIfCancelled(ctx);
        const chunk = parsed.transactions.slice(i, i + deps.chunkSize).map((t, j) => ({ ...t, uniqueImportId: ids[i + j], sequence: i + j + 1 }));
        await insertTransactions(db, organizationId, statementId, statement.bank_account_id, chunk);
        progress.next = i + chunk.length;
        ctx.heartbeat({ ...progress });
        if (deps.chunkPauseMs > 0) await ctx.sleep(deps.chunkPauseMs);
      }
      throwIfCancelled(ctx);
      const stored = await refreshTransactionCount(db, organizationId, statementId);
      log?.info({ total: parsed.transactions.length, stored }, 'statement transactions stored');
      return { missing: false, total: parsed.transactions.length, stored };
    },

    /** Pages through the statement's transactions (heartbeat between pages; a cancellation stops it there). */
    async classifyStatementDeposits({ organizationId, statementId }: BankStatementInput): Promise<ClassifyDepositsResult> {
      const ctx = Context.current();
      const own = await ownAccountIdentifiers(db, organizationId);
      let payments = 0;
      let nonPayments = 0;
      let after = 0;
      const pace = heartbeatPacer(ctx, () => ({ classified: payments + nonPayments }), everyMs);
      for (;;) {
        const txs = await listTransactionsPage(db, organizationId, statementId, after, CLASSIFY_PAGE);
        if (txs.length === 0) break;
        const flags = txs.map((t) => ({
          id: t.id,
          isPayment: classifyDeposit(
            {
              amount: t.amount,
              counterpartyName: t.counterparty_name,
              counterpartyAccount: t.counterparty_account,
              counterpartyIban: t.counterparty_iban,
              remittanceInformation: t.remittance_information,
              transactionCode: t.transaction_code,
            },
            own,
          ).isPayment,
        }));
        await setPaymentFlags(db, organizationId, flags);
        const n = flags.filter((f) => f.isPayment).length;
        payments += n;
        nonPayments += flags.length - n;
        after = txs[txs.length - 1].sequence;
        await pace();
      }
      return { payments, nonPayments };
    },

    // The counts and totals users see are recomputed from the stored lines in the same transaction as
    // the status change: a statement that fails half-way reports what it holds, never a stale 0. The
    // event is recorded with the move only: a retried activity finds the statement moved and records nothing.
    async markStatementReady({ organizationId, statementId }: BankStatementInput): Promise<void> {
      await db.transaction(async (trx) => {
        // the stored parse has done its work once the lines are stored
        if (await transition(trx, organizationId, statementId, ['uploaded', 'processing'], 'ready', { error: null, parsed_statement: null })) {
          await refreshTransactionCount(trx, organizationId, statementId);
          await recordStatementEvent(trx, organizationId, 'bank_statement.processed', statementId);
        }
      });
    },

    /** `error` is written for users (the workflow words it: userFacingFailure); the technical failure is in the workflow's history. */
    async markStatementFailed({ organizationId, statementId, error }: BankStatementInput & { error: string }): Promise<void> {
      await db.transaction(async (trx) => {
        if (await transition(trx, organizationId, statementId, ['uploaded', 'processing'], 'failed', { error: error.slice(0, 2000) })) {
          await refreshTransactionCount(trx, organizationId, statementId);
          await recordStatementEvent(trx, organizationId, 'bank_statement.failed', statementId);
        }
      });
    },
  };
}
