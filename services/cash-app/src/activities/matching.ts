import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { listOpenInvoicesForMatching, listPartnersForMatching, Money, type Db } from '@rp/platform';
import type { MatchingActivities, ProposePaymentsInput, ProposePaymentsResult } from '@rp/workflows';
import type { Logger } from 'pino';
import type { CashAppConfig } from '../config.js';
import { DEFAULT_MATCH_CONFIG, MatchState, matchDeposit, type MatchContext, type MatchInvoice, type Proposal } from '../domain/matching.js';
import { ensureSystemAdjustments } from '../domain/system-adjustments.js';
import {
  activeSystemAdjustmentId,
  depositsWithoutPayment,
  insertProposals,
  knownAccounts,
  relievedByInvoice,
  statementExists,
  unusedRemittances,
  type DepositRow,
} from '../store/payments.js';

export interface MatchingDeps {
  db: Db;
  config: Pick<CashAppConfig, 'MATCH_TOLERANCE_AMOUNT' | 'MATCH_TOLERANCE_PERCENT' | 'MATCH_TOLERANCE_ADJUSTMENT'>;
  log?: Logger;
}

/** Deposits matched and written per chunk; the activity heartbeats after each chunk. */
const CHUNK = 500;

function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null; // called outside an activity (tests, scripts)
  }
}

/**
 * Build the matching context of an organization. The open amount of an invoice offered to the
 * engine is the ledger's `amount_open` minus what payments in cash application already take off it
 * — approved payments AND unapproved proposals of other transactions (a proposal reserves its
 * amounts, so two deposits are never proposed against the same open amount).
 */
export async function loadMatchContext(db: Db, organizationId: string, currencies: readonly string[], config: MatchingDeps['config']): Promise<MatchContext> {
  await ensureSystemAdjustments(db, organizationId);
  const [ledgerInvoices, partners, accounts, remittances, toleranceAdjustmentId] = await Promise.all([
    listOpenInvoicesForMatching(db, organizationId, currencies),
    listPartnersForMatching(db, organizationId),
    knownAccounts(db, organizationId),
    unusedRemittances(db, organizationId),
    activeSystemAdjustmentId(db, organizationId, config.MATCH_TOLERANCE_ADJUSTMENT),
  ]);
  const relieved = await relievedByInvoice(db, organizationId, ['approved', 'unapproved']);
  const invoices: MatchInvoice[] = [];
  for (const inv of ledgerInvoices) {
    const open = new Money(inv.amount_open).minus(relieved.get(inv.id) ?? 0);
    if (open.lte(0)) continue;
    invoices.push({ ...inv, currency: inv.currency.trim(), open_amount: open.toFixed(4) });
  }
  return {
    invoices,
    partners,
    knownAccounts: accounts,
    remittances,
    toleranceAdjustmentId,
    config: { ...DEFAULT_MATCH_CONFIG, toleranceAmount: config.MATCH_TOLERANCE_AMOUNT, tolerancePercent: config.MATCH_TOLERANCE_PERCENT },
  };
}

export function createMatchingActivities(deps: MatchingDeps): MatchingActivities {
  return {
    /**
     * Propose payments for the statement's deposits that have none yet. Idempotent: a retry (or a
     * resumed run after a worker crash) skips deposits that already got a payment. Heartbeats after
     * every chunk of CHUNK deposits; a cancellation seen through the heartbeat stops it between chunks.
     */
    async proposePayments(input: ProposePaymentsInput): Promise<ProposePaymentsResult> {
      const ctx = activityContext();
      const { organizationId, statementId } = input;
      if (!(await statementExists(deps.db, organizationId, statementId))) return { proposed: 0, unmatched: 0 };
      const deposits = await depositsWithoutPayment(deps.db, organizationId, statementId);
      if (deposits.length === 0) return { proposed: 0, unmatched: 0 };
      const currencies = [...new Set(deposits.map((d) => d.currency.trim()))];
      const matchContext = await loadMatchContext(deps.db, organizationId, currencies, deps.config);
      const state = new MatchState(matchContext.invoices);
      let proposed = 0;
      let unmatched = 0;
      for (let i = 0; i < deposits.length; i += CHUNK) {
        const chunk = deposits.slice(i, i + CHUNK).map((d) => ({ ...d, currency: d.currency.trim() }));
        const proposals: Proposal[] = [];
        for (const d of chunk) {
          const p = matchDeposit(d, matchContext, state);
          if (p) proposals.push(p);
          else unmatched++;
        }
        proposed += await insertProposals(deps.db, organizationId, proposals, new Map<string, DepositRow>(chunk.map((d) => [d.id, d])));
        if (ctx) {
          ctx.heartbeat({ done: i + chunk.length, total: deposits.length });
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('proposePayments cancelled');
        }
      }
      deps.log?.info({ organization_id: organizationId, statement_id: statementId, proposed, unmatched }, 'payments proposed');
      return { proposed, unmatched };
    },
  };
}
