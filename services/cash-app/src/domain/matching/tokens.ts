/**
 * Document-number recognition: the keys under which an open document is found (its number and
 * reference in several spellings), and the keys a deposit's texts offer (remittance information,
 * bank reference, end-to-end id), with amounts and dates taken out first.
 *
 * Spellings recognized (the issue's §3 numbering series):
 *  - exact, ignoring case and punctuation: `RE-2026-004711` = `re2026004711` = `RE 2026 004711`;
 *  - slash-separated series as a whole: `EU/2026/004711`;
 *  - zero-dropped numeric groups: `RE-2026-4711` for `RE-2026-004711` (key `RE|2026|4711`);
 *  - prefix dropped: `2026004711` or `2026-4711` for `RE-2026-004711` (digits of a prefixed number,
 *    six or more, so a short run does not stand for a whole number);
 *  - a one-digit typo, only looked for among invoices whose amount agrees (see candidates.ts).
 */
import type { MatchTransaction } from '../../domain-types/matching.js';

/** Upper-case, letters and digits only: "inv-9000001" → "INV9000001". */
export function normalizeKey(value: string): string {
  return plain(value).toUpperCase().replace(/[^A-Z0-9]/g, '');
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** Without diacritics ("Müller" → "Muller"); ASCII text as it is. */
function plain(value: string): string {
  return ASCII.test(value) ? value : value.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
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

/**
 * The looser keys of a document number that has letters or several groups ("RE-2026-004711"):
 * its letter/digit groups with leading zeros dropped ("RE|2026|4711"), its numeric groups alone
 * ("2026|4711") and its digits alone ("#2026004711", six digits or more). A bare number of six
 * digits or more has only the last, to be found as a prefixed number's digits.
 */
export function variantKeys(value: string | null, forDocument = false): string[] {
  if (!value) return [];
  if (DIGITS.test(value)) return !forDocument && value.length >= 6 ? [`#${value}`] : [];
  const groups = groupsOf(value);
  if (groups.length === 0) return [];
  const numeric = groups.filter((g) => /^\d/.test(g));
  // a bare number is looked up as the digits of a prefixed one ("202601766" for RE-2026-01766)
  // (a bare document number needs no such key: its exact key is its digits)
  if (groups.length === 1 && numeric.length === 1) return !forDocument && /^\d{6,}$/.test(normalizeKey(value)) ? [`#${normalizeKey(value)}`] : [];
  const keys = new Set<string>();
  if (groups.length > 1) keys.add(groups.join('|'));
  if (numeric.length > 1) keys.add(numeric.join('|'));
  const digits = value.replace(/\D/g, '');
  if (digits.length >= 6 && numeric.length > 0) keys.add(`#${digits}`);
  return [...keys];
}

const DIGITS = /^\d+$/;

/** Letter and digit groups, upper-case, leading zeros of digit groups dropped: "EU/2026/004711" → ["EU","2026","4711"]. */
function groupsOf(value: string): string[] {
  const norm = plain(value).toUpperCase();
  return (norm.match(/[A-Z]+|\d+/g) ?? []).map((g) => (/^\d/.test(g) ? g.replace(/^0+(?=\d)/, '') : g));
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
const AMOUNT_SHAPE_RE = new RegExp(`^${AMOUNT}$`, 'u');
const CURRENCY_AMOUNT_RE = new RegExp(
  String.raw`(${CURRENCY})\s?([+-]?\d(?:[\d.,'’]*\d)?)${AFTER}|${BEFORE}([+-]?\d(?:[\d.,'’]*\d)?)\s?(${CURRENCY})`,
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
 * currency symbol is an amount whatever its shape ("1190 €"). A number next to `currency` (the
 * deposit's ISO code) is an amount when it has an amount's shape (decimals or thousands groups)
 * or equals `amount` (the deposit's amount) — so "Invoice 515871 USD 970.00" keeps the invoice
 * number 515871 while "EUR 1190" on a 1190.00 deposit is the amount; without a known `amount`,
 * any number next to the code is taken for an amount. Other three-letter words are not currencies.
 */
export function stripAmountsAndDates(text: string, currency?: string, amount?: string): string {
  const code = currency?.trim().toUpperCase();
  const isAmount = (mark: string, num: string): boolean => {
    if (mark.length === 1) return true;
    if (code === undefined || mark !== code) return false;
    if (amount === undefined || AMOUNT_SHAPE_RE.test(num.replace(/^[+-]/, ''))) return true;
    return sameNumber(num, amount);
  };
  return text
    .replace(DATE_RE, (m, y: string | undefined, _s1, mo: string | undefined, d: string | undefined, a: string | undefined, _s2, b: string | undefined) =>
      (y ? isDate(Number(d), Number(mo)) && Number(mo) <= 12 : isDate(Number(a), Number(b))) ? ' ' : m,
    )
    .replace(CURRENCY_AMOUNT_RE, (m, before: string | undefined, n1: string | undefined, n2: string | undefined, after: string | undefined) =>
      isAmount(before ?? after ?? '', n1 ?? n2 ?? '') ? ' ' : m,
    )
    .replace(AMOUNT_RE, ' ');
}

/** "1190" and "1190.00" are the same number; anything unparsable is not. */
function sameNumber(text: string, amount: string): boolean {
  const a = Number(text.replace(/[^\d+-]/g, ''));
  const b = Number(amount);
  return Number.isFinite(a) && Number.isFinite(b) && a === b;
}

/**
 * One place of a deposit's texts that may hold a document number: a word, or a run of adjacent
 * words (a number written with blanks between its groups), with its position so that a shorter
 * place inside a longer one that names a document is not read as a second number.
 */
export class KeyGroup {
  private variantList: string[] | null = null;
  private partList: string[] | null = null;

  constructor(
    readonly text: number,
    readonly from: number,
    readonly to: number,
    /** the word or joined run as written */
    private readonly raw: string,
    /** looked up among documents' exact keys */
    readonly exact: string[],
    private readonly word: boolean,
  ) {}

  /** looked up among documents' looser keys, most specific first, when no exact key names a document (computed on first use) */
  get variants(): string[] {
    return (this.variantList ??= variantKeys(this.raw));
  }

  /** parts of a word (split at / - . # _, digit runs), looked up among exact keys when nothing else names a document (computed on first use) */
  get parts(): string[] {
    if (!this.partList && DIGITS.test(this.raw)) this.partList = [];
    if (!this.partList) {
      const parts = new Set<string>();
      if (this.word) {
        for (const part of this.raw.split(/[-./#_+*=]+/)) if (part !== this.raw) for (const k of searchKeys(part)) parts.add(k);
        for (const run of this.raw.match(/\d{3,}/g) ?? []) for (const k of searchKeys(run)) parts.add(k);
      }
      this.partList = [...parts].filter((k) => !this.exact.includes(k));
    }
    return this.partList;
  }
}

/** A text's document keys long enough to search by: three characters or more, a digit among them. */
function searchKeys(raw: string): string[] {
  return documentKeys(raw).filter((k) => k.length >= 3 && /\d/.test(k));
}

/** What a deposit's texts offer for document lookup. */
export interface TextKeys {
  groups: KeyGroup[];
  /** the plain token list (words and parts, in text order) for the older token API */
  list: string[];
}

/**
 * Invoice-number-like tokens of free text: every whitespace/separator-delimited word that contains a
 * digit (normalized, e.g. "INV-9000001" → "INV9000001", "EU/2026/004711" → "EU2026004711"), its
 * digit runs of 3+ digits ("RE9000001" → "9000001"), and its parts split at / - . # _
 * ("INV-9000001" → "9000001"). Numeric tokens are also given without leading zeros. Words without
 * digits are ignored (they are names, not numbers). Amounts and dates are taken out first.
 */
export function extractTokens(...texts: (string | null | undefined)[]): string[] {
  return keysOf(texts).list;
}

/** The invoice-number-like tokens of a deposit: its remittance information and references, amounts in its currency taken out. */
export function transactionTokens(
  tx: Pick<MatchTransaction, 'remittance_information' | 'bank_reference' | 'end_to_end_id' | 'currency'> & { amount?: string },
): string[] {
  return keysOf([tx.remittance_information, tx.bank_reference, tx.end_to_end_id], tx.currency, tx.amount).list;
}

/** The lookup keys of a deposit (see TextKeys). */
export function transactionKeys(tx: Pick<MatchTransaction, 'remittance_information' | 'bank_reference' | 'end_to_end_id' | 'currency' | 'amount'>): TextKeys {
  return keysOf([tx.remittance_information, tx.bank_reference, tx.end_to_end_id], tx.currency, tx.amount);
}

/** Blanks and list separators ("RE-1+RE-2", "RE-1 & RE-2"): a document number never holds one. */
const WORD_SPLIT = /[\s,;:\\|()[\]{}<>"'+&]+/;
const PREFIX_RE = /^[A-Z]{1,4}$/;

function keysOf(texts: readonly (string | null | undefined)[], currency?: string, amount?: string): TextKeys {
  const groups: KeyGroup[] = [];
  const list = new Set<string>();
  const joinable = (w: string) => /^\d+$/.test(w) || PREFIX_RE.test(w.toUpperCase());
  texts.forEach((text, t) => {
    if (!text) return;
    const words = stripAmountsAndDates(text, currency, amount).split(WORD_SPLIT).filter((w) => w.length > 0);
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      if (/\d/.test(word)) groups.push(new KeyGroup(t, i, i, word, searchKeys(word), true));
      // a number written with blanks between its groups ("RE 2026 004711", "EU 2026 4711")
      let joined = word;
      for (let j = i + 1; j < Math.min(words.length, i + 3); j++) {
        if (!joinable(words[j - 1]!) || !joinable(words[j]!)) break;
        joined = `${joined}-${words[j]!}`;
        if (!/\d/.test(joined)) continue;
        groups.push(new KeyGroup(t, i, j, joined, searchKeys(joined), false));
      }
    }
  });
  return {
    groups,
    get list() {
      if (list.size === 0) for (const g of groups) if (g.from === g.to) for (const k of [...g.exact, ...g.parts]) list.add(k);
      return [...list];
    },
  };
}

/** Two document keys differ by one digit substituted or two adjacent digits swapped (same length). */
export function oneDigitTypo(a: string, b: string): boolean {
  if (a.length !== b.length || a === b || a.length < 5) return false;
  let first = -1;
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      if (count === 0) first = i;
      count++;
      if (count > 2) return false;
    }
  }
  if (count === 1) return /\d/.test(a[first]!) && /\d/.test(b[first]!);
  // a transposition of two adjacent digits
  return count === 2 && a[first] === b[first + 1] && a[first + 1] === b[first] && /\d\d/.test(a.slice(first, first + 2));
}
