/**
 * The extraction pipeline's heavy steps run on worker threads (pipeline-pool.ts), so an activity keeps
 * heartbeating while a step computes: a step run through `beating` in a MockActivityEnvironment
 * records heartbeats while it is in flight on the pool, none while the same step blocks the calling
 * thread. The pipeline's own errors cross the thread boundary with their type and code.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { beating } from '../src/activities/playbook-extraction.js';
import { inProcessPipeline, PipelinePool, type PipelineRunner } from '../src/activities/pipeline-pool.js';
import { SourceReadError } from '../src/activities/pipeline.js';
import { ExtractionLimitError, type DedupResult, type MemoryDraft } from '../src/extraction/types.js';
import { fixture } from './extraction-support.js';

const pool = new PipelinePool(1);
afterAll(() => pool.close());

/** Distinct drafts of ~20 words each: a dedup over them is seconds of MinHash work, not milliseconds. */
function drafts(n: number): MemoryDraft[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `Rule ${i}: accounts ${i * 7} in region ${i % 97} receive statement ${i * 13} on business day ${i % 28} of month ${i % 12}, escalated after ${i % 60} days by team ${i % 31}.`;
    return { key: `k${i}`, text, excerpt: text, page: 1, start: 0, end: text.length, knowledge_type: 'declarative' as const, text_hash: `h${i}` };
  });
}

/** Heartbeats emitted while the step was in flight (after the one `beating` sends before it starts). */
async function heartbeatsDuring(runner: PipelineRunner): Promise<{ during: number; kept: number }> {
  const env = new MockActivityEnvironment();
  let inFlight = false;
  let during = 0;
  env.on('heartbeat', () => {
    if (inFlight) during++;
  });
  const input = drafts(6000);
  const result: DedupResult = await env.run(async () =>
    beating(
      Context.current(),
      { stage: 'deduping' },
      async () => {
        inFlight = true;
        try {
          return await runner.run('dedupeMemories', input, []);
        } finally {
          inFlight = false;
        }
      },
      10,
    ),
  );
  return { during, kept: result.kept.length };
}

describe('pipeline pool', () => {
  it('keeps the activity heartbeating while a heavy step runs on a worker thread', async () => {
    const pooled = await heartbeatsDuring(pool);
    expect(pooled.kept).toBe(6000);
    expect(pooled.during).toBeGreaterThanOrEqual(2);
    // the same step in the calling thread blocks its event loop: no heartbeat goes out until it is done
    const blocking = await heartbeatsDuring(inProcessPipeline);
    expect(blocking.kept).toBe(6000);
    expect(blocking.during).toBe(0);
  }, 120_000);

  it('rethrows the pipeline\'s errors with their type: a limit with its code, an unreadable source', async () => {
    const limit = await pool.run('extractPages', fixture('ar-playbook.pdf'), 'application/pdf', { pdfPages: 2, docxInflatedBytes: 1e9 }).catch((e: unknown) => e);
    expect(limit).toBeInstanceOf(ExtractionLimitError);
    expect((limit as ExtractionLimitError).code).toBe('too_many_pages');
    expect((limit as Error).message).toMatch(/^too_many_pages: the PDF has 3 pages/);
    const unreadable = await pool.run('extractPages', new Uint8Array([1, 2, 3]), 'application/pdf').catch((e: unknown) => e);
    expect(unreadable).toBeInstanceOf(SourceReadError);
    const pages = await pool.run('extractPages', fixture('ar-playbook.pdf'), 'application/pdf');
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3]);
  }, 60_000);

  it('fails a step as retryable when every thread works and the queue is full, and runs it once there is room', async () => {
    const small = new PipelinePool(1, 0);
    try {
      const running = small.run('dedupeMemories', drafts(500), []);
      const refused = await small.run('dedupeMemories', drafts(5), []).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApplicationFailure);
      expect(refused).toMatchObject({ type: 'ExtractionBusy', nonRetryable: false });
      expect((await running).kept).toHaveLength(500);
      expect((await small.run('dedupeMemories', drafts(5), [])).kept).toHaveLength(5);
    } finally {
      await small.close();
    }
  }, 60_000);
});
