/**
 * Extraction jobs, their memories and the proposals they produce: the only SQL of the
 * playbook-extraction flow. Counters are always computed from the stored rows (refreshCounts), so
 * they agree with what a retried or resumed stage actually wrote.
 */
import type { Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { Collection, EnrichedMemory, JobStatus, KnowledgeType, MemoryDraft, NormalisedEntities, ProposalDraft } from '../types.js';

export type Conn = Db | Knex.Transaction;

export interface StageProgress {
  done: number;
  total: number;
  started_at?: string;
  completed_at?: string;
}

export interface JobRow {
  id: string;
  organization_id: string;
  file_id: string | null;
  created_by: string;
  collection: Collection | null;
  extraction_type: 'file' | 'onboarding' | 'synthesis';
  status: JobStatus;
  error: string | null;
  progress: Record<string, StageProgress>;
  input_count: number;
  processed_count: number;
  memory_count: number;
  dedup_count: number;
  knowledge_count: number;
  proposal_count: number;
  workflow_id: string;
  completed_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

export async function insertJob(db: Conn, row: Pick<JobRow, 'id' | 'organization_id' | 'file_id' | 'created_by' | 'collection' | 'extraction_type' | 'workflow_id'>): Promise<void> {
  await db('extraction_jobs').insert(row);
}

export async function getJob(db: Conn, organizationId: string, id: string): Promise<JobRow | null> {
  return ((await db('extraction_jobs').where({ organization_id: organizationId, id }).first()) as JobRow | undefined) ?? null;
}

export interface JobFilters {
  status?: JobStatus;
  collection?: Collection;
  extraction_type?: JobRow['extraction_type'];
  file_id?: string;
}

/** Newest first (ids are time-ordered UUIDv7: ties on created_at break by id). */
export async function listJobs(db: Db, organizationId: string, f: JobFilters, offset: number, limit: number): Promise<{ rows: JobRow[]; total: number }> {
  const q = db('extraction_jobs').where({ organization_id: organizationId });
  if (f.status) q.where({ status: f.status });
  if (f.collection) q.where({ collection: f.collection });
  if (f.extraction_type) q.where({ extraction_type: f.extraction_type });
  if (f.file_id) q.where({ file_id: f.file_id });
  const [rows, [{ n }]] = await Promise.all([
    q.clone().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit) as Promise<JobRow[]>,
    q.clone().count<{ n: string }[]>({ n: '*' }),
  ]);
  return { rows, total: Number(n) };
}

/** Moves the job from one of `from` to `to` (and records when the stage started); false when it was elsewhere. */
export async function transitionJob(db: Conn, organizationId: string, id: string, from: readonly JobStatus[], to: JobStatus, extra: Record<string, unknown> = {}): Promise<boolean> {
  const n = await db('extraction_jobs')
    .where({ organization_id: organizationId, id })
    .whereIn('status', from)
    .update({ status: to, modified_at: db.fn.now(), ...extra });
  return n > 0;
}

/** Merges `patch` into progress[stage]. */
export async function setStageProgress(db: Conn, id: string, stage: string, patch: Partial<StageProgress>, counters: Partial<Pick<JobRow, 'input_count' | 'processed_count' | 'knowledge_count'>> = {}): Promise<void> {
  await db('extraction_jobs')
    .where({ id })
    .update({
      progress: db.raw(`progress || jsonb_build_object(?::text, coalesce(progress -> ?::text, '{}'::jsonb) || ?::jsonb)`, [stage, stage, JSON.stringify(patch)]),
      modified_at: db.fn.now(),
      ...counters,
    });
}

/** memory_count, dedup_count and proposal_count from the stored rows. */
export async function refreshCounts(db: Conn, id: string): Promise<void> {
  await db.raw(
    `UPDATE extraction_jobs j SET
        memory_count = (SELECT count(*) FROM memories m WHERE m.extraction_id = j.id),
        dedup_count = (SELECT count(*) FROM memories m WHERE m.extraction_id = j.id AND m.duplicate_of_kind IS NOT NULL),
        proposal_count = (SELECT count(*) FROM proposals p WHERE p.extraction_id = j.id),
        modified_at = now()
      WHERE j.id = ?`,
    [id],
  );
}

/** Ends the job `failed` with `error` unless it already ended. */
export async function failJob(db: Conn, organizationId: string, id: string, error: string): Promise<boolean> {
  return transitionJob(db, organizationId, id, ['pending', 'extracting', 'deduping', 'enriching', 'synthesizing'], 'failed', { error, completed_at: db.fn.now() });
}

// ------------------------------------------------------------------------------------- memories

export interface MemoryRow {
  id: string;
  organization_id: string;
  extraction_id: string;
  key: string;
  seq: number;
  text: string;
  excerpt: string;
  page: number;
  start_offset: number;
  end_offset: number;
  knowledge_type: KnowledgeType;
  text_hash: string;
  duplicate_of_kind: string | null;
  customer_id: string | null;
  segment_id: string | null;
  collection: Collection | null;
  entities: NormalisedEntities | null;
  enriched_at: Date | null;
}

/** Inserts drafts (seq = their index in the stage's output); an existing (job, key) is left alone. */
export async function insertMemories(db: Conn, organizationId: string, extractionId: string, drafts: { id: string; seq: number; draft: MemoryDraft }[]): Promise<void> {
  if (!drafts.length) return;
  await db('memories')
    .insert(
      drafts.map(({ id, seq, draft: d }) => ({
        id,
        organization_id: organizationId,
        extraction_id: extractionId,
        key: d.key,
        seq,
        text: d.text,
        excerpt: d.excerpt,
        page: d.page,
        start_offset: d.start,
        end_offset: d.end,
        knowledge_type: d.knowledge_type,
        text_hash: d.text_hash,
      })),
    )
    .onConflict(['extraction_id', 'key'])
    .ignore();
}

export async function jobMemories(db: Conn, extractionId: string, opts: { kept?: boolean } = {}): Promise<MemoryRow[]> {
  const q = db('memories').where({ extraction_id: extractionId }).orderBy('seq');
  if (opts.kept) q.whereNull('duplicate_of_kind');
  return (await q) as MemoryRow[];
}

export function draftOf(m: MemoryRow): MemoryDraft {
  return { key: m.key, text: m.text, excerpt: m.excerpt, page: m.page, start: m.start_offset, end: m.end_offset, knowledge_type: m.knowledge_type, text_hash: m.text_hash };
}

export async function markDuplicates(db: Conn, extractionId: string, removed: { key: string; duplicate_of: { kind: string; id: string }; reason: string }[]): Promise<void> {
  for (const r of removed) {
    await db('memories')
      .where({ extraction_id: extractionId, key: r.key })
      .update({ duplicate_of_kind: r.duplicate_of.kind, duplicate_of_id: r.duplicate_of.id, dedup_reason: r.reason, deduped_at: db.fn.now() });
  }
}

export async function markDeduped(db: Conn, extractionId: string): Promise<void> {
  await db('memories').where({ extraction_id: extractionId }).whereNull('deduped_at').update({ deduped_at: db.fn.now() });
}

export async function storeEnrichment(db: Conn, extractionId: string, memories: EnrichedMemory[]): Promise<void> {
  for (const m of memories) {
    await db('memories')
      .where({ extraction_id: extractionId, key: m.key })
      .update({ customer_id: m.customer_id, segment_id: m.segment_id, collection: m.collection, entities: JSON.stringify(m.entities), enriched_at: db.fn.now() });
  }
}

/** Kept memories of the organization's other jobs (of the collection when given), for dedup. */
/**
 * The kept memories of the organization's other jobs that completed (knowledge that exists: their
 * proposals were stored). Memories of failed, cancelled or still running jobs are left out, so
 * re-running a file after a failure finds its knowledge again instead of discarding it as duplicates.
 */
export async function otherMemories(db: Conn, organizationId: string, extractionId: string, collection: Collection | null): Promise<{ id: string; text: string }[]> {
  const q = db('memories as m')
    .join('extraction_jobs as j', 'j.id', 'm.extraction_id')
    .select('m.id', 'm.text')
    .where({ 'm.organization_id': organizationId, 'j.status': 'complete' })
    .whereNot('m.extraction_id', extractionId)
    .whereNull('m.duplicate_of_kind');
  if (collection) q.where({ 'm.collection': collection });
  return (await q) as { id: string; text: string }[];
}

/** Pending (not yet proposed-and-approved) memories of a collection: memories of completed jobs in it. */
export async function collectionMemories(db: Conn, organizationId: string, collection: Collection, extractionId: string): Promise<{ id: string; text: string }[]> {
  return (await db('memories as m')
    .join('extraction_jobs as j', 'j.id', 'm.extraction_id')
    .select('m.id', 'm.text')
    .where({ 'm.organization_id': organizationId, 'm.collection': collection, 'j.status': 'complete' })
    .whereNot('m.extraction_id', extractionId)
    .whereNull('m.duplicate_of_kind')
    .orderBy('m.id')) as { id: string; text: string }[];
}

// ------------------------------------------------------------------------- articles and proposals

export interface LiveArticle {
  id: string;
  collection: Collection;
  title: string;
  content: string;
  customer_id: string | null;
  segment_id: string | null;
  version: number;
  /** memory ids quoted by the article's current version (its sources, for archive proposals) */
  source_memory_ids: string[];
}

export async function liveArticles(db: Conn, organizationId: string, collection: Collection | null): Promise<LiveArticle[]> {
  const q = db('articles as a')
    .select('a.id', 'a.collection', 'a.title', 'a.content', 'a.customer_id', 'a.segment_id', 'a.version')
    .select(
      db.raw(
        `COALESCE((SELECT array_agg(DISTINCT e->>'memory_id') FROM article_versions v, jsonb_array_elements(v.source_excerpts) e
                    WHERE v.article_id = a.id AND v.version = a.version AND e->>'memory_id' IS NOT NULL), '{}') AS source_memory_ids`,
      ),
    )
    .where({ 'a.organization_id': organizationId })
    .whereNull('a.archived_at')
    .orderBy('a.id');
  if (collection) q.where({ 'a.collection': collection });
  return (await q) as LiveArticle[];
}

/** Inserts proposals; an existing (extraction_id, item_key) is left alone. Returns the ids of the rows inserted. */
export async function insertProposals(db: Conn, organizationId: string, extractionId: string, drafts: { id: string; draft: ProposalDraft; articleVersion: number | null }[]): Promise<string[]> {
  if (!drafts.length) return [];
  const inserted = (await db('proposals')
    .insert(
      drafts.map(({ id, draft: p, articleVersion }) => ({
        id,
        organization_id: organizationId,
        extraction_id: extractionId,
        item_key: p.key,
        collection: p.collection,
        status: 'pending',
        action: p.action,
        title: p.title,
        description: p.description,
        content: p.content,
        knowledge_type: p.knowledge_type,
        article_id: p.article_id,
        article_version: articleVersion,
        customer_id: p.customer_id,
        segment_id: p.segment_id,
        source_excerpts: JSON.stringify(p.source_excerpts),
      })),
    )
    .onConflict(['extraction_id', 'item_key'])
    .ignore()
    .returning('id')) as { id: string }[];
  return inserted.map((r) => r.id);
}
