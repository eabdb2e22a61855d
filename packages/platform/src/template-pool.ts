/**
 * Liquid renders off the event loop: a bounded pool of worker threads that render outreach templates
 * (admin's previews and save checks, cash-app's payment receipts) with the kernel's engine
 * (email-templates.ts). A render may take up to TEMPLATE_RENDER_LIMIT_MS, and on the API's event loop
 * that would stall every other request of the process for as long (DESIGN §9: work whose cost
 * depends on the request runs off the event loop).
 *
 * - At most `threads` renders run at once, one per thread; at most `maxQueue` wait. A render asked
 *   for beyond that is refused at once with TemplatePoolBusyError (HTTP 503 + Retry-After), so the
 *   queue, and the memory its contexts hold, never grows without bound.
 * - The engine stops a render at its time limit by itself; a render that still runs
 *   `graceMs` after that limit (a single step the engine cannot interrupt) has its thread
 *   terminated and answers `timeout`, the same outcome as the engine's own limit.
 * - A thread that dies (its heap limit, `maxHeapMb`) answers `failed` for its render and is replaced.
 * - Idle threads do not keep the process alive; threads start lazily.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from './errors.js';
import { TEMPLATE_RENDER_LIMIT_MS } from './email-templates.js';

export interface TemplateJobMessage {
  id: number;
  /** a saved template (id, field, modified_at in ms) whose parsed form the thread may keep (null: parse every time) */
  cacheKey: TemplateCacheKey | null;
  source: string;
  context: unknown;
}

export interface TemplateCacheKey {
  id: string;
  field: string;
  modifiedAt: number;
}

export type TemplateJobReply = { id: number; ok: true; output: string } | { id: number; ok: false; message: string; position: { line: number; col: number } | null };

export type TemplateRenderOutcome =
  | { ok: true; output: string }
  /** `error`: the template failed (syntax, strict variable, a limit of the engine); `timeout`: stopped at the time limit; `failed`: its thread died */
  | { ok: false; reason: 'error' | 'timeout' | 'failed'; message: string; position: { line: number; col: number } | null };

/** All threads busy and the queue full: 503 with Retry-After; nothing was rendered or changed. */
export class TemplatePoolBusyError extends AppError {
  constructor(retryAfterSeconds: number) {
    super({
      status: 503,
      type: 'service-unavailable',
      title: 'Template rendering busy',
      detail: `Every template renderer is busy and the queue is full; nothing was changed. Retry after ${retryAfterSeconds} s.`,
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

export interface TemplatePoolOptions {
  threads: number;
  maxQueue: number;
  /** the engine's render-time limit (default TEMPLATE_RENDER_LIMIT_MS) */
  limitMs?: number;
  /** how long past the limit a render may run before its thread is terminated (default 500 ms) */
  graceMs?: number;
  /** heap of each thread (default 96 MiB; the engine's own memory limit is 16 MiB per render) */
  maxHeapMb?: number;
  /** what a refused render tells the client to wait (default 1 s) */
  retryAfterSeconds?: number;
}

interface Job {
  message: TemplateJobMessage;
  resolve: (r: TemplateRenderOutcome) => void;
  timer?: NodeJS.Timeout;
}

const BOOT = new URL('./template-worker-boot.mjs', import.meta.url);
const ENTRY = new URL(`./template-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

export class TemplatePool {
  private readonly idle: Worker[] = [];
  /** threads loading the engine; a render goes to a thread only once it said it is ready, so the time limit never counts a thread's start */
  private readonly starting = new Set<Worker>();
  private readonly running = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private readonly limitMs: number;
  private readonly graceMs: number;

  constructor(readonly options: TemplatePoolOptions) {
    this.limitMs = options.limitMs ?? TEMPLATE_RENDER_LIMIT_MS;
    this.graceMs = options.graceMs ?? 500;
  }

  /**
   * Render `source` with `context` (plain data: it is copied to the thread) on a worker thread.
   * `cacheKey` names a saved template whose parsed form a thread may reuse while its modified_at
   * and `source` are unchanged (parsed-templates.ts). Throws TemplatePoolBusyError when every thread is busy and the queue is full.
   */
  render(source: string, context: unknown, cacheKey: TemplateCacheKey | null = null): Promise<TemplateRenderOutcome> {
    if (this.closed) return Promise.reject(new Error('template pool closed'));
    // at most `threads` running and `maxQueue` waiting (a render waiting for a starting thread waits)
    if (this.running.size + this.queue.length >= this.options.threads + this.options.maxQueue) return Promise.reject(new TemplatePoolBusyError(this.options.retryAfterSeconds ?? 1));
    return new Promise((resolve) => {
      this.queue.push({ message: { id: this.nextId++, cacheKey, source, context }, resolve });
      this.dispatch();
    });
  }

  /** Renders waiting plus renders running (diagnostics and tests). */
  get pending(): number {
    return this.queue.length + this.running.size;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop();
      if (!worker) {
        // one more thread per waiting render, up to the pool's size; it asks for work once it is ready
        if (this.running.size + this.starting.size < this.options.threads && this.starting.size < this.queue.length) this.spawn();
        return;
      }
      const job = this.queue.shift()!;
      this.running.set(worker, job);
      worker.ref();
      const w = worker;
      job.timer = setTimeout(() => this.stop(w, { ok: false, reason: 'timeout', message: `template render limit exceeded (${this.limitMs} ms)`, position: null }), this.limitMs + this.graceMs);
      worker.postMessage(job.message);
    }
  }

  /** Ends the running job of `worker` with `outcome` and terminates the thread. */
  private stop(worker: Worker, outcome: TemplateRenderOutcome): void {
    const job = this.running.get(worker);
    this.running.delete(worker);
    if (job) {
      clearTimeout(job.timer);
      job.resolve(outcome);
    }
    worker.removeAllListeners();
    void worker.terminate();
    if (!this.closed) this.dispatch();
  }

  private spawn(): Worker {
    const worker = new Worker(BOOT, {
      workerData: { entry: ENTRY },
      name: 'template-render',
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 96 },
    });
    this.starting.add(worker);
    worker.on('message', (reply: TemplateJobReply | { ready: true }) => {
      if ('ready' in reply) {
        this.starting.delete(worker);
        worker.unref();
        if (this.closed) void worker.terminate();
        else {
          this.idle.push(worker);
          this.dispatch();
        }
        return;
      }
      const job = this.running.get(worker);
      if (!job || job.message.id !== reply.id) return;
      clearTimeout(job.timer);
      this.running.delete(worker);
      job.resolve(reply.ok ? { ok: true, output: reply.output } : { ok: false, reason: 'error', message: reply.message, position: reply.position });
      worker.unref();
      if (this.closed) void worker.terminate();
      else {
        this.idle.push(worker);
        this.dispatch();
      }
    });
    const died = (err: Error) => {
      // a thread that dies while starting fails one waiting render, so a start that always fails
      // (e.g. a broken install) empties the queue instead of respawning forever
      if (this.starting.delete(worker)) this.queue.shift()?.resolve({ ok: false, reason: 'failed', message: `the renderer did not start: ${err.message}`, position: null });
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
      this.stop(worker, { ok: false, reason: 'failed', message: `the render stopped: ${err.message}`, position: null });
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`its thread exited with code ${code}`)));
    return worker;
  }

  /** Stops every thread; waiting and running renders answer `failed`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, reason: 'failed', message: 'template pool closed', position: null });
    for (const [, job] of this.running) {
      clearTimeout(job.timer);
      job.resolve({ ok: false, reason: 'failed', message: 'template pool closed', position: null });
    }
    const workers = [...this.idle.splice(0), ...this.starting, ...this.running.keys()];
    this.running.clear();
    this.starting.clear();
    await Promise.all(workers.map((w) => (w.removeAllListeners(), w.terminate())));
  }
}

/** Default size of a process's pool: one thread less than the cores, at least one, at most two. */
export function defaultTemplateThreads(): number {
  return Math.max(1, Math.min(2, os.availableParallelism() - 1));
}
