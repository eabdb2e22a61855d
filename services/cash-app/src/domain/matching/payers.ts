/**
 * Payer identification: who sent a deposit. A counterparty IBAN/account known for exactly one
 * partner (learned from an approved payment or given by the customer master data) first, then a
 * fuzzy name match against partners' name and legal name (normalized for case, punctuation,
 * diacritics and legal forms; similarity = max(token Jaccard, trigram Dice)). Below the threshold
 * nobody; two or more partners within the tie margin are returned as `twins` (legal-form twins such
 * as "Müller Logistik AG" / "Müller Logistik GmbH"), for the other evidence or the legal form
 * written in the counterparty name to decide between (candidates.ts).
 */
import { joinInitials, LEGAL_FORMS, nameTokens, nameTrigrams as trigrams } from '@rp/platform';
import type { KnownAccount, MatchPartner, MatchTransaction } from '../../domain-types/matching.js';
import type { MatchConfig } from './config.js';

// nameTokens and nameSimilarity are the kernel's (shared with the knowledge extraction's customer linking).
export { nameSimilarity, nameTokens } from '@rp/platform';


export type PayerMatch =
  | { partner_id: string; rule: 'iban' | 'account'; value: string; source?: 'master_data' }
  | { partner_id: string; rule: 'name'; value: string; similarity: number; legal_form?: string };

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
  private readonly ids: string[] = [];
  private readonly entries: NameEntry[] = [];
  private readonly entriesOf = new Map<number, number[]>();
  private readonly indexOf = new Map<string, number>();
  private readonly byToken = new Map<string, number[]>();
  private readonly byGram = new Map<string, number[]>();
  private readonly accounts = new Map<string, Set<string>>();
  private readonly masterData = new Set<string>();
  private readonly forms = new Map<string, Set<string>>();

  /**
   * The index built in slices of `slice` partners, awaiting `pace` between them: an API request that
   * identifies one payer of a large organization does not hold the event loop for the whole build
   * (the same index as the constructor's).
   */
  static async paced(partners: readonly MatchPartner[], knownAccounts: readonly KnownAccount[], pace: () => Promise<void>, slice = 500): Promise<PartnerIndex> {
    const index = new PartnerIndex([], knownAccounts);
    for (let i = 0; i < partners.length; i++) {
      if (i > 0 && i % slice === 0) await pace();
      index.addPartner(partners[i]!);
    }
    return index;
  }

  constructor(partners: readonly MatchPartner[], knownAccounts: readonly KnownAccount[]) {
    for (const p of partners) this.addPartner(p);
    for (const k of knownAccounts) {
      const key = normalizeAccount(k.account_identifier);
      if (!key) continue;
      const owners = this.accounts.get(key) ?? new Set<string>();
      owners.add(k.partner_id);
      this.accounts.set(key, owners);
      if (k.source === 'master_data') this.masterData.add(`${key} ${k.partner_id}`);
    }
  }

  private addPartner(p: MatchPartner): void {
    const i = this.ids.push(p.id) - 1;
    this.forms.set(p.id, new Set([...legalForms(p.name), ...(p.legal_name ? legalForms(p.legal_name) : [])]));
    this.indexOf.set(p.id, i);
    const names = new Set([p.name, p.legal_name].filter((n): n is string => !!n).map((n) => nameTokens(n).join(' ')));
    for (const joined of names) {
      if (!joined) continue;
      const entry: NameEntry = { partner: i, tokens: new Set(joined.split(' ')), grams: trigrams(joined) };
      const e = this.entries.push(entry) - 1;
      push(this.entriesOf, i, e);
      for (const t of entry.tokens) push(this.byToken, t, e);
      for (const g of entry.grams) push(this.byGram, g, e);
    }
  }

  /** The legal forms written in a partner's name and legal name ("gmbh", "ag"). */
  legalFormsOf(partnerId: string): Set<string> {
    return this.forms.get(partnerId) ?? new Set();
  }

  /** The account is known for the partner from the customer master data (not only learned). */
  fromMasterData(account: string, partnerId: string): boolean {
    return this.masterData.has(`${account} ${partnerId}`);
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

  /** The similarity of `name` to one partner's names (max over name and legal name), without ranking the others. */
  similarityTo(name: string, partnerId: string): number {
    const i = this.indexOf.get(partnerId);
    if (i === undefined) return 0;
    const tokens = new Set(nameTokens(name));
    if (tokens.size === 0) return 0;
    const grams = trigrams([...tokens].join(' '));
    let best = 0;
    for (const e of this.entriesOf.get(i) ?? []) best = Math.max(best, this.similarity(tokens, grams, this.entries[e]!));
    return best;
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

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Who may have sent a deposit: one payer, or partners tied on the name (twins), or nobody. */
export interface PayerCandidates {
  payer: PayerMatch | null;
  /** partners whose names tie within the margin, best first (empty when a payer is identified) */
  twins: { id: string; similarity: number }[];
  /** the tied partners when the legal form written in the name chose the payer among them (a form cut short, "SA" of "SARL", may name the wrong one) */
  formTwins?: { id: string; similarity: number }[];
}

/** Identify the payer: known IBAN/account first (one partner only), then fuzzy name with ties rejected. */
export function identifyPayer(
  tx: Pick<MatchTransaction, 'counterparty_iban' | 'counterparty_account' | 'counterparty_name'>,
  partners: readonly MatchPartner[] | PartnerIndex,
  knownAccounts: readonly KnownAccount[],
  config: Pick<MatchConfig, 'nameThreshold' | 'nameTieMargin'>,
): PayerMatch | null {
  const index = partners instanceof PartnerIndex ? partners : new PartnerIndex(partners, knownAccounts);
  return payerCandidates(tx, index, config).payer;
}

/**
 * identifyPayer, keeping the tied partners: a name tie is broken by the legal form when the
 * counterparty name carries one that exactly one of the tied partners has ("MÜLLER LOGISTIK AG").
 */
export function payerCandidates(
  tx: Pick<MatchTransaction, 'counterparty_iban' | 'counterparty_account' | 'counterparty_name'>,
  index: PartnerIndex,
  config: Pick<MatchConfig, 'nameThreshold' | 'nameTieMargin'>,
): PayerCandidates {
  const byAccount = payerByAccount(tx, index);
  if (byAccount) return { payer: byAccount, twins: [] };
  if (!tx.counterparty_name) return { payer: null, twins: [] };
  const scored = index.ranked(tx.counterparty_name, config.nameThreshold, config.nameTieMargin);
  const best = scored[0];
  if (!best || best.similarity < config.nameThreshold) return { payer: null, twins: [] };
  // ranked is best first: the tie ends at the first partner beyond the margin
  const tied: { id: string; similarity: number }[] = [];
  for (const s of scored) {
    if (best.similarity - s.similarity > config.nameTieMargin) break;
    tied.push(s);
  }
  if (tied.length === 1) return { payer: { partner_id: best.id, rule: 'name', value: tx.counterparty_name, similarity: round4(best.similarity) }, twins: [] };
  const written = legalForms(tx.counterparty_name);
  if (written.size > 0) {
    const same = tied.filter((t) => [...written].every((f) => index.legalFormsOf(t.id).has(f)));
    if (same.length === 1) {
      return {
        payer: { partner_id: same[0]!.id, rule: 'name', value: tx.counterparty_name, similarity: round4(same[0]!.similarity), legal_form: [...written].join(' ') },
        twins: [],
        formTwins: tied.slice(0, 10),
      };
    }
  }
  return { payer: null, twins: tied.slice(0, 10) };
}

/** The payer by a counterparty IBAN or account known for exactly one partner, or null. */
export function payerByAccount(tx: Pick<MatchTransaction, 'counterparty_iban' | 'counterparty_account'>, index: PartnerIndex): PayerMatch | null {
  for (const [rule, raw] of [['iban', tx.counterparty_iban], ['account', tx.counterparty_account]] as const) {
    const key = normalizeAccount(raw);
    if (!key) continue;
    const owners = index.owners(key);
    if (owners.size === 1) {
      const partnerId = [...owners][0]!;
      const payer: PayerMatch = { partner_id: partnerId, rule, value: key };
      if (index.fromMasterData(key, partnerId)) payer.source = 'master_data';
      return payer;
    }
  }
  return null;
}

/** Legal-form words of a name ("Müller Logistik GmbH & Co. KG" → gmbh, kg); fillers such as "co" or "the" are not forms. */
export function legalForms(name: string): Set<string> {
  const words = joinInitials(name).normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, ' ').split(' ');
  return new Set(words.filter((w) => LEGAL_FORMS.has(w) && !FILLERS.has(w)));
}

const FILLERS = new Set(['co', 'cie', 'company', 'the', 'und', 'and']);

export function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
