/**
 * The playbook-extraction workflow's activities (spec 2.10): one per stage. Each stage
 * - moves the job to its status (from the previous stage's or its own: a retry resumes),
 * - computes its output through the pipeline adapter (./pipeline.ts) from what the earlier stages
 *   stored (payloads carry ids only),
 * - writes it in chunks, each chunk in one transaction with the stage's progress, heartbeating and
 *   stopping at a cancellation between chunks; memories are unique per (job, key) and proposals per
 *   (job, item key), so an attempt that re-runs after a worker died inserts nothing twice,
 * - refreshes the counters from the stored rows.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { listPartnersForMatching, newId, partnerPaymentHabits, segmentNames, storageUnavailableFailure, type Db, type ObjectStorage } from '@rp/platform';
import {
  customerHabitsObjectKey,
  EXTRACTION_ERROR,
  type CustomerCashHabits,
  type CustomerHabitsObject,
  type ExtractionStageResult,
  type PlaybookExtractionActivities,
  type PlaybookExtractionInput,
} from '@rp/workflows';
import type { Logger } from 'pino';
import { COLLECTIONS, type Collection, type JobStatus } from '../types.js';
import { DEFAULT_EXTRACTION_LIMITS, ExtractionLimitError, MAX_KNOWLEDGE_FILE_BYTES, SUPPORTED_MIME_TYPES, type ArticleRef, type ExtractionLimits, type MemoryDraft, type StoredMemory, type SupportedMimeType } from '../extraction/types.js';
import { getFile } from '../store/files.js';
import * as store from '../store/extractions.js';
import type { JobRow } from '../store/extractions.js';
import * as pipeline from './pipeline.js';
import { completeJobRecorded, failJobRecorded, recordProposalsCreated } from '../domain/extraction-events.js';
import { inProcessPipeline, type PipelineRunner } from './pipeline-pool.js';

export interface PlaybookExtractionDeps {
  db: Db;
  storage: ObjectStorage | null;
  log?: Logger;
  /** Rows written per transaction (and per heartbeat). */
  chunkSize: number;
  /** Pause after each chunk, in ms (0 in production): a throttle for tests that must catch a stage mid-way. */
  chunkPauseMs: number;
  /** What one job reads at most (default DEFAULT_EXTRACTION_LIMITS). */
  limits?: ExtractionLimits;
  /** Where the CPU-heavy pipeline steps run: the worker process's thread pool; default the calling thread. */
  pipeline?: PipelineRunner;
}

/** Largest cash-app habits object an onboarding job reads (~200 bytes a customer: over a million customers). */
const MAX_CASH_HABITS_BYTES = 256 * 1024 * 1024;

/** Attempts that wait for a job row not committed yet (the request starts the workflow, then commits). */
const MISSING_ROW_ATTEMPTS = 3;

const fail = (message: string) => ApplicationFailure.nonRetryable(message, EXTRACTION_ERROR);

function throwIfCancelled(ctx: Context): void {
  if (ctx.cancellationSignal.aborted) {
    const r: unknown = ctx.cancellationSignal.reason;
    throw r instanceof CancelledFailure ? r : new CancelledFailure(r instanceof Error ? r.message : 'cancelled');
  }
}

/**
 * Runs a pipeline step (parsing, dedup, enrichment, synthesis: possibly minutes of work on a large
 * file) while heartbeating every `everyMs` (1 s), so the heartbeat timeout detects a lost worker, not a
 * long step; a cancellation that arrives meanwhile is honoured right after the step. The steps run on
 * the pipeline's worker threads (pipeline-pool.ts), which leaves this event loop free to heartbeat.
 */
export async function beating<T>(ctx: Context, details: unknown, step: () => T | Promise<T>, everyMs = 1000): Promise<T> {
  ctx.heartbeat(details);
  const timer = setInterval(() => ctx.heartbeat(details), everyMs);
  try {
    return await step();
  } finally {
    clearInterval(timer);
    throwIfCancelled(ctx);
  }
}

type Stage = 'extracting' | 'deduping' | 'enriching' | 'synthesizing';
const BEFORE: Record<Stage, JobStatus> = { extracting: 'pending', deduping: 'extracting', enriching: 'deduping', synthesizing: 'enriching' };
const ORDER: JobStatus[] = ['pending', 'extracting', 'deduping', 'enriching', 'synthesizing', 'complete'];

export function createPlaybookExtractionActivities(deps: PlaybookExtractionDeps): PlaybookExtractionActivities {
  const { db } = deps;
  const limits = deps.limits ?? DEFAULT_EXTRACTION_LIMITS;
  const steps = deps.pipeline ?? inProcessPipeline;

  /**
   * The job, moved into `stage` (null: already past it, a retry after the stage completed). A job
   * that ended `failed` (cancelled) stops the workflow; a job not committed yet is retried a few times.
   */
  async function enter(input: PlaybookExtractionInput, stage: Stage): Promise<JobRow | null | 'missing'> {
    const ctx = Context.current();
    const job = await store.getJob(db, input.organizationId, input.jobId);
    if (!job) {
      if (stage === 'extracting' && ctx.info.attempt < MISSING_ROW_ATTEMPTS) {
        throw ApplicationFailure.retryable(`extraction job ${input.jobId} is not committed yet`, 'ExtractionNotCommitted');
      }
      if (stage === 'extracting') return 'missing';
      throw fail('the extraction job no longer exists');
    }
    if (job.status === 'failed') throw fail(job.error ?? 'the extraction job has ended');
    if (ORDER.indexOf(job.status) > ORDER.indexOf(stage)) return null;
    if (job.status === BEFORE[stage]) {
      await store.transitionJob(db, input.organizationId, input.jobId, [BEFORE[stage]], stage);
      await store.setStageProgress(db, job.id, stage, { done: 0, total: 0, started_at: new Date().toISOString() });
    }
    return (await store.getJob(db, input.organizationId, input.jobId))!;
  }

  /** Writes `items` in chunks from the heartbeat's resume point: each chunk with the stage's progress in one transaction. */
  async function inChunks<T>(job: JobRow, stage: Stage, items: T[], write: (trx: store.Conn, chunk: T[], from: number) => Promise<void>, counters: (done: number) => Parameters<typeof store.setStageProgress>[4] = () => ({})): Promise<void> {
    const ctx = Context.current();
    const resume = (ctx.info.heartbeatDetails as { stage?: string; next?: number } | undefined) ?? {};
    const start = resume.stage === stage ? Math.min(Math.max(0, resume.next ?? 0), items.length) : 0;
    if (start > 0) deps.log?.info({ job_id: job.id, stage, resume_from: start }, 'resuming extraction stage');
    ctx.heartbeat({ stage, next: start });
    for (let i = start; i < items.length; i += deps.chunkSize) {
      throwIfCancelled(ctx);
      const chunk = items.slice(i, i + deps.chunkSize);
      const done = i + chunk.length;
      await db.transaction(async (trx) => {
        await write(trx, chunk, i);
        await store.setStageProgress(trx, job.id, stage, { done, total: items.length }, counters(done));
      });
      ctx.heartbeat({ stage, next: done });
      if (deps.chunkPauseMs > 0) await ctx.sleep(deps.chunkPauseMs);
    }
    throwIfCancelled(ctx);
  }

  async function finish(job: JobRow, stage: Stage, total: number): Promise<ExtractionStageResult> {
    await store.refreshCounts(db, job.id);
    await store.setStageProgress(db, job.id, stage, { done: total, total, completed_at: new Date().toISOString() });
    return { missing: false, done: total, total };
  }

  const past = (job: JobRow, stage: Stage): ExtractionStageResult => ({ missing: false, done: job.progress[stage]?.done ?? 0, total: job.progress[stage]?.total ?? 0 });

  /** The file's bytes, checked against what was verified. */
  async function fileBytes(job: JobRow): Promise<{ bytes: Uint8Array; mime: SupportedMimeType }> {
    if (!deps.storage) throw storageUnavailableFailure('knowledge worker');
    const file = job.file_id ? await getFile(db, job.organization_id, job.file_id) : null;
    if (!file) throw fail('the extraction job has no file');
    if (!(SUPPORTED_MIME_TYPES as readonly string[]).includes(file.mime_type)) throw fail(`files of type ${file.mime_type} cannot be extracted`);
    let bytes: Uint8Array | null;
    try {
      bytes = await deps.storage.readObject(file.object_key, MAX_KNOWLEDGE_FILE_BYTES);
    } catch (err) {
      if (err instanceof RangeError) throw fail('the stored file is larger than its declared size');
      throw err;
    }
    if (!bytes) throw fail(`the file ${file.name} is no longer in storage`);
    if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) throw fail(`the file ${file.name} changed after it was verified; upload it again`);
    return { bytes, mime: file.mime_type as SupportedMimeType };
  }

  /**
   * Onboarding: cash-app's per-customer figures, read from the JSON Lines object cash-app wrote for
   * this job (only its reference travels through Temporal). The read is bounded by the size cash-app
   * recorded, and the bytes must match its sha256; the key must be this job's.
   */
  async function cashHabitsOf(job: JobRow, ref: CustomerHabitsObject): Promise<CustomerCashHabits[]> {
    if (!deps.storage) throw storageUnavailableFailure('knowledge worker');
    if (ref.objectKey !== customerHabitsObjectKey(job.organization_id, job.id)) throw fail('the cash-app habits object does not belong to this job');
    if (!Number.isSafeInteger(ref.size) || ref.size < 0 || ref.size > MAX_CASH_HABITS_BYTES) throw fail(`the cash-app habits object declares ${ref.size} bytes (at most ${MAX_CASH_HABITS_BYTES})`);
    let bytes: Uint8Array | null;
    try {
      bytes = await deps.storage.readObject(ref.objectKey, ref.size);
    } catch (err) {
      if (err instanceof RangeError) throw fail('the cash-app habits object is larger than recorded');
      throw err;
    }
    if (!bytes) throw fail('the cash-app habits object is no longer in storage');
    if (bytes.length !== ref.size || createHash('sha256').update(bytes).digest('hex') !== ref.sha256) throw fail('the cash-app habits object is not the one cash-app wrote');
    const lines = new TextDecoder('utf-8', { fatal: true }).decode(bytes).split('\n').filter((l) => l.trim() !== '');
    if (lines.length !== ref.customers) throw fail(`the cash-app habits object holds ${lines.length} customers, not ${ref.customers}`);
    return lines.map((l) => JSON.parse(l) as CustomerCashHabits);
  }

  /** Deletes an onboarding job's cash-app habits object once the job has ended (best effort: a failure is logged, the job's end stands). */
  async function dropCashHabits(organizationId: string, jobId: string): Promise<void> {
    if (!deps.storage) return;
    const job = await store.getJob(db, organizationId, jobId);
    if (job?.extraction_type !== 'onboarding') return;
    try {
      await deps.storage.deleteObject(customerHabitsObjectKey(organizationId, jobId));
    } catch (err) {
      deps.log?.warn({ job_id: jobId, err: err instanceof Error ? err.message : String(err) }, 'could not delete the cash-app habits object');
    }
  }

  /** The extracting stage's sources: the file's pages, or the organization's data. */
  async function sources(job: JobRow, cashHabits?: CustomerHabitsObject): Promise<{ inputs: number; drafts: MemoryDraft[]; processedAfter: (done: number) => number }> {
    if (job.extraction_type === 'file') {
      const { bytes, mime } = await fileBytes(job);
      const ctx = Context.current();
      let pages;
      try {
        pages = await beating(ctx, { stage: 'extracting', parsing: true }, () => steps.run('extractPages', bytes, mime, limits));
      } catch (err) {
        if (err instanceof CancelledFailure) throw err;
        if (err instanceof ExtractionLimitError) throw fail(err.message);
        throw fail(`the file could not be read as ${mime}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const drafts = await beating(ctx, { stage: 'extracting', splitting: true }, () => steps.run('splitMemories', pages));
      // a page counts as processed once every memory of it (and of the pages before it) is stored
      const processedAfter = (done: number) => (done >= drafts.length ? pages.length : pages.filter((p) => p.page < drafts[done]!.page).length);
      return { inputs: pages.length, drafts, processedAfter };
    }
    if (job.extraction_type === 'onboarding') {
      const partners = new Map((await listPartnersForMatching(db, job.organization_id)).map((p) => [p.id, p]));
      const habits = new Map((await partnerPaymentHabits(db, job.organization_id)).filter((h) => partners.has(h.partner_id)).map((h) => [h.partner_id, h]));
      // cash-app's figures, gathered by the workflow on the cash-app queue (absent for jobs started before they existed)
      const cash = new Map((cashHabits ? await cashHabitsOf(job, cashHabits) : []).filter((c) => partners.has(c.partner_id)).map((c) => [c.partner_id, c]));
      const ids = [...new Set([...habits.keys(), ...cash.keys()])].sort();
      const profiles = ids.map((id) => {
        const p = partners.get(id)!;
        const h = habits.get(id);
        return {
          partner: { id: p.id, name: p.name, legal_name: p.legal_name, account_number: p.account_number },
          paid_invoices: h?.paid_invoices ?? 0,
          average_days_after_due: h ? h.average_days_after_due : null,
          first_cleared: h?.first_cleared ?? null,
          last_cleared: h?.last_cleared ?? null,
          cash: cash.get(id) ?? null,
        };
      });
      const drafts = pipeline.onboardingMemories(profiles);
      return { inputs: profiles.length, drafts, processedAfter: (done) => (done >= drafts.length ? profiles.length : drafts[done]!.page - 1) };
    }
    const collection = job.collection!;
    const articles = await articleRefs(job.organization_id, collection);
    const pending = await store.collectionMemories(db, job.organization_id, collection, job.id);
    const drafts = pipeline.synthesisMemories(articles, pending);
    const inputs = articles.length + pending.length;
    return { inputs, drafts, processedAfter: (done) => (done >= drafts.length ? inputs : drafts[done]!.page - 1) };
  }

  async function articleRefs(org: string, collection: Collection | null): Promise<(ArticleRef & { version: number })[]> {
    return await store.liveArticles(db, org, collection);
  }

  return {
    async extractMemories(input) {
      const job = await enter(input, 'extracting');
      if (job === 'missing') return { missing: true, done: 0, total: 0 };
      if (!job) return past((await store.getJob(db, input.organizationId, input.jobId))!, 'extracting');
      const { inputs, drafts, processedAfter } = await sources(job, input.cashHabits);
      if (drafts.length > limits.memoriesPerJob) {
        throw fail(new ExtractionLimitError('too_many_memories', `the sources hold ${drafts.length} memories; one extraction stores at most ${limits.memoriesPerJob}. Split the document.`).message);
      }
      await store.setStageProgress(db, job.id, 'extracting', { total: drafts.length }, { input_count: inputs });
      const numbered = drafts.map((draft, seq) => ({ draft, seq }));
      await inChunks(
        job,
        'extracting',
        numbered,
        (trx, chunk) => store.insertMemories(trx, job.organization_id, job.id, chunk.map((c) => ({ id: newId(), ...c }))),
        (done) => ({ processed_count: processedAfter(done) }),
      );
      await store.setStageProgress(db, job.id, 'extracting', {}, { processed_count: inputs });
      return finish(job, 'extracting', drafts.length);
    },

    async dedupeMemories(input) {
      const job = await enter(input, 'deduping');
      if (job === 'missing' || !job) return past((await store.getJob(db, input.organizationId, input.jobId))!, 'deduping');
      const memories = await store.jobMemories(db, job.id);
      const candidates =
        job.extraction_type === 'synthesis'
          ? []
          : [
              ...(await store.otherMemories(db, job.organization_id, job.id, job.collection)).map((m) => ({ id: m.id, kind: 'memory' as const, text: m.text })),
              ...(await store.liveArticles(db, job.organization_id, job.collection)).map((a) => ({ id: a.id, kind: 'article' as const, text: a.content })),
            ];
      const result = await beating(Context.current(), { stage: 'deduping' }, () => steps.run('dedupeMemories', memories.map(store.draftOf), candidates));
      await inChunks(job, 'deduping', result.removed, (trx, chunk) => store.markDuplicates(trx, job.id, chunk));
      await store.markDeduped(db, job.id);
      return finish(job, 'deduping', result.removed.length);
    },

    async enrichMemories(input) {
      const job = await enter(input, 'enriching');
      if (job === 'missing' || !job) return past((await store.getJob(db, input.organizationId, input.jobId))!, 'enriching');
      const kept = await store.jobMemories(db, job.id, { kept: true });
      const partners = (await listPartnersForMatching(db, job.organization_id)).map((p) => ({ id: p.id, name: p.name, legal_name: p.legal_name, account_number: p.account_number }));
      const segments = await segmentNames(db, job.organization_id);
      const enriched = await beating(Context.current(), { stage: 'enriching' }, () => steps.run('enrichMemories', kept.map(store.draftOf), { partners, segments, collection: job.collection }));
      await inChunks(job, 'enriching', enriched, (trx, chunk) => store.storeEnrichment(trx, job.id, chunk));
      if (!job.collection && enriched.length) {
        // the collection most of the memories belong to (ties: the first in the enum's order)
        const counts = new Map<Collection, number>();
        for (const m of enriched) counts.set(m.collection, (counts.get(m.collection) ?? 0) + 1);
        const inferred = [...COLLECTIONS].sort((a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0))[0]!;
        await store.transitionJob(db, job.organization_id, job.id, ['enriching'], 'enriching', { collection: inferred });
      }
      return finish(job, 'enriching', enriched.length);
    },

    async synthesizeProposals(input) {
      const job = await enter(input, 'synthesizing');
      if (job === 'missing' || !job) return past((await store.getJob(db, input.organizationId, input.jobId))!, 'synthesizing');
      const kept = await store.jobMemories(db, job.id, { kept: true });
      const memories: StoredMemory[] = kept.map((m) => ({
        ...store.draftOf(m),
        id: m.id,
        customer_id: m.customer_id,
        segment_id: m.segment_id,
        collection: m.collection ?? job.collection ?? 'company',
        entities: m.entities ?? { amounts: [], percentages: [], day_counts: [], dates: [] },
      }));
      const articles = await articleRefs(job.organization_id, job.collection);
      const versions = new Map(articles.map((a) => [a.id, a.version]));
      const drafts = await beating(Context.current(), { stage: 'synthesizing' }, () =>
        job.extraction_type === 'synthesis' ? steps.run('synthesisProposals', articles, memories) : steps.run('synthesizeProposals', memories, articles),
      );
      await store.setStageProgress(db, job.id, 'synthesizing', { total: drafts.length }, { knowledge_count: drafts.length });
      await inChunks(job, 'synthesizing', drafts, async (trx, chunk) => {
        const inserted = await store.insertProposals(trx, job.organization_id, job.id, chunk.map((draft) => ({ id: newId(), draft, articleVersion: draft.article_id ? (versions.get(draft.article_id) ?? null) : null })));
        // only the rows this attempt added: a retried chunk whose proposals exist records nothing
        await recordProposalsCreated(trx, job.organization_id, inserted);
      });
      return finish(job, 'synthesizing', drafts.length);
    },

    async completeExtraction(input) {
      await store.refreshCounts(db, input.jobId);
      await completeJobRecorded(db, input.organizationId, input.jobId);
      const job = await store.getJob(db, input.organizationId, input.jobId);
      if (job?.status === 'failed') throw fail(job.error ?? 'the extraction job has ended');
      await dropCashHabits(input.organizationId, input.jobId);
      return { memories: job?.memory_count ?? 0, proposals: job?.proposal_count ?? 0 };
    },

    async failExtraction({ organizationId, jobId, error }) {
      await failJobRecorded(db, organizationId, jobId, error);
      await dropCashHabits(organizationId, jobId);
    },
  };
}
