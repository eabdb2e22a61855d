/**
 * Synthesis (pure): stored memories → knowledge-item proposals.
 *
 * Grouping: memories of one scope (collection, customer, segment) are grouped by topic. A procedural
 * memory (a whole step list) is an item of its own; document rows sharing their column headers (one
 * table, one contact list) form one item; declarative memories join the group they share a
 * distinctive topic phrase with (two adjacent content words, e.g. "credit limit", found in at most
 * MAX_TOPIC_SHARE of the job's memories) or whose content words they share most (Jaccard ≥
 * TOPIC_THRESHOLD), else start a new one.
 *
 * Action per item, against the approved articles of the same collection and scope:
 *  - `archive` for an article when every one of its sources is contradicted or superseded by the new
 *    memories: a source is superseded by a memory on the same statement (content-word Jaccard ≥
 *    SUPERSEDE_THRESHOLD) whose numbers, names or negations differ. The sources are the article's
 *    `source_memory_ids` found among the memories given, else its content's sentences. The item that
 *    superseded it is then proposed as `create`.
 *  - `revise` when an article covers the topic (content-word Jaccard with the article ≥
 *    COVER_THRESHOLD, or one of its sentences superseded): the proposal's content is the article's
 *    content with superseded sentences replaced and the new statements appended (duplicates left out).
 *  - `create` otherwise.
 * Title: the key phrase of the sources (keyPhrase; of a procedure's introducing line when it has one); description: the most central sentence of
 * declarative sources, the first line of a procedure or table row — both copied from the sources.
 */
import type { Collection } from '../domain/collections.js';
import { sentenceBounds, splitMemories } from './memories.js';
import { contentWords, distinctFacts, facts, jaccard, normaliseText, sha256, STOPWORDS } from './text.js';
import type { ArticleRef, KnowledgeType, ProposalDraft, StoredMemory } from './types.js';

export const TOPIC_THRESHOLD = 0.3;
export const COVER_THRESHOLD = 0.35;
export const SUPERSEDE_THRESHOLD = 0.5;
/** a topic phrase shared by more than this share of the job's memories does not group them */
export const MAX_TOPIC_SHARE = 0.1;

interface Group {
  collection: Collection;
  customer_id: string | null;
  segment_id: string | null;
  knowledge_type: KnowledgeType;
  memories: StoredMemory[];
  topic: Set<string>;
  pairs: Set<string>;
}

function scopeKey(m: { collection: Collection; customer_id: string | null; segment_id: string | null }): string {
  return `${m.collection}|${m.customer_id ?? ''}|${m.segment_id ?? ''}`;
}

function headerSet(m: StoredMemory): string {
  return [...m.text.matchAll(/(?:^|;\s*)([^:;]{1,40}):/g)].map((x) => x[1]!.trim().toLowerCase()).join('|');
}

/** Adjacent content-word pairs ("credit limit", "payment term"): the topic phrases of a text. */
function topicPairs(text: string): string[] {
  const w = contentWords(text);
  const out: string[] = [];
  for (let i = 0; i + 1 < w.length; i++) out.push(`${w[i]} ${w[i + 1]}`);
  return out;
}

export function groupMemories(memories: StoredMemory[]): Group[] {
  // topic phrases shared by few memories of the job are distinctive; common ones ("credit manager") are not
  const df = new Map<string, number>();
  for (const m of memories) for (const p of new Set(topicPairs(m.text))) df.set(p, (df.get(p) ?? 0) + 1);
  const maxDf = Math.max(2, Math.floor(memories.length * MAX_TOPIC_SHARE));
  const distinctive = (m: StoredMemory) => new Set(topicPairs(m.text).filter((p) => df.get(p)! <= maxDf));
  const groups: Group[] = [];
  const byScope = new Map<string, Group[]>();
  const sorted = [...memories].sort((a, b) => a.page - b.page || a.start - b.start || a.id.localeCompare(b.id));
  for (const m of sorted) {
    const sk = scopeKey(m);
    const scoped = byScope.get(sk) ?? [];
    byScope.set(sk, scoped);
    const topic = new Set(contentWords(m.text));
    let target: Group | undefined;
    if (m.knowledge_type === 'document') {
      const hs = headerSet(m);
      target = hs ? scoped.find((g) => g.knowledge_type === 'document' && headerSet(g.memories[0]!) === hs) : undefined;
    } else if (m.knowledge_type === 'declarative') {
      let best = TOPIC_THRESHOLD;
      const pairs = distinctive(m);
      for (const g of scoped) {
        if (g.knowledge_type !== 'declarative') continue;
        const shared = [...pairs].some((p) => g.pairs.has(p));
        const s = jaccard(topic, g.topic) + (shared ? 1 : 0);
        if (s >= best) {
          best = s;
          target = g;
        }
      }
    }
    if (target) {
      target.memories.push(m);
      for (const w of topic) target.topic.add(w);
      for (const p of distinctive(m)) target.pairs.add(p);
    } else {
      const g: Group = { collection: m.collection, customer_id: m.customer_id, segment_id: m.segment_id, knowledge_type: m.knowledge_type, memories: [m], topic, pairs: distinctive(m) };
      scoped.push(g);
      groups.push(g);
    }
  }
  return groups;
}

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
function firstLine(text: string): string {
  const l = text.split('\n')[0]!.trim();
  return l.length <= 300 ? l : l.slice(0, l.lastIndexOf(' ', 300));
}

function supersedes(newText: string, oldText: string): boolean {
  if (normaliseText(newText) === normaliseText(oldText)) return false;
  const a = new Set(contentWords(newText));
  const b = new Set(contentWords(oldText));
  return jaccard(a, b) >= SUPERSEDE_THRESHOLD && distinctFacts(facts(newText), facts(oldText));
}

function articleUnits(a: ArticleRef, byId: Map<string, StoredMemory>): string[] {
  const fromMemories = a.source_memory_ids.map((id) => byId.get(id)).filter((m): m is StoredMemory => !!m).map((m) => m.text);
  if (fromMemories.length > 0 && fromMemories.length === a.source_memory_ids.length) return fromMemories;
  return splitMemories([{ page: 1, text: a.content }]).map((m) => m.text);
}

function proposalKey(action: string, articleId: string | null, memoryIds: string[]): string {
  return sha256(`${action}|${articleId ?? ''}|${[...memoryIds].sort().join(',')}`);
}

function excerpts(g: { memories: StoredMemory[] }): ProposalDraft['source_excerpts'] {
  return g.memories.map((m) => ({ text: m.excerpt, memory_id: m.id, page: m.page }));
}

export function synthesizeProposals(memories: StoredMemory[], articles: ArticleRef[]): ProposalDraft[] {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const ownIds = new Set(articles.flatMap((a) => a.source_memory_ids));
  // memories that are an article's own sources are not new material
  const fresh = memories.filter((m) => !ownIds.has(m.id));
  const groups = groupMemories(fresh);
  const proposals: ProposalDraft[] = [];
  const archived = new Set<string>();

  // archive: every source of an article superseded by the new memories of its scope
  for (const a of articles) {
    const units = articleUnits(a, byId);
    if (units.length === 0) continue;
    const scoped = fresh.filter((m) => scopeKey(m) === scopeKey(a));
    const by = units.map((u) => scoped.filter((m) => supersedes(m.text, u)));
    if (by.every((list) => list.length > 0)) {
      archived.add(a.id);
      const sources = [...new Map(by.flat().map((m) => [m.id, m])).values()];
      proposals.push({
        key: proposalKey('archive', a.id, sources.map((m) => m.id)),
        action: 'archive',
        article_id: a.id,
        collection: a.collection,
        knowledge_type: sources[0]!.knowledge_type,
        customer_id: a.customer_id,
        segment_id: a.segment_id,
        title: a.title,
        description: centralSentence(sources.map((m) => m.text)),
        content: a.content,
        source_excerpts: sources.map((m) => ({ text: m.excerpt, memory_id: m.id, page: m.page })),
      });
    }
  }

  for (const g of groups) {
    const texts = g.memories.map((m) => m.text);
    const topic = new Set(texts.flatMap((t) => contentWords(t)));
    const ids = g.memories.map((m) => m.id);
    let target: ArticleRef | null = null;
    let bestScore = 0;
    for (const a of articles) {
      if (archived.has(a.id) || scopeKey(a) !== scopeKey(g)) continue;
      const units = splitMemories([{ page: 1, text: a.content }]).map((m) => m.text);
      const covered = jaccard(topic, new Set(contentWords(a.content)));
      const superseding = units.some((u) => texts.some((t) => supersedes(t, u)));
      const score = superseding ? 1 + covered : covered;
      if ((covered >= COVER_THRESHOLD || superseding) && score > bestScore) {
        bestScore = score;
        target = a;
      }
    }
    const intro = firstLine(texts[0]!);
    const title = g.knowledge_type === 'procedural' && intro.endsWith(':') ? keyPhrase([intro]) : keyPhrase(texts);
    const description = g.knowledge_type === 'declarative' ? centralSentence(texts) : firstLine(texts[0]!);
    if (target) {
      const units = splitMemories([{ page: 1, text: target.content }]).map((m) => m.text);
      const unitHashes = new Set(units.map(normaliseText));
      const replaced = units.map((u) => texts.find((t) => supersedes(t, u)) ?? u);
      const added = texts.filter((t) => !replaced.includes(t) && !unitHashes.has(normaliseText(t)));
      if (added.length === 0 && replaced.every((r, i) => r === units[i])) continue; // nothing new for the article
      proposals.push({
        key: proposalKey('revise', target.id, ids),
        action: 'revise',
        article_id: target.id,
        collection: g.collection,
        knowledge_type: g.knowledge_type,
        customer_id: g.customer_id,
        segment_id: g.segment_id,
        title: target.title,
        description,
        content: [...new Set(replaced)].concat(added).join('\n\n'),
        source_excerpts: excerpts(g),
      });
      continue;
    }
    proposals.push({
      key: proposalKey('create', null, ids),
      action: 'create',
      article_id: null,
      collection: g.collection,
      knowledge_type: g.knowledge_type,
      customer_id: g.customer_id,
      segment_id: g.segment_id,
      title,
      description,
      content: texts.join(g.knowledge_type === 'document' ? '\n' : '\n\n'),
      source_excerpts: excerpts(g),
    });
  }
  return proposals;
}

