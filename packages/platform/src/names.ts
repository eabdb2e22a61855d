/**
 * Company-name comparison shared by cash-app's payer matching and the knowledge extraction's
 * customer linking (the same ambiguity rules rest on the same similarity).
 */

/** Legal forms and filler words left out of a company name's tokens. */
export const LEGAL_FORMS: ReadonlySet<string> = new Set([
  'gmbh', 'mbh', 'ag', 'kg', 'kgaa', 'ohg', 'gbr', 'ug', 'ev', 'se', 'co', 'cie', 'inc', 'incorporated', 'corp', 'corporation',
  'ltd', 'limited', 'llc', 'llp', 'lp', 'plc', 'company', 'sa', 'sas', 'sarl', 'srl', 'spa', 'bv', 'nv', 'oy', 'oyj', 'ab', 'as',
  'asa', 'aps', 'pty', 'pte', 'kk', 'sl', 'sp', 'zoo', 'the', 'und', 'and', 'ek',
]);

/** Initials written with dots ("e.K.", "B.V.", "S.A.R.L.", "A.B.C.") as one word, so that a form written so is the form ("ek", "bv", "sarl"). */
export function joinInitials(name: string): string {
  return name.replace(/(?<![\p{L}\p{N}])\p{L}(?:\.\s?\p{L})+\.?(?![\p{L}\p{N}])/gu, (m) => m.replace(/[.\s]/g, ''));
}

/** Lower-case words of a company name without punctuation, diacritics and legal forms ("ACME Handels-GmbH & Co. KG" → ["acme","handels"]). */
export function nameTokens(name: string): string[] {
  const words = joinInitials(name)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' ')
    .replace(/[^a-z0-9]+/g, ' ')
    .split(' ')
    .filter((w) => w.length > 0);
  const kept = words.filter((w) => !LEGAL_FORMS.has(w));
  return kept.length > 0 ? kept : words;
}

/** The character trigrams of a normalized name (padded: word starts weigh more). */
export function nameTrigrams(s: string): Set<string> {
  const padded = `  ${s} `;
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3));
  return grams;
}

/** A name's tokens and trigrams, computed once when one name is compared with many. */
export interface NameShape {
  tokens: Set<string>;
  grams: Set<string>;
}

export function nameShape(tokens: readonly string[]): NameShape {
  return { tokens: new Set(tokens), grams: nameTrigrams(tokens.join(' ')) };
}

/** Similarity of two name shapes in 0..1: the larger of token Jaccard and trigram Dice. */
export function shapeSimilarity(a: NameShape, b: NameShape): number {
  if (a.tokens.size === 0 || b.tokens.size === 0) return 0;
  let inter = 0;
  for (const t of a.tokens) if (b.tokens.has(t)) inter++;
  const jaccard = inter / (a.tokens.size + b.tokens.size - inter);
  let common = 0;
  for (const g of a.grams) if (b.grams.has(g)) common++;
  return Math.max(jaccard, (2 * common) / (a.grams.size + b.grams.size));
}

/** Similarity of two company names in 0..1: the larger of token Jaccard and trigram Dice of the normalized names. */
export function nameSimilarity(a: string, b: string): number {
  return shapeSimilarity(nameShape(nameTokens(a)), nameShape(nameTokens(b)));
}
