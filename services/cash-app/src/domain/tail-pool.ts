/**
 * The tail probabilities that are too large for the API's event loop (see tail-probability.ts) run on
 * a bounded pool of worker threads (the kernel's WorkerPool): one pool per process, created lazily,
 * at most `size` threads (one less than the cores, at most two). At most `maxQueue` tails wait; a
 * request whose tails find the queue full answers 503 with Retry-After (the report reads and changes
 * nothing, so asking again is safe). An idle thread does not keep the process alive;
 * `closeSharedTailPool` stops the threads and fails what is still queued.
 */
import { defaultWorkerThreads, WorkerPool } from '@rp/platform';
import { statesFor, type PreparedTail, type TailEstimate } from './tail-probability.js';
import type { ops } from './tail-worker.js';

const ENTRY = new URL(`./tail-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * Tails waiting at most. One report offloads at most one tail per customer and tier, each holding its
 * invoices' amounts and probabilities (16 bytes per invoice), so this bounds the memory the queue holds
 * while leaving room for several large reports at once.
 */
export const TAIL_QUEUE = 20_000;

export class TailPool {
  private readonly pool: WorkerPool<typeof ops>;

  constructor(
    readonly size: number,
    maxQueue = TAIL_QUEUE,
  ) {
    this.pool = new WorkerPool<typeof ops>({ name: 'Predicted overdue', entry: ENTRY, threads: size, maxQueue });
  }

  /** The bounded tail probability of `t`, computed on a worker thread (WorkerPoolBusyError when the queue is full). */
  async estimate(t: PreparedTail): Promise<TailEstimate> {
    if (t.decided !== null) return { probability: t.decided, maxError: 0, resolution: 1 };
    return this.pool.run('estimate', [t.threshold, t.cents, t.p, statesFor(t.cents.length)]);
  }

  /** Jobs waiting plus jobs running (for tests and diagnostics). */
  get pending(): number {
    return this.pool.pending;
  }

  /** Stop every thread; queued and running jobs fail. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}

let shared: TailPool | null = null;

/** The process's pool: one less thread than the cores, at least one, at most two. */
export function sharedTailPool(): TailPool {
  shared ??= new TailPool(defaultWorkerThreads());
  return shared;
}

export async function closeSharedTailPool(): Promise<void> {
  const pool = shared;
  shared = null;
  await pool?.close();
}
