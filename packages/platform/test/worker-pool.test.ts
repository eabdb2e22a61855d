/**
 * The kernel's worker pool (worker-pool.ts) on real worker threads: values and errors cross threads,
 * the queue is bounded (503 with Retry-After beyond it), a time limit terminates a runaway operation
 * and counts only from its start on a thread (or, on request, only the thread's CPU time, with a
 * wall-time bound past which the operation is stopped as starved: 503), a dead thread fails its
 * operation and is replaced, and threads run at a lower priority than the event loop.
 */
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { WorkerPool, WorkerPoolBusyError, WorkerTaskError, WorkerTaskFailedError, WorkerTaskStarvedError, WorkerTaskTimeoutError } from '../src/worker-pool.js';
import type { ops } from './fixtures/worker-ops.js';

const entry = new URL('./fixtures/worker-ops.ts', import.meta.url);
let pool: WorkerPool<typeof ops> | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

describe('worker pool', () => {
  it('runs an operation on a thread and returns its value', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
    expect(await pool.run('add', [2, 40])).toBe(42);
    expect(await pool.run('bytes', [new Uint8Array(1024)])).toBe(1024);
    expect(pool.pending).toBe(0);
  });

  it("brings an operation's error back: a service error as the same answer, others as the pool revives them", async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
    const invalid = await pool.run('invalid', []).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status: 422, type: 'request-validation', errors: [{ loc: ['body', 'file'], msg: 'line 3: not a date', type: 'value_error' }] });
    const plain = await pool.run('plain', []).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(WorkerTaskError);
    expect(plain).toMatchObject({ name: 'RangeError', message: 'out of range', props: { code: 'E_RANGE' } });
    await pool.close();
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2, revive: (e) => (e.props.code === 'E_RANGE' ? new RangeError(e.message) : undefined) });
    expect(await pool.run('plain', []).catch((e: unknown) => e)).toBeInstanceOf(RangeError);
  });

  it('refuses at once with 503 and Retry-After when every thread runs and the queue is full', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Statement parsing', entry, threads: 1, maxQueue: 1, retryAfterSeconds: 3 });
    const running = pool.run('spin', [300]);
    const waiting = pool.run('add', [1, 1]);
    const refused = await pool.run('add', [2, 2]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkerPoolBusyError);
    expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '3' } });
    expect(await running).toBe(true);
    expect(await waiting).toBe(2);
    // capacity is back once they finished
    expect(await pool.run('add', [3, 3])).toBe(6);
  });

  it('terminates an operation past its time limit and runs the next one on a fresh thread', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
    const late = await pool.run('spin', [60_000], { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(WorkerTaskTimeoutError);
    expect(await pool.run('add', [1, 2], { timeoutMs: 200 })).toBe(3);
  });

  it('counts the time limit from the start on a thread, not from the wait in the queue', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
    const first = pool.run('spin', [400]);
    // waits about 400 ms behind `first`, then runs 50 ms: within its 300 ms limit
    const second = pool.run('spin', [50], { timeoutMs: 300 });
    expect(await first).toBe(true);
    expect(await second).toBe(true);
  });

  describe.runIf(process.platform === 'linux')("a limit on the thread's CPU time", () => {
    it('lets an operation wait past the limit while its thread uses no CPU, and the thread is kept', async () => {
      pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2, prestart: true });
      // 600 ms of wall time on its thread, almost none of CPU: within a 200 ms CPU limit
      expect(await pool.run('sleep', [600], { timeoutMs: 200, clock: 'thread-cpu', wallTimeoutMs: 5_000 })).toBe(true);
      // with the wall clock the same operation is stopped
      expect(await pool.run('sleep', [600], { timeoutMs: 200 }).catch((e: unknown) => e)).toBeInstanceOf(WorkerTaskTimeoutError);
    });

    it("terminates an operation whose thread's CPU time passes the limit", async () => {
      pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
      const late = await pool.run('spin', [60_000], { timeoutMs: 300, clock: 'thread-cpu', wallTimeoutMs: 30_000 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(WorkerTaskTimeoutError);
      expect(await pool.run('add', [1, 2])).toBe(3);
    });

    it('stops an operation held past its wall-time bound as starved: 503 with Retry-After, not a failure of the work', async () => {
      pool = new WorkerPool<typeof ops>({ name: 'Template rendering', entry, threads: 1, maxQueue: 2, retryAfterSeconds: 2 });
      const starved = await pool.run('sleep', [60_000], { timeoutMs: 1_000, clock: 'thread-cpu', wallTimeoutMs: 400 }).catch((e: unknown) => e);
      expect(starved).toBeInstanceOf(WorkerTaskStarvedError);
      expect(starved).toBeInstanceOf(WorkerPoolBusyError);
      expect(starved).toMatchObject({ status: 503, type: 'service-unavailable', headers: { 'Retry-After': '2' } });
      expect(await pool.run('add', [2, 2])).toBe(4);
    });

    it("measures a thread's CPU time: work advances the clock, waiting does not", async () => {
      pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
      const r = await pool.run('cpuClock', [150, 300]);
      expect(r).not.toBeNull();
      // generous bounds: the thread may be scheduled out while it spins, but never runs while it waits
      expect(r!.spun).toBeGreaterThan(20);
      expect(r!.slept).toBeLessThan(r!.spun);
      expect(r!.slept).toBeLessThan(100);
    });
  });

  it('fails the operation of a thread that dies at its heap limit and keeps serving', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2, maxHeapMb: 32 });
    expect(await pool.run('exhaust', []).catch((e: unknown) => e)).toBeInstanceOf(WorkerTaskFailedError);
    expect(await pool.run('add', [5, 5])).toBe(10);
  });

  it('drops an operation its caller gave up on', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2 });
    const controller = new AbortController();
    const run = pool.run('spin', [60_000], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 100);
    await expect(run).rejects.toThrow('client went away');
    expect(await pool.run('add', [1, 1])).toBe(2);
  });

  it.runIf(process.platform === 'linux')('runs its threads at a lower priority than the event loop', async () => {
    pool = new WorkerPool<typeof ops>({ name: 'Test', entry, threads: 1, maxQueue: 2, nice: 5, prestart: true });
    const base = os.getPriority(0);
    expect(await pool.run('priority', [])).toBe(Math.min(19, base + 5));
    expect(os.getPriority(0)).toBe(base);
  });
});
