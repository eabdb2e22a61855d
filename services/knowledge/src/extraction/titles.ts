/**
 * Titles and descriptions of synthesized proposals (pure): phrases and sentences copied from the
 * source memories, never invented text.
 */
import { sentenceBounds } from './memories.js';
import { contentWords, jaccard, STOPWORDS } from './text.js';

/**
 * The key phrase of texts: a run of 2–4 words standing in one of them (no punctuation inside, no
 * number, not starting or ending with a stopword, not cutting through a capitalised name), the most
 * frequent across the texts, then the one with the most content words (a phrase opening its clause
 * counts two more), then the first. Only its first letter may be capitalised.
 */
export function keyPhrase(texts: string[]): string {
  const counts = new Map<string, { n: number; display: string; first: number; bonus: number }>();
  let order = 0;
  for (const t of texts) {
    // phrases never cross punctuation or line breaks, and are displayed as they stand in the text
    for (const segment of t.split(/[.,;:!?()|\n"]+(?:\s|$)|[;:|()\n"]/)) {
      const tokens = [...segment.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'&.-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu)].map((m) => ({ w: m[0], a: m.index!, b: m.index! + m[0].length }));
      for (let n = 2; n <= 4; n++) {
        for (let i = 0; i + n <= tokens.length; i++) {
          const win = tokens.slice(i, i + n);
          const lw = win.map((x) => x.w.toLowerCase());
          if (STOPWORDS.has(lw[0]!) || STOPWORDS.has(lw[n - 1]!)) continue;
          if (lw.some((w) => /\d/.test(w))) continue;
          // never cut through a name ("Acme Foods")
          const cap = (x: { w: string } | undefined) => !!x && /^\p{Lu}/u.test(x.w);
          if ((cap(tokens[i - 1]) && cap(win[0])) || (cap(tokens[i + n]) && cap(win[n - 1]))) continue;
          const key = lw.join(' ');
          const firstContent = tokens.findIndex((x) => !STOPWORDS.has(x.w.toLowerCase()));
          const bonus = lw.filter((w) => !STOPWORDS.has(w)).length + (i === firstContent ? 2 : 0);
          const e = counts.get(key) ?? { n: 0, display: segment.slice(win[0]!.a, win[n - 1]!.b), first: order++, bonus };
          e.n++;
          counts.set(key, e);
        }
      }
    }
  }
  const score = (e: { n: number; bonus: number }) => e.n * 10 + e.bonus;
  const best = [...counts.values()].sort((a, b) => score(b) - score(a) || a.first - b.first)[0];
  const phrase = best ? best.display : (texts[0] ?? '').split(/\s+/).slice(0, 6).join(' ');
  return phrase.charAt(0).toUpperCase() + phrase.slice(1);
}

/** The sentence sharing the most content words with the others (the first one on ties), at most 300 characters (cut at a word). */
export function centralSentence(texts: string[]): string {
  const sentences = texts.flatMap((t) => sentenceBounds(t.replace(/\s+/g, ' ')).map(([a, b]) => t.replace(/\s+/g, ' ').slice(a, b)));
  if (sentences.length === 0) return '';
  const all = sentences.map((s) => new Set(contentWords(s)));
  let best = 0;
  let bestScore = -1;
  all.forEach((s, i) => {
    let score = 0;
    all.forEach((o, j) => {
      if (i !== j) score += jaccard(s, o);
    });
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  });
  const s = sentences[best]!;
  if (s.length <= 300) return s;
  return s.slice(0, s.lastIndexOf(' ', 300));
}

/** The first line of a list or table row (at most 300 characters, cut at a word). */
export function firstLine(text: string): string {
  const l = text.split('\n')[0]!.trim();
  return l.length <= 300 ? l : l.slice(0, l.lastIndexOf(' ', 300));
}
