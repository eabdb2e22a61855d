/**
 * CPU-heavy work off the event loop, one way for every service: a bounded pool of worker threads
 * (piscina) running the named operations of one worker module (DESIGN §9: work whose cost depends on
 * the request runs off the event loop, so one heavy request never stalls the others of its process).
 *
 * - The worker module exports `ops`, an object of functions; `run(op, args)` calls one on a thread
 *   with structured-cloned arguments and resolves with its structured-cloned value.
 * - At most `threads` operations run at once and at most `maxQueue` wait. Beyond that `run` refuses at
 *   once with WorkerPoolBusyError (HTTP 503 + Retry-After): the queue, and the memory its arguments
 *   hold, never grows without bound, and the client learns when to come back.
 * - `timeoutMs` bounds an operation: a thread still running it then is terminated (the only way to stop
 *   a synchronous computation) and `run` rejects with WorkerTaskTimeoutError; piscina replaces the thread.
 *   The limit counts from the moment a thread starts the operation: neither the wait in the queue nor
 *   a thread's start-up counts against it. With `clock: 'thread-cpu'` it counts the CPU time of the
 *   thread running it (thread-cpu.ts), so a thread the scheduler puts behind the process's requests is
 *   not judged by its wait; `wallTimeoutMs` then bounds how long the operation may hold its caller, and
 *   past it the operation is stopped as WorkerTaskStarvedError (503 + Retry-After: the machine is too
 *   busy, the work itself is not at fault). Off Linux the limit counts wall time.
 * - A thread that dies (its heap limit, `maxHeapMb`) rejects its operation with WorkerTaskFailedError.
 * - An error the operation throws comes back as whatever the pool's `revive` makes of it, else as the
 *   service error it was (an AppError: the same status, type, title, detail and issues, so a 422 of a
 *   parse on a thread is the client's 422), else as WorkerTaskError (name, message, own properties).
 * - Threads run at a lower scheduling priority (`nice`, Linux: per thread) so that the process's event
 *   loop, answering cheap requests, is scheduled ahead of them on a busy machine. Idle threads never
 *   keep the process alive.
 */
import os from 'node:os';
import type { TransferListItem } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, ValidationError, type ValidationIssue } from './errors.js';
import { threadCpuMs } from './thread-cpu.js';

/** The functions a worker module exports as `ops`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WorkerOps = Record<string, (...args: any[]) => unknown>;

/** What a thread sends back for an error its operation threw. */
export interface SerializedWorkerError {
  name: string;
  message: string;
  /** the error's own enumerable properties that survive structured cloning (e.g. `code`, `issues`) */
  props: Record<string, unknown>;
}

export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: SerializedWorkerError };

/** The message a thread receives: which operation, with which arguments. */
export interface WorkerTask {
  op: string;
  args: unknown[];
  /** [0] set to 1 by the thread when it starts the operation (the time limit counts from then); [1] the thread's kernel id (0: unknown) */
  started?: Int32Array;
}

export interface WorkerPoolOptions {
  /** names the threads (diagnostics) and the pool in its errors */
  name: string;
  /** the worker module: its `.ts` URL in development (loaded through tsx) or its compiled `.js` */
  entry: URL;
  threads: number;
  /** operations that may wait for a thread beyond the running ones */
  maxQueue: number;
  /** what a refused operation tells the client to wait (default 1 s) */
  retryAfterSeconds?: number;
  /** old-generation heap of each thread (default 128 MiB) */
  maxHeapMb?: number;
  /** an idle thread ends after this long (default 60 s) unless `prestart` keeps it */
  idleTimeoutMs?: number;
  /** scheduling niceness each thread adds to itself (default 5; 0 keeps the process's) */
  nice?: number;
  /** start every thread at once and keep it: the first operations do not wait for threads to load their module */
  prestart?: boolean;
  /** turns an error an operation threw into the error `run` rejects with (undefined: WorkerTaskError) */
  revive?: (error: SerializedWorkerError) => Error | undefined;
}

export interface WorkerRunOptions {
  /** terminate the thread and reject with WorkerTaskTimeoutError when the operation runs longer */
  timeoutMs?: number;
  /** what `timeoutMs` counts: wall time (default), or the CPU time of the thread running the operation */
  clock?: 'wall' | 'thread-cpu';
  /** with `clock: 'thread-cpu'`: the wall time the operation may take before it is stopped as starved (default 5 × timeoutMs) */
  wallTimeoutMs?: number;
  /** the caller gave up: a waiting operation is dropped, a running one's thread terminated */
  signal?: AbortSignal;
  /** buffers moved to the thread instead of copied (their owner loses them) */
  transferList?: TransferListItem[];
}

/** Every thread busy and the queue full: 503 with Retry-After; nothing was done or changed. */
export class WorkerPoolBusyError extends AppError {
  constructor(what: string, retryAfterSeconds: number, detail?: string) {
    super({
      status: 503,
      type: 'service-unavailable',
      title: `${what} busy`,
      detail: detail ?? `Every ${what.toLowerCase()} worker is busy and the queue is full; nothing was changed. Retry after ${retryAfterSeconds} s.`,
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/**
 * A CPU-time-limited operation got too little of the CPU to finish within its wall-time bound (the
 * machine is overloaded): its thread was terminated; 503 + Retry-After, nothing was changed.
 */
export class WorkerTaskStarvedError extends WorkerPoolBusyError {
  constructor(what: string, retryAfterSeconds: number, wallTimeoutMs: number) {
    super(what, retryAfterSeconds, `The machine is too busy to finish this ${what.toLowerCase()} within ${Math.round(wallTimeoutMs / 1000)} s; nothing was changed. Retry after ${retryAfterSeconds} s.`);
  }
}

/** The operation ran past its time limit; its thread was terminated. */
export class WorkerTaskTimeoutError extends Error {
  override readonly name = 'WorkerTaskTimeoutError';
  constructor(
    readonly pool: string,
    readonly op: string,
    readonly timeoutMs: number,
  ) {
    super(`${pool}: ${op} exceeded its time limit (${timeoutMs} ms)`);
  }
}

/** The thread running the operation died (its heap limit, a crash) or could not start. */
export class WorkerTaskFailedError extends Error {
  override readonly name = 'WorkerTaskFailedError';
  constructor(
    readonly pool: string,
    readonly op: string,
    cause: unknown,
  ) {
    super(`${pool}: the thread running ${op} stopped: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** An error the operation threw on its thread, as it was sent back. */
export class WorkerTaskError extends Error {
  constructor(
    readonly remoteName: string,
    message: string,
    readonly props: Record<string, unknown>,
  ) {
    super(message);
    this.name = remoteName;
  }
}

/** Atomics.waitAsync (Node ≥ 16; the project's TypeScript lib predates its declaration). */
const waitAsync = (Atomics as unknown as { waitAsync: (a: Int32Array, i: number, v: number) => { async: false; value: string } | { async: true; value: Promise<string> } }).waitAsync;

const BOOT = new URL('./worker-pool-boot.mjs', import.meta.url).href;

export class WorkerPool<Ops extends WorkerOps> {
  private readonly piscina: Piscina;
  private readonly ready: Promise<void>;
  private inFlight = 0;
  private closed = false;

  constructor(readonly options: WorkerPoolOptions) {
    if (options.threads < 1) throw new Error(`${options.name}: a pool needs at least one thread`);
    this.piscina = new Piscina({
      filename: BOOT,
      workerData: { entry: options.entry.href, nice: options.nice ?? 5 },
      minThreads: options.prestart ? options.threads : 0,
      maxThreads: options.threads,
      idleTimeout: options.prestart ? Number.MAX_SAFE_INTEGER : (options.idleTimeoutMs ?? 60_000),
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 128 },
      // the pool's own bound below refuses first; piscina's is the backstop
      maxQueue: options.maxQueue + options.threads,
      concurrentTasksPerWorker: 1,
    });
    // piscina reports errors of threads that die between tasks here; a task's own death rejects its run
    this.piscina.on('error', () => {});
    this.ready = options.prestart
      ? Promise.all(Array.from({ length: options.threads }, () => this.piscina.run({ op: '__ready', args: [] } satisfies WorkerTask))).then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
  }

  /** Operations running plus waiting (diagnostics and tests). */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Runs `op(...args)` on a thread. Rejects with WorkerPoolBusyError when `threads` run and
   * `maxQueue` wait already, WorkerTaskTimeoutError past `timeoutMs`, WorkerTaskFailedError when its
   * thread dies, and with the operation's own error (revived) when it throws.
   */
  async run<K extends keyof Ops & string>(op: K, args: Parameters<Ops[K]>, opts: WorkerRunOptions = {}): Promise<Awaited<ReturnType<Ops[K]>>> {
    if (this.closed) throw new WorkerTaskFailedError(this.options.name, op, new Error('the pool is closed'));
    if (this.inFlight >= this.options.threads + this.options.maxQueue) throw new WorkerPoolBusyError(this.options.name, this.options.retryAfterSeconds ?? 1);
    this.inFlight++;
    // The time limit counts from the moment a thread starts the operation (it flips `started`), never
    // the wait in the queue or a thread's start-up.
    const started = new Int32Array(new SharedArrayBuffer(8));
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let starved = false;
    let settled = false;
    const onCallerAbort = () => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const wallTimeoutMs = opts.wallTimeoutMs ?? 5 * (opts.timeoutMs ?? 0);
    if (opts.timeoutMs !== undefined) {
      const limit = opts.timeoutMs;
      const stop = (why: 'timeout' | 'starved') => {
        if (why === 'timeout') timedOut = true;
        else starved = true;
        controller.abort();
      };
      const arm = () => {
        if (settled) return;
        const tid = Atomics.load(started, 1);
        const cpuAtStart = opts.clock === 'thread-cpu' && tid > 0 ? threadCpuMs(tid) : null;
        if (cpuAtStart === null) {
          timer = setTimeout(() => stop('timeout'), limit);
          return;
        }
        // The thread's CPU time cannot pass the limit before as much wall time has: look then, and
        // again after the CPU time still left, until the limit or the wall-time bound is reached.
        const wallEnd = performance.now() + wallTimeoutMs;
        const look = (waitMs: number) => {
          timer = setTimeout(() => {
            if (settled) return;
            const used = (threadCpuMs(tid) ?? cpuAtStart + limit) - cpuAtStart;
            if (used >= limit) stop('timeout');
            else if (performance.now() >= wallEnd) stop('starved');
            else look(Math.max(1, Math.min(limit - used, wallEnd - performance.now())));
          }, waitMs);
        };
        look(Math.min(limit, wallTimeoutMs));
      };
      const waiting = waitAsync(started, 0, 0);
      if (waiting.async) void waiting.value.then(arm);
      else arm();
    }
    try {
      await this.ready;
      if (opts.signal?.aborted) throw opts.signal.reason;
      let reply: WorkerReply;
      try {
        reply = (await this.piscina.run({ op, args, started } satisfies WorkerTask, { signal: controller.signal, transferList: opts.transferList as never })) as WorkerReply;
      } catch (err) {
        if (timedOut) throw new WorkerTaskTimeoutError(this.options.name, op, opts.timeoutMs!);
        if (starved) throw new WorkerTaskStarvedError(this.options.name, this.options.retryAfterSeconds ?? 1, wallTimeoutMs);
        if (opts.signal?.aborted) throw opts.signal.reason ?? err;
        throw new WorkerTaskFailedError(this.options.name, op, err);
      }
      if (reply.ok) return reply.value as Awaited<ReturnType<Ops[K]>>;
      throw this.options.revive?.(reply.error) ?? reviveAppError(reply.error) ?? new WorkerTaskError(reply.error.name, reply.error.message, reply.error.props);
    } finally {
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onCallerAbort);
      // wakes the start waiter of an operation that never reached a thread, so it does not linger
      Atomics.store(started, 0, 2);
      Atomics.notify(started, 0);
      this.inFlight--;
    }
  }

  /** Stops every thread; operations still waiting or running reject. */
  async close(): Promise<void> {
    this.closed = true;
    await this.piscina.destroy();
  }
}

/** A service error (AppError, ValidationError with its issues) thrown on a thread, as the same answer here. */
function reviveAppError(e: SerializedWorkerError): AppError | undefined {
  const p = e.props;
  if (typeof p.status !== 'number' || typeof p.type !== 'string' || typeof p.title !== 'string') return undefined;
  const detail = typeof p.detail === 'string' ? p.detail : null;
  if (p.type === 'request-validation' && Array.isArray(p.errors)) return new ValidationError(p.errors as ValidationIssue[], detail ?? undefined);
  const headers = p.headers && typeof p.headers === 'object' ? (p.headers as Record<string, string>) : {};
  return new AppError({ status: p.status, type: p.type, title: p.title, detail, headers });
}

/** A process's default pool size: one thread less than the cores, at least one, at most `max` (default two). */
export function defaultWorkerThreads(max = 2): number {
  return Math.max(1, Math.min(max, os.availableParallelism() - 1));
}
