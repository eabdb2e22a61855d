/**
 * Text helpers shared by the pure extraction modules: normalisation, hashing, word tokens and the
 * facts of a statement (its numbers, names and negations) that tell distinct facts apart.
 */
import { createHash } from 'node:crypto';

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Lower case, no diacritics, punctuation to spaces (decimal points and separators inside numbers kept), single spaces. */
export function normaliseText(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/(\d)[.,](?=\d)/g, '$1\u2024')
    .replace(/[^a-z0-9%$€£\u2024]+/g, ' ')
    .replace(/\u2024/g, '.')
    .trim();
}

/** Words of the normalised text. */
export function words(s: string): string[] {
  const n = normaliseText(s);
  return n ? n.split(' ') : [];
}

export const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for from with without into onto over under as is are was were be been being ' +
    'it its this that these those there their they them we our us you your he she his her i me my not no do does did done can could ' +
    'should would will shall may might must have has had than so such also any all each every per via about after before within up ' +
    'out only when where which who whom whose what while who how more most other some same very just please'
  ).split(' '),
);

/** Crude stem: common English suffixes off (enough for topic overlap, not for display). */
export function stem(w: string): string {
  if (w.length <= 4) return w;
  return w.replace(/(ing|edly|ed|ies|es|s|ly)$/, (m) => (m === 'ies' ? 'y' : '')) || w;
}

/** Content words (stopwords and pure numbers out, stemmed). */
export function contentWords(s: string): string[] {
  return words(s)
    .filter((w) => !STOPWORDS.has(w) && !/^[\d.%$€£]+$/.test(w) && w.length > 1)
    .map(stem);
}

export function jaccard<T>(a: Set<T>, b: Set<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'cannot', 'without', 'nor', 'dont', 'doesnt', 'isnt', 'arent', 'wont', 'except', 'unless']);

/** What must agree for two statements to be the same fact (see distinctFacts). */
export interface Facts {
  numbers: Set<string>;
  names: Set<string>;
  negations: Set<string>;
  words: Set<string>;
}

export function facts(s: string): Facts {
  const numbers = new Set((s.match(/\d+(?:[.,]\d+)*/g) ?? []).map((n) => n.replace(/[.,](?=\d{3}\b)/g, '').replace(',', '.')));
  const names = new Set<string>();
  for (const m of s.matchAll(/[A-Z][A-Za-z0-9&'-]*/g)) {
    const w = m[0].toLowerCase().replace(/'s$/, '');
    if (!STOPWORDS.has(w)) names.add(w);
  }
  const ws = words(s.replace(/n't\b/g, ' not'));
  return { numbers, names, negations: new Set(ws.filter((w) => NEGATIONS.has(w))), words: new Set(ws) };
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/**
 * Two statements are distinct facts, whatever their wording overlap, when their numbers (amounts,
 * percentages, day counts, dates, account numbers) differ, their negations differ, or a capitalised
 * word of one (a name of a customer, person, product) does not occur in the other at all.
 */
export function distinctFacts(a: Facts, b: Facts): boolean {
  if (!sameSet(a.numbers, b.numbers) || !sameSet(a.negations, b.negations)) return true;
  for (const n of a.names) if (!b.words.has(n)) return true;
  for (const n of b.names) if (!a.words.has(n)) return true;
  return false;
}
