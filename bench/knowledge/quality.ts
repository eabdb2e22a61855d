/**
 * The `quality` section of `npm run bench -- knowledge`: the evaluation set through the offline
 * pipeline (parse → split → dedup → enrich → synthesise), scored against its labels; also the scoring
 * services/knowledge/test/extraction-evaluation.test.ts holds to the quality targets.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { extractPages } from '../../services/knowledge/src/extraction/parse.js';
import { splitMemories } from '../../services/knowledge/src/extraction/memories.js';
import { dedupeMemories } from '../../services/knowledge/src/extraction/dedup.js';
import { enrichMemories } from '../../services/knowledge/src/extraction/enrich.js';
import { synthesizeProposals } from '../../services/knowledge/src/extraction/synthesize.js';
import { words } from '../../services/knowledge/src/extraction/text.js';
import type { DedupCandidate, EnrichedMemory, StoredMemory } from '../../services/knowledge/src/extraction/types.js';
import { FIXTURES_DIR } from '../knowledge-fixtures.js';
import type { Context, LabelFile } from './inputs.js';

export const ITEM_MATCH = 0.6;

function wordSet(s: string): Set<string> {
  return new Set(words(s));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return a.size + b.size === 0 ? 1 : inter / (a.size + b.size - inter);
}

function ratio(n: number, d: number): number | null {
  return d === 0 ? null : Math.round((n / d) * 1000) / 1000;
}

export interface QualityResult {
  documents: { file: string; pages: number; memories: number; kept: number; items: number; matched_items: number }[];
  items: { labelled: number; extracted: number; matched: number; precision: number | null; recall: number | null };
  duplicates: { labelled: number; removed: number; correct: number; precision: number | null; recall: number | null; wrong: { removed: string; duplicate_of: string }[] };
  customer_links: {
    labelled: number;
    linked: number;
    correct: number;
    precision: number | null;
    recall: number | null;
    wrong: { memory: string; linked: string; expected: string | null }[];
    on_unlabelled_memories: { memory: string; linked: string }[];
  };
  knowledge_type_accuracy: number | null;
  proposals: { create: number; revise: number; archive: number };
  unmatched_items: string[];
  unmatched_memories: string[];
}

/** The evaluation set through the offline pipeline, scored against the labels. */
export async function evaluateQuality(): Promise<QualityResult> {
  const ctx = JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'context.json'), 'utf8')) as Context;
  const existing: DedupCandidate[] = [];
  const memoryLabel = new Map<string, string | null>(); // memory key → matched label id
  const keyOwner = new Map<string, string>(); // memory key → label id (for dedup mapping, incl. removed)
  const all: EnrichedMemory[] = [];
  const documents: QualityResult['documents'] = [];
  const labels: LabelFile['items'] = [];
  const labelledPairs = new Set<string>();
  const removedPairs: { removed: string; of: string }[] = [];
  const unmatchedMemories: string[] = [];
  for (const file of ctx.order) {
    const label = JSON.parse(readFileSync(path.join(FIXTURES_DIR, `${file}.labels.json`), 'utf8')) as LabelFile;
    labels.push(...label.items);
    for (const [a, b] of label.duplicate_pairs) labelledPairs.add([a, b].sort().join('~'));
    const pages = await extractPages(new Uint8Array(readFileSync(path.join(FIXTURES_DIR, file))), label.mime);
    const drafts = splitMemories(pages);
    // match every draft (kept or removed) to the document's labels, one-to-one, best pairs first
    const scored: { key: string; id: string; s: number }[] = [];
    for (const d of drafts) {
      const ws = wordSet(d.text);
      for (const it of label.items) {
        const s = jaccard(ws, wordSet(it.text));
        if (s >= ITEM_MATCH) scored.push({ key: d.key, id: it.id, s });
      }
    }
    scored.sort((a, b) => b.s - a.s);
    const usedItems = new Set<string>();
    for (const m of scored) {
      if (keyOwner.has(m.key) || usedItems.has(m.id)) continue;
      keyOwner.set(m.key, m.id);
      usedItems.add(m.id);
    }
    const { kept, removed } = dedupeMemories(drafts, existing);
    for (const r of removed) {
      const owner = keyOwner.get(r.key) ?? `unlabelled:${r.key.slice(0, 8)}`;
      const target = keyOwner.get(r.duplicate_of.id) ?? `unlabelled:${r.duplicate_of.id.slice(0, 8)}`;
      removedPairs.push({ removed: owner, of: target });
    }
    const enriched = enrichMemories(kept, { partners: ctx.partners, segments: ctx.segments, collection: null });
    for (const m of enriched) {
      memoryLabel.set(m.key, keyOwner.get(m.key) ?? null);
      if (!keyOwner.has(m.key)) unmatchedMemories.push(`${file} p${m.page}: ${m.text.slice(0, 100)}`);
      existing.push({ id: m.key, kind: 'memory', text: m.text });
      all.push(m);
    }
    documents.push({
      file,
      pages: pages.length,
      memories: drafts.length,
      kept: kept.length,
      items: label.items.length,
      matched_items: label.items.filter((it) => [...keyOwner.values()].includes(it.id)).length,
    });
  }
  const byId = new Map(labels.map((l) => [l.id, l]));
  // items: a labelled item counts as found when a memory (kept, or removed as a duplicate) matched it
  const matchedIds = new Set(keyOwner.values());
  const matchedKept = all.filter((m) => memoryLabel.get(m.key)).length;
  // a removed memory that duplicates a labelled item is not an extraction error: only kept memories are scored for precision
  const correctPairs = removedPairs.filter((p) => labelledPairs.has([p.removed, p.of].sort().join('~')));
  const foundPairs = new Set(correctPairs.map((p) => [p.removed, p.of].sort().join('~')));
  // customer links
  let linked = 0;
  let correctLinks = 0;
  const wrong: QualityResult['customer_links']['wrong'] = [];
  const onUnlabelled: QualityResult['customer_links']['on_unlabelled_memories'] = [];
  let typeOk = 0;
  for (const m of all) {
    const lid = memoryLabel.get(m.key);
    const item = lid ? byId.get(lid) : undefined;
    if (item && item.knowledge_type === m.knowledge_type) typeOk++;
    if (m.customer_id && !item) onUnlabelled.push({ memory: m.text.slice(0, 80), linked: m.customer_id });
    else if (m.customer_id && item) {
      linked++;
      if (item.customer_id === m.customer_id) correctLinks++;
      else wrong.push({ memory: m.text.slice(0, 80), linked: m.customer_id, expected: item.customer_id });
    }
  }
  const labelledLinks = all.filter((m) => {
    const item = byId.get(memoryLabel.get(m.key) ?? '');
    return item?.customer_id;
  });
  const linkRecall = labelledLinks.length;
  const stored: StoredMemory[] = all.map((m, i) => ({ ...m, id: `m${i + 1}` }));
  const proposals = synthesizeProposals(stored, []);
  return {
    documents,
    items: { labelled: labels.length, extracted: all.length, matched: matchedIds.size, precision: ratio(matchedKept, all.length), recall: ratio(matchedIds.size, labels.length) },
    duplicates: {
      labelled: labelledPairs.size,
      removed: removedPairs.length,
      correct: correctPairs.length,
      precision: ratio(correctPairs.length, removedPairs.length),
      recall: ratio(foundPairs.size, labelledPairs.size),
      wrong: removedPairs.filter((p) => !labelledPairs.has([p.removed, p.of].sort().join('~'))).map((p) => ({ removed: p.removed, duplicate_of: p.of })),
    },
    customer_links: {
      labelled: linkRecall,
      linked,
      correct: correctLinks,
      precision: ratio(correctLinks, linked),
      recall: ratio(labelledLinks.filter((m) => m.customer_id === byId.get(memoryLabel.get(m.key)!)!.customer_id).length, linkRecall),
      wrong,
      on_unlabelled_memories: onUnlabelled,
    },
    knowledge_type_accuracy: ratio(typeOk, matchedKept),
    proposals: {
      create: proposals.filter((p) => p.action === 'create').length,
      revise: proposals.filter((p) => p.action === 'revise').length,
      archive: proposals.filter((p) => p.action === 'archive').length,
    },
    unmatched_items: labels.filter((l) => !matchedIds.has(l.id)).map((l) => `${l.id}: ${l.text.slice(0, 100)}`),
    unmatched_memories: unmatchedMemories,
  };
}
