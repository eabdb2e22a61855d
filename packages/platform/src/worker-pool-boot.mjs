// Entry of a worker-pool thread (see worker-pool.ts): lowers the thread's own scheduling priority,
// loads the pool's worker module — its TypeScript through tsx (the services run TypeScript with tsx,
// and Node 20 worker threads do not inherit `--import tsx`) or its compiled .js directly — and hands
// piscina one task function that calls the module's `ops` and sends back their value or their error.
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { workerData } from 'node:worker_threads';

const { entry, nice } = workerData;
if (nice > 0) {
  try {
    // Linux applies this to the calling thread alone: the process's event loop keeps its priority.
    os.setPriority(0, Math.min(19, os.getPriority(0) + nice));
  } catch {
    // a platform that cannot renice a thread runs it at the process's priority
  }
}
// The thread's kernel id, handed to the pool with each operation it starts: a CPU-time limit reads
// this thread's CPU time (thread-cpu.ts). 0 where the platform has no /proc/thread-self.
let threadId = 0;
try {
  threadId = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1] ?? 0);
} catch {
  // not Linux: CPU-time limits count wall time
}
const mod = entry.endsWith('.ts') ? await (await import('tsx/esm/api')).tsImport(entry, import.meta.url) : await import(entry);
const ops = mod.ops;
if (!ops || typeof ops !== 'object') throw new Error(`${entry} exports no \`ops\``);

/** An error as plain data: name, message and the own properties structured cloning can carry. */
function serialize(err) {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), props: {} };
  const props = {};
  for (const [k, v] of Object.entries(err)) {
    try {
      props[k] = structuredClone(v);
    } catch {
      // a property that cannot cross threads (a function, a socket) stays behind
    }
  }
  return { name: err.name, message: err.message, props };
}

export default async function runTask({ op, args, started }) {
  if (started) {
    if (started.length > 1) Atomics.store(started, 1, threadId);
    Atomics.store(started, 0, 1);
    Atomics.notify(started, 0);
  }
  if (op === '__ready') return { ok: true, value: null };
  const fn = Object.hasOwn(ops, op) ? ops[op] : undefined;
  if (typeof fn !== 'function') return { ok: false, error: { name: 'Error', message: `unknown worker operation ${op}`, props: {} } };
  try {
    return { ok: true, value: await fn(...args) };
  } catch (err) {
    return { ok: false, error: serialize(err) };
  }
}
