/**
 * Fitting a deposit's amount to candidate documents: the documents a reference names (fitReferenced)
 * or the open documents of an identified payer (fitPayer). Each fit says how the documents are
 * relieved (allocations), why (reasons), how much the amount adds to the score, and the shortfall
 * when the documents are relieved by more than the deposit. Equal alternatives are never chosen
 * between: the fit is `ambiguous` with the candidates instead.
 */
import { Money } from '@rp/platform';
import type { MatchInvoice, MatchReason, ProposedAllocation, Shortfall } from '../../domain-types/matching.js';
import { allocation, discountFor, findSubsetSum, fmt, isTermDiscount, tolerance, toUnits, ZERO, type Dec } from './amounts.js';
import type { MatchContext } from './config.js';
import type { MatchState } from './state.js';

export interface Fit {
  allocations: ProposedAllocation[];
  reasons: MatchReason[];
  amountScore: number;
  shortfall: Shortfall | null;
}

export type FitResult = Fit | { ambiguous: MatchReason } | null;

export function isAmbiguous(f: FitResult): f is { ambiguous: MatchReason } {
  return f !== null && 'ambiguous' in f;
}

/** What the fit knows of the deposit. */
export interface Deposit {
  amount: Dec;
  /** value date, else booking date: the date an early-payment discount is judged by */
  date: string | null;
  /** the remittance text speaks of a deduction */
  readonly deduction: boolean;
  /** the remittance text speaks of a partial payment or an instalment */
  readonly partial: boolean;
}

/** At most this many credit memos of one partner are tried against one deposit. */
const MAX_MEMOS = 50;
/** At most this many invoices of one partner are tried for an invoice-minus-memo or discount fit. */
const MAX_PAIR_INVOICES = 200;

const DEDUCTION_RE = /\b(deduct\w*|deduction|abzug|abz[uü]ge?|abgezogen|k[uü]rzung|gek[uü]rzt|damaged?|besch[aä]digt|short(?:age|[- ]?paid|[- ]?ship\w*)?|minus|einbehalt\w*|withh[eo]ld\w*|retained|claim|reklamation|mangel|defect\w*)\b/iu;

/** The remittance information or references speak of a deduction ("Abzug", "damaged", "short", …). */
export function speaksOfDeduction(...texts: (string | null | undefined)[]): boolean {
  return texts.some((t) => !!t && DEDUCTION_RE.test(t.normalize('NFC')));
}

const PARTIAL_RE = /\b(teilzahlung|teilbetrag|anzahlung|abschlag\w*|\d+\.?\s*rate|rate\s*\d+|ratenzahlung|partial(?:ly)?|part[- ]payment|instal+ments?|acompte|paiement partiel|pago parcial|a cuenta|acconto|pagamento parziale|deelbetaling)\b/iu;

/** The remittance information speaks of a partial payment or an instalment ("Teilzahlung", "1. Rate", "partial payment", "acompte"). */
export function speaksOfPartial(...texts: (string | null | undefined)[]): boolean {
  return texts.some((t) => !!t && PARTIAL_RE.test(t.normalize('NFC')));
}

/**
 * What a bank charge above the tolerance adds to the score: with an invoice number as written and a
 * payer known by account (0.5 + 0.3) it stays below 0.9, so it is never approved unattended.
 */
const FEE_SCORE = 0.05;

/** A shortfall above the write-off tolerance, up to the fee ceiling, of less than half the open amount. */
function isFee(shortfall: Dec, open: Dec, ctx: MatchContext): boolean {
  return shortfall.gt(tolerance(ctx.config, open)) && shortfall.lte(ctx.config.feeCeilingAmount) && shortfall.times(2).lt(open);
}

function ambiguous(rule: string, candidates: readonly string[]): { ambiguous: MatchReason } {
  return { ambiguous: { rule: 'ambiguous', basis: rule, candidates: candidates.slice(0, 10).join(',') } };
}

function memoAllocations(memos: readonly MatchInvoice[], applied: Dec, state: MatchState): ProposedAllocation[] {
  const out: ProposedAllocation[] = [];
  let rest = applied;
  for (const m of memos) {
    if (!rest.gt(0)) break;
    const take = Money.min(state.available(m.id), rest);
    out.push(allocation(m.id, take));
    rest = rest.minus(take);
  }
  return out;
}

function memoReasons(allocs: readonly ProposedAllocation[]): MatchReason[] {
  return allocs.map((a) => ({ rule: 'credit_memo', invoice_id: a.invoice_id, amount: a.amount_paid }));
}

/**
 * A unique subset of the first `maxCombinationInvoices` invoices whose open amounts pay the deposit
 * exactly (a single one reads as `amount_exact`); several subsets: ambiguous; none: null.
 */
function subsetFit(dep: Deposit, invs: readonly MatchInvoice[], ctx: MatchContext, state: MatchState): FitResult {
  const limited = invs.slice(0, ctx.config.maxCombinationInvoices);
  const found = findSubsetSum(limited.map((inv) => toUnits(state.available(inv.id))), toUnits(dep.amount), ctx.config.maxCombinationSteps);
  if (!found) return null;
  if (found.ambiguous) return ambiguous('amount_combination', limited.map((i) => i.id));
  const chosen = found.indexes.map((i) => limited[i]!);
  return {
    allocations: chosen.map((inv) => allocation(inv.id, state.available(inv.id))),
    reasons: [{ rule: chosen.length === 1 ? 'amount_exact' : 'amount_combination', invoices: chosen.length }],
    amountScore: chosen.length === 1 ? 0.3 : 0.25,
    shortfall: null,
  };
}

/**
 * The documents a reference names, for one partner: invoices (oldest due first) and credit memos.
 * In order: all of them exactly (invoices − memos), a unique subset exactly, all of them with
 * their early-payment discounts, all of them net of one of the partner's open credit memos (a
 * unique one), a shortfall within tolerance (fee adjustment), an unexplained one up to the fee
 * ceiling (a bank charge, on the same adjustment), a larger shortfall as a deduction
 * (the text says so) or a partial payment, and an overpayment.
 */
export function fitReferenced(dep: Deposit, invs: readonly MatchInvoice[], memos: readonly MatchInvoice[], partnerMemos: readonly MatchInvoice[], ctx: MatchContext, state: MatchState): FitResult {
  if (invs.length === 0) return null;
  const open = invs.map((i) => state.available(i.id));
  const total = open.reduce((s, o) => s.plus(o), ZERO);
  const memoTotal = memos.reduce((s, m) => s.plus(state.available(m.id)), ZERO);
  const memoApplied = Money.min(memoTotal, total);
  const memoAllocs = memoAllocations(memos, memoApplied, state);
  const net = total.minus(memoApplied);
  const full = () => invs.map((inv, i) => allocation(inv.id, open[i]!));
  if (net.eq(dep.amount)) {
    return {
      allocations: [...full(), ...memoAllocs],
      reasons: [...memoReasons(memoAllocs), { rule: invs.length === 1 ? 'amount_exact' : 'amount_combination', invoices: invs.length }],
      amountScore: invs.length === 1 && memos.length === 0 ? 0.3 : 0.25,
      shortfall: null,
    };
  }
  if (invs.length > 1 && memos.length === 0) {
    const fit = subsetFit(dep, invs, ctx, state);
    if (fit) return fit;
  }
  const discounts = invs.map((inv, i) => discountFor(inv, open[i]!, dep.date));
  if (discounts.some((d) => d !== null)) {
    const discountTotal = discounts.reduce((s, d) => s.plus(d?.amount ?? 0), ZERO);
    if (net.minus(discountTotal).eq(dep.amount)) {
      return {
        allocations: [...invs.map((inv, i) => allocation(inv.id, open[i]!.minus(discounts[i]?.amount ?? 0), { discount: discounts[i]?.amount })), ...memoAllocs],
        reasons: [
          ...memoReasons(memoAllocs),
          { rule: 'amount_discount', discount: fmt(discountTotal), percent: discounts.find((d) => d)!.percent, due_date: discounts.find((d) => d)!.due_date },
        ],
        amountScore: 0.25,
        shortfall: { amount: fmt(discountTotal), reason: 'discount' },
      };
    }
  }
  if (memos.length === 0 && partnerMemos.length > 0) {
    const fits = partnerMemos.slice(0, MAX_MEMOS).filter((m) => {
      const o = state.available(m.id);
      return o.gt(0) && o.lt(total) && total.minus(o).eq(dep.amount);
    });
    if (fits.length > 1) return ambiguous('credit_memo', fits.map((m) => m.id));
    if (fits.length === 1) {
      const m = allocation(fits[0]!.id, state.available(fits[0]!.id));
      return { allocations: [...full(), m], reasons: [...memoReasons([m]), { rule: 'amount_net_of_credit_memo', invoices: invs.length }], amountScore: 0.2, shortfall: null };
    }
  }
  if (dep.amount.lt(net)) {
    const shortfall = net.minus(dep.amount);
    const last = invs.length - 1;
    if (ctx.toleranceAdjustmentId && shortfall.lte(tolerance(ctx.config, net)) && open[last]!.gte(shortfall)) {
      const adjustment = { id: ctx.toleranceAdjustmentId, amount: shortfall };
      return {
        allocations: [...invs.map((inv, i) => (i === last ? allocation(inv.id, open[i]!.minus(shortfall), { adjustment }) : allocation(inv.id, open[i]!))), ...memoAllocs],
        reasons: [...memoReasons(memoAllocs), { rule: 'amount_within_tolerance', shortfall: fmt(shortfall), adjustment_id: ctx.toleranceAdjustmentId }],
        amountScore: 0.15,
        shortfall: { amount: fmt(shortfall), reason: 'fee' },
      };
    }
    // an unexplained shortfall up to the fee ceiling is what banks charge on the way (the truth a
    // clerk books): the invoice is relieved in full, the charge booked on the adjustment; the score
    // band (index.ts) keeps it for a person when it is above the tolerance
    if (ctx.toleranceAdjustmentId && !dep.deduction && !dep.partial && isFee(shortfall, net, ctx) && open[last]!.gte(shortfall) && !invs.some((inv, i) => isTermDiscount(inv, open[i]!, shortfall))) {
      const adjustment = { id: ctx.toleranceAdjustmentId, amount: shortfall };
      return {
        allocations: [...invs.map((inv, i) => (i === last ? allocation(inv.id, open[i]!.minus(shortfall), { adjustment }) : allocation(inv.id, open[i]!))), ...memoAllocs],
        reasons: [...memoReasons(memoAllocs), { rule: 'amount_fee', shortfall: fmt(shortfall), adjustment_id: ctx.toleranceAdjustmentId }],
        amountScore: FEE_SCORE,
        shortfall: { amount: fmt(shortfall), reason: 'fee' },
      };
    }
    // a larger shortfall is a deduction when the text says so, or when it is unexplained and the
    // cash pays more than half of the named invoices (a short pay to settle); a partial payment when
    // the text says so or the cash pays half or less
    if (dep.deduction || (!dep.partial && shortfall.times(2).lt(net))) {
      // every named invoice is settled: the cash pays it, the deduction is withheld from the latest-due ones
      let rest = shortfall;
      const withheld = open.map(() => ZERO);
      for (let i = last; i >= 0 && rest.gt(0); i--) {
        withheld[i] = Money.min(open[i]!, rest);
        rest = rest.minus(withheld[i]!);
      }
      return {
        allocations: [...invs.map((inv, i) => allocation(inv.id, open[i]!.minus(withheld[i]!), { withheld: withheld[i] })), ...memoAllocs],
        reasons: [...memoReasons(memoAllocs), { rule: 'amount_deduction', shortfall: fmt(shortfall) }],
        amountScore: 0.05,
        shortfall: { amount: fmt(shortfall), reason: 'deduction' },
      };
    }
    // partial: the cash plus the credit applied pays the invoices oldest due first
    let remaining = dep.amount.plus(memoApplied);
    const allocations: ProposedAllocation[] = [];
    for (let i = 0; i < invs.length && remaining.gt(0); i++) {
      const paid = Money.min(remaining, open[i]!);
      allocations.push(allocation(invs[i]!.id, paid));
      remaining = remaining.minus(paid);
    }
    return {
      allocations: [...allocations, ...memoAllocs],
      reasons: [...memoReasons(memoAllocs), { rule: 'amount_partial', shortfall: fmt(shortfall) }],
      amountScore: 0,
      shortfall: { amount: fmt(shortfall), reason: 'partial' },
    };
  }
  // deposit larger than everything referenced: pay them all, leave the rest unallocated
  return {
    allocations: [...full(), ...memoAllocs],
    reasons: [...memoReasons(memoAllocs), { rule: 'amount_overpayment', unallocated: fmt(dep.amount.minus(net)) }],
    amountScore: 0,
    shortfall: null,
  };
}

/**
 * An identified payer's open invoices (oldest due first) without a reference: exactly one invoice
 * of the amount, one invoice net of its early-payment discount, a unique combination, one invoice
 * net of one credit memo, one invoice short by no more than the tolerance, or (a payer known by
 * account) one invoice short by a bank charge up to the fee ceiling. Two or more equally
 * good answers at any step: ambiguous (never the oldest by default).
 */
export function fitPayer(dep: Deposit, invs: readonly MatchInvoice[], memos: readonly MatchInvoice[], ctx: MatchContext, state: MatchState, knownByAccount = false): FitResult {
  if (invs.length === 0) return null;
  const exact = invs.filter((i) => state.available(i.id).eq(dep.amount));
  if (exact.length > 1) return ambiguous('amount_exact', exact.map((i) => i.id));
  if (exact.length === 1) return { allocations: [allocation(exact[0]!.id, dep.amount)], reasons: [{ rule: 'amount_exact', invoices: 1 }], amountScore: 0.3, shortfall: null };

  const pairs = invs.slice(0, MAX_PAIR_INVOICES);
  const discounted = pairs
    .map((inv) => ({ inv, d: discountFor(inv, state.available(inv.id), dep.date) }))
    .filter((x) => x.d && state.available(x.inv.id).minus(x.d.amount).eq(dep.amount));
  if (discounted.length > 1) return ambiguous('amount_discount', discounted.map((x) => x.inv.id));
  if (discounted.length === 1) {
    const { inv, d } = discounted[0]!;
    return {
      allocations: [allocation(inv.id, dep.amount, { discount: d!.amount })],
      reasons: [{ rule: 'amount_discount', discount: fmt(d!.amount), percent: d!.percent, due_date: d!.due_date }],
      amountScore: 0.25,
      shortfall: { amount: fmt(d!.amount), reason: 'discount' },
    };
  }

  if (invs.length > 1) {
    const fit = subsetFit(dep, invs, ctx, state);
    if (fit) return fit;
  }

  const openMemos = memos.slice(0, MAX_MEMOS).filter((m) => state.available(m.id).gt(0));
  if (openMemos.length > 0) {
    const found: [MatchInvoice, MatchInvoice][] = [];
    for (const inv of pairs) {
      const o = state.available(inv.id);
      for (const m of openMemos) if (o.minus(state.available(m.id)).eq(dep.amount)) found.push([inv, m]);
      if (found.length > 1) break;
    }
    if (found.length > 1) return ambiguous('credit_memo', found.flat().map((i) => i.id));
    if (found.length === 1) {
      const [inv, m] = found[0]!;
      const memo = allocation(m.id, state.available(m.id));
      return {
        allocations: [allocation(inv.id, state.available(inv.id)), memo],
        reasons: [...memoReasons([memo]), { rule: 'amount_net_of_credit_memo', invoices: 1 }],
        amountScore: 0.2,
        shortfall: null,
      };
    }
  }

  if (ctx.toleranceAdjustmentId) {
    const short = invs.filter((i) => {
      const o = state.available(i.id);
      return o.gt(dep.amount) && o.minus(dep.amount).lte(tolerance(ctx.config, o));
    });
    if (short.length > 1) return ambiguous('amount_within_tolerance', short.map((i) => i.id));
    if (short.length === 1) {
      const o = state.available(short[0]!.id);
      const shortfall = o.minus(dep.amount);
      return {
        allocations: [allocation(short[0]!.id, dep.amount, { adjustment: { id: ctx.toleranceAdjustmentId, amount: shortfall } })],
        reasons: [{ rule: 'amount_within_tolerance', shortfall: fmt(shortfall), adjustment_id: ctx.toleranceAdjustmentId }],
        amountScore: 0.15,
        shortfall: { amount: fmt(shortfall), reason: 'fee' },
      };
    }
    // a bank charge above the tolerance: only for a payer known by account, on its one invoice the charge explains
    if (knownByAccount && !dep.deduction && !dep.partial) {
      const charged = invs.filter((i) => {
        const o = state.available(i.id);
        return o.gt(dep.amount) && isFee(o.minus(dep.amount), o, ctx) && !isTermDiscount(i, o, o.minus(dep.amount));
      });
      if (charged.length > 1) return ambiguous('amount_fee', charged.map((i) => i.id));
      if (charged.length === 1) {
        const shortfall = state.available(charged[0]!.id).minus(dep.amount);
        return {
          allocations: [allocation(charged[0]!.id, dep.amount, { adjustment: { id: ctx.toleranceAdjustmentId, amount: shortfall } })],
          reasons: [{ rule: 'amount_fee', shortfall: fmt(shortfall), adjustment_id: ctx.toleranceAdjustmentId }],
          amountScore: FEE_SCORE,
          shortfall: { amount: fmt(shortfall), reason: 'fee' },
        };
      }
    }
  }
  return null;
}
