/**
 * The extraction pipeline's CPU-heavy steps (parsing, splitting, dedup, enrichment, synthesis) run on
 * worker threads (piscina), so the activity's event loop stays free: its heartbeats go on every second
 * while a step computes for minutes on a large file, and the heartbeat timeout detects a lost worker,
 * never a long step. One pool per worker process, created on first use, at most two threads (one less
 * than the cores); idle threads end after a minute and never keep the process alive.
 */
import os from 'node:os';
import { Piscina } from 'piscina';
import { ExtractionLimitError } from '../extraction/types.js';
import { SourceReadError } from './pipeline.js';
import { PIPELINE_OPS, type PipelineOp, type PipelineOps, type PipelineReply, type PipelineTask } from './pipeline-worker.js';

const BOOT = new URL('./pipeline-worker-boot.mjs', import.meta.url).href;
const ENTRY = new URL(`./pipeline-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

/** Runs pipeline steps: on worker threads (PipelinePool) or, where no pool is given, in the calling thread. */
export interface PipelineRunner {
  run<K extends PipelineOp>(op: K, ...args: Parameters<PipelineOps[K]>): Promise<Awaited<ReturnType<PipelineOps[K]>>>;
}

/** Runs the steps in the calling thread (unit tests of the activities; the worker process uses the pool). */
export const inProcessPipeline: PipelineRunner = {
  run: async (op, ...args) => (PIPELINE_OPS[op] as (...a: unknown[]) => never)(...args),
};

export class PipelinePool implements PipelineRunner {
  private readonly piscina: Piscina;
  private inFlight = 0;

  constructor(threads: number) {
    this.piscina = new Piscina({ filename: BOOT, workerData: { entry: ENTRY }, minThreads: 0, maxThreads: threads, idleTimeout: 60_000 });
  }

  /** Steps running or queued (diagnostics and tests). */
  get running(): number {
    return this.inFlight;
  }

  async run<K extends PipelineOp>(op: K, ...args: Parameters<PipelineOps[K]>): Promise<Awaited<ReturnType<PipelineOps[K]>>> {
    this.inFlight++;
    let reply: PipelineReply;
    try {
      reply = (await this.piscina.run({ op, args } satisfies PipelineTask)) as PipelineReply;
    } finally {
      this.inFlight--;
    }
    if (reply.ok) return reply.value as Awaited<ReturnType<PipelineOps[K]>>;
    if (reply.kind === 'limit') throw new ExtractionLimitError(reply.code, reply.message.slice(reply.code.length + 2));
    if (reply.kind === 'unreadable') throw new SourceReadError(reply.message);
    throw new Error(reply.message);
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}

let shared: PipelinePool | null = null;

/** The process's pool: one less thread than the cores, at least one, at most two. */
export function sharedPipelinePool(): PipelinePool {
  shared ??= new PipelinePool(Math.max(1, Math.min(2, os.availableParallelism() - 1)));
  return shared;
}

export async function closeSharedPipelinePool(): Promise<void> {
  const pool = shared;
  shared = null;
  await pool?.close();
}
