/**
 * The extraction stages grow near-linearly with their input (pure: no stack). Each stage counts its
 * unit of work (a memory scored against a topic group, an article split into statements, a name run
 * compared with a partner name) in the WorkCounter it is given; the same input shape at n and 4n
 * must cost at most about 4 times as much (an all-pairs stage costs 16 times as much).
 */
import { describe, expect, it } from 'vitest';
import { enrichMemories } from '../src/extraction/enrich.js';
import { splitMemories } from '../src/extraction/memories.js';
import { groupMemories, synthesizeProposals } from '../src/extraction/synthesize.js';
import { synthesisProposals } from '../src/extraction/synthesis.js';
import { newWorkCounter, type ArticleRef, type PartnerRef, type StoredMemory } from '../src/extraction/types.js';

/** 32-bit mixer (murmur3 fmix32): deterministic, well-spread letters. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A deterministic pseudo-word of 8 letters per index and salt (like the varied names of a real ledger). */
function word(i: number, salt: number): string {
  let out = '';
  for (let k = 0; k < 8; k++) out += String.fromCharCode(97 + (mix(i * 131 + salt * 7919 + k * 31337) % 26));
  return out;
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** n declarative memories, each on a topic of its own: one word shared with the next memory, three of its own, one every memory has. */
function memories(n: number): StoredMemory[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `The ${word(i, 1)} ${word(i, 2)} ${word(i, 8)} ${word(i + 1, 1)} invoice.`;
    return {
      id: `m${i}`,
      key: `k${i}`,
      text,
      excerpt: text,
      page: 1,
      start: i,
      end: i + text.length,
      knowledge_type: 'declarative' as const,
      text_hash: `h${i}`,
      customer_id: null,
      segment_id: null,
      collection: 'collections' as const,
      entities: { amounts: [], percentages: [], day_counts: [], dates: [] },
    };
  });
}

/** n articles, each sharing one word with the memory of its index. */
function articles(n: number): ArticleRef[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `a${i}`,
    collection: 'collections' as const,
    title: `Article ${i}`,
    content: `The ${word(i, 1)} ${word(i, 4)} procedure. Reminders for ${word(i, 5)} ${word(i, 10)}.`,
    customer_id: null,
    segment_id: null,
    source_memory_ids: [],
  }));
}

function partners(n: number): PartnerRef[] {
  return Array.from({ length: n }, (_, i) => ({ id: `p${i}`, name: `${cap(word(i, 6))} ${cap(word(i, 7))} GmbH`, legal_name: null, account_number: null }));
}

describe('extraction stages scale near-linearly', () => {
  it('groups memories through an index of their topic words and phrases, not against every group', () => {
    const cost = (n: number) => {
      const work = newWorkCounter();
      const groups = groupMemories(memories(n), work);
      expect(groups).toHaveLength(n); // every memory is a topic of its own: the worst case of an all-pairs scan
      return work.comparisons;
    };
    const small = cost(200);
    const large = cost(800);
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(6);
  });

  it('splits each article into statements once, however many groups are compared with it', () => {
    const run = (n: number) => {
      const work = newWorkCounter();
      synthesizeProposals(memories(n), articles(n), work);
      return work;
    };
    const small = run(100);
    const large = run(400);
    expect(small.articleSplits).toBe(100);
    expect(large.articleSplits).toBe(400);
    expect(large.comparisons / small.comparisons).toBeLessThan(6);
  });

  it('finds overlapping articles of a synthesis through a word index, not by comparing all pairs', () => {
    const run = (n: number) => {
      const work = newWorkCounter();
      const own = articles(n);
      // two near copies of the first article merge; the rest overlap with nothing
      const copy = { ...own[0]!, id: 'copy', content: `${own[0]!.content} Reminders are logged.` };
      const proposals = synthesisProposals([...own, copy], [], work);
      expect(proposals.filter((p) => p.action === 'archive').map((p) => p.article_id)).toEqual(['a0']);
      expect(work.articleSplits).toBeLessThanOrEqual(2 * (n + 1));
      return work.comparisons;
    };
    const small = run(100);
    const large = run(400);
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(6);
  });

  it('links customers through an index of partner name tokens and trigrams, not memories × partners', () => {
    const run = (n: number) => {
      const ps = partners(n);
      const drafts = splitMemories(ps.map((p, i) => ({ page: i + 1, text: `${p.name} pays by wire transfer within 30 days.` })));
      const work = newWorkCounter();
      const enriched = enrichMemories(drafts, { partners: ps, segments: [], collection: 'payments' }, work);
      // the index changes the cost, never the answer: each memory names its own customer
      expect(enriched.map((m) => m.customer_id)).toEqual(ps.map((p) => p.id));
      return work.comparisons;
    };
    const small = run(150);
    const large = run(600);
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(6);
  });
});
