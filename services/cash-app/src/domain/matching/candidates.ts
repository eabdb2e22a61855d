/**
 * What one deposit's evidence supports against the current open amounts: a proposal, "not a
 * customer payment", or nothing (with the reasons why). Evidence, strongest first:
 *  1. a remittance advice found by its transaction number, or by amount and payer;
 *  2. document numbers in the texts (exact, looser spellings, then a one-digit typo confirmed by
 *     the amount), resolved to one partner — the payer's own evidence (known account + an exact
 *     amount among its own invoices) wins over another customer's number;
 *  3. the identified payer (or legal-form twins, told apart by their open amounts) and the amount.
 * Scores: see index.ts.
 */
import { Money } from '@rp/platform';
import type { MatchInvoice, MatchReason, MatchRemittance, MatchTransaction, Proposal, ProposedAllocation } from '../../domain-types/matching.js';
import { allocation, byDue, fmt, relievedBy, ZERO } from './amounts.js';
import { nonCustomerSignal } from './classify.js';
import type { MatchContext } from './config.js';
import { fitPayer, fitReferenced, isAmbiguous, speaksOfDeduction, speaksOfPartial, type Deposit, type Fit } from './fit.js';
import { normalizeAccount, payerByAccount, payerCandidates, round4, type PayerCandidates, type PayerMatch } from './payers.js';
import { amountKey, isCreditMemo, type MatchState } from './state.js';
import { normalizeKey, oneDigitTypo, transactionKeys, type KeyGroup } from './tokens.js';

export type Evaluation =
  | { kind: 'proposal'; proposal: Proposal }
  | { kind: 'not_a_payment'; reasons: MatchReason[] }
  | { kind: 'unmatched'; reasons: MatchReason[] };

/** Most invoices of one amount compared with the text for a one-digit typo. */
const MAX_TYPO_CANDIDATES = 500;

function score(parts: number[]): number {
  return round4(Math.min(1, Math.max(0, parts.reduce((s, p) => s + p, 0))));
}

function payerReason(payer: PayerMatch): MatchReason {
  if (payer.rule === 'name') {
    const r: MatchReason = { rule: 'name', partner_id: payer.partner_id, value: payer.value, similarity: payer.similarity };
    if (payer.legal_form) r.legal_form = payer.legal_form;
    return r;
  }
  const r: MatchReason = { rule: payer.rule, partner_id: payer.partner_id, value: payer.value };
  if (payer.source) r.source = payer.source;
  return r;
}

function payerScore(payer: PayerMatch | null, partnerId: string | null): number {
  if (!payer || payer.partner_id !== partnerId) return 0;
  return payer.rule === 'name' ? 0.25 * payer.similarity : 0.3;
}

/** The payer is known by an account (not only by a name that looks alike). */
function byAccount(payer: PayerMatch | null): payer is PayerMatch & { rule: 'iban' | 'account' } {
  return !!payer && payer.rule !== 'name';
}

/**
 * The payer identified from the deposit is not the partner whose documents (or remittance) the
 * proposal pays: said in the reasons, and the score loses what an agreeing payer would have added.
 */
function payerConflict(payer: PayerMatch | null, partnerId: string | null): { reason: MatchReason; penalty: number } | null {
  if (!payer || !partnerId || payer.partner_id === partnerId) return null;
  return {
    reason: { rule: 'payer_conflict', payer_rule: payer.rule, payer_partner_id: payer.partner_id, partner_id: partnerId, value: payer.value },
    penalty: payerScore(payer, payer.partner_id),
  };
}

/** What a remittance's transaction number may be written as in the deposit: a whole text, a word, or a document-like token. */
function remittanceKeys(tx: MatchTransaction, tokens: readonly string[]): Set<string> {
  const texts = [tx.remittance_information, tx.bank_reference, tx.end_to_end_id].filter((v): v is string => !!v);
  return new Set([...texts.flatMap((v) => [normalizeKey(v), ...v.split(/\s+/).map(normalizeKey)]), ...tokens]);
}

type RemittanceHit = { r: MatchRemittance; by: 'bank_transaction' | 'transaction_number' | 'amount_payer' };

function remittanceFor(tx: MatchTransaction, texts: Set<string>, payer: PayerMatch | null, ctx: MatchContext, state: MatchState): RemittanceHit | null {
  const index = state.remittancesOf(ctx);
  const usable = (r: MatchRemittance) => !state.usedRemittances.has(r.id) && (!r.currency || r.currency === tx.currency);
  // an advice sent for this very deposit (the reply to its remittance request) comes first
  for (const r of index.byDeposit.get(tx.id) ?? []) if (usable(r)) return { r, by: 'bank_transaction' };
  for (const key of texts) for (const r of index.byNumber.get(key) ?? []) if (usable(r)) return { r, by: 'transaction_number' };
  const txAccounts = new Set([normalizeAccount(tx.counterparty_iban), normalizeAccount(tx.counterparty_account)].filter((x): x is string => !!x));
  for (const r of index.byAmount.get(new Money(tx.amount).toFixed(4)) ?? []) {
    if (!usable(r)) continue;
    const samePartner = payer && r.partner_id && r.partner_id === payer.partner_id;
    const sameAccount = [r.payer_iban, r.payer_account].some((v) => {
      const k = normalizeAccount(v);
      return k !== null && txAccounts.has(k);
    });
    if (samePartner || sameAccount) return { r, by: 'amount_payer' };
  }
  return null;
}

function fromRemittance(tx: MatchTransaction, rem: RemittanceHit, payer: PayerMatch | null, state: MatchState): Proposal | null {
  const amount = new Money(tx.amount);
  const allocations: ProposedAllocation[] = [];
  let paidTotal = ZERO;
  for (const ra of rem.r.allocations) {
    if (!ra.invoice_id) continue;
    const inv = state.invoiceById.get(ra.invoice_id);
    if (!inv || inv.currency !== tx.currency || isCreditMemo(inv)) continue;
    const open = state.available(inv.id);
    const discount = Money.min(new Money(ra.amount_discount), open);
    const withheld = Money.min(new Money(ra.amount_withheld), open.minus(discount));
    const paid = Money.min(new Money(ra.amount_paid), open.minus(discount).minus(withheld), amount.minus(paidTotal));
    if (paid.lte(0) && discount.lte(0) && withheld.lte(0)) continue;
    paidTotal = paidTotal.plus(paid);
    allocations.push(allocation(inv.id, paid, { discount, withheld }));
  }
  if (allocations.length === 0) return null;
  const partnerId = rem.r.partner_id ?? state.invoiceById.get(allocations[0]!.invoice_id)?.partner_id ?? payer?.partner_id ?? null;
  const reasons: MatchReason[] = [{ rule: 'remittance', remittance_id: rem.r.id, matched_by: rem.by, value: rem.r.transaction_number }];
  if (payer && payer.partner_id === partnerId) reasons.push(payerReason(payer));
  const conflict = payerConflict(payer, partnerId);
  if (conflict) reasons.push(conflict.reason);
  const exact = paidTotal.eq(amount);
  if (exact) reasons.push({ rule: 'amount_exact' });
  const relieved = allocations.reduce((s, a) => s.plus(relievedBy(a)), ZERO);
  const discount = allocations.reduce((s, a) => s.plus(a.amount_discount), ZERO);
  const withheld = allocations.reduce((s, a) => s.plus(a.amount_withheld), ZERO);
  const short = relieved.minus(paidTotal);
  return {
    transaction_id: tx.id,
    partner_id: partnerId,
    remittance_id: rem.r.id,
    score: score([rem.by === 'amount_payer' ? 0.4 : 0.6, payerScore(payer, partnerId), exact ? 0.3 : 0, -(conflict?.penalty ?? 0)]),
    reasons,
    allocations,
    shortfall: short.gt(0) ? { amount: fmt(short), reason: withheld.gt(0) ? 'deduction' : discount.gt(0) ? 'discount' : 'partial' } : null,
  };
}

interface Hit {
  inv: MatchInvoice;
  value: string;
  spelling: 'exact' | 'variant';
}

/**
 * The open documents the texts name, in the deposit's currency. Per place in the text: its exact
 * keys, else its looser keys (most specific first), else its parts; a place inside a longer one
 * that names a document adds nothing.
 */
function namedDocuments(tx: MatchTransaction, groups: readonly KeyGroup[], state: MatchState): Hit[] {
  const found: Hit[][] = [];
  for (const g of groups) {
    const hits: Hit[] = [];
    for (const k of g.exact) lookUp(tx, state, k, state.byKey, 'exact', hits);
    if (hits.length === 0) for (const k of g.variants) if (hits.length === 0) lookUp(tx, state, k, state.byVariant, 'variant', hits);
    if (hits.length === 0) for (const k of g.parts) lookUp(tx, state, k, state.byKey, 'exact', hits);
    found.push(hits);
  }
  const out = new Map<string, Hit>();
  for (let i = 0; i < groups.length; i++) {
    if (found[i]!.length === 0) continue;
    if (insideAnother(groups, found, i)) continue;
    for (const h of found[i]!) {
      const prev = out.get(h.inv.id);
      if (!prev || (prev.spelling === 'variant' && h.spelling === 'exact')) out.set(h.inv.id, h);
    }
  }
  return [...out.values()];
}

function lookUp(tx: MatchTransaction, state: MatchState, key: string, map: Map<string, MatchInvoice[]>, spelling: Hit['spelling'], into: Hit[]): void {
  const list = map.get(key);
  if (!list) return;
  for (const inv of list) if (inv.currency === tx.currency && state.available(inv.id).gt(0)) into.push({ inv, value: key, spelling });
}

/** The place is inside a longer place of the same text that names a document. */
function insideAnother(groups: readonly KeyGroup[], found: readonly Hit[][], i: number): boolean {
  const g = groups[i]!;
  for (let j = 0; j < groups.length; j++) {
    const o = groups[j]!;
    if (j !== i && found[j]!.length > 0 && o.text === g.text && o.from <= g.from && o.to >= g.to && o.to - o.from > g.to - g.from) return true;
  }
  return false;
}

/** An invoice of exactly the deposit's amount whose number is one digit off a number in the texts: unique, else nothing. */
function typoDocument(tx: MatchTransaction, groups: readonly KeyGroup[], amount: InstanceType<typeof Money>, state: MatchState): { inv: MatchInvoice; value: string } | null {
  const sameAmount = state.byAmount(amountKey(tx.currency, amount)).filter((i) => state.available(i.id).eq(amount)).slice(0, MAX_TYPO_CANDIDATES);
  if (sameAmount.length === 0) return null;
  const keys = new Set(groups.flatMap((g) => [...g.exact, ...g.parts]).filter((k) => (k.match(/\d/g) ?? []).length >= 5));
  const found = new Map<string, { inv: MatchInvoice; value: string }>();
  for (const inv of sameAmount) {
    const own = [normalizeKey(inv.document_number), ...(inv.reference ? [normalizeKey(inv.reference)] : [])];
    for (const k of keys) if (own.some((o) => oneDigitTypo(k, o))) found.set(inv.id, { inv, value: k });
  }
  return found.size === 1 ? [...found.values()][0]! : null;
}

function proposal(tx: MatchTransaction, partnerId: string | null, scoreParts: number[], reasons: MatchReason[], fit: Fit): Proposal {
  return { transaction_id: tx.id, partner_id: partnerId, remittance_id: null, score: score(scoreParts), reasons, allocations: fit.allocations, shortfall: fit.shortfall };
}

/**
 * Of `candidates` (twins tied on the name), the one whose open amounts fit the deposit, if exactly
 * one does: a proposal in the low band (0.15 × similarity + the amount). Two or more: ambiguous.
 */
function twinByAmounts(
  tx: MatchTransaction,
  dep: Deposit,
  candidates: readonly { id: string; similarity: number }[],
  tied: readonly { id: string; similarity: number }[],
  ctx: MatchContext,
  state: MatchState,
  extra: Record<string, string>,
): { proposal: Proposal } | { ambiguous: MatchReason } | null {
  const fits = candidates
    .map((t) => {
      const own = (state.byPartner.get(t.id) ?? []).filter((i) => i.currency === tx.currency && state.available(i.id).gt(0));
      const memos = (state.memosByPartner.get(t.id) ?? []).filter((i) => i.currency === tx.currency);
      return { twin: t, fit: fitPayer(dep, own, memos, ctx, state) };
    })
    .filter((f) => f.fit !== null);
  const all = tied.map((t) => t.id).join(',');
  if (fits.length === 1 && !isAmbiguous(fits[0]!.fit)) {
    const { twin, fit } = fits[0]! as { twin: { id: string; similarity: number }; fit: Fit };
    const reason: MatchReason = { rule: 'name', partner_id: twin.id, value: tx.counterparty_name, similarity: round4(twin.similarity), twins: all, ...extra };
    return { proposal: proposal(tx, twin.id, [0.15 * twin.similarity, fit.amountScore], [reason, ...fit.reasons], fit) };
  }
  return fits.length > 1 ? { ambiguous: { rule: 'ambiguous', basis: 'name', candidates: all } } : null;
}

/** The evidence of one deposit against the current open amounts of `state` (nothing is consumed). */
export function evaluate(tx: MatchTransaction, ctx: MatchContext, state: MatchState, ownAccounts: ReadonlySet<string>): Evaluation {
  const amount = new Money(tx.amount);
  if (!amount.gt(0)) return { kind: 'unmatched', reasons: [{ rule: 'not_a_deposit' }] };
  const signal = nonCustomerSignal(tx, ownAccounts);
  if (signal?.absolute) return { kind: 'not_a_payment', reasons: [signal.reason] };
  const index = state.partnersOf(ctx);
  const accountPayer = payerByAccount(tx, index);
  let resolved: PayerCandidates | null = accountPayer ? { payer: accountPayer, twins: [] } : null;
  const dep: Deposit = {
    amount,
    date: tx.value_date ?? tx.booking_date ?? null,
    get deduction() {
      return speaksOfDeduction(tx.remittance_information);
    },
    get partial() {
      return speaksOfPartial(tx.remittance_information);
    },
  };
  // a customer's own reference (a number as written or a remittance) with the exact amount outweighs a code or processor signal
  const checksOut = (p: Proposal) =>
    p.shortfall == null &&
    p.reasons.some((r) => r.rule === 'amount_exact' || r.rule === 'amount_combination') &&
    p.reasons.some((r) => (r.rule === 'invoice_number' && r.spelling === undefined) || r.rule === 'remittance') &&
    !p.reasons.some((r) => r.rule === 'payer_conflict');
  const result = (p: Proposal): Evaluation => (signal && !checksOut(p) ? { kind: 'not_a_payment', reasons: [signal.reason] } : { kind: 'proposal', proposal: p });

  // 1. remittance advice
  const keys = transactionKeys(tx);
  if (ctx.remittances.length > 0) {
    resolved ??= payerCandidates(tx, index, ctx.config);
    const rem = remittanceFor(tx, remittanceKeys(tx, keys.list), resolved.payer, ctx, state);
    const p = rem ? fromRemittance(tx, rem, resolved.payer, state) : null;
    if (p) return result(p);
  }

  // 2. documents named in the texts
  const hits = namedDocuments(tx, keys.groups, state);
  const invHits = hits.filter((h) => !isCreditMemo(h.inv));
  const memoHits = hits.filter((h) => isCreditMemo(h.inv));
  // the name agreeing with the one partner the numbers name is that payer: no need to rank every partner's name
  const named = invHits.length > 0 && invHits.every((h) => h.inv.partner_id === invHits[0]!.inv.partner_id) ? invHits[0]!.inv.partner_id : null;
  if (!resolved && named && tx.counterparty_name) {
    const similarity = index.similarityTo(tx.counterparty_name, named);
    if (similarity >= ctx.config.nameThreshold) resolved = { payer: { partner_id: named, rule: 'name', value: tx.counterparty_name, similarity: round4(similarity) }, twins: [] };
  }
  resolved ??= payerCandidates(tx, index, ctx.config);
  const { payer, twins } = resolved;
  const payerOwn = () => (payer ? (state.byPartner.get(payer.partner_id) ?? []).filter((i) => i.currency === tx.currency && state.available(i.id).gt(0)) : []);
  const payerMemos = () => (payer ? (state.memosByPartner.get(payer.partner_id) ?? []).filter((i) => i.currency === tx.currency) : []);
  let ambiguity: MatchReason | null = null;
  if (invHits.length > 0) {
    const partners = [...new Set(invHits.map((h) => h.inv.partner_id))];
    const candidates = payer && partners.includes(payer.partner_id) ? [payer.partner_id] : partners;
    const fits = candidates.map((partnerId) => {
      const invs = invHits.filter((h) => h.inv.partner_id === partnerId).map((h) => h.inv).sort(byDue);
      const memos = memoHits.filter((h) => h.inv.partner_id === partnerId).map((h) => h.inv);
      const all = partnerId ? (state.memosByPartner.get(partnerId) ?? []).filter((m) => m.currency === tx.currency) : [];
      return { partnerId, fit: fitReferenced(dep, invs, memos, all, ctx, state) };
    });
    const exactFits = fits.filter((f) => f.fit && !isAmbiguous(f.fit) && f.fit.shortfall === null && f.fit.amountScore > 0);
    const chosen = candidates.length === 1 ? fits[0]! : exactFits.length === 1 ? exactFits[0]! : null;
    if (!chosen) {
      ambiguity = { rule: 'ambiguous', basis: 'invoice_number', candidates: invHits.map((h) => h.inv.id).slice(0, 10).join(',') };
    } else if (chosen.fit && isAmbiguous(chosen.fit)) {
      ambiguity = chosen.fit.ambiguous;
    } else if (chosen.fit) {
      const fit = chosen.fit;
      const partnerId = chosen.partnerId;
      const conflict = payerConflict(payer, partnerId);
      // the payer known by account, with an exact amount among its own invoices, wins over another customer's number
      if (conflict && byAccount(payer)) {
        const own = fitPayer(dep, payerOwn(), payerMemos(), ctx, state);
        if (own && !isAmbiguous(own) && own.shortfall === null) {
          const other = invHits.find((h) => h.inv.partner_id === partnerId)!;
          return result(
            proposal(tx, payer.partner_id, [payerScore(payer, payer.partner_id), own.amountScore, -0.1], [payerReason(payer), ...own.reasons, { rule: 'reference_other_partner', value: other.value, partner_id: partnerId }], own),
          );
        }
      }
      const used = new Set(fit.allocations.map((a) => a.invoice_id));
      const named = hits.filter((h) => used.has(h.inv.id));
      const reasons = named.map((h): MatchReason => (h.spelling === 'exact' ? { rule: 'invoice_number', value: h.value, invoice_id: h.inv.id } : { rule: 'invoice_number', value: h.value, invoice_id: h.inv.id, spelling: 'variant' }));
      if (payer && payer.partner_id === partnerId) reasons.push(payerReason(payer));
      if (conflict) reasons.push(conflict.reason);
      reasons.push(...fit.reasons);
      const numberScore = named.some((h) => h.spelling === 'exact') ? 0.5 : 0.45;
      // a payer known by account stays the payment's partner: it is who paid
      const paymentPartner = conflict && byAccount(payer) ? payer.partner_id : partnerId;
      return result(proposal(tx, paymentPartner, [numberScore, payerScore(payer, partnerId), fit.amountScore, -(conflict?.penalty ?? 0)], reasons, fit));
    }
  }

  // 2b. a number one digit off, confirmed by the exact amount (never against a payer's other evidence)
  if (invHits.length === 0 && !ambiguity) {
    const typo = typoDocument(tx, keys.groups, amount, state);
    if (typo && (!payer || payer.partner_id === typo.inv.partner_id)) {
      const fit: Fit = { allocations: [allocation(typo.inv.id, amount)], reasons: [{ rule: 'amount_exact', invoices: 1 }], amountScore: 0.3, shortfall: null };
      const reasons: MatchReason[] = [{ rule: 'invoice_number_typo', value: typo.value, invoice_id: typo.inv.id, document_number: typo.inv.document_number }];
      if (payer) reasons.push(payerReason(payer));
      // a typo is weaker than a number as written: even with a known payer it stays below the automatic band
      return result(proposal(tx, typo.inv.partner_id, [0.3, payer ? Math.min(0.2, payerScore(payer, typo.inv.partner_id)) : 0, fit.amountScore], [...reasons, ...fit.reasons], fit));
    }
  }

  // 3. the payer's open invoices
  if (payer && !ambiguity) {
    const fit = fitPayer(dep, payerOwn(), payerMemos(), ctx, state, byAccount(payer));
    if (fit && isAmbiguous(fit)) ambiguity = fit.ambiguous;
    else if (fit) return result(proposal(tx, payer.partner_id, [payerScore(payer, payer.partner_id), fit.amountScore], [payerReason(payer), ...fit.reasons], fit));
  }
  // the twin a written legal form chose has nothing that fits: the form may be cut short by the
  // bank's field width ("SA" of "SARL"), so the other twins' open amounts decide as for an untold tie
  const writtenForm = payer?.rule === 'name' ? payer.legal_form : undefined;
  if (payer && writtenForm && !ambiguity && invHits.length === 0) {
    const formCut = (resolved.formTwins ?? []).filter((t) => t.id !== payer.partner_id);
    const told = twinByAmounts(tx, dep, formCut, resolved.formTwins ?? [], ctx, state, { legal_form_written: writtenForm });
    if (told && 'proposal' in told) return result(told.proposal);
    if (told) ambiguity = told.ambiguous;
  }
  if (!payer && twins.length > 1 && !ambiguity) {
    // legal-form twins: the one whose open amounts fit the deposit, if exactly one does
    const told = twinByAmounts(tx, dep, twins, twins, ctx, state, {});
    if (told && 'proposal' in told) return result(told.proposal);
    if (told) ambiguity = told.ambiguous;
  }
  if (signal) return { kind: 'not_a_payment', reasons: [signal.reason] };
  const reasons: MatchReason[] = [];
  if (ambiguity) reasons.push(ambiguity);
  if (payer) reasons.push(payerReason(payer));
  if (reasons.length === 0) reasons.push({ rule: payer || invHits.length > 0 ? 'no_amount_fit' : 'no_customer_evidence' });
  return { kind: 'unmatched', reasons };
}
