/**
 * Automatic matching of bank deposits to open invoices (pure: no I/O, deterministic).
 *
 * For each deposit, in this order:
 *  1. Remittance advice: an unused remittance whose transaction number appears in the deposit's
 *     references, or whose amount equals the deposit and whose payer is the deposit's payer, is
 *     applied as its allocations say.
 *  2. Invoice tokens: numeric and alphanumeric invoice-number-like tokens of the remittance
 *     information and references are matched against open invoices' document number and reference
 *     (case and punctuation ignored; leading zeros of purely numeric numbers ignored), in the spirit
 *     of OCA account-reconcile's numeric-token matching. Amounts ("1.190,00") and dates
 *     ("15.10.2026") are taken out of the text first. When the payer identified in 3 is not the
 *     partner of the referenced invoices, the proposal says so (`payer_conflict`) and scores lower.
 *  3. Payer: the counterparty IBAN/account against accounts learned from approved payments first,
 *     then a fuzzy name match against partners' name and legal name (normalized for case,
 *     punctuation, diacritics and legal forms; similarity = max(token Jaccard, trigram Dice));
 *     below the threshold, or two partners within the tie margin, no payer (ERPNext auto_match_party).
 *  4. Amounts (same currency only): referenced invoices exactly, a subset of them, or — for an
 *     identified payer without references — one of their open invoices exactly or a combination
 *     (bounded subset-sum search) equal to the deposit; a shortfall within the tolerance is proposed
 *     as an adjustment (OCA write-off), a larger shortfall as a partial payment.
 *
 * Each proposal carries `score` (0..1) and `reasons`. Open amounts are consumed as proposals are
 * made, so two deposits of one batch are never both proposed against the same open amount.
 * All amounts are decimal strings / decimal.js values.
 */
import { Money, nameTokens, nameTrigrams as trigrams } from '@rp/platform';
import type { KnownAccount, MatchInvoice, MatchPartner, MatchReason, MatchRemittance, MatchTransaction, Proposal, ProposedAllocation } from '../domain-types/matching.js';
import { fitsMinorUnits } from './payments.js';

export type { KnownAccount, MatchInvoice, MatchPartner, MatchReason, MatchRemittance, MatchTransaction, Proposal, ProposedAllocation };

type Dec = InstanceType<typeof Money>;

export interface MatchConfig {
  /** absolute shortfall accepted as an adjustment */
  toleranceAmount: string;
  /** shortfall accepted as an adjustment, in percent of the invoices' open total */
  tolerancePercent: string;
  /** minimum name similarity (0..1) for a fuzzy payer match */
  nameThreshold: number;
  /** two partners whose similarities differ by no more than this are a tie: rejected */
  nameTieMargin: number;
  /** most open invoices of one payer considered by the subset-sum search */
  maxCombinationInvoices: number;
  /** node budget of the subset-sum search */
  maxCombinationSteps: number;
}

export const DEFAULT_MATCH_CONFIG: MatchConfig = {
  toleranceAmount: '5.00',
  tolerancePercent: '0',
  nameThreshold: 0.6,
  nameTieMargin: 0.05,
  maxCombinationInvoices: 20,
  maxCombinationSteps: 50_000,
};

export interface MatchContext {
  invoices: readonly MatchInvoice[];
  partners: readonly MatchPartner[];
  knownAccounts: readonly KnownAccount[];
  remittances: readonly MatchRemittance[];
  /** adjustment used for a shortfall within tolerance (null: none available → partial payment) */
  toleranceAdjustmentId: string | null;
  config: MatchConfig;
}


// ---------------------------------------------------------------------------------------------
// Tokens

/** Upper-case, letters and digits only: "inv-9000001" → "INV9000001". */
export function normalizeKey(value: string): string {
  return value.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** Index keys of a document number or reference: its normalized form, and without leading zeros if numeric. */
export function documentKeys(value: string | null): string[] {
  if (!value) return [];
  const key = normalizeKey(value);
  if (key.length === 0) return [];
  const keys = [key];
  if (/^\d+$/.test(key)) {
    const stripped = key.replace(/^0+/, '');
    if (stripped && stripped !== key) keys.push(stripped);
  }
  return keys;
}

// Amounts and dates are taken out of the text before invoice numbers are looked for: their digit runs
// ("1.190,00" → "1190", "15.10.2026" → "15102026" / "2026") are not document numbers and would
// otherwise match invoices numbered like them. A match must not touch a letter, digit or joiner
// (. , ' - / #) on either side, so "INV-2026-10-15" or "RE2026.10" stay whole.
const BEFORE = String.raw`(?<![\p{L}\p{N}.,'’\-/#_])`;
const AFTER = String.raw`(?![\p{L}\p{N}]|[.,'’\-/#_][\p{L}\p{N}])`;
/** 1.190,00 · 1,190.00 · 1'190.00 · 1.190 · 1190,00 · 1190.00: thousands groups (decimals optional), or a plain number with 2 decimals. */
const AMOUNT = String.raw`[+-]?(?:\d{1,3}(?:([.,'’])\d{3})+(?:(?!\1)[.,]\d{1,3})?|\d+[.,]\d{2})`;
/** an amount next to a currency symbol or a three-letter code: "EUR 1.190", "1190 €", "$1,190" */
const CURRENCY = String.raw`(?:[€$£¥₹₽₺₩₪]|\b[A-Z]{3}\b)`;
const AMOUNT_RE = new RegExp(`${BEFORE}${AMOUNT}${AFTER}`, 'gu');
const CURRENCY_AMOUNT_RE = new RegExp(
  String.raw`(${CURRENCY})\s?[+-]?\d(?:[\d.,'’]*\d)?${AFTER}|${BEFORE}[+-]?\d(?:[\d.,'’]*\d)?\s?(${CURRENCY})`,
  'gu',
);
/** 2026-10-15 · 2026/10/15 · 2026.10.15 · 15.10.2026 · 15/10/26 · 10-15-2026 */
const DATE_RE = new RegExp(`${BEFORE}(?:(\\d{4})([-./])(\\d{1,2})\\2(\\d{1,2})|(\\d{1,2})([-./])(\\d{1,2})\\6(\\d{4}|\\d{2}))${AFTER}`, 'gu');

function isDate(a: number, b: number): boolean {
  // day.month or month/day: one of them a month, both a day of a month
  return a >= 1 && b >= 1 && a <= 31 && b <= 31 && (a <= 12 || b <= 12);
}

/**
 * The text with its dates and amounts replaced by a blank: what is left may hold document numbers.
 * Dates are calendar-checked (month 1..12, day 1..31), so "12.34.5678" stays. A number next to a
 * currency symbol, or next to `currency` (the deposit's ISO code), is an amount whatever its shape
 * ("EUR 1190"); other three-letter words are not taken for currencies ("PAY ALL 9000001").
 */
export function stripAmountsAndDates(text: string, currency?: string): string {
  const isCurrencyMark = (mark: string) => mark.length === 1 || (currency !== undefined && mark === currency.trim().toUpperCase());
  return text
    .replace(DATE_RE, (m, y: string | undefined, _s1, mo: string | undefined, d: string | undefined, a: string | undefined, _s2, b: string | undefined) =>
      (y ? isDate(Number(d), Number(mo)) && Number(mo) <= 12 : isDate(Number(a), Number(b))) ? ' ' : m,
    )
    .replace(CURRENCY_AMOUNT_RE, (m, before: string | undefined, after: string | undefined) => (isCurrencyMark(before ?? after ?? '') ? ' ' : m))
    .replace(AMOUNT_RE, ' ');
}

/**
 * Invoice-number-like tokens of free text: every whitespace/separator-delimited word that contains a
 * digit (normalized, e.g. "INV-9000001" → "INV9000001"), its digit runs of 3+ digits ("RE9000001" →
 * "9000001"), and its parts split at - . # _ ("INV-9000001" → "9000001"). Numeric tokens are also
 * given without leading zeros. Words without digits are ignored (they are names, not numbers).
 * Amounts and dates are taken out first (stripAmountsAndDates).
 */
export function extractTokens(...texts: (string | null | undefined)[]): string[] {
  return tokensOf(texts);
}

/** The invoice-number-like tokens of a deposit: its remittance information and references, amounts in its currency taken out. */
export function transactionTokens(tx: Pick<MatchTransaction, 'remittance_information' | 'bank_reference' | 'end_to_end_id' | 'currency'>): string[] {
  return tokensOf([tx.remittance_information, tx.bank_reference, tx.end_to_end_id], tx.currency);
}

function tokensOf(texts: readonly (string | null | undefined)[], currency?: string): string[] {
  const out = new Set<string>();
  const add = (raw: string) => {
    for (const k of documentKeys(raw)) if (k.length >= 3 && /\d/.test(k)) out.add(k);
  };
  for (const text of texts) {
    if (!text) continue;
    for (const word of stripAmountsAndDates(text, currency).split(/[\s,;:/\\|()[\]{}<>"']+/)) {
      if (!/\d/.test(word)) continue;
      add(word);
      for (const part of word.split(/[-.#_+*=]+/)) if (part !== word) add(part);
      for (const run of word.match(/\d{3,}/g) ?? []) add(run);
    }
  }
  return [...out];
}

// ---------------------------------------------------------------------------------------------
// Names

// nameTokens and nameSimilarity are the kernel's (shared with the knowledge extraction's customer linking).
export { nameSimilarity, nameTokens } from '@rp/platform';

export type PayerMatch =
  | { partner_id: string; rule: 'iban' | 'account'; value: string }
  | { partner_id: string; rule: 'name'; value: string; similarity: number };

/** Normalized bank account identifier (IBAN or account number): upper-case, letters and digits only. */
export function normalizeAccount(value: string | null | undefined): string | null {
  if (!value) return null;
  const key = value.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return key.length > 0 ? key : null;
}

interface NameEntry {
  partner: number;
  tokens: Set<string>;
  grams: Set<string>;
}

/**
 * Partners prepared for payer identification: normalized name tokens and trigrams of every name and
 * legal name, inverted (token → names, trigram → names) so a counterparty name is only compared with
 * names sharing something with it, and learned accounts by normalized identifier.
 */
export class PartnerIndex {
  private readonly ids: string[];
  private readonly entries: NameEntry[] = [];
  private readonly byToken = new Map<string, number[]>();
  private readonly byGram = new Map<string, number[]>();
  private readonly accounts = new Map<string, Set<string>>();

  constructor(partners: readonly MatchPartner[], knownAccounts: readonly KnownAccount[]) {
    this.ids = partners.map((p) => p.id);
    partners.forEach((p, i) => {
      const names = new Set([p.name, p.legal_name].filter((n): n is string => !!n).map((n) => nameTokens(n).join(' ')));
      for (const joined of names) {
        if (!joined) continue;
        const entry: NameEntry = { partner: i, tokens: new Set(joined.split(' ')), grams: trigrams(joined) };
        const e = this.entries.push(entry) - 1;
        for (const t of entry.tokens) push(this.byToken, t, e);
        for (const g of entry.grams) push(this.byGram, g, e);
      }
    });
    for (const k of knownAccounts) {
      const key = normalizeAccount(k.account_identifier);
      if (!key) continue;
      const owners = this.accounts.get(key) ?? new Set<string>();
      owners.add(k.partner_id);
      this.accounts.set(key, owners);
    }
  }

  /** Partners paying from this (normalized) account. */
  owners(account: string): Set<string> {
    return this.accounts.get(account) ?? new Set();
  }

  private readonly cache = new Map<string, { id: string; similarity: number }[]>();

  /**
   * Partners by similarity to `name` (max over their names), best first — exact for the decision
   * identifyPayer makes with `threshold` and `tieMargin`, without scoring every name. The name's
   * tokens and trigrams are taken rarest first; names sharing one of those taken are scored. A name
   * sharing none of them shares at most the ones not yet taken, which bounds its similarity; features
   * are taken until that bound can no longer change the decision (beat or tie the best, or pass the
   * threshold). Cached per normalized name.
   */
  ranked(name: string, threshold: number, tieMargin: number): { id: string; similarity: number }[] {
    const tokens = new Set(nameTokens(name));
    if (tokens.size === 0) return [];
    const key = [...tokens].join(' ');
    const cached = this.cache.get(key);
    if (cached) return cached;
    const grams = trigrams(key);
    const features = [
      ...[...tokens].map((t) => ({ token: true, list: this.byToken.get(t) ?? [] })),
      ...[...grams].map((g) => ({ token: false, list: this.byGram.get(g) ?? [] })),
    ].sort((a, b) => a.list.length - b.list.length);
    let restTokens = tokens.size;
    let restGrams = grams.size;
    const seen = new Set<number>();
    const bestOf = new Map<number, number>();
    let best = 0;
    for (const f of features) {
      if (f.token) restTokens--;
      else restGrams--;
      for (const e of f.list) {
        if (seen.has(e)) continue;
        seen.add(e);
        const sim = this.similarity(tokens, grams, this.entries[e]!);
        const partner = this.entries[e]!.partner;
        if (sim > (bestOf.get(partner) ?? -1)) bestOf.set(partner, sim);
        if (sim > best) best = sim;
      }
      // the most a name sharing none of the features taken so far can reach
      const bound = Math.max(restTokens / tokens.size, restGrams > 0 ? (2 * restGrams) / (grams.size + restGrams) : 0);
      if (best >= threshold ? bound < best - tieMargin : bound < threshold) break;
    }
    const ranked = [...bestOf.entries()]
      .map(([i, similarity]) => ({ id: this.ids[i]!, similarity }))
      .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id));
    this.cache.set(key, ranked);
    return ranked;
  }

  private similarity(tokens: Set<string>, grams: Set<string>, entry: NameEntry): number {
    let inter = 0;
    for (const t of tokens) if (entry.tokens.has(t)) inter++;
    let shared = 0;
    for (const g of grams) if (entry.grams.has(g)) shared++;
    const jaccard = inter / (tokens.size + entry.tokens.size - inter);
    const dice = (2 * shared) / (grams.size + entry.grams.size);
    return Math.max(jaccard, dice);
  }
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Identify the payer: learned IBAN/account first (one partner only), then fuzzy name with ties rejected. */
export function identifyPayer(
  tx: Pick<MatchTransaction, 'counterparty_iban' | 'counterparty_account' | 'counterparty_name'>,
  partners: readonly MatchPartner[] | PartnerIndex,
  knownAccounts: readonly KnownAccount[],
  config: Pick<MatchConfig, 'nameThreshold' | 'nameTieMargin'>,
): PayerMatch | null {
  const index = partners instanceof PartnerIndex ? partners : new PartnerIndex(partners, knownAccounts);
  for (const [rule, raw] of [['iban', tx.counterparty_iban], ['account', tx.counterparty_account]] as const) {
    const key = normalizeAccount(raw);
    if (!key) continue;
    const owners = index.owners(key);
    if (owners.size === 1) return { partner_id: [...owners][0]!, rule, value: key };
  }
  if (!tx.counterparty_name) return null;
  const scored = index.ranked(tx.counterparty_name, config.nameThreshold, config.nameTieMargin);
  const best = scored[0];
  if (!best || best.similarity < config.nameThreshold) return null;
  const second = scored[1];
  if (second && best.similarity - second.similarity <= config.nameTieMargin) return null;
  return { partner_id: best.id, rule: 'name', value: tx.counterparty_name, similarity: round4(best.similarity) };
}

// ---------------------------------------------------------------------------------------------
// Amounts

/** Amounts in 1/10000 units (NUMERIC(20,4)) for the subset-sum search. */
function toUnits(d: Dec): bigint {
  return BigInt(d.times(10_000).toFixed(0));
}

/**
 * Subset of `amounts` (in 1/10000 units) summing exactly to `target`: depth-first in the given
 * order (callers put the preferred invoices first), bounded by `maxSteps` nodes. Returns the
 * first solution's indexes and whether a second, different one exists.
 */
export function findSubsetSum(amounts: readonly bigint[], target: bigint, maxSteps: number): { indexes: number[]; ambiguous: boolean } | null {
  const n = amounts.length;
  const suffix: bigint[] = new Array<bigint>(n + 1).fill(0n);
  for (let i = n - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + amounts[i]!;
  const solutions: number[][] = [];
  let steps = 0;
  const chosen: number[] = [];
  const walk = (i: number, remaining: bigint): void => {
    if (solutions.length >= 2 || steps++ > maxSteps) return;
    if (remaining === 0n && chosen.length > 0) {
      solutions.push([...chosen]);
      return;
    }
    if (i >= n || remaining < 0n || suffix[i]! < remaining) return;
    const a = amounts[i]!;
    if (a > 0n && a <= remaining) {
      chosen.push(i);
      walk(i + 1, remaining - a);
      chosen.pop();
    }
    walk(i + 1, remaining);
  };
  walk(0, target);
  if (solutions.length === 0) return null;
  return { indexes: solutions[0]!, ambiguous: solutions.length > 1 };
}

function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

function fmt(d: Dec): string {
  return d.toFixed(4);
}

function byDue(a: MatchInvoice, b: MatchInvoice): number {
  return (a.net_due_date ?? '9999-12-31').localeCompare(b.net_due_date ?? '9999-12-31') || a.document_number.localeCompare(b.document_number) || a.id.localeCompare(b.id);
}

// ---------------------------------------------------------------------------------------------
// Engine

/** Mutable state of a batch: open amounts consumed by earlier proposals, remittances used. */
export class MatchState {
  readonly open = new Map<string, Dec>();
  readonly usedRemittances = new Set<string>();
  readonly invoiceById = new Map<string, MatchInvoice>();
  readonly byKey = new Map<string, MatchInvoice[]>();
  readonly byPartner = new Map<string, MatchInvoice[]>();
  private partnerIndex: PartnerIndex | null = null;

  constructor(invoices: readonly MatchInvoice[]) {
    for (const inv of [...invoices].sort(byDue)) {
      this.invoiceById.set(inv.id, inv);
      this.open.set(inv.id, new Money(inv.open_amount));
      const keys = new Set([...documentKeys(inv.document_number), ...documentKeys(inv.reference)]);
      for (const k of keys) {
        const list = this.byKey.get(k) ?? [];
        list.push(inv);
        this.byKey.set(k, list);
      }
      if (inv.partner_id) {
        const list = this.byPartner.get(inv.partner_id) ?? [];
        list.push(inv);
        this.byPartner.set(inv.partner_id, list);
      }
    }
  }

  /** The partner index of a context, built once per batch. */
  partnersOf(ctx: MatchContext): PartnerIndex {
    this.partnerIndex ??= new PartnerIndex(ctx.partners, ctx.knownAccounts);
    return this.partnerIndex;
  }

  available(id: string): Dec {
    return this.open.get(id) ?? new Money(0);
  }

  consume(allocations: readonly ProposedAllocation[]): void {
    for (const a of allocations) {
      const relieved = new Money(a.amount_paid).plus(a.amount_discount).plus(a.amount_withheld).plus(a.adjustment_amount);
      this.open.set(a.invoice_id, Money.max(this.available(a.invoice_id).minus(relieved), 0));
    }
  }
}

function allocation(invoiceId: string, paid: Dec, adjustment?: { id: string; amount: Dec }): ProposedAllocation {
  return {
    invoice_id: invoiceId,
    amount_paid: fmt(paid),
    amount_discount: fmt(new Money(0)),
    amount_withheld: fmt(new Money(0)),
    adjustment_id: adjustment ? adjustment.id : null,
    adjustment_amount: fmt(adjustment ? adjustment.amount : new Money(0)),
  };
}

function tolerance(config: MatchConfig, openTotal: Dec): Dec {
  return Money.max(new Money(config.toleranceAmount), openTotal.times(config.tolerancePercent).dividedBy(100));
}

interface AmountFit {
  allocations: ProposedAllocation[];
  reasons: MatchReason[];
  amountScore: number;
}

/**
 * Fit the deposit amount to candidate invoices (already in preference order): all of them exactly,
 * a subset exactly, all of them with a shortfall within tolerance (adjustment on the last one), or
 * — when `allowPartial` — a partial payment in order.
 */
function fitAmount(amount: Dec, candidates: MatchInvoice[], state: MatchState, ctx: MatchContext, allowPartial: boolean): AmountFit | null {
  const open = candidates.map((c) => state.available(c.id)).filter((o) => o.gt(0));
  const invs = candidates.filter((c) => state.available(c.id).gt(0));
  if (invs.length === 0) return null;
  const total = open.reduce((s, o) => s.plus(o), new Money(0));
  if (total.eq(amount)) {
    return {
      allocations: invs.map((inv, i) => allocation(inv.id, open[i]!)),
      reasons: [{ rule: invs.length === 1 ? 'amount_exact' : 'amount_combination', invoices: invs.length }],
      amountScore: invs.length === 1 ? 0.3 : 0.25,
    };
  }
  if (invs.length > 1) {
    const limited = invs.slice(0, ctx.config.maxCombinationInvoices);
    const found = findSubsetSum(limited.map((inv) => toUnits(state.available(inv.id))), toUnits(amount), ctx.config.maxCombinationSteps);
    if (found) {
      const chosen = found.indexes.map((i) => limited[i]!);
      return {
        allocations: chosen.map((inv) => allocation(inv.id, state.available(inv.id))),
        reasons: [{ rule: chosen.length === 1 ? 'amount_exact' : 'amount_combination', invoices: chosen.length, ambiguous: found.ambiguous }],
        amountScore: (chosen.length === 1 ? 0.3 : 0.25) - (found.ambiguous ? 0.1 : 0),
      };
    }
  }
  if (amount.lt(total)) {
    const shortfall = total.minus(amount);
    if (ctx.toleranceAdjustmentId && shortfall.lte(tolerance(ctx.config, total))) {
      const allocations = invs.map((inv, i) =>
        i === invs.length - 1 ? allocation(inv.id, open[i]!.minus(shortfall), { id: ctx.toleranceAdjustmentId!, amount: shortfall }) : allocation(inv.id, open[i]!),
      );
      if (new Money(allocations[allocations.length - 1]!.amount_paid).gte(0)) {
        return {
          allocations,
          reasons: [{ rule: 'amount_within_tolerance', shortfall: fmt(shortfall), adjustment_id: ctx.toleranceAdjustmentId }],
          amountScore: 0.15,
        };
      }
    }
    if (allowPartial) {
      let remaining = amount;
      const allocations: ProposedAllocation[] = [];
      for (let i = 0; i < invs.length && remaining.gt(0); i++) {
        const paid = Money.min(remaining, open[i]!);
        allocations.push(allocation(invs[i]!.id, paid));
        remaining = remaining.minus(paid);
      }
      return { allocations, reasons: [{ rule: 'amount_partial', shortfall: fmt(shortfall) }], amountScore: 0 };
    }
    return null;
  }
  // deposit larger than everything referenced: pay them all, leave the rest unallocated
  if (allowPartial) {
    return {
      allocations: invs.map((inv, i) => allocation(inv.id, open[i]!)),
      reasons: [{ rule: 'amount_overpayment', unallocated: fmt(amount.minus(total)) }],
      amountScore: 0,
    };
  }
  return null;
}

function remittanceFor(tx: MatchTransaction, tokens: Set<string>, payer: PayerMatch | null, ctx: MatchContext, state: MatchState): { r: MatchRemittance; by: 'transaction_number' | 'amount_payer' } | null {
  const amount = new Money(tx.amount);
  const txAccounts = new Set([normalizeAccount(tx.counterparty_iban), normalizeAccount(tx.counterparty_account)].filter((x): x is string => !!x));
  const usable = ctx.remittances.filter((r) => !state.usedRemittances.has(r.id) && (!r.currency || r.currency === tx.currency));
  for (const r of usable) {
    const key = r.transaction_number ? normalizeKey(r.transaction_number) : '';
    if (key.length >= 3 && (tokens.has(key) || [tx.bank_reference, tx.end_to_end_id].some((v) => v && normalizeKey(v) === key))) return { r, by: 'transaction_number' };
  }
  for (const r of usable) {
    if (!r.transaction_amount || !new Money(r.transaction_amount).eq(amount)) continue;
    const samePartner = payer && r.partner_id && r.partner_id === payer.partner_id;
    const sameAccount = [r.payer_iban, r.payer_account].some((v) => {
      const k = normalizeAccount(v);
      return k !== null && txAccounts.has(k);
    });
    if (samePartner || sameAccount) return { r, by: 'amount_payer' };
  }
  return null;
}

function score(parts: number[]): number {
  return round4(Math.min(1, Math.max(0, parts.reduce((s, p) => s + p, 0))));
}

function payerReason(payer: PayerMatch): MatchReason {
  return payer.rule === 'name'
    ? { rule: 'name', partner_id: payer.partner_id, value: payer.value, similarity: payer.similarity }
    : { rule: payer.rule, partner_id: payer.partner_id, value: payer.value };
}

function payerScore(payer: PayerMatch | null, partnerId: string | null): number {
  if (!payer || payer.partner_id !== partnerId) return 0;
  return payer.rule === 'name' ? 0.25 * payer.similarity : 0.3;
}

/**
 * The payer identified from the deposit (by IBAN, account or name) is not the partner whose invoices
 * (or remittance) the proposal pays: said in the reasons, and the score loses what an agreeing payer
 * would have added (a payer paying for another company is possible, but needs a look).
 */
function payerConflict(payer: PayerMatch | null, partnerId: string | null): { reason: MatchReason; penalty: number } | null {
  if (!payer || !partnerId || payer.partner_id === partnerId) return null;
  return {
    reason: { rule: 'payer_conflict', payer_rule: payer.rule, payer_partner_id: payer.partner_id, partner_id: partnerId, value: payer.value },
    penalty: payerScore(payer, payer.partner_id),
  };
}

/** Every amount of the allocations fits the currency's minor units (JPY 0, EUR 2, KWD 3 decimals). */
export function allocationsFitMinorUnits(allocations: readonly ProposedAllocation[], currency: string): boolean {
  return allocations.every((a) => [a.amount_paid, a.amount_discount, a.amount_withheld, a.adjustment_amount].every((v) => fitsMinorUnits(v, currency)));
}

/**
 * Propose a payment for one deposit, or null when nothing could be matched. Consumes open amounts
 * (and the remittance used) in `state`. A proposal whose amounts do not fit the currency's minor
 * units (a deposit, open amount or remittance line with more decimals than the currency has) is not
 * made: the deposit is left for a person, since such an allocation could never be stored.
 */
export function matchDeposit(tx: MatchTransaction, ctx: MatchContext, state: MatchState): Proposal | null {
  const proposal = propose(tx, ctx, state);
  if (!proposal || !allocationsFitMinorUnits(proposal.allocations, tx.currency)) return null;
  if (proposal.remittance_id) state.usedRemittances.add(proposal.remittance_id);
  state.consume(proposal.allocations);
  return proposal;
}

function propose(tx: MatchTransaction, ctx: MatchContext, state: MatchState): Proposal | null {
  const amount = new Money(tx.amount);
  if (!amount.gt(0)) return null;
  const tokenList = transactionTokens(tx);
  const tokens = new Set(tokenList);
  const payer = identifyPayer(tx, state.partnersOf(ctx), ctx.knownAccounts, ctx.config);

  // 1. remittance advice
  const rem = remittanceFor(tx, tokens, payer, ctx, state);
  if (rem) {
    const allocations: ProposedAllocation[] = [];
    let paidTotal = new Money(0);
    for (const ra of rem.r.allocations) {
      if (!ra.invoice_id) continue;
      const inv = state.invoiceById.get(ra.invoice_id);
      if (!inv || inv.currency !== tx.currency) continue;
      const open = state.available(inv.id);
      const discount = Money.min(new Money(ra.amount_discount), open);
      const withheld = Money.min(new Money(ra.amount_withheld), open.minus(discount));
      const paid = Money.min(new Money(ra.amount_paid), open.minus(discount).minus(withheld), amount.minus(paidTotal));
      if (paid.lte(0) && discount.lte(0) && withheld.lte(0)) continue;
      paidTotal = paidTotal.plus(paid);
      allocations.push({ ...allocation(inv.id, paid), amount_discount: fmt(discount), amount_withheld: fmt(withheld) });
    }
    if (allocations.length > 0) {
      const partnerId = rem.r.partner_id ?? state.invoiceById.get(allocations[0]!.invoice_id)?.partner_id ?? payer?.partner_id ?? null;
      const reasons: MatchReason[] = [{ rule: 'remittance', remittance_id: rem.r.id, matched_by: rem.by, value: rem.r.transaction_number }];
      if (payer && payer.partner_id === partnerId) reasons.push(payerReason(payer));
      const conflict = payerConflict(payer, partnerId);
      if (conflict) reasons.push(conflict.reason);
      const exact = paidTotal.eq(amount);
      if (exact) reasons.push({ rule: 'amount_exact' });
      return {
        transaction_id: tx.id,
        partner_id: partnerId,
        remittance_id: rem.r.id,
        score: score([rem.by === 'transaction_number' ? 0.6 : 0.4, payerScore(payer, partnerId), exact ? 0.3 : 0, -(conflict?.penalty ?? 0)]),
        reasons,
        allocations,
      };
    }
  }

  // 2. invoice numbers in the references
  const referenced: MatchInvoice[] = [];
  const tokenOf = new Map<string, string>();
  for (const t of tokenList) {
    for (const inv of state.byKey.get(t) ?? []) {
      if (inv.currency !== tx.currency || referenced.includes(inv)) continue;
      referenced.push(inv);
      tokenOf.set(inv.id, t);
    }
  }
  const referencedOpen = referenced.filter((inv) => state.available(inv.id).gt(0));
  if (referencedOpen.length > 0) {
    // when several partners are referenced, keep the payer's (or the first one's) invoices
    const partners = [...new Set(referencedOpen.map((i) => i.partner_id))];
    const partnerId = payer && partners.includes(payer.partner_id) ? payer.partner_id : (partners[0] ?? null);
    const candidates = referencedOpen.filter((i) => i.partner_id === partnerId).sort(byDue);
    const fit = fitAmount(amount, candidates, state, ctx, true);
    if (fit) {
      const reasons: MatchReason[] = fit.allocations.map((a) => ({ rule: 'invoice_number', value: tokenOf.get(a.invoice_id)!, invoice_id: a.invoice_id }));
      if (payer && payer.partner_id === partnerId) reasons.push(payerReason(payer));
      const conflict = payerConflict(payer, partnerId);
      if (conflict) reasons.push(conflict.reason);
      reasons.push(...fit.reasons);
      return {
        transaction_id: tx.id,
        partner_id: partnerId,
        remittance_id: null,
        score: score([0.5, payerScore(payer, partnerId), fit.amountScore, -(conflict?.penalty ?? 0)]),
        reasons,
        allocations: fit.allocations,
      };
    }
  }

  // 3. identified payer: amounts against their open invoices
  if (payer) {
    const open = (state.byPartner.get(payer.partner_id) ?? []).filter((i) => i.currency === tx.currency && state.available(i.id).gt(0));
    // exactly one invoice of this amount first (oldest due wins when several have it)
    const exact = open.filter((i) => state.available(i.id).eq(amount));
    let fit: AmountFit | null = null;
    if (exact.length > 0) {
      fit = { allocations: [allocation(exact[0]!.id, amount)], reasons: [{ rule: 'amount_exact', ambiguous: exact.length > 1 }], amountScore: exact.length > 1 ? 0.2 : 0.3 };
    } else if (open.length > 0) {
      fit = fitAmount(amount, open, state, ctx, false);
      if (!fit) {
        // a single invoice short-paid within tolerance
        const single = open.find((i) => {
          const o = state.available(i.id);
          return o.gt(amount) && o.minus(amount).lte(tolerance(ctx.config, o));
        });
        if (single) fit = fitAmount(amount, [single], state, ctx, false);
      }
    }
    if (fit) {
      return {
        transaction_id: tx.id,
        partner_id: payer.partner_id,
        remittance_id: null,
        score: score([payerScore(payer, payer.partner_id), fit.amountScore]),
        reasons: [payerReason(payer), ...fit.reasons],
        allocations: fit.allocations,
      };
    }
  }
  return null;
}

/** Match a batch of deposits in order; returns the proposals and the ids of the deposits left unmatched. */
export function matchDeposits(txs: readonly MatchTransaction[], ctx: MatchContext, state = new MatchState(ctx.invoices)): { proposals: Proposal[]; unmatched: string[] } {
  const proposals: Proposal[] = [];
  const unmatched: string[] = [];
  for (const tx of txs) {
    const p = matchDeposit(tx, ctx, state);
    if (p) proposals.push(p);
    else unmatched.push(tx.id);
  }
  return { proposals, unmatched };
}
