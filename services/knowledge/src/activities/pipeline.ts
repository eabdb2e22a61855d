/**
 * The ONE narrow adapter between the playbook-extraction activities and the offline extraction
 * pipeline (issue 15). The activities call only these functions, whose signatures are built from the
 * pipeline's contract (../extraction/types.ts); they own persistence, heartbeats and resume.
 *
 * The pipeline's own modules are written separately (branch i15-pipeline). At merge this file is
 * re-pointed to them, one re-export each:
 *   extractPages        → extraction/parse.ts       (unpdf, mammoth, postal-mime, html-to-text, csv-parse)
 *   splitMemories       → extraction/memories.ts
 *   dedupeMemories      → extraction/dedup.ts       (exact hash + MinHash/LSH near duplicates)
 *   enrichMemories      → extraction/enrich.ts      (customer/segment linking, entity normalisation, collection)
 *   synthesizeProposals → extraction/synthesize.ts  (topic grouping → create / revise / archive)
 *   onboardingMemories  → extraction/onboarding.ts  (mining the organization's own data)
 *   synthesisProposals  → extraction/synthesis.ts   (re-reading a collection's articles and memories)
 *
 * Until then the functions below are a minimal but real implementation (no hard-coded results):
 * text, Markdown, CSV, HTML and single-part email decoding (PDF and DOCX are refused with a message
 * naming the type), paragraph splitting, exact-hash dedup, exact-name customer and segment linking,
 * keyword collection inference, and one `create` / `revise` proposal per group of memories sharing
 * collection, scope and knowledge type. Every output is deterministic and keyed from its content, so a
 * retried stage recomputes the same keys.
 */
import { createHash } from 'node:crypto';
import type { Collection } from '../domain/collections.js';
import type {
  ArticleRef,
  DedupCandidate,
  DedupResult,
  EnrichedMemory,
  KnowledgeType,
  MemoryDraft,
  NormalisedEntities,
  PartnerRef,
  ProposalDraft,
  SegmentRef,
  SourcePage,
  StoredMemory,
  SupportedMimeType,
} from '../extraction/types.js';

/** A source the parser cannot read (corrupt or unsupported bytes): the job fails with this message. */
export class SourceReadError extends Error {}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}%.$€£]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

// ------------------------------------------------------------------------------------- extracting

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw new SourceReadError('the file is not valid UTF-8 text');
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr|table|ul|ol|section|article)>/gi, '\n\n')
    .replace(/<li[^>]*>/gi, '- ')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function emailToText(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  if (split < 0) throw new SourceReadError('the email has no body (no blank line after its headers)');
  const headers = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const type = /^content-type:\s*([^;\r\n]+)/im.exec(headers)?.[1]?.trim().toLowerCase() ?? 'text/plain';
  if (!type.startsWith('text/')) throw new SourceReadError(`this build reads single-part text emails only, not ${type}`);
  const subject = /^subject:\s*(.*)$/im.exec(headers)?.[1]?.trim();
  let body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  if (/^content-transfer-encoding:\s*quoted-printable/im.test(headers)) {
    body = Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
  }
  if (type === 'text/html') body = htmlToText(body);
  return subject ? `${subject}\n\n${body.trim()}` : body.trim();
}

/** The text of a file, page by page (formats without pages: one page). */
export async function extractPages(bytes: Uint8Array, mime: SupportedMimeType): Promise<SourcePage[]> {
  switch (mime) {
    case 'text/plain':
    case 'text/markdown':
    case 'text/csv':
      return [{ page: 1, text: decodeUtf8(bytes) }];
    case 'text/html':
      return [{ page: 1, text: htmlToText(decodeUtf8(bytes)) }];
    case 'message/rfc822':
      return [{ page: 1, text: emailToText(decodeUtf8(bytes)) }];
    default:
      // PDF and DOCX need the pipeline's parsers (extraction/parse.ts).
      throw new SourceReadError(`this build has no parser for ${mime}`);
  }
}

function knowledgeTypeOf(text: string): KnowledgeType {
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.filter((l) => /^\s*(\d+[.)]|step\s+\d+)\s/i.test(l)).length >= 2) return 'procedural';
  if (lines.length >= 2 && lines.filter((l) => /[,;|\t]/.test(l) || /@/.test(l)).length >= 2) return 'document';
  return 'declarative';
}

/** One memory per paragraph (blank-line separated), with its exact excerpt and offsets. */
export function splitMemories(pages: SourcePage[]): MemoryDraft[] {
  const out: MemoryDraft[] = [];
  for (const { page, text } of pages) {
    const re = /[^\n]+(?:\n(?!\s*\n)[^\n]*)*/g;
    for (const m of text.matchAll(re)) {
      const raw = m[0];
      const lead = raw.length - raw.trimStart().length;
      const excerpt = raw.trim();
      const normalised = normaliseText(excerpt.replace(/^#+\s*/, ''));
      if (normalised.split(' ').length < 3) continue; // headings and fragments are no fact
      const start = m.index + lead;
      out.push({
        key: sha256(`${page}:${start}:${normalised}`),
        text: excerpt.replace(/^#+\s*/, ''),
        excerpt,
        page,
        start,
        end: start + excerpt.length,
        knowledge_type: knowledgeTypeOf(excerpt),
        text_hash: sha256(normalised),
      });
    }
  }
  return out;
}

// --------------------------------------------------------------------------------------- deduping

/** Exact duplicates by normalised-text hash: within the drafts (first kept) and against candidates. */
export function dedupeMemories(drafts: MemoryDraft[], existing: DedupCandidate[]): DedupResult {
  const known = new Map<string, DedupCandidate>();
  for (const c of existing) {
    const h = sha256(normaliseText(c.text));
    if (!known.has(h)) known.set(h, c);
  }
  const seen = new Map<string, string>();
  const result: DedupResult = { kept: [], removed: [] };
  for (const d of drafts) {
    const c = known.get(d.text_hash);
    const first = seen.get(d.text_hash);
    if (c) result.removed.push({ key: d.key, duplicate_of: { kind: c.kind, id: c.id }, reason: 'exact' });
    else if (first) result.removed.push({ key: d.key, duplicate_of: { kind: 'draft', id: first }, reason: 'exact' });
    else {
      seen.set(d.text_hash, d.key);
      result.kept.push(d);
    }
  }
  return result;
}

// -------------------------------------------------------------------------------------- enriching

function escapeRe(s: string) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function mentions(text: string, name: string | null): boolean {
  if (!name || name.trim().length < 2) return false;
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRe(name.trim())}($|[^\\p{L}\\p{N}])`, 'iu').test(text);
}

/** The single ref a text names; ties (several named) link nothing. */
function single<T extends { id: string }>(refs: T[], named: (r: T) => boolean): string | null {
  const ids = new Set(refs.filter(named).map((r) => r.id));
  return ids.size === 1 ? [...ids][0]! : null;
}

const COLLECTION_WORDS: [Collection, RegExp][] = [
  ['deductions', /\bdeduction|short[- ]pay|chargeback/i],
  ['disputes', /\bdisput/i],
  ['credit_risk', /\bcredit (limit|risk|hold|check)/i],
  ['cash_application', /\bremittance|cash application|apply (the )?payment|unapplied/i],
  ['payments', /\bpayment (method|portal|plan)|wire|ach|card payment/i],
  ['collections', /\bdunning|reminder|overdue|past due|collection|escalat/i],
];

export function inferCollection(text: string): Collection {
  for (const [c, re] of COLLECTION_WORDS) if (re.test(text)) return c;
  return 'company';
}

function entitiesOf(text: string): NormalisedEntities {
  const amounts = [...text.matchAll(/(USD|EUR|GBP|[$€£])\s?(\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)/g)].map((m) => ({
    text: m[0],
    currency: ({ $: 'USD', '€': 'EUR', '£': 'GBP' } as Record<string, string>)[m[1]!] ?? m[1]!,
    value: m[2]!.replace(/,/g, ''),
  }));
  const percentages = [...text.matchAll(/(\d+(?:\.\d+)?)\s?%/g)].map((m) => ({ text: m[0], value: m[1]! }));
  const day_counts = [...text.matchAll(/(\d+)\s+(?:calendar\s+|business\s+)?days?\b/gi)].map((m) => ({ text: m[0], days: Number(m[1]) }));
  const dates = [...text.matchAll(/\b(\d{4}-\d{2}-\d{2})\b/g)].map((m) => ({ text: m[0], date: m[1]! }));
  return { amounts, percentages, day_counts, dates };
}

/** Customer and segment links by exact name (ties are not linked), entities, collection. */
export function enrichMemories(drafts: MemoryDraft[], ctx: { partners: PartnerRef[]; segments: SegmentRef[]; collection: Collection | null }): EnrichedMemory[] {
  return drafts.map((d) => ({
    ...d,
    customer_id: single(ctx.partners, (p) => mentions(d.text, p.name) || mentions(d.text, p.legal_name) || mentions(d.text, p.account_number)),
    segment_id: single(ctx.segments, (s) => mentions(d.text, s.name)),
    collection: ctx.collection ?? inferCollection(d.text),
    entities: entitiesOf(d.text),
  }));
}

// ----------------------------------------------------------------------------------- synthesizing

function words(s: string): Set<string> {
  return new Set(normaliseText(s).split(' ').filter((w) => w.length > 3));
}

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const w of a) if (b.has(w)) n++;
  return a.size + b.size - n === 0 ? 0 : n / (a.size + b.size - n);
}

function firstWords(text: string, n: number): string {
  const w = text.replace(/\s+/g, ' ').trim().split(' ');
  return w.slice(0, n).join(' ').replace(/[,;:.]$/, '');
}

/**
 * One knowledge item per group of memories sharing collection, customer, segment and knowledge type:
 * `revise` when a live article of the same scope shares enough words (its content merged with the new
 * excerpts), else `create`. Titles and descriptions are the memories' own words.
 */
export function synthesizeProposals(memories: StoredMemory[], articles: ArticleRef[]): ProposalDraft[] {
  const groups = new Map<string, StoredMemory[]>();
  for (const m of memories) {
    const g = `${m.collection}|${m.customer_id ?? ''}|${m.segment_id ?? ''}|${m.knowledge_type}`;
    groups.set(g, [...(groups.get(g) ?? []), m]);
  }
  const out: ProposalDraft[] = [];
  for (const ms of groups.values()) {
    const first = ms[0]!;
    const body = ms.map((m) => m.text).join('\n\n');
    const bodyWords = words(body);
    const target = articles
      .filter((a) => a.collection === first.collection && a.customer_id === first.customer_id && a.segment_id === first.segment_id)
      .map((a) => ({ a, score: overlap(bodyWords, words(`${a.title} ${a.content}`)) }))
      .filter((x) => x.score >= 0.3)
      .sort((x, y) => y.score - x.score)[0]?.a;
    const action = target ? 'revise' : 'create';
    const ids = ms.map((m) => m.id).sort();
    out.push({
      key: sha256(`${action}|${target?.id ?? ''}|${ids.join(',')}`),
      action,
      article_id: target?.id ?? null,
      collection: first.collection,
      knowledge_type: first.knowledge_type,
      customer_id: first.customer_id,
      segment_id: first.segment_id,
      title: target ? target.title : firstWords(first.text, 8),
      description: firstWords(first.text, 24),
      content: target ? `${target.content}\n\n${body}` : body,
      source_excerpts: ms.map((m) => ({ text: m.excerpt, memory_id: m.id, page: m.page })),
    });
  }
  return out;
}

// ---------------------------------------------------------------------- onboarding and synthesis

/** What the organization's ledger says about a customer's paying (onboarding's input). */
export interface CustomerPaymentProfile {
  partner: PartnerRef;
  /** invoices paid (cleared) with a due date */
  paid_invoices: number;
  /** average days between due date and clearing (negative: early), null when none */
  average_days_after_due: number | null;
}

/**
 * Onboarding: one declarative memory per customer with payment history, the page being the
 * customer's position in the list. The text states only what the ledger figures say.
 */
export function onboardingMemories(profiles: CustomerPaymentProfile[]): MemoryDraft[] {
  const out: MemoryDraft[] = [];
  profiles.forEach((p, i) => {
    if (p.average_days_after_due === null || p.paid_invoices === 0) return;
    const d = Math.round(p.average_days_after_due);
    const when = d > 0 ? `${d} days after the due date` : d < 0 ? `${-d} days before the due date` : 'on the due date';
    const text = `${p.partner.name} pays on average ${when} (${p.paid_invoices} paid invoices).`;
    const normalised = normaliseText(text);
    out.push({ key: sha256(`${i + 1}:0:${normalised}`), text, excerpt: text, page: i + 1, start: 0, end: text.length, knowledge_type: 'declarative', text_hash: sha256(normalised) });
  });
  return out;
}

/**
 * Synthesis: the collection's live articles and pending memories re-read as sources. Each article
 * becomes a memory of its own text (so merges and archives go through the same stages).
 */
export function synthesisMemories(articles: ArticleRef[], pending: { text: string }[]): MemoryDraft[] {
  const texts = [...articles.map((a) => a.content), ...pending.map((m) => m.text)];
  const out: MemoryDraft[] = [];
  texts.forEach((text, i) => {
    const normalised = normaliseText(text);
    if (!normalised) return;
    out.push({ key: sha256(`${i + 1}:0:${normalised}`), text, excerpt: text, page: i + 1, start: 0, end: text.length, knowledge_type: knowledgeTypeOf(text), text_hash: sha256(normalised) });
  });
  return out;
}
