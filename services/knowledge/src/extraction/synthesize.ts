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
import type { Collection } from '../types.js';
import { splitMemories } from './memories.js';
import { contentWords, distinctFacts, facts, jaccard, normaliseText, sha256 } from './text.js';
import { centralSentence, firstLine, keyPhrase } from './titles.js';
import { newWorkCounter, type ArticleRef, type KnowledgeType, type ProposalDraft, type StoredMemory, type WorkCounter } from './types.js';

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

/** A word in more of the job's memories than this does not lead a memory to a group (it still counts in the score). */
export const MAX_INDEXED_WORD_DF = 50;

/** Groups of one scope, found through the words and distinctive phrases of their topics. */
class ScopeIndex {
  readonly groups: Group[] = [];
  private readonly byHeader = new Map<string, Group>();
  private readonly byWord = new Map<string, Group[]>();
  private readonly byPair = new Map<string, Group[]>();
  private readonly order = new Map<Group, number>();

  add(g: Group, header: string | null, words: Iterable<string>, pairs: Iterable<string>): void {
    this.order.set(g, this.groups.push(g) - 1);
    if (header !== null && !this.byHeader.has(header)) this.byHeader.set(header, g);
    this.extend(g, words, pairs);
  }

  /** Index `g` under new words (those with at most MAX_INDEXED_WORD_DF memories) and phrases of its topic. */
  extend(g: Group, words: Iterable<string>, pairs: Iterable<string>): void {
    for (const w of words) push(this.byWord, w, g);
    for (const p of pairs) push(this.byPair, p, g);
  }

  document(header: string): Group | undefined {
    return this.byHeader.get(header);
  }

  /** Declarative groups sharing an indexed word or a distinctive phrase with a memory, in creation order. */
  candidates(words: Iterable<string>, pairs: Iterable<string>): Group[] {
    const found = new Set<Group>();
    for (const w of words) for (const g of this.byWord.get(w) ?? []) found.add(g);
    for (const p of pairs) for (const g of this.byPair.get(p) ?? []) found.add(g);
    return [...found].sort((a, b) => this.order.get(a)! - this.order.get(b)!);
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (!list) m.set(k, [v]);
  else if (list[list.length - 1] !== v) list.push(v);
}

/**
 * Groups a job's memories by scope and topic. Candidate groups come from an inverted index of their
 * topic words and distinctive phrases, so a memory is scored only against groups it shares something
 * with: a group sharing neither a word nor a phrase scores 0, below TOPIC_THRESHOLD. Words found in more
 * than MAX_INDEXED_WORD_DF of the job's memories do not lead to candidates (they count in the score of
 * the candidates found otherwise): each memory meets a bounded number of groups, so the stage grows
 * linearly with the job. Ties go to the later group, as in a scan of all groups in creation order.
 */
export function groupMemories(memories: StoredMemory[], work: WorkCounter = newWorkCounter()): Group[] {
  // topic phrases shared by few memories of the job are distinctive; common ones ("credit manager") are not
  const df = new Map<string, number>();
  const wordDf = new Map<string, number>();
  const words = new Map<StoredMemory, Set<string>>();
  for (const m of memories) {
    for (const p of new Set(topicPairs(m.text))) df.set(p, (df.get(p) ?? 0) + 1);
    const w = new Set(contentWords(m.text));
    words.set(m, w);
    for (const x of w) wordDf.set(x, (wordDf.get(x) ?? 0) + 1);
  }
  const maxDf = Math.max(2, Math.floor(memories.length * MAX_TOPIC_SHARE));
  const distinctive = (m: StoredMemory) => new Set(topicPairs(m.text).filter((p) => df.get(p)! <= maxDf));
  const indexed = (w: Set<string>) => [...w].filter((x) => wordDf.get(x)! <= MAX_INDEXED_WORD_DF);
  const groups: Group[] = [];
  const byScope = new Map<string, ScopeIndex>();
  const sorted = [...memories].sort((a, b) => a.page - b.page || a.start - b.start || a.id.localeCompare(b.id));
  for (const m of sorted) {
    const sk = scopeKey(m);
    let scoped = byScope.get(sk);
    if (!scoped) byScope.set(sk, (scoped = new ScopeIndex()));
    const topic = words.get(m)!;
    const pairs = m.knowledge_type === 'declarative' ? distinctive(m) : new Set<string>();
    const header = m.knowledge_type === 'document' ? headerSet(m) : null;
    let target: Group | undefined;
    if (header) {
      target = scoped.document(header);
    } else if (m.knowledge_type === 'declarative') {
      let best = TOPIC_THRESHOLD;
      for (const g of scoped.candidates(indexed(topic), pairs)) {
        work.comparisons++;
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
      if (target.knowledge_type === 'declarative') {
        const newWords = [...topic].filter((w) => !target.topic.has(w));
        const newPairs = [...pairs].filter((p) => !target.pairs.has(p));
        for (const w of newWords) target.topic.add(w);
        for (const p of newPairs) target.pairs.add(p);
        scoped.extend(target, indexed(new Set(newWords)), newPairs);
      } else {
        for (const w of topic) target.topic.add(w);
      }
    } else {
      const g: Group = { collection: m.collection, customer_id: m.customer_id, segment_id: m.segment_id, knowledge_type: m.knowledge_type, memories: [m], topic: new Set(topic), pairs };
      if (m.knowledge_type === 'declarative') scoped.add(g, null, indexed(topic), pairs);
      else scoped.add(g, header, [], []);
      groups.push(g);
    }
  }
  return groups;
}

/** What synthesis compares of a text (its normal form and content words), computed once per text. */
class TextCache {
  private readonly norms = new Map<string, string>();
  private readonly words = new Map<string, Set<string>>();

  norm(t: string): string {
    let n = this.norms.get(t);
    if (n === undefined) this.norms.set(t, (n = normaliseText(t)));
    return n;
  }

  contentWords(t: string): Set<string> {
    let w = this.words.get(t);
    if (!w) this.words.set(t, (w = new Set(contentWords(t))));
    return w;
  }

  supersedes(newText: string, oldText: string): boolean {
    if (this.norm(newText) === this.norm(oldText)) return false;
    return jaccard(this.contentWords(newText), this.contentWords(oldText)) >= SUPERSEDE_THRESHOLD && distinctFacts(facts(newText), facts(oldText));
  }
}

/** An article as synthesis compares it: its statements (split once) and content words. */
interface PreparedArticle {
  ref: ArticleRef;
  units: string[];
  words: Set<string>;
}

function prepareArticle(a: ArticleRef, work: WorkCounter): PreparedArticle {
  work.articleSplits++;
  return { ref: a, units: splitMemories([{ page: 1, text: a.content }]).map((m) => m.text), words: new Set(contentWords(a.content)) };
}

/**
 * The articles of one scope by content word. An article shares no word with a group's topic cannot
 * cover it (Jaccard 0) nor hold a statement a memory of it supersedes (that needs content-word Jaccard ≥
 * SUPERSEDE_THRESHOLD): only articles sharing a word are compared. Words in more than
 * MAX_INDEXED_WORD_DF articles of the scope do not lead to articles (they count in the score).
 */
class ArticleIndex {
  private readonly all: PreparedArticle[] = [];
  private readonly byWord = new Map<string, PreparedArticle[]>();
  private readonly order = new Map<PreparedArticle, number>();

  add(a: PreparedArticle): void {
    this.order.set(a, this.all.push(a) - 1);
    for (const w of new Set([...a.words, ...a.units.flatMap((u) => contentWords(u))])) push(this.byWord, w, a);
  }

  candidates(topic: Set<string>): PreparedArticle[] {
    const found = new Set<PreparedArticle>();
    for (const w of topic) {
      const list = this.byWord.get(w);
      if (list && list.length <= MAX_INDEXED_WORD_DF) for (const a of list) found.add(a);
    }
    return [...found].sort((x, y) => this.order.get(x)! - this.order.get(y)!);
  }
}

function articleUnits(a: PreparedArticle, byId: Map<string, StoredMemory>): string[] {
  const ids = a.ref.source_memory_ids;
  const fromMemories = ids.map((id) => byId.get(id)).filter((m): m is StoredMemory => !!m).map((m) => m.text);
  if (fromMemories.length > 0 && fromMemories.length === ids.length) return fromMemories;
  return a.units;
}

function proposalKey(action: string, articleId: string | null, memoryIds: string[]): string {
  return sha256(`${action}|${articleId ?? ''}|${[...memoryIds].sort().join(',')}`);
}

function excerpts(g: { memories: StoredMemory[] }): ProposalDraft['source_excerpts'] {
  return g.memories.map((m) => ({ text: m.excerpt, memory_id: m.id, page: m.page }));
}

/**
 * Proposals from a job's memories against the live articles. Each article is split into statements
 * once; groups and memories meet only the articles of their own scope.
 */
export function synthesizeProposals(memories: StoredMemory[], articles: ArticleRef[], work: WorkCounter = newWorkCounter()): ProposalDraft[] {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const ownIds = new Set(articles.flatMap((a) => a.source_memory_ids));
  const cache = new TextCache();
  // memories that are an article's own sources are not new material
  const fresh = memories.filter((m) => !ownIds.has(m.id));
  // memories of a scope by content word: a memory sharing no word with a statement cannot supersede it
  const freshOrder = new Map(fresh.map((m, i) => [m, i]));
  const freshByWord = new Map<string, StoredMemory[]>();
  for (const m of fresh) for (const w of cache.contentWords(m.text)) push(freshByWord, `${scopeKey(m)}|${w}`, m);
  const supersedingMemories = (scope: string, unit: string): StoredMemory[] => {
    const found = new Set<StoredMemory>();
    for (const w of cache.contentWords(unit)) {
      const list = freshByWord.get(`${scope}|${w}`);
      if (list && list.length <= MAX_INDEXED_WORD_DF) for (const m of list) found.add(m);
    }
    work.comparisons += found.size;
    return [...found].sort((x, y) => freshOrder.get(x)! - freshOrder.get(y)!).filter((m) => cache.supersedes(m.text, unit));
  };
  const prepared = articles.map((a) => prepareArticle(a, work));
  const articleIndex = new Map<string, ArticleIndex>();
  for (const a of prepared) {
    const sk = scopeKey(a.ref);
    let idx = articleIndex.get(sk);
    if (!idx) articleIndex.set(sk, (idx = new ArticleIndex()));
    idx.add(a);
  }
  const groups = groupMemories(fresh, work);
  const proposals: ProposalDraft[] = [];
  const archived = new Set<string>();

  // archive: every source of an article superseded by the new memories of its scope
  for (const pa of prepared) {
    const a = pa.ref;
    const units = articleUnits(pa, byId);
    if (units.length === 0) continue;
    const by = units.map((u) => supersedingMemories(scopeKey(a), u));
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
    const topic = new Set(texts.flatMap((t) => [...cache.contentWords(t)]));
    const ids = g.memories.map((m) => m.id);
    let target: PreparedArticle | null = null;
    let bestScore = 0;
    for (const pa of articleIndex.get(scopeKey(g))?.candidates(topic) ?? []) {
      if (archived.has(pa.ref.id)) continue;
      work.comparisons++;
      const covered = jaccard(topic, pa.words);
      const superseding = pa.units.some((u) => texts.some((t) => cache.supersedes(t, u)));
      const score = superseding ? 1 + covered : covered;
      if ((covered >= COVER_THRESHOLD || superseding) && score > bestScore) {
        bestScore = score;
        target = pa;
      }
    }
    const intro = firstLine(texts[0]!);
    const title = g.knowledge_type === 'procedural' && intro.endsWith(':') ? keyPhrase([intro]) : keyPhrase(texts);
    const description = g.knowledge_type === 'declarative' ? centralSentence(texts) : firstLine(texts[0]!);
    if (target) {
      const units = target.units;
      const unitHashes = new Set(units.map((u) => cache.norm(u)));
      const replaced = units.map((u) => texts.find((t) => cache.supersedes(t, u)) ?? u);
      const added = texts.filter((t) => !replaced.includes(t) && !unitHashes.has(cache.norm(t)));
      if (added.length === 0 && replaced.every((r, i) => r === units[i])) continue; // nothing new for the article
      proposals.push({
        key: proposalKey('revise', target.ref.id, ids),
        action: 'revise',
        article_id: target.ref.id,
        collection: g.collection,
        knowledge_type: g.knowledge_type,
        customer_id: g.customer_id,
        segment_id: g.segment_id,
        title: target.ref.title,
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
