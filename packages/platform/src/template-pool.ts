/**
 * Liquid renders off the event loop: a bounded pool of worker threads (the kernel's WorkerPool,
 * worker-pool.ts) that render outreach templates (admin's previews and save checks, cash-app's payment
 * receipts) with the kernel's engine (email-templates.ts). A render may take up to
 * TEMPLATE_RENDER_LIMIT_MS, and on the API's event loop that would stall every other request of the
 * process for as long (DESIGN §9: work whose cost depends on the request runs off the event loop).
 *
 * - At most `threads` renders run at once, one per thread; at most `maxQueue` wait. A render asked
 *   for beyond that is refused at once with TemplatePoolBusyError (HTTP 503 + Retry-After), so the
 *   queue, and the memory its contexts hold, never grows without bound.
 * - The engine stops a render at its time limit by itself; a render that still runs
 *   `graceMs` after that limit (a single step the engine cannot interrupt) has its thread
 *   terminated and answers `timeout`, the same outcome as the engine's own limit. The limit counts
 *   from the render's start on a thread, never its wait in the queue or a thread's start-up, and it
 *   counts the thread's CPU time (thread-cpu.ts; wall time off Linux): a template is judged by its own
 *   work, not by how busy the machine is. A render the machine leaves no CPU to for `starvedAfterMs`
 *   is stopped with TemplatePoolBusyError (503 + Retry-After), never a template error.
 * - Two sets of threads: a template renders on threads at the process's priority until one of its
 *   renders uses HEAVY_RENDER_CPU_MS of CPU; from then on (per template and version, remembered per
 *   process) it renders on threads at the lowest scheduling priority, behind every request of the
 *   machine, so that heavy templates never compete with cheap requests while the everyday templates
 *   (a fraction of a millisecond) keep the throughput of normal priority. A heavy template that renders
 *   quickly again (other data) moves back.
 * - A thread that dies (its heap limit, `maxHeapMb`) answers `failed` for its render and is replaced.
 * - Idle threads do not keep the process alive; threads start lazily.
 */
import { createHash } from 'node:crypto';
import { AppError } from './errors.js';
import { TEMPLATE_RENDER_LIMIT_MS } from './email-templates.js';
import { defaultWorkerThreads, WorkerPool, WorkerPoolBusyError, WorkerTaskStarvedError, WorkerTaskTimeoutError } from './worker-pool.js';
import type { ops } from './template-worker.js';

export interface TemplateCacheKey {
  id: string;
  field: string;
  modifiedAt: number;
}

export type TemplateRenderOutcome =
  | { ok: true; output: string }
  /** `error`: the template failed (syntax, strict variable, a limit of the engine); `timeout`: stopped at the time limit; `failed`: its thread died */
  | { ok: false; reason: 'error' | 'timeout' | 'failed'; message: string; position: { line: number; col: number } | null };

/** All threads busy and the queue full: 503 with Retry-After; nothing was rendered or changed. */
export class TemplatePoolBusyError extends AppError {
  constructor(retryAfterSeconds: number, detail?: string) {
    super({
      status: 503,
      type: 'service-unavailable',
      title: 'Template rendering busy',
      detail: detail ?? `Every template renderer is busy and the queue is full; nothing was changed. Retry after ${retryAfterSeconds} s.`,
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
  /** wall time a render may wait for the CPU before it is stopped as busy (default 10 × the limit) */
  starvedAfterMs?: number;
}

/** CPU time of one operation past which its template is heavy and renders at the lowest priority from then on. */
export const HEAVY_RENDER_CPU_MS = 20;
/** Templates remembered as heavy, per process (the oldest is forgotten first). */
const HEAVY_TEMPLATES_KEPT = 10_000;

const ENTRY = new URL(`./template-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class TemplatePool {
  private readonly pool: WorkerPool<typeof ops>;
  private readonly heavyPool: WorkerPool<typeof ops>;
  /** templates (their cost keys) whose last render used HEAVY_RENDER_CPU_MS or more */
  private readonly heavy = new Set<string>();
  private readonly limitMs: number;
  private readonly graceMs: number;
  private readonly retryAfterSeconds: number;

  constructor(readonly options: TemplatePoolOptions) {
    this.limitMs = options.limitMs ?? TEMPLATE_RENDER_LIMIT_MS;
    this.graceMs = options.graceMs ?? 500;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
    const pool = (nice: number) =>
      new WorkerPool<typeof ops>({
        name: 'Template rendering',
        entry: ENTRY,
        threads: options.threads,
        maxQueue: options.maxQueue,
        retryAfterSeconds: this.retryAfterSeconds,
        maxHeapMb: options.maxHeapMb ?? 96,
        nice,
      });
    this.pool = pool(0);
    // a render's limit counts its thread's CPU time, so these threads can yield to everything else
    this.heavyPool = pool(19);
  }

  /** Runs one render operation on the threads its template's cost calls for, and learns its cost. */
  private async run<K extends 'render' | 'renderAll'>(op: K, args: Parameters<(typeof ops)[K]>, parts: { source: string; cacheKey: TemplateCacheKey | null }[]) {
    const key = costKey(parts);
    let reply: { value: Awaited<ReturnType<(typeof ops)[K]>>['value']; cpuMs: number | null };
    try {
      reply = (await (this.heavy.has(key) ? this.heavyPool : this.pool).run(op, args, this.limits(parts.length))) as typeof reply;
    } catch (err) {
      // stopped past its limit: as heavy as a render gets
      if (err instanceof WorkerTaskTimeoutError) this.learn(key, true);
      throw err;
    }
    if (reply.cpuMs !== null) this.learn(key, reply.cpuMs >= HEAVY_RENDER_CPU_MS);
    return reply.value;
  }

  /** Remembers whether the template of `key` is heavy (the most recently heavy kept longest). */
  private learn(key: string, heavy: boolean): void {
    this.heavy.delete(key);
    if (!heavy) return;
    this.heavy.add(key);
    if (this.heavy.size > HEAVY_TEMPLATES_KEPT) this.heavy.delete(this.heavy.values().next().value as string);
  }

  /**
   * Render `source` with `context` (plain data: it is copied to the thread) on a worker thread.
   * `cacheKey` names a saved template whose parsed form a thread may reuse while its modified_at
   * and `source` are unchanged (parsed-templates.ts). Throws TemplatePoolBusyError when every thread is busy and the queue is full.
   */
  async render(source: string, context: unknown, cacheKey: TemplateCacheKey | null = null): Promise<TemplateRenderOutcome> {
    try {
      const reply = await this.run('render', [source, context, cacheKey], [{ source, cacheKey }]);
      return reply.ok ? reply : { ok: false, reason: 'error', message: reply.message, position: reply.position };
    } catch (err) {
      if (err instanceof WorkerPoolBusyError) throw this.busy(err);
      if (err instanceof WorkerTaskTimeoutError) return { ok: false, reason: 'timeout', message: `template render limit exceeded (${this.limitMs} ms)`, position: null };
      return { ok: false, reason: 'failed', message: `the render stopped: ${err instanceof Error ? err.message : String(err)}`, position: null };
    }
  }

  /**
   * Render the parts of one message (e.g. subject and body) against the same `context` in one operation
   * on one thread: the context is copied once and the hand-off to a thread paid once. Each part has the
   * engine's own limit; the thread is terminated only past the sum of the parts' limits plus the grace,
   * and then every part answers `timeout`. Throws TemplatePoolBusyError like render().
   */
  async renderAll(parts: { source: string; cacheKey: TemplateCacheKey | null }[], context: unknown): Promise<TemplateRenderOutcome[]> {
    try {
      const replies = await this.run('renderAll', [parts, context], parts);
      return replies.map((reply) => (reply.ok ? reply : { ok: false, reason: 'error', message: reply.message, position: reply.position }));
    } catch (err) {
      if (err instanceof WorkerPoolBusyError) throw this.busy(err);
      const outcome: TemplateRenderOutcome =
        err instanceof WorkerTaskTimeoutError
          ? { ok: false, reason: 'timeout', message: `template render limit exceeded (${this.limitMs} ms)`, position: null }
          : { ok: false, reason: 'failed', message: `the render stopped: ${err instanceof Error ? err.message : String(err)}`, position: null };
      return parts.map(() => outcome);
    }
  }

  /** The pool's limits for an operation of `parts` renders: each part's engine limit, plus the grace. */
  private limits(parts: number) {
    const timeoutMs = this.limitMs * Math.max(1, parts) + this.graceMs;
    return { timeoutMs, clock: 'thread-cpu' as const, wallTimeoutMs: Math.max(timeoutMs, this.options.starvedAfterMs ?? 10 * this.limitMs * Math.max(1, parts)) };
  }

  private busy(err: WorkerPoolBusyError): TemplatePoolBusyError {
    return err instanceof WorkerTaskStarvedError
      ? new TemplatePoolBusyError(this.retryAfterSeconds, `The machine is too busy to finish this render now; nothing was changed. Retry after ${this.retryAfterSeconds} s.`)
      : new TemplatePoolBusyError(this.retryAfterSeconds);
  }

  /** Renders waiting plus renders running (diagnostics and tests). */
  get pending(): number {
    return this.pool.pending + this.heavyPool.pending;
  }

  /** Whether the template of these parts renders on the lowest-priority threads (diagnostics and tests). */
  isHeavy(parts: { source: string; cacheKey: TemplateCacheKey | null }[]): boolean {
    return this.heavy.has(costKey(parts));
  }

  /** Stops every thread; waiting and running renders answer `failed`. */
  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.heavyPool.close()]);
  }
}

/** What a template's cost is remembered by: a saved template's id, field and version, else its source's digest. */
function costKey(parts: { source: string; cacheKey: TemplateCacheKey | null }[]): string {
  return parts
    .map((p) => (p.cacheKey ? `${p.cacheKey.id}:${p.cacheKey.field}:${p.cacheKey.modifiedAt}` : createHash('sha256').update(p.source).digest('base64url')))
    .join('|');
}

/** Default size of a process's pool: one thread less than the cores, at least one, at most two. */
export function defaultTemplateThreads(): number {
  return defaultWorkerThreads();
}
