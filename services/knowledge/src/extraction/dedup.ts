/**
 * Duplicate removal among a job's drafts and against what the collection already holds (stored
 * memories, approved articles).
 *
 *  - exact: sha256 of the normalised text (lower case, no diacritics or punctuation) is equal;
 *  - near: MinHash (NUM_HASHES permutations) over word shingles (SHINGLE words; shorter texts use
 *    their whole word sequence), LSH with BANDS bands of ROWS rows proposes candidates, which are
 *    verified by the true Jaccard similarity of the shingle sets (≥ NEAR_THRESHOLD);
 *  - never merged: two texts stating distinct facts (differing numbers, amounts, dates, names or
 *    negations; see text.ts distinctFacts()) are distinct facts even when the wording is nearly equal.
 * Approved articles are compared sentence by sentence (an article holds many facts). Existing
 * candidates win over drafts; among drafts the first in document order is kept.
 */
import { splitMemories } from './memories.js';
import { distinctFacts, facts, normaliseText, sha256, type Facts } from './text.js';
import type { DedupCandidate, DedupResult, MemoryDraft } from './types.js';

export const SHINGLE = 2;
export const NUM_HASHES = 96;
export const BANDS = 32;
export const ROWS = NUM_HASHES / BANDS;
export const NEAR_THRESHOLD = 0.6;

const SEEDS: { a: number; b: number }[] = (() => {
  // deterministic pseudo-random coefficients (xorshift), so hashes are stable across runs
  let x = 0x9e3779b9;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  return Array.from({ length: NUM_HASHES }, () => ({ a: next() | 1, b: next() }));
})();

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** 32-bit finaliser (murmur3 fmix32) so the permutations below mix all bits. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function shingles(text: string): Set<string> {
  const w = normaliseText(text).split(' ').filter(Boolean);
  if (w.length <= SHINGLE) return new Set([w.join(' ')]);
  const out = new Set<string>();
  for (let i = 0; i + SHINGLE <= w.length; i++) out.add(w.slice(i, i + SHINGLE).join(' '));
  return out;
}

/** MinHash signature: per permutation h_i(x) = mix(a_i·x + b_i mod 2^32), the minimum over the shingles. */
export function minhash(sh: Set<string>): number[] {
  const hashes = [...sh].map(fnv1a);
  return SEEDS.map(({ a, b }) => {
    let min = 0xffffffff;
    for (const h of hashes) {
      const v = mix((Math.imul(a, h) + b) >>> 0);
      if (v < min) min = v;
    }
    return min;
  });
}

function bandKeys(sig: number[]): string[] {
  const keys: string[] = [];
  for (let b = 0; b < BANDS; b++) keys.push(`${b}:${sig.slice(b * ROWS, (b + 1) * ROWS).join(',')}`);
  return keys;
}

function exactJaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

interface Entry {
  ref: { kind: 'draft' | 'memory' | 'article'; id: string };
  shingles: Set<string>;
  facts: Facts;
}

/** Is `text` a near duplicate of an indexed entry? Returns the first verified match (by insertion order). */
class LshIndex {
  private readonly entries: Entry[] = [];
  private readonly buckets = new Map<string, number[]>();

  add(ref: Entry['ref'], text: string): void {
    const sh = shingles(text);
    const e = this.entries.push({ ref, shingles: sh, facts: facts(text) }) - 1;
    for (const k of bandKeys(minhash(sh))) {
      const list = this.buckets.get(k);
      if (list) list.push(e);
      else this.buckets.set(k, [e]);
    }
  }

  find(text: string): Entry['ref'] | null {
    const sh = shingles(text);
    const f = facts(text);
    const candidates = new Set<number>();
    for (const k of bandKeys(minhash(sh))) for (const e of this.buckets.get(k) ?? []) candidates.add(e);
    for (const e of [...candidates].sort((x, y) => x - y)) {
      const entry = this.entries[e]!;
      if (distinctFacts(f, entry.facts)) continue;
      if (exactJaccard(sh, entry.shingles) >= NEAR_THRESHOLD) return entry.ref;
    }
    return null;
  }
}

export function dedupeMemories(drafts: MemoryDraft[], existing: DedupCandidate[]): DedupResult {
  const exact = new Map<string, Entry['ref']>();
  const index = new LshIndex();
  for (const c of existing) {
    const units = c.kind === 'article' ? splitMemories([{ page: 1, text: c.text }]).map((m) => m.text) : [c.text];
    if (c.kind === 'article') units.push(c.text);
    for (const u of units) {
      const norm = normaliseText(u);
      if (!norm) continue;
      const ref = { kind: c.kind, id: c.id } as const;
      const h = sha256(norm);
      if (!exact.has(h)) exact.set(h, ref);
      index.add(ref, u);
    }
  }
  const kept: MemoryDraft[] = [];
  const removed: DedupResult['removed'] = [];
  for (const d of drafts) {
    const same = exact.get(d.text_hash);
    if (same) {
      removed.push({ key: d.key, duplicate_of: same, reason: 'exact' });
      continue;
    }
    const near = index.find(d.text);
    if (near) {
      removed.push({ key: d.key, duplicate_of: near, reason: 'near' });
      continue;
    }
    const ref = { kind: 'draft', id: d.key } as const;
    exact.set(d.text_hash, ref);
    index.add(ref, d.text);
    kept.push(d);
  }
  return { kept, removed };
}
