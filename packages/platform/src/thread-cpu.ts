/**
 * CPU time of one thread, for limits that must not depend on how busy the machine is.
 *
 * Worker-pool threads run below the event loop's scheduling priority (worker-pool.ts), so on a busy
 * machine they get the CPU last: a limit counted in wall time would then fail valid work (a template
 * that renders in 600 ms alone takes seconds of wall time behind the process's requests). A limit
 * counted in the thread's own CPU time is the same on an idle and a busy machine, so the threads can
 * yield to cheap requests without their work being judged by the wait.
 *
 * Linux only (`/proc/thread-self/schedstat`, nanoseconds on CPU; `/proc/self/task/<tid>/schedstat`
 * for another thread of the process); elsewhere every function answers null and callers count wall time.
 */
import { closeSync, openSync, readSync } from 'node:fs';

const buffer = Buffer.alloc(128);

/** The first field of a schedstat file (ns on CPU), read through an open descriptor from offset 0. */
function readSchedstatMs(fd: number): number | null {
  try {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const ns = Number(buffer.toString('latin1', 0, n).split(' ', 1)[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

function openOrNull(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}

/** Open schedstat files of this process's threads, by thread id: a pool reads them at every operation it limits. */
const threadFiles = new Map<number, number>();

/** CPU milliseconds thread `tid` of this process has used so far, or null when unknown (ended, not Linux). */
export function threadCpuMs(tid: number): number | null {
  let fd = threadFiles.get(tid);
  if (fd === undefined) {
    const opened = openOrNull(`/proc/self/task/${tid}/schedstat`);
    if (opened === null) return null;
    // a few threads per pool; a file of a thread that ended no longer reads and is closed below
    if (threadFiles.size >= 256) forget(threadFiles.keys().next().value as number);
    threadFiles.set(tid, (fd = opened));
  }
  const ms = readSchedstatMs(fd);
  if (ms === null) forget(tid);
  return ms;
}

function forget(tid: number): void {
  const fd = threadFiles.get(tid);
  threadFiles.delete(tid);
  if (fd !== undefined) closeSync(fd);
}

/** A clock with the shape of `performance` whose `now()` counts milliseconds. */
export interface Clock {
  now(): number;
}

/**
 * The calling thread's CPU time as a `performance`-like clock (null off Linux). Reading the kernel's
 * figure costs a system call, and an engine may ask the time millions of times per render, so the
 * figure is read at most once per wall millisecond and advanced by the wall time in between: `now()`
 * runs ahead of the true CPU time by less than a millisecond and never behind it.
 */
export function threadCpuClock(): Clock | null {
  const fd = openOrNull('/proc/thread-self/schedstat');
  if (fd === null || readSchedstatMs(fd) === null) return null;
  const wall = performance;
  let readAtWall = wall.now();
  let cpuAtRead = readSchedstatMs(fd)!;
  return {
    now() {
      const w = wall.now();
      if (w - readAtWall >= 1) {
        const cpu = readSchedstatMs(fd);
        if (cpu !== null) {
          readAtWall = w;
          cpuAtRead = cpu;
        }
      }
      return cpuAtRead + (w - readAtWall);
    },
  };
}

/**
 * Runs `fn` with `globalThis.performance` answering `clock` (synchronously, then restored). Libraries
 * that time themselves with `performance.now()` — liquidjs's render limit — then count `clock`.
 */
export function withPerformanceClock<T>(clock: Clock | null, fn: () => T): T {
  if (clock === null) return fn();
  const own = Object.getOwnPropertyDescriptor(globalThis, 'performance');
  Object.defineProperty(globalThis, 'performance', { value: clock, configurable: true, writable: true });
  try {
    return fn();
  } finally {
    if (own) Object.defineProperty(globalThis, 'performance', own);
    else delete (globalThis as { performance?: unknown }).performance;
  }
}
