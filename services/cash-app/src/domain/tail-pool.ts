/**
 * A small pool of worker threads for the tail probabilities that are too large for the API's event
 * loop (see tail-probability.ts): one per process, created lazily, at most `size` threads (one less
 * than the cores, at most two), first come first served. An idle thread does not keep the process
 * alive; `closeSharedTailPool` stops the threads and fails what is still queued.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { statesFor, type PreparedTail, type TailEstimate } from './tail-probability.js';

export interface TailJobMessage {
  id: number;
  threshold: number;
  cents: Float64Array;
  p: Float64Array;
  maxStates: number;
}

export type TailJobReply = { id: number; ok: true; probability: number; maxError: number; resolution: number } | { id: number; ok: false; error: string };

interface Job {
  message: TailJobMessage;
  resolve: (r: TailEstimate) => void;
  reject: (err: Error) => void;
}

const BOOT = new URL('./tail-worker-boot.mjs', import.meta.url);
const ENTRY = new URL(`./tail-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

export class TailPool {
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly size: number) {}

  /** The bounded tail probability of `t`, computed on a worker thread. */
  estimate(t: PreparedTail): Promise<TailEstimate> {
    if (t.decided !== null) return Promise.resolve({ probability: t.decided, maxError: 0, resolution: 1 });
    if (this.closed) return Promise.reject(new Error('tail pool closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ message: { id: this.nextId++, threshold: t.threshold, cents: t.cents, p: t.p, maxStates: statesFor(t.cents.length) }, resolve, reject });
      this.dispatch();
    });
  }

  /** Jobs waiting plus jobs running (for tests and diagnostics). */
  get pending(): number {
    return this.queue.length + this.running.size;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let worker = this.idle.pop();
      if (!worker) {
        if (this.running.size >= this.size) return;
        worker = this.spawn();
      }
      const job = this.queue.shift()!;
      this.running.set(worker, job);
      worker.ref();
      worker.postMessage(job.message);
    }
  }

  private spawn(): Worker {
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY }, name: 'predicted-overdue-tail' });
    worker.on('message', (reply: TailJobReply) => {
      const job = this.running.get(worker);
      if (!job || job.message.id !== reply.id) return;
      this.running.delete(worker);
      if (reply.ok) job.resolve({ probability: reply.probability, maxError: reply.maxError, resolution: reply.resolution });
      else job.reject(new Error(`tail computation failed: ${reply.error}`));
      worker.unref();
      if (this.closed) void worker.terminate();
      else {
        this.idle.push(worker);
        this.dispatch();
      }
    });
    const fail = (err: Error) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
      job?.reject(err);
      if (!this.closed) this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`tail worker exited with code ${code}`)));
    return worker;
  }

  /** Stop every thread; queued and running jobs fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('tail pool closed'));
    const workers = [...this.idle.splice(0), ...this.running.keys()];
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

let shared: TailPool | null = null;

/** The process's pool: one less thread than the cores, at least one, at most two. */
export function sharedTailPool(): TailPool {
  shared ??= new TailPool(Math.max(1, Math.min(2, os.availableParallelism() - 1)));
  return shared;
}

export async function closeSharedTailPool(): Promise<void> {
  const pool = shared;
  shared = null;
  await pool?.close();
}
