/**
 * Names of tags and customer segments: what makes two names "the same", and what a name may not hold.
 *
 * Two names are the same when their keys are equal: NFKC-normalized (compatibility forms such as
 * full-width letters or ligatures fold to their plain letters), case-folded, with default-ignorable
 * code points (zero-width space, joiners, soft hyphen, …) and bidirectional marks removed. The key is
 * stored beside the name and a unique index on (organization, key) enforces it under concurrency.
 *
 * Bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069) are refused in
 * names: they make a name display as different text than it holds ("Trojan Source" spoofing).
 */
import { z } from 'zod';

const IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/gu;
const BIDI_OVERRIDE = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * The comparison key of a name. Case folding is approximated by upper- then lower-casing, which maps
 * the characters whose lower case alone does not fold (ß → ss, final sigma ς → σ); NFKC runs again
 * since case mapping can produce unnormalized sequences.
 */
export function nameKey(name: string): string {
  const stripped = name.normalize('NFKC').replace(IGNORABLE, '');
  return stripped.toUpperCase().toLowerCase().normalize('NFKC').replace(IGNORABLE, '').trim();
}

export const NAME_RULES_DOC =
  'Unique per organization after Unicode normalization: NFKC, case folding, zero-width and other invisible characters and ' +
  'bidirectional marks removed (409 on a clash). Bidirectional embedding/override/isolate controls (U+202A–U+202E, U+2066–U+2069) are refused (422); ' +
  'a name of only invisible characters is refused (422).';

/** A name field of `max` characters (after trimming) under the rules above. */
export function nameSchema(max: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !BIDI_OVERRIDE.test(s), 'must not contain bidirectional embedding, override or isolate controls (U+202A–U+202E, U+2066–U+2069)')
    .refine((s) => nameKey(s).length > 0, 'must contain a visible character')
    .describe(`1..${max} characters (trimmed). ${NAME_RULES_DOC}`);
}
