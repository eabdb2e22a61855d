import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { listMasterDataBankAccounts, listOpenInvoicesForMatchingPage, listPartnersForMatching, Money, type Db } from '@rp/platform';
import type { MatchingActivities, ProposePaymentsInput, ProposePaymentsResult } from '@rp/workflows';
import type { Logger } from 'pino';
import { heartbeatPacer, HEARTBEAT_EVERY_MS } from './pacer.js';
import type { CashAppConfig } from '../config.js';
import { DEFAULT_MATCH_CONFIG, MatchState, matchStatementPaced, type MatchContext, type MatchInvoice, type MatchOutcome, type Proposal } from '../domain/matching/index.js';
import type { KnownAccount } from '../domain-types/matching.js';
import { relievedByInvoice } from '../domain/open-amounts.js';
import { recordPaymentEvents } from '../domain/events.js';
import { ensureSystemAdjustments } from '../domain/system-adjustments.js';
import { recordMatchOutcomes } from '../store/bank-transactions.js';
import {
  activeSystemAdjustmentId,
  depositsWithoutPayment,
  earlierOpenDeposits,
  insertProposals,
  knownAccounts,
  ownAccountIdentifiers,
  statementExists,
  unusedRemittances,
  type DepositRow,
} from '../store/matching.js';

export interface MatchingDeps {
  db: Db;
  /** MATCH_FEE_CEILING_AMOUNT absent: the engine's default ceiling */
  config: Pick<CashAppConfig, 'MATCH_TOLERANCE_AMOUNT' | 'MATCH_TOLERANCE_PERCENT' | 'MATCH_TOLERANCE_ADJUSTMENT'> & Partial<Pick<CashAppConfig, 'MATCH_FEE_CEILING_AMOUNT'>>;
  log?: Logger;
  /** Heartbeat interval while the context is loaded and a chunk is matched (default HEARTBEAT_EVERY_MS, the first after MATCHING_FIRST_HEARTBEAT_MS). */
  heartbeatEveryMs?: number;
  /** Open invoices per query while the context is loaded (default 20,000). */
  invoicePageSize?: number;
}

/**
 * The first heartbeat inside the context load is due after this long (then every HEARTBEAT_EVERY_MS;
 * a chunk's end always heartbeats): a small statement is matched before it is due, so its heartbeats
 * stay one per chunk, while a large organization's context load heartbeats throughout.
 */
const MATCHING_FIRST_HEARTBEAT_MS = 2000;

/** Deposits whose proposals are written per chunk (one transaction each); the activity heartbeats after each chunk. */
const CHUNK = 500;

/**
 * Chunks written at the same time, each in its own transaction on its own connection (the chunks'
 * deposits are disjoint, so they never wait for each other's locks): a statement's proposals are
 * written in about the time the database needs for them, not that plus every round trip and every
 * chunk's building in this process. Two leave the rest of the worker's pool to its other activities.
 */
const WRITERS = 2;

/**
 * Open deposits of earlier statements (no payment yet) matched again with each new statement, most
 * recent first: invoices pushed since may fit them, and they compete for the same open amounts.
 */
const EARLIER_DEPOSITS = 5_000;

function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null; // called outside an activity (tests, scripts)
  }
}

/** Open invoices read per query while the matching context is loaded. */
const INVOICE_PAGE = 20_000;

/**
 * Build the matching context of an organization. The open amount of an invoice offered to the
 * engine is the ledger's `amount_open` minus what payments in cash application already take off it
 * — approved payments AND unapproved proposals of other transactions (a proposal reserves its
 * amounts, so two deposits are never proposed against the same open amount).
 *
 * The open invoices are read in keyset pages of `pageSize` and `pace` is awaited between pages and
 * every few thousand invoices: an organization with hundreds of thousands of open invoices must not
 * hold the activity between two heartbeats for longer than its heartbeat timeout.
 */
export async function loadMatchContext(
  db: Db,
  organizationId: string,
  currencies: readonly string[],
  config: MatchingDeps['config'],
  opts: { pace?: () => Promise<void>; pageSize?: number } = {},
): Promise<MatchContext> {
  const pace = opts.pace ?? (async () => {});
  const pageSize = opts.pageSize ?? INVOICE_PAGE;
  await ensureSystemAdjustments(db, organizationId);
  const [partners, learned, masterData, remittances, toleranceAdjustmentId, relieved, ownAccounts] = await Promise.all([
    listPartnersForMatching(db, organizationId),
    knownAccounts(db, organizationId),
    listMasterDataBankAccounts(db, organizationId),
    unusedRemittances(db, organizationId),
    activeSystemAdjustmentId(db, organizationId, config.MATCH_TOLERANCE_ADJUSTMENT),
    relievedByInvoice(db, organizationId, ['approved', 'unapproved']),
    ownAccountIdentifiers(db, organizationId),
  ]);
  // Both kinds of known account identify a payer: learned from approved payments, or given by the customer master data.
  const accounts: KnownAccount[] = [
    ...learned.map((a) => ({ account_identifier: a.account_identifier, partner_id: a.partner_id, source: 'learned' as const })),
    ...masterData.map((a) => ({ account_identifier: a.account_identifier, partner_id: a.partner_id, source: 'master_data' as const })),
  ];
  await pace();
  const invoices: MatchInvoice[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await listOpenInvoicesForMatchingPage(db, organizationId, currencies, after, pageSize);
    for (let i = 0; i < page.length; i++) {
      if (i > 0 && i % 5000 === 0) await pace();
      const { amount_open: ledgerOpen, ...inv } = page[i];
      // an invoice's open amount, or a credit memo's credit still available (both positive)
      const open = new Money(ledgerOpen).minus(relieved.get(inv.id) ?? 0);
      if (open.lte(0)) continue;
      invoices.push({ ...inv, currency: inv.currency.trim(), open_amount: open.toFixed(4) });
    }
    await pace();
    if (page.length < pageSize) break;
    after = page[page.length - 1].id;
  }
  // The engine's order: oldest due first (nulls last), then id, as listOpenInvoicesForMatching gives it.
  invoices.sort(byDueThenId);
  return {
    invoices,
    partners,
    knownAccounts: accounts,
    remittances,
    toleranceAdjustmentId,
    ownAccounts,
    config: {
      ...DEFAULT_MATCH_CONFIG,
      toleranceAmount: config.MATCH_TOLERANCE_AMOUNT,
      tolerancePercent: config.MATCH_TOLERANCE_PERCENT,
      feeCeilingAmount: config.MATCH_FEE_CEILING_AMOUNT ?? DEFAULT_MATCH_CONFIG.feeCeilingAmount,
    },
  };
}

function byDueThenId(a: MatchInvoice, b: MatchInvoice): number {
  if (a.net_due_date !== b.net_due_date) {
    if (a.net_due_date == null) return 1;
    if (b.net_due_date == null) return -1;
    return a.net_due_date < b.net_due_date ? -1 : 1;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function createMatchingActivities(deps: MatchingDeps): MatchingActivities {
  return {
    /**
     * Propose payments for the statement's deposits that have none yet, matched over the whole
     * statement together with the open deposits of earlier statements (EARLIER_DEPOSITS). Idempotent:
     * a retry (or a resumed run after a worker crash) skips deposits that already got a payment.
     * Heartbeats while matching and after every chunk of CHUNK written deposits; a cancellation seen
     * through the heartbeat stops it between two steps. The counts are the statement's own deposits.
     */
    async proposePayments(input: ProposePaymentsInput): Promise<ProposePaymentsResult> {
      const ctx = activityContext();
      const { organizationId, statementId } = input;
      if (!(await statementExists(deps.db, organizationId, statementId))) return { proposed: 0, unmatched: 0 };
      const deposits = (await depositsWithoutPayment(deps.db, organizationId, statementId)).map((d) => ({ ...d, currency: d.currency.trim() }));
      if (deposits.length === 0) return { proposed: 0, unmatched: 0 };
      const currencies = [...new Set(deposits.map((d) => d.currency))];
      let done = 0;
      // Between two chunks the context load and the matching must not outlast the heartbeat
      // timeout: heartbeat (time-paced) inside them too, with the progress so far.
      const everyMs = deps.heartbeatEveryMs ?? HEARTBEAT_EVERY_MS;
      const pace = heartbeatPacer(ctx, () => ({ done, total: deposits.length }), everyMs, deps.heartbeatEveryMs ?? MATCHING_FIRST_HEARTBEAT_MS);
      const t0 = performance.now();
      const earlier = (await earlierOpenDeposits(deps.db, organizationId, statementId, currencies, EARLIER_DEPOSITS)).map((d) => ({ ...d, currency: d.currency.trim() }));
      const matchContext = await loadMatchContext(deps.db, organizationId, currencies, deps.config, { pace, pageSize: deps.invoicePageSize });
      const t1 = performance.now();
      const state = new MatchState(matchContext.invoices);
      await pace();
      const all = [...deposits, ...earlier];
      const outcomes = await matchStatementPaced(all, matchContext, state, pace);
      const t2 = performance.now();
      const byId = new Map<string, DepositRow>(all.map((d) => [d.id, d]));
      let proposed = 0;
      let unmatched = 0;
      // the statement's own deposits first (their progress is what the heartbeat reports), then the earlier ones
      const chunks: { from: number; to: number; own: boolean }[] = [];
      for (const [start, end, own] of [[0, deposits.length, true], [deposits.length, all.length, false]] as const) {
        for (let i = start; i < end; i += CHUNK) chunks.push({ from: i, to: Math.min(end, i + CHUNK), own });
      }
      let next = 0;
      let failure: { error: unknown } | null = null;
      const writer = async () => {
        while (next < chunks.length && !failure) {
          const { from, to, own } = chunks[next++]!;
          try {
            const chunk: MatchOutcome[] = outcomes.slice(from, to);
            const proposals: Proposal[] = chunk.flatMap((o) => (o.outcome === 'proposed' ? [o.proposal] : []));
            // each chunk's proposals and their payment.proposed events commit together
            const written = await insertProposals(deps.db, organizationId, proposals, byId, (trx, ids) => recordPaymentEvents(trx, organizationId, 'payment.proposed', ids));
            // the engine's not_a_payment verdicts are kept on the line (unmatched ones need no write)
            await recordMatchOutcomes(deps.db, organizationId, chunk.filter((o) => o.outcome !== 'proposed'));
            if (own) {
              proposed += written;
              unmatched += chunk.length - proposals.length;
              done += chunk.length;
            }
            if (ctx) {
              ctx.heartbeat({ done, total: deposits.length });
              if (ctx.cancellationSignal.aborted) throw new CancelledFailure('proposePayments cancelled');
            }
          } catch (error) {
            failure ??= { error };
          }
        }
      };
      // WRITERS chunks in flight: one is built and sent while the database checks and commits another.
      // A failure or cancellation stops new chunks; those in flight finish (each commits whole or not at all).
      await Promise.all(Array.from({ length: Math.min(WRITERS, chunks.length) }, writer));
      if (failure) throw (failure as { error: unknown }).error;
      const ms = { load: Math.round(t1 - t0), match: Math.round(t2 - t1), write: Math.round(performance.now() - t2) };
      deps.log?.info({ organization_id: organizationId, statement_id: statementId, proposed, unmatched, earlier: earlier.length, ms }, 'payments proposed');
      return { proposed, unmatched };
    },
  };
}
