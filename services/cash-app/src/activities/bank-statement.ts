import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Db } from '@rp/platform';
import type { Logger } from 'pino';
import type { BankStatementActivities, BankStatementInput, ClassifyDepositsResult, StoreTransactionsResult } from '@rp/workflows';
import { classifyDeposit, uniqueImportIds } from '../domain/bank-statements.js';
import { parseStatement, StatementParseError, type StatementFormat } from '../parsers/index.js';
import {
  getStatement,
  getStatementContent,
  insertTransactions,
  listTransactions,
  ownAccountIdentifiers,
  refreshTransactionCount,
  setPaymentFlags,
  transition,
} from '../store/bank-statements.js';

export interface BankStatementDeps {
  db: Db;
  log?: Logger;
  /** Transactions per INSERT (and per heartbeat). */
  chunkSize: number;
  /**
   * Pause after each stored chunk, in ms (0 in production). A throttle for operators and the tests
   * that must catch a statement while it is `processing` (delete during processing, worker killed
   * mid-way); the pause is a cancellable activity sleep.
   */
  chunkPauseMs: number;
}

interface StoreProgress {
  /** index of the next transaction to store */
  next: number;
}

function throwIfCancelled(ctx: Context): void {
  if (ctx.cancellationSignal.aborted) {
    const r: unknown = ctx.cancellationSignal.reason;
    throw r instanceof CancelledFailure ? r : new CancelledFailure(r instanceof Error ? r.message : 'cancelled');
  }
}

export function createBankStatementActivities(deps: BankStatementDeps): BankStatementActivities {
  const { db } = deps;
  return {
    async storeStatementTransactions({ organizationId, statementId }: BankStatementInput): Promise<StoreTransactionsResult> {
      const ctx = Context.current();
      const log = deps.log?.child({ organization_id: organizationId, statement_id: statementId, activity: 'storeStatementTransactions' });
      ctx.heartbeat();
      const statement = await getStatement(db, organizationId, statementId);
      if (!statement) return { missing: true, total: 0, stored: 0 };
      if (!['uploaded', 'processing'].includes(statement.status)) {
        // Already past this step (a retry after the step completed): nothing to do.
        return { missing: false, total: statement.transaction_count, stored: statement.transaction_count };
      }
      await transition(db, organizationId, statementId, ['uploaded'], 'processing');
      const file = await getStatementContent(db, organizationId, statementId);
      if (!file?.content) throw ApplicationFailure.nonRetryable('the statement has no stored file to process', 'StatementParseError');
      let parsed;
      try {
        parsed = parseStatement(statement.format as StatementFormat, file.content, statement.options);
      } catch (err) {
        if (err instanceof StatementParseError) throw ApplicationFailure.nonRetryable(err.message, 'StatementParseError');
        throw err;
      }
      ctx.heartbeat();
      const ids = uniqueImportIds(parsed.account.identifier, parsed.transactions);
      const progress = ctx.info.heartbeatDetails as StoreProgress | undefined;
      const start = Math.max(0, Math.min(progress?.next ?? 0, parsed.transactions.length));
      if (start > 0) log?.info({ resume_from: start }, 'resuming statement storage');
      for (let i = start; i < parsed.transactions.length; i += deps.chunkSize) {
        throwIfCancelled(ctx);
        const chunk = parsed.transactions.slice(i, i + deps.chunkSize).map((t, j) => ({ ...t, uniqueImportId: ids[i + j], sequence: i + j + 1 }));
        await insertTransactions(db, organizationId, statementId, statement.bank_account_id, chunk);
        ctx.heartbeat({ next: i + chunk.length } satisfies StoreProgress);
        if (deps.chunkPauseMs > 0) await ctx.sleep(deps.chunkPauseMs);
      }
      throwIfCancelled(ctx);
      const stored = await refreshTransactionCount(db, organizationId, statementId);
      log?.info({ total: parsed.transactions.length, stored }, 'statement transactions stored');
      return { missing: false, total: parsed.transactions.length, stored };
    },

    async classifyStatementDeposits({ organizationId, statementId }: BankStatementInput): Promise<ClassifyDepositsResult> {
      const [own, txs] = await Promise.all([ownAccountIdentifiers(db, organizationId), listTransactions(db, organizationId, statementId)]);
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
      const payments = flags.filter((f) => f.isPayment).length;
      return { payments, nonPayments: flags.length - payments };
    },

    async markStatementReady({ organizationId, statementId }: BankStatementInput): Promise<void> {
      await transition(db, organizationId, statementId, ['uploaded', 'processing'], 'ready', { error: null });
    },

    async markStatementFailed({ organizationId, statementId, error }: BankStatementInput & { error: string }): Promise<void> {
      await transition(db, organizationId, statementId, ['uploaded', 'processing'], 'failed', { error: error.slice(0, 2000) });
    },
  };
}
