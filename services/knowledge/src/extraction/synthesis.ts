/**
 * Synthesis extraction (pure): re-reads a collection's approved articles and pending memories.
 *  1. Merges: approved articles of the same scope covering one topic (content-word Jaccard ≥
 *     MERGE_THRESHOLD) — the longest (then the smallest id) is revised with the merged content (its
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
import type { ArticleRef, ProposalDraft, StoredMemory } from './types.js';

export const MERGE_THRESHOLD = 0.5;

function scopeKey(a: ArticleRef): string {
  return `${a.collection}|${a.customer_id ?? ''}|${a.segment_id ?? ''}`;
}

export function synthesisProposals(articles: ArticleRef[], memories: StoredMemory[]): ProposalDraft[] {
  const sorted = [...articles].sort((a, b) => b.content.length - a.content.length || a.id.localeCompare(b.id));
  const words = new Map(sorted.map((a) => [a.id, new Set(contentWords(`${a.title} ${a.content}`))]));
  const merged = new Set<string>();
  const proposals: ProposalDraft[] = [];
  for (const a of sorted) {
    if (merged.has(a.id)) continue;
    const others = sorted.filter((o) => o.id !== a.id && !merged.has(o.id) && scopeKey(o) === scopeKey(a) && jaccard(words.get(a.id)!, words.get(o.id)!) >= MERGE_THRESHOLD);
    if (others.length === 0) continue;
    merged.add(a.id);
    for (const o of others) merged.add(o.id);
    const units = splitMemories([{ page: 1, text: a.content }]).map((m) => m.text);
    const seen = new Set(units.map(normaliseText));
    const excerpts: ProposalDraft['source_excerpts'] = [];
    for (const o of others) {
      for (const u of splitMemories([{ page: 1, text: o.content }])) {
        const n = normaliseText(u.text);
        if (seen.has(n)) continue;
        seen.add(n);
        units.push(u.text);
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
      description: units[0] ?? a.title,
      content: units.join('\n\n'),
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
        description: splitMemories([{ page: 1, text: o.content }])[0]?.text ?? o.title,
        content: o.content,
        source_excerpts: splitMemories([{ page: 1, text: o.content }]).map((u) => ({ text: u.excerpt, memory_id: o.source_memory_ids[0] ?? o.id, page: 1 })),
      });
    }
  }
  const remaining = articles.filter((a) => !merged.has(a.id));
  return proposals.concat(synthesizeProposals(memories, remaining));
}
