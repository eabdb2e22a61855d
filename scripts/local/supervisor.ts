/**
 * Supervision of the local stack's processes (used by scripts/start.ts): a supervised process that
 * exits without being asked to is started again after a backoff (initial, doubling up to a maximum,
 * back to the initial one once the process had stayed up for `stableAfterMs`). A crash loop — more
 * than `maxRestarts` exits within `windowMs` — makes the supervisor give up on THAT process and say
 * why (exit codes, log file); everything else keeps running. stop() stops every process, including
 * restarted ones, and no restart happens once it was called.
 */
import type { ChildProcess } from 'node:child_process';
import { stopChild } from './components.js';

/** What a spec's start() returns: the child to watch and, optionally, how to stop it. */
export interface Started {
  child: ChildProcess;
  stop?: () => Promise<void>;
}

export interface SupervisedSpec {
  name: string;
  /** Shown in the messages, so a developer knows where to look. */
  logFile?: string;
  /** Starts the process (again); may wait for it to be ready. A rejection counts as a crash. */
  start: () => Promise<Started>;
}

export interface SupervisorPolicy {
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A process that stayed up this long is restarted after the initial backoff again. */
  stableAfterMs: number;
  /** Give up when a process exits more than this many times within windowMs. */
  maxRestarts: number;
  windowMs: number;
}

export const DEFAULT_POLICY: SupervisorPolicy = {
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  stableAfterMs: 30_000,
  maxRestarts: 5,
  windowMs: 60_000,
};

/** The policy from SUPERVISE_* variables (docs/operations/supervision.md). */
export function policyFromEnv(env: Record<string, string | undefined> = process.env): SupervisorPolicy {
  const num = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min} (got "${raw}")`);
    return n;
  };
  return {
    initialBackoffMs: num('SUPERVISE_BACKOFF_INITIAL_MS', DEFAULT_POLICY.initialBackoffMs, 0),
    maxBackoffMs: num('SUPERVISE_BACKOFF_MAX_MS', DEFAULT_POLICY.maxBackoffMs, 0),
    stableAfterMs: num('SUPERVISE_STABLE_MS', DEFAULT_POLICY.stableAfterMs, 0),
    maxRestarts: num('SUPERVISE_MAX_RESTARTS', DEFAULT_POLICY.maxRestarts, 0),
    windowMs: num('SUPERVISE_RESTART_WINDOW_MS', DEFAULT_POLICY.windowMs, 1),
  };
}

export type ProcessState = 'starting' | 'running' | 'backoff' | 'gave-up' | 'stopped';

export interface ExitRecord {
  code: number | null;
  signal: string | null;
  /** set when start() itself failed */
  error?: string;
  at: string;
}

export interface ProcessStatus {
  name: string;
  state: ProcessState;
  pid: number | null;
  /** how often it was started again */
  restarts: number;
  /** the last exits (at most 10), oldest first */
  exits: ExitRecord[];
  logFile?: string;
  /** why the supervisor gave up */
  reason?: string;
}

interface Entry {
  spec: SupervisedSpec;
  state: ProcessState;
  current: Started | null;
  restarts: number;
  crashes: number[];
  exits: ExitRecord[];
  backoffMs: number;
  startedAt: number;
  timer: NodeJS.Timeout | null;
  starting: Promise<void> | null;
  reason?: string;
}

export function describeExit(e: Pick<ExitRecord, 'code' | 'signal' | 'error'>): string {
  if (e.error) return `failed to start: ${e.error}`;
  return e.signal ?? `exit code ${e.code}`;
}

export class Supervisor {
  private readonly entries: Entry[] = [];
  private stopping = false;
  private readonly policy: SupervisorPolicy;
  private readonly log: (msg: string) => void;
  private readonly onChange: () => void;

  constructor(opts: { policy?: Partial<SupervisorPolicy>; log?: (msg: string) => void; onChange?: () => void } = {}) {
    this.policy = { ...DEFAULT_POLICY, ...opts.policy };
    this.log = opts.log ?? ((msg) => process.stdout.write(`${msg}\n`));
    this.onChange = opts.onChange ?? (() => {});
  }

  /** Start a process and supervise it; rejects (nothing supervised) when its first start fails. */
  async add(spec: SupervisedSpec): Promise<void> {
    if (this.stopping) throw new Error(`supervisor is stopping; ${spec.name} not started`);
    if (this.entries.some((e) => e.spec.name === spec.name)) throw new Error(`${spec.name} is supervised already`);
    const entry: Entry = {
      spec,
      state: 'starting',
      current: null,
      restarts: 0,
      crashes: [],
      exits: [],
      backoffMs: this.policy.initialBackoffMs,
      startedAt: Date.now(),
      timer: null,
      starting: null,
    };
    // Listed while it starts, so that a stop() meanwhile waits for it and stops it.
    this.entries.push(entry);
    const run = (async () => {
      const started = await spec.start();
      if (this.stopping) {
        await stopStarted(started);
        entry.state = 'stopped';
        return;
      }
      this.watch(entry, started);
    })();
    entry.starting = run.catch(() => {});
    try {
      await run;
    } catch (err) {
      this.entries.splice(this.entries.indexOf(entry), 1);
      throw err;
    } finally {
      entry.starting = null;
    }
  }

  status(): ProcessStatus[] {
    return this.entries.map((e) => ({
      name: e.spec.name,
      state: e.state,
      pid: e.current?.child.pid ?? null,
      restarts: e.restarts,
      exits: [...e.exits],
      ...(e.spec.logFile ? { logFile: e.spec.logFile } : {}),
      ...(e.reason ? { reason: e.reason } : {}),
    }));
  }

  /**
   * Stop every process, the last added first (sequentially, or all at once with `parallel`). No
   * restart happens after this was called; a restart in progress is stopped once it started.
   */
  async stop(opts: { parallel?: boolean } = {}): Promise<void> {
    this.stopping = true;
    for (const e of this.entries) {
      if (e.timer) clearTimeout(e.timer);
      e.timer = null;
    }
    const stopOne = async (e: Entry) => {
      await e.starting;
      const current = e.current;
      e.current = null;
      if (current) await stopStarted(current);
      if (e.state !== 'gave-up') e.state = 'stopped';
    };
    const list = [...this.entries].reverse();
    if (opts.parallel) await Promise.all(list.map(stopOne));
    else for (const e of list) await stopOne(e);
    this.onChange();
  }

  private watch(entry: Entry, started: Started): void {
    entry.current = started;
    entry.state = 'running';
    entry.startedAt = Date.now();
    const child = started.child;
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (entry.current !== started) return;
      entry.current = null;
      this.crashed(entry, { code, signal, at: new Date().toISOString() });
    };
    if (child.exitCode !== null || child.signalCode !== null) setImmediate(() => onExit(child.exitCode, child.signalCode));
    else child.once('exit', onExit);
    this.onChange();
  }

  private crashed(entry: Entry, exit: ExitRecord): void {
    entry.exits.push(exit);
    if (entry.exits.length > 10) entry.exits.shift();
    const name = entry.spec.name;
    const where = entry.spec.logFile ? `; log: ${entry.spec.logFile}` : '';
    if (this.stopping) {
      entry.state = 'stopped';
      this.onChange();
      return;
    }
    const now = Date.now();
    if (now - entry.startedAt >= this.policy.stableAfterMs) entry.backoffMs = this.policy.initialBackoffMs;
    entry.crashes = entry.crashes.filter((t) => now - t < this.policy.windowMs);
    entry.crashes.push(now);
    if (entry.crashes.length > this.policy.maxRestarts) {
      const recent = entry.exits.slice(-entry.crashes.length).map(describeExit);
      entry.state = 'gave-up';
      entry.reason =
        `crash loop: ${entry.crashes.length} exits within ${Math.round(this.policy.windowMs / 1000)} s ` +
        `(more than SUPERVISE_MAX_RESTARTS=${this.policy.maxRestarts}): ${recent.join(', ')}`;
      this.log(`! ${name}: ${entry.reason}. Not restarting it any more; the rest of the stack keeps running${where}.`);
      this.onChange();
      return;
    }
    const delay = entry.backoffMs;
    entry.backoffMs = Math.min(entry.backoffMs * 2, this.policy.maxBackoffMs);
    entry.state = 'backoff';
    this.log(`! ${name} ${exit.error ? describeExit(exit) : `exited (${describeExit(exit)})`}; restarting in ${formatSeconds(delay)}${where}`);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      entry.starting = this.restart(entry).finally(() => {
        entry.starting = null;
      });
    }, delay);
    this.onChange();
  }

  private async restart(entry: Entry): Promise<void> {
    if (this.stopping) return;
    entry.state = 'starting';
    entry.restarts++;
    entry.startedAt = Date.now();
    this.onChange();
    let started: Started;
    try {
      started = await entry.spec.start();
    } catch (err) {
      this.crashed(entry, { code: null, signal: null, error: (err as Error).message ?? String(err), at: new Date().toISOString() });
      return;
    }
    if (this.stopping) {
      await stopStarted(started);
      entry.state = 'stopped';
      return;
    }
    this.log(`  ${entry.spec.name} restarted (pid ${started.child.pid}, restart ${entry.restarts})`);
    this.watch(entry, started);
  }
}

async function stopStarted(started: Started): Promise<void> {
  if (started.stop) await started.stop().catch(() => stopChild(started.child));
  else await stopChild(started.child);
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
