/**
 * The extraction pipeline's CPU-heavy steps (parsing, splitting, dedup, enrichment, synthesis) run on
 * worker threads (the kernel's WorkerPool), so the activity's event loop stays free: its heartbeats go
 * on every second while a step computes for minutes on a large file, and the heartbeat timeout detects
 * a lost worker, never a long step. One pool per worker process, created on first use, at most two
 * threads (one less than the cores); idle threads end after a minute and never keep the process alive.
 * The queue is bounded (PIPELINE_QUEUE); a step that finds it full fails its activity attempt as
 * retryable, and Temporal runs it again after its retry policy's backoff.
 */
import { ApplicationFailure } from '@temporalio/common';
import { defaultWorkerThreads, WorkerPool, WorkerPoolBusyError, type SerializedWorkerError } from '@rp/platform';
import { ExtractionLimitError, type LimitCode } from '../extraction/types.js';
import { SourceReadError } from './pipeline.js';
import { PIPELINE_OPS, type ops, type PipelineOp, type PipelineOps } from './pipeline-worker.js';

const ENTRY = new URL(`./pipeline-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** Steps waiting at most: each holds its input (a document's bytes or its memories) until a thread takes it. */
export const PIPELINE_QUEUE = 32;

/** Runs pipeline steps: on worker threads (PipelinePool) or, where no pool is given, in the calling thread. */
export interface PipelineRunner {
  run<K extends PipelineOp>(op: K, ...args: Parameters<PipelineOps[K]>): Promise<Awaited<ReturnType<PipelineOps[K]>>>;
}

/** Runs the steps in the calling thread (unit tests of the activities; the worker process uses the pool). */
export const inProcessPipeline: PipelineRunner = {
  run: async (op, ...args) => (PIPELINE_OPS[op] as (...a: unknown[]) => never)(...args),
};

/** The pipeline's own errors, as they crossed the thread boundary. */
function revive(e: SerializedWorkerError): Error | undefined {
  if (e.name === 'ExtractionLimitError' && typeof e.props.code === 'string') return new ExtractionLimitError(e.props.code as LimitCode, e.message.slice(e.props.code.length + 2));
  if (e.props.kind === 'unreadable') return new SourceReadError(e.message);
  return undefined;
}

export class PipelinePool implements PipelineRunner {
  private readonly pool: WorkerPool<typeof ops>;

  constructor(threads: number, maxQueue = PIPELINE_QUEUE) {
    // a step's input is a whole document or its memories: a thread gets the heap that needs
    this.pool = new WorkerPool<typeof ops>({ name: 'Knowledge extraction', entry: ENTRY, threads, maxQueue, maxHeapMb: 1024, revive });
  }

  /** Steps running or queued (diagnostics and tests). */
  get running(): number {
    return this.pool.pending;
  }

  async run<K extends PipelineOp>(op: K, ...args: Parameters<PipelineOps[K]>): Promise<Awaited<ReturnType<PipelineOps[K]>>> {
    try {
      return (await this.pool.run(op, args as never)) as Awaited<ReturnType<PipelineOps[K]>>;
    } catch (err) {
      if (err instanceof WorkerPoolBusyError) throw ApplicationFailure.retryable(err.detail ?? err.message, 'ExtractionBusy');
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

let shared: PipelinePool | null = null;

/** The process's pool: one less thread than the cores, at least one, at most two. */
export function sharedPipelinePool(): PipelinePool {
  shared ??= new PipelinePool(defaultWorkerThreads());
  return shared;
}

export async function closeSharedPipelinePool(): Promise<void> {
  const pool = shared;
  shared = null;
  await pool?.close();
}
