/**
 * Enrichment of memories (pure): customer and segment links, normalised values, collection.
 *
 * Customers, with cash-app's payer-matching ambiguity rule (services/cash-app/src/domain/matching/payers.ts
 * identifyPayer: normalised names without legal forms, similarity = max(token Jaccard, trigram Dice),
 * a second partner within the tie margin means no link):
 *  1. an account number appearing in the text as a whole token (letters and digits compared, case
 *     ignored) that belongs to exactly one partner links it;
 *  2. otherwise every run of words starting with a capital letter is compared with each partner's
 *     name and legal name over windows of the name's length; the best partner must reach
 *     NAME_THRESHOLD (stricter than the payer threshold, since prose is matched, not a payer field)
 *     and no other partner may come within NAME_TIE_MARGIN of it — two customers named in one
 *     memory, or two partners with similar names, give no link.
 * Segments: a segment whose whole name appears in the text (case-insensitive, word boundaries); two
 * different segments named → none (a name contained in a longer matched name does not count).
 * Collection: the job's when given; else by keyword score per memory, ties and memories without
 * keywords taking the job's dominant collection ('company' when nothing scores).
 */
import { COLLECTIONS, type Collection } from '../types.js';
import { nameShape, nameTokens, nameTrigrams as trigrams, shapeSimilarity, type NameShape } from '@rp/platform';
import { newWorkCounter, type EnrichedMemory, type MemoryDraft, type NormalisedEntities, type PartnerRef, type SegmentRef, type WorkCounter } from './types.js';

export const NAME_THRESHOLD = 0.8;
export const NAME_TIE_MARGIN = 0.05;

/** Names compare as cash-app's payer matching compares them (the kernel's name similarity). */
export { nameTokens };
const shape = nameShape;
const similarity = shapeSimilarity;

function normAccount(v: string): string {
  return v.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** Least trigram-Dice bound that can still bring a name within the tie margin of the threshold. */
const NAME_FLOOR = NAME_THRESHOLD - NAME_TIE_MARGIN;

interface IndexedName {
  id: string;
  tokens: string[];
  shape: NameShape;
  /** trigrams a run must share with the name (at least) before any window can come within NAME_FLOOR */
  minCommon: number;
  /** indexed trigrams a run must share with the name to be compared with it (see the constructor) */
  hits: number;
}

/**
 * Partners by account number and by name. A name run of a memory is compared only with names it can
 * match: a window's trigram Dice with a name is at most 2(c+1)/(c+1+|name grams|) for c trigrams the run
 * shares with the name, and its token Jaccard at most the share of the name's tokens it contains. So a
 * name reaching NAME_FLOOR shares at least `minCommon` of its trigrams with the run, hence one of its
 * |grams| − minCommon + 1 rarest trigrams (two of its |grams| − minCommon + 2 rarest), or enough of its
 * tokens, hence one of its rarest tokens. The index holds each name under those rarest trigrams and
 * tokens only (prefix filtering), so a run meets the few names that share rare parts with it, not every partner; names that stay below NAME_FLOOR
 * cannot change the outcome (a link needs NAME_THRESHOLD, a tie needs NAME_FLOOR).
 */
export class CustomerMatcher {
  private readonly names: IndexedName[] = [];
  private readonly always: IndexedName[] = [];
  private readonly byGram = new Map<string, IndexedName[]>();
  private readonly byToken = new Map<string, IndexedName[]>();
  private readonly accounts = new Map<string, Set<string>>();

  constructor(partners: PartnerRef[]) {
    for (const p of partners) {
      for (const n of new Set([p.name, p.legal_name].filter((x): x is string => !!x))) {
        const tokens = nameTokens(n);
        if (tokens.length === 0) continue;
        const sh = shape(tokens);
        let minCommon = 0;
        while ((2 * (minCommon + 1)) / (minCommon + 1 + sh.grams.size) < NAME_FLOOR) minCommon++;
        this.names.push({ id: p.id, tokens, shape: sh, minCommon, hits: 1 });
      }
      if (p.account_number) {
        const k = normAccount(p.account_number);
        if (k.length >= 3) {
          const set = this.accounts.get(k) ?? new Set<string>();
          set.add(p.id);
          this.accounts.set(k, set);
        }
      }
    }
    const gramDf = new Map<string, number>();
    const tokenDf = new Map<string, number>();
    for (const n of this.names) {
      for (const g of n.shape.grams) gramDf.set(g, (gramDf.get(g) ?? 0) + 1);
      for (const t of n.shape.tokens) tokenDf.set(t, (tokenDf.get(t) ?? 0) + 1);
    }
    const rarest = <T,>(items: Iterable<T>, df: Map<T, number>, k: number) => [...items].sort((a, b) => df.get(a)! - df.get(b)! || String(a).localeCompare(String(b))).slice(0, k);
    for (const n of this.names) {
      if (n.minCommon === 0) {
        this.always.push(n); // short names: any run may come close
        continue;
      }
      // indexed under its (|grams| − minCommon + hits) rarest trigrams, a name reaching minCommon shares `hits` of them
      n.hits = Math.min(2, n.minCommon);
      for (const g of rarest(n.shape.grams, gramDf, n.shape.grams.size - n.minCommon + n.hits)) push(this.byGram, g, n);
      // token Jaccard ≥ NAME_FLOOR needs at least ceil(NAME_FLOOR·|tokens|) of the name's tokens
      const size = n.shape.tokens.size;
      for (const t of rarest(n.shape.tokens, tokenDf, size - Math.ceil(NAME_FLOOR * size) + 1)) push(this.byToken, t, n);
    }
  }

  /** Names a run may match, in partner order. */
  private candidates(run: string[], runGrams: Set<string>): IndexedName[] {
    const found = new Set<IndexedName>(this.always);
    const hits = new Map<IndexedName, number>();
    for (const g of runGrams) {
      for (const n of this.byGram.get(g) ?? []) {
        const h = (hits.get(n) ?? 0) + 1;
        hits.set(n, h);
        if (h >= n.hits) found.add(n);
      }
    }
    for (const t of new Set(run)) for (const n of this.byToken.get(t) ?? []) found.add(n);
    return [...found];
  }

  match(text: string, work: WorkCounter = newWorkCounter()): string | null {
    // 1. account numbers
    const byAccount = new Set<string>();
    for (const tok of text.match(/[A-Za-z0-9][A-Za-z0-9-]{2,}/g) ?? []) {
      const owners = this.accounts.get(normAccount(tok));
      if (owners) for (const o of owners) byAccount.add(o);
    }
    if (byAccount.size === 1) return [...byAccount][0]!;
    if (byAccount.size > 1) return null;
    // 2. names: capitalised word runs (a name may contain "&", "-", "of", "de", legal forms)
    const runs = [...text.matchAll(/[A-Z0-9][\w&'.-]*(?:\s+(?:&|of|de|van|von|der|and|[A-Z0-9][\w&'.-]*))*/g)].map((m) => nameTokens(m[0]));
    const best = new Map<string, number>();
    const shapes = new Map<string, NameShape>();
    for (const run of runs) {
      const runGrams = trigrams(run.join(' '));
      for (const n of this.candidates(run, runGrams)) {
        work.comparisons++;
        let common = 0;
        for (const g of n.shape.grams) if (runGrams.has(g)) common++;
        if (common < n.minCommon && !n.tokens.some((t) => run.includes(t))) continue;
        const len = n.tokens.length;
        for (let i = 0; i + Math.min(len, run.length) <= run.length; i++) {
          for (const l of new Set([len, len + 1, Math.max(1, len - 1)])) {
            const win = run.slice(i, i + l);
            if (win.length === 0) continue;
            const key = win.join(' ');
            let sh = shapes.get(key);
            if (!sh) shapes.set(key, (sh = shape(win)));
            const s = similarity(sh, n.shape);
            if (s > (best.get(n.id) ?? 0)) best.set(n.id, s);
          }
        }
      }
    }
    const ranked = [...best.entries()].sort((a, b) => b[1] - a[1]);
    const top = ranked[0];
    if (!top || top[1] < NAME_THRESHOLD) return null;
    const second = ranked[1];
    if (second && top[1] - second[1] <= NAME_TIE_MARGIN) return null;
    if (second && second[1] >= NAME_THRESHOLD) return null; // two customers named
    return top[0];
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (!list) m.set(k, [v]);
  else if (list[list.length - 1] !== v) list.push(v);
}

function segmentOf(text: string, segments: SegmentRef[]): string | null {
  const lower = ` ${text.toLowerCase().replace(/[^a-z0-9]+/g, ' ')} `;
  const hits = segments
    .map((s) => ({ s, key: s.name.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim() }))
    .filter((x) => x.key.length > 0 && lower.includes(` ${x.key} `));
  const maximal = hits.filter((h) => !hits.some((o) => o !== h && o.key.length > h.key.length && o.key.includes(h.key)));
  return maximal.length === 1 ? maximal[0]!.s.id : null;
}

// ---------------------------------------------------------------------------------------------
// values

const CURRENCY_SYMBOLS: Record<string, string> = { '€': 'EUR', $: 'USD', '£': 'GBP', '¥': 'JPY' };
const CURRENCY_CODES = 'EUR|USD|GBP|CHF|CAD|AUD|JPY|SEK|NOK|DKK|PLN';
const NUMBER = String.raw`\d{1,3}(?:[,.\s]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const NUMBER_WORDS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, fourteen: 14,
  fifteen: 15, twenty: 20, thirty: 30, forty: 40, 'forty-five': 45, fifty: 50, sixty: 60, ninety: 90,
};
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1,250.00", "1.250,00", "1 250" → "1250.00"; a single separator followed by 3 digits is a thousands separator. */
export function decimalValue(raw: string, suffix = ''): string {
  let s = raw.replace(/\s/g, '');
  const lastSep = Math.max(s.lastIndexOf('.'), s.lastIndexOf(','));
  if (lastSep >= 0) {
    const decimals = s.length - lastSep - 1;
    if (decimals === 3) s = s.replace(/[.,]/g, '');
    else s = s.slice(0, lastSep).replace(/[.,]/g, '') + '.' + s.slice(lastSep + 1);
  }
  let n = Number(s);
  if (/^k$/i.test(suffix)) n *= 1000;
  if (/^(m|mn|million)$/i.test(suffix)) n *= 1_000_000;
  return n.toFixed(2);
}

function isoDate(y: number, m: number, d: number): string | null {
  if (m < 1 || m > 12 || d < 1 || d > 31) return null;
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (dt.getUTCMonth() !== m - 1) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/**
 * Amounts (with a currency symbol or ISO code before or after; "k"/"m" suffixes), percentages,
 * day counts ("30 days", "net 45", "thirty calendar days") and dates (ISO, d.m.yyyy, m/d/yyyy —
 * d/m when the first part exceeds 12 —, "March 5, 2026", "5 March 2026"), without overlaps.
 */
export function normaliseEntities(text: string): NormalisedEntities {
  const taken: [number, number][] = [];
  const free = (a: number, b: number) => !taken.some(([x, y]) => a < y && b > x);
  const take = (a: number, b: number) => taken.push([a, b]);
  const out: NormalisedEntities = { amounts: [], percentages: [], day_counts: [], dates: [] };

  const dateRes: [RegExp, (m: RegExpMatchArray) => string | null][] = [
    [/\b(\d{4})-(\d{2})-(\d{2})\b/g, (m) => isoDate(+m[1]!, +m[2]!, +m[3]!)],
    [/\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/g, (m) => isoDate(+m[3]!, +m[2]!, +m[1]!)],
    [/\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/g, (m) => (+m[1]! > 12 ? isoDate(+m[3]!, +m[2]!, +m[1]!) : isoDate(+m[3]!, +m[1]!, +m[2]!))],
    [new RegExp(String.raw`\b(${MONTHS.join('|')})\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`, 'gi'), (m) => isoDate(+m[3]!, MONTHS.indexOf(m[1]!.toLowerCase()) + 1, +m[2]!)],
    [new RegExp(String.raw`\b(\d{1,2})(?:st|nd|rd|th)?\s+(${MONTHS.join('|')})\s+(\d{4})\b`, 'gi'), (m) => isoDate(+m[3]!, MONTHS.indexOf(m[2]!.toLowerCase()) + 1, +m[1]!)],
  ];
  for (const [re, fn] of dateRes) {
    for (const m of text.matchAll(re)) {
      const a = m.index!;
      const b = a + m[0].length;
      const date = fn(m);
      if (date && free(a, b)) {
        out.dates.push({ text: m[0], date });
        take(a, b);
      }
    }
  }
  const amountRes = [
    new RegExp(String.raw`(€|\$|£|¥|\b(?:${CURRENCY_CODES})\b)\s?(${NUMBER})(?:\s?(k|m|mn|million)\b)?`, 'gi'),
    new RegExp(String.raw`\b(${NUMBER})(?:\s?(k|m|mn|million)\b)?\s?(€|\b(?:${CURRENCY_CODES})\b|euros?\b|dollars?\b|pounds?\b)`, 'gi'),
  ];
  amountRes.forEach((re, n) => {
    for (const m of text.matchAll(re)) {
      const a = m.index!;
      const b = a + m[0].length;
      if (!free(a, b)) continue;
      const [cur, num, suf] = n === 0 ? [m[1]!, m[2]!, m[3] ?? ''] : [m[3]!, m[1]!, m[2] ?? ''];
      const c = cur.toLowerCase();
      const currency = CURRENCY_SYMBOLS[cur] ?? (c.startsWith('euro') ? 'EUR' : c.startsWith('dollar') ? 'USD' : c.startsWith('pound') ? 'GBP' : cur.toUpperCase());
      out.amounts.push({ text: m[0], currency, value: decimalValue(num, suf) });
      take(a, b);
    }
  });
  for (const m of text.matchAll(/\b(\d+(?:[.,]\d+)?)\s?(%|percent\b|per cent\b)/gi)) {
    const a = m.index!;
    const b = a + m[0].length;
    if (!free(a, b)) continue;
    out.percentages.push({ text: m[0], value: String(Number(m[1]!.replace(',', '.'))) });
    take(a, b);
  }
  const wordNums = Object.keys(NUMBER_WORDS).join('|');
  const dayRes: [RegExp, (m: RegExpMatchArray) => number][] = [
    [/\b(?:net|n)\s?(\d{1,3})\b/gi, (m) => +m[1]!],
    [new RegExp(String.raw`\b(\d{1,3}|${wordNums})[\s-]+(?:\(\d{1,3}\)\s+)?(?:calendar\s+|business\s+|working\s+|banking\s+)?days?\b`, 'gi'), (m) => NUMBER_WORDS[m[1]!.toLowerCase()] ?? +m[1]!],
  ];
  for (const [re, fn] of dayRes) {
    for (const m of text.matchAll(re)) {
      const a = m.index!;
      const b = a + m[0].length;
      if (!free(a, b)) continue;
      const days = fn(m);
      if (!Number.isFinite(days)) continue;
      out.day_counts.push({ text: m[0], days });
      take(a, b);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// collection

const KEYWORDS: Record<Collection, RegExp> = {
  deductions: /\b(deduct\w*|short[- ]?pa\w*|chargebacks?|promotion\w*|promo|trade spend|shortages?|damaged goods|pricing claims?|claim numbers?|debit memos?|credit memos?|proof of delivery|pod)\b/gi,
  disputes: /\b(disputes?|disputed|contest\w*|complain\w*|quality issue\w*|wrong (?:price|quantity)|resolution)\b/gi,
  cash_application: /\b(remittance\w*|cash application|appl(?:y|ied|ying) (?:the )?(?:payment|cash)|unapplied|on[- ]account|lockbox|match\w*|allocat\w*|bank statements?)\b/gi,
  payments: /\b(payment methods?|ach|wires?|wire transfers?|bank transfers?|sepa|direct debit|credit cards?|card payments?|cheques?|checks?|portal|virtual cards?|pays? (?:by|via|with))\b/gi,
  credit_risk: /\b(credit (?:limits?|holds?|risk|reviews?|checks?|insurance|rating\w*)|exposure|risk (?:score|rating|class)|insolven\w*|bankrupt\w*|guarantee\w*|collateral)\b/gi,
  collections: /\b(dunning|reminders?|overdue|past[- ]due|collect\w*|escalat\w*|payment plans?|promise to pay|ptp|late fees?|interest on late|call the customer|follow[- ]up)\b/gi,
  company: /\b(our (?:bank|address|company|policy)|vat (?:id|number)|company policy|office hours|head office|registered office|fiscal year|contacts?|phone|e-?mail)\b/gi,
};

export function collectionScores(text: string): Map<Collection, number> {
  const scores = new Map<Collection, number>();
  for (const c of COLLECTIONS) {
    const n = (text.match(KEYWORDS[c]) ?? []).length;
    if (n > 0) scores.set(c, n);
  }
  return scores;
}

function bestCollection(scores: Map<Collection, number>): Collection | null {
  const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1]);
  if (ranked.length === 0) return null;
  if (ranked[1] && ranked[1][1] === ranked[0]![1]) return null;
  return ranked[0]![0];
}

export function enrichMemories(
  drafts: MemoryDraft[],
  ctx: { partners: PartnerRef[]; segments: SegmentRef[]; collection: Collection | null },
  work: WorkCounter = newWorkCounter(),
): EnrichedMemory[] {
  const matcher = new CustomerMatcher(ctx.partners);
  let dominant: Collection = 'company';
  if (!ctx.collection) {
    const total = new Map<Collection, number>();
    for (const d of drafts) for (const [c, n] of collectionScores(d.text)) total.set(c, (total.get(c) ?? 0) + n);
    dominant = bestCollection(total) ?? [...total.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? 'company';
  }
  return drafts.map((d) => ({
    ...d,
    customer_id: matcher.match(d.text, work),
    segment_id: segmentOf(d.text, ctx.segments),
    collection: ctx.collection ?? bestCollection(collectionScores(d.text)) ?? dominant,
    entities: normaliseEntities(d.text),
  }));
}
