/**
 * Synthesis extraction (pure): re-reads a collection's approved articles and pending memories.
 *  1. Merges: approved articles of the same scope covering one topic (content-word Jaccard ≥
 *     MERGE_THRESHOLD; found through a prefix-filtered word index, not by comparing all pairs) — the longest (then the smallest id) is revised with the merged content (its
 *     sentences, then the others' sentences it lacks), the others are archived. The merge proposals'
 *     source excerpts are the articles' sentences, with memory_id the article's first source memory
 *     (or the article id when it has none) and page 1. Articles carry no knowledge type: merges are
 *     proposed as declarative.
 *  2. The pending memories are then synthesised against the remaining articles (synthesizeProposals:
 *     creates, revisions and archives of superseded articles).
 */
import { splitMemories } from './memories.js';
import { synthesizeProposals } from './synthesize.js';
import { contentWords, jaccard, normaliseText, sha256 } from './text.js';
import { newWorkCounter, type ArticleRef, type ProposalDraft, type StoredMemory, type WorkCounter } from './types.js';

export const MERGE_THRESHOLD = 0.5;

function scopeKey(a: ArticleRef): string {
  return `${a.collection}|${a.customer_id ?? ''}|${a.segment_id ?? ''}`;
}

/**
 * Articles of one scope that may overlap: two word sets with Jaccard ≥ MERGE_THRESHOLD share a word
 * among the |x| − ⌈t·|x|⌉ + 1 rarest of each (prefix filtering, words ordered by how many articles hold
 * them), so each article is indexed under those words only and meets just the articles sharing one.
 */
function overlapCandidates(sorted: ArticleRef[], words: Map<string, Set<string>>): Map<string, Set<string>> {
  const df = new Map<string, number>();
  for (const w of words.values()) for (const x of w) df.set(x, (df.get(x) ?? 0) + 1);
  // articles without content words (Jaccard 1 with each other) meet under the empty word
  const prefix = (w: Set<string>) =>
    w.size === 0 ? [''] : [...w].sort((a, b) => df.get(a)! - df.get(b)! || a.localeCompare(b)).slice(0, w.size - Math.ceil(MERGE_THRESHOLD * w.size) + 1);
  const byWord = new Map<string, string[]>();
  const out = new Map<string, Set<string>>();
  for (const a of sorted) {
    const key = `${scopeKey(a)}|`;
    const found = new Set<string>();
    for (const x of prefix(words.get(a.id)!)) {
      const list = byWord.get(key + x) ?? [];
      for (const o of list) found.add(o);
      list.push(a.id);
      byWord.set(key + x, list);
    }
    out.set(a.id, found);
    for (const o of found) out.get(o)!.add(a.id);
  }
  return out;
}

export function synthesisProposals(articles: ArticleRef[], memories: StoredMemory[], work: WorkCounter = newWorkCounter()): ProposalDraft[] {
  const sorted = [...articles].sort((a, b) => b.content.length - a.content.length || a.id.localeCompare(b.id));
  const words = new Map(sorted.map((a) => [a.id, new Set(contentWords(`${a.title} ${a.content}`))]));
  const units = new Map<string, ReturnType<typeof splitMemories>>();
  const unitsOf = (a: ArticleRef) => {
    let u = units.get(a.id);
    if (!u) {
      work.articleSplits++;
      units.set(a.id, (u = splitMemories([{ page: 1, text: a.content }])));
    }
    return u;
  };
  const candidates = overlapCandidates(sorted, words);
  const merged = new Set<string>();
  const proposals: ProposalDraft[] = [];
  for (const a of sorted) {
    if (merged.has(a.id)) continue;
    const near = candidates.get(a.id)!;
    work.comparisons += near.size;
    const others = sorted.filter((o) => near.has(o.id) && !merged.has(o.id) && jaccard(words.get(a.id)!, words.get(o.id)!) >= MERGE_THRESHOLD);
    if (others.length === 0) continue;
    merged.add(a.id);
    for (const o of others) merged.add(o.id);
    const texts = unitsOf(a).map((m) => m.text);
    const seen = new Set(texts.map(normaliseText));
    const excerpts: ProposalDraft['source_excerpts'] = [];
    for (const o of others) {
      for (const u of unitsOf(o)) {
        const n = normaliseText(u.text);
        if (seen.has(n)) continue;
        seen.add(n);
        texts.push(u.text);
        excerpts.push({ text: u.excerpt, memory_id: o.source_memory_ids[0] ?? o.id, page: 1 });
      }
    }
    const ids = [a.id, ...others.map((o) => o.id)];
    proposals.push({
      key: sha256(`merge|${a.id}|${ids.sort().join(',')}`),
      action: 'revise',
      article_id: a.id,
      collection: a.collection,
      knowledge_type: 'declarative',
      customer_id: a.customer_id,
      segment_id: a.segment_id,
      title: a.title,
      description: texts[0] ?? a.title,
      content: texts.join('\n\n'),
      source_excerpts: excerpts,
    });
    for (const o of others) {
      proposals.push({
        key: sha256(`merge-archive|${o.id}|${a.id}`),
        action: 'archive',
        article_id: o.id,
        collection: o.collection,
        knowledge_type: 'declarative',
        customer_id: o.customer_id,
        segment_id: o.segment_id,
        title: o.title,
        description: unitsOf(o)[0]?.text ?? o.title,
        content: o.content,
        source_excerpts: unitsOf(o).map((u) => ({ text: u.excerpt, memory_id: o.source_memory_ids[0] ?? o.id, page: 1 })),
      });
    }
  }
  const remaining = articles.filter((a) => !merged.has(a.id));
  return proposals.concat(synthesizeProposals(memories, remaining, work));
}
