/**
 * Assignment over a whole statement: every deposit's evidence is evaluated against the open
 * amounts first, then proposals are taken strongest first (score, then statement order). A
 * proposal whose documents an earlier (stronger) one already took is re-evaluated against what is
 * left; so is a deposit that was ambiguous, once the stronger ones are placed (two equal invoices,
 * one taken by its number, leave one for the payer's other deposit). One wrong line therefore no
 * longer consumes the amount the next line needs. Near-linear: one evaluation per deposit plus one
 * per conflict.
 */
import type { MatchOutcome, MatchTransaction, Proposal } from '../../domain-types/matching.js';
import { allocationsFitMinorUnits } from './amounts.js';
import { evaluate, type Evaluation } from './candidates.js';
import { ownAccountSet } from './classify.js';
import type { MatchContext } from './config.js';
import { MatchState } from './state.js';

function outcomeOf(tx: MatchTransaction, e: Evaluation): MatchOutcome {
  if (e.kind === 'proposal') return { outcome: 'proposed', proposal: e.proposal };
  return { outcome: e.kind, transaction_id: tx.id, reasons: e.reasons };
}

/** A proposal that can be stored: its amounts fit the currency's minor units (JPY 0, EUR 2, KWD 3 decimals). */
function storable(tx: MatchTransaction, e: Evaluation): Evaluation {
  if (e.kind === 'proposal' && !allocationsFitMinorUnits(e.proposal.allocations, tx.currency)) return { kind: 'unmatched', reasons: [{ rule: 'minor_units', currency: tx.currency }] };
  return e;
}

function take(state: MatchState, p: Proposal, touched: Set<string>): void {
  if (p.remittance_id) state.usedRemittances.add(p.remittance_id);
  state.consume(p.allocations);
  for (const a of p.allocations) touched.add(a.invoice_id);
}

/** Deposits evaluated between two yields of statementSteps (the caller's chance to heartbeat). */
const STEP = 200;

/**
 * The whole-statement assignment as a generator that yields every STEP evaluations, so an activity
 * can heartbeat and see a cancellation while a large statement is matched; returns the outcomes.
 */
export function* statementSteps(txs: readonly MatchTransaction[], ctx: MatchContext, state: MatchState): Generator<number, MatchOutcome[], void> {
  const own = ownAccountSet(ctx.ownAccounts);
  state.partnersOf(ctx);
  state.remittancesOf(ctx);
  const first: Evaluation[] = [];
  for (let i = 0; i < txs.length; i++) {
    if (i > 0 && i % STEP === 0) yield i;
    first.push(storable(txs[i]!, evaluate(txs[i]!, ctx, state, own)));
  }
  const order = txs
    .map((_, i) => i)
    .filter((i) => first[i]!.kind === 'proposal')
    .sort((a, b) => (first[b] as { proposal: Proposal }).proposal.score - (first[a] as { proposal: Proposal }).proposal.score || a - b);
  const result: Evaluation[] = [...first];
  const touched = new Set<string>();
  let reevaluated = 0;
  for (const i of order) {
    const tx = txs[i]!;
    const p = (first[i] as { proposal: Proposal }).proposal;
    const conflicts = p.allocations.some((a) => touched.has(a.invoice_id)) || (p.remittance_id !== null && state.usedRemittances.has(p.remittance_id));
    if (conflicts && ++reevaluated % STEP === 0) yield txs.length;
    const e = conflicts ? storable(tx, evaluate(tx, ctx, state, own)) : first[i]!;
    result[i] = e;
    if (e.kind === 'proposal') take(state, e.proposal, touched);
  }
  // deposits that were ambiguous while stronger ones still held their alternatives
  for (let i = 0; i < txs.length; i++) {
    const e = result[i]!;
    if (e.kind !== 'unmatched' || !e.reasons.some((r) => r.rule === 'ambiguous')) continue;
    if (++reevaluated % STEP === 0) yield txs.length;
    const again = storable(txs[i]!, evaluate(txs[i]!, ctx, state, own));
    if (again.kind === 'proposal') {
      result[i] = again;
      take(state, again.proposal, touched);
    }
  }
  return txs.map((tx, i) => outcomeOf(tx, result[i]!));
}

/**
 * Match a whole statement (and any earlier open deposits passed with it): one outcome per deposit,
 * in the order given. Consumes the open amounts and remittances of `state`.
 */
export function matchStatement(txs: readonly MatchTransaction[], ctx: MatchContext, state = new MatchState(ctx.invoices)): MatchOutcome[] {
  const steps = statementSteps(txs, ctx, state);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** matchStatement, awaiting `pace` (heartbeat, cancellation, event-loop turn) every few hundred deposits. */
export async function matchStatementPaced(txs: readonly MatchTransaction[], ctx: MatchContext, state: MatchState, pace: () => Promise<void>): Promise<MatchOutcome[]> {
  const steps = statementSteps(txs, ctx, state);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pace();
  }
}

/**
 * Propose a payment for one deposit against the current open amounts, or null. Consumes open
 * amounts (and the remittance used) in `state`. A proposal whose amounts do not fit the currency's
 * minor units is not made: such an allocation could never be stored.
 */
export function matchDeposit(tx: MatchTransaction, ctx: MatchContext, state: MatchState): Proposal | null {
  const e = storable(tx, evaluate(tx, ctx, state, ownAccountSet(ctx.ownAccounts)));
  if (e.kind !== 'proposal') return null;
  take(state, e.proposal, new Set());
  return e.proposal;
}

/** Match a batch of deposits over the whole batch (matchStatement); returns the proposals and the ids of the deposits left without one. */
export function matchDeposits(txs: readonly MatchTransaction[], ctx: MatchContext, state = new MatchState(ctx.invoices)): { proposals: Proposal[]; unmatched: string[] } {
  const proposals: Proposal[] = [];
  const unmatched: string[] = [];
  for (const o of matchStatement(txs, ctx, state)) {
    if (o.outcome === 'proposed') proposals.push(o.proposal);
    else unmatched.push(o.transaction_id);
  }
  return { proposals, unmatched };
}
