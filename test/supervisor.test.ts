/**
 * scripts/local/supervisor.ts with real child processes (node one-liners): a crashed child is
 * started again, a crash loop makes the supervisor give up on that child and say why, stop()
 * stops restarted children too, no restart happens during shutdown, and no process is left over.
 * Needs none of the shared stack.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { policyFromEnv, Supervisor, type SupervisedSpec, type SupervisorPolicy } from '../scripts/local/supervisor.js';

const spawned: ChildProcess[] = [];
const supervisors: Supervisor[] = [];

afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stop({ parallel: true })));
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A node child running `code`; it is started with a fresh process each time. */
function nodeChild(code: string): ChildProcess {
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  spawned.push(child);
  return child;
}

const LONG_RUNNING = 'setInterval(() => {}, 1000)';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function supervisor(policy: Partial<SupervisorPolicy>) {
  const messages: string[] = [];
  const s = new Supervisor({ policy, log: (m) => messages.push(m) });
  supervisors.push(s);
  return { s, messages };
}

function spec(name: string, code: string, counter?: { starts: number }): SupervisedSpec {
  return {
    name,
    logFile: `var/logs/${name}.log`,
    start: async () => {
      if (counter) counter.starts++;
      return { child: nodeChild(code) };
    },
  };
}

describe('Supervisor', () => {
  it('starts a child that was killed with SIGKILL again, with a new pid', async () => {
    const { s, messages } = supervisor({ initialBackoffMs: 50 });
    await s.add(spec('worker', LONG_RUNNING));
    const first = s.status()[0]!.pid!;
    expect(alive(first)).toBe(true);
    process.kill(first, 'SIGKILL');
    const second = await until('a restarted worker', () => {
      const st = s.status()[0]!;
      return st.state === 'running' && st.pid !== first && st.pid;
    });
    expect(alive(second)).toBe(true);
    expect(s.status()[0]).toMatchObject({ name: 'worker', state: 'running', restarts: 1, exits: [{ signal: 'SIGKILL', code: null }] });
    expect(messages[0]).toMatch(/^! worker exited \(SIGKILL\); restarting in 50 ms; log: var\/logs\/worker\.log$/);
    expect(messages[1]).toMatch(/worker restarted \(pid \d+, restart 1\)/);
  });

  it('restarts a child that exited on its own, even with code 0 (nobody asked it to)', async () => {
    const { s } = supervisor({ initialBackoffMs: 10 });
    const counter = { starts: 0 };
    await s.add(spec('api', 'setTimeout(() => process.exit(0), 100)', counter));
    await until('a second start', () => counter.starts >= 2);
    expect(s.status()[0]!.exits[0]).toMatchObject({ code: 0, signal: null });
  });

  it('doubles the backoff up to the maximum, and gives up on a crash loop naming the exit codes and the log file', async () => {
    const { s, messages } = supervisor({ initialBackoffMs: 20, maxBackoffMs: 80, maxRestarts: 4, windowMs: 60_000, stableAfterMs: 60_000 });
    const counter = { starts: 0 };
    await s.add(spec('cash-app-worker', 'process.exit(3)', counter));
    const gaveUp = await until('giving up', () => s.status().find((p) => p.state === 'gave-up'));
    expect(counter.starts).toBe(5); // the first start and 4 restarts
    expect(gaveUp.pid).toBeNull();
    expect(gaveUp.reason).toBe('crash loop: 5 exits within 60 s (more than SUPERVISE_MAX_RESTARTS=4): exit code 3, exit code 3, exit code 3, exit code 3, exit code 3');
    const delays = messages.filter((m) => m.includes('restarting in')).map((m) => /restarting in (.+?);/.exec(m)![1]);
    expect(delays).toEqual(['20 ms', '40 ms', '80 ms', '80 ms']);
    expect(messages.at(-1)).toBe(
      `! cash-app-worker: ${gaveUp.reason}. Not restarting it any more; the rest of the stack keeps running; log: var/logs/cash-app-worker.log.`,
    );
    // it stays given up
    await new Promise((r) => setTimeout(r, 200));
    expect(counter.starts).toBe(5);
  });

  it('keeps the other processes running when it gives up on one', async () => {
    const { s } = supervisor({ initialBackoffMs: 5, maxRestarts: 1 });
    await s.add(spec('steady', LONG_RUNNING));
    await s.add(spec('crashing', 'process.exit(1)'));
    await until('giving up on crashing', () => s.status().find((p) => p.name === 'crashing' && p.state === 'gave-up'));
    const steady = s.status().find((p) => p.name === 'steady')!;
    expect(steady).toMatchObject({ state: 'running', restarts: 0 });
    expect(alive(steady.pid!)).toBe(true);
  });

  it('resets the backoff after a process stayed up for stableAfterMs, and forgets crashes outside the window', async () => {
    // stableAfterMs 0 and a window shorter than the process lives: every exit starts afresh.
    const { s, messages } = supervisor({ initialBackoffMs: 30, stableAfterMs: 0, maxRestarts: 1, windowMs: 1 });
    const counter = { starts: 0 };
    await s.add(spec('flappy', 'setTimeout(() => process.exit(1), 50)', counter));
    await until('four starts', () => counter.starts >= 4);
    expect(s.status()[0]!.state).not.toBe('gave-up');
    expect(messages.filter((m) => m.includes('restarting in')).every((m) => m.includes('restarting in 30 ms;'))).toBe(true);
  });

  it('counts a failing start() as a crash and retries it', async () => {
    const { s, messages } = supervisor({ initialBackoffMs: 5, maxRestarts: 3 });
    let starts = 0;
    await s.add({
      name: 'temporal',
      start: async () => {
        starts++;
        if (starts === 1) return { child: nodeChild('process.exit(7)') };
        if (starts < 4) throw new Error('did not listen on port 7233');
        return { child: nodeChild(LONG_RUNNING) };
      },
    });
    await until('a running temporal', () => s.status()[0]!.state === 'running' && starts === 4);
    expect(s.status()[0]!.exits.map((e) => e.error ?? e.code)).toEqual([7, 'did not listen on port 7233', 'did not listen on port 7233']);
    expect(messages.filter((m) => m.startsWith('! temporal'))).toEqual([
      '! temporal exited (exit code 7); restarting in 5 ms',
      '! temporal failed to start: did not listen on port 7233; restarting in 10 ms',
      '! temporal failed to start: did not listen on port 7233; restarting in 20 ms',
    ]);
  });

  it('stop() stops restarted children with their own stop function, and leaves no process behind', async () => {
    const { s } = supervisor({ initialBackoffMs: 10 });
    const stoppedBy: number[] = [];
    await s.add({
      name: 'postgres',
      start: async () => {
        const child = nodeChild(LONG_RUNNING);
        return {
          child,
          stop: async () => {
            stoppedBy.push(child.pid!);
            const exited = new Promise((r) => child.once('exit', r));
            child.kill('SIGINT');
            await exited;
          },
        };
      },
    });
    await s.add(spec('api', LONG_RUNNING));
    const pids = new Set(s.status().map((p) => p.pid!));
    for (const name of ['postgres', 'api']) {
      const before = s.status().find((p) => p.name === name)!.pid!;
      process.kill(before, 'SIGKILL');
      const after = await until(`${name} back`, () => {
        const st = s.status().find((p) => p.name === name)!;
        return st.state === 'running' && st.pid !== before && st.pid;
      });
      pids.add(after);
    }
    expect(pids.size).toBe(4);
    await s.stop();
    expect(stoppedBy).toHaveLength(1); // the restarted postgres, by its own stop function
    expect(s.status().map((p) => [p.name, p.state, p.pid])).toEqual([
      ['postgres', 'stopped', null],
      ['api', 'stopped', null],
    ]);
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(spawned.every((c) => c.exitCode !== null || c.signalCode !== null)).toBe(true);
  });

  it('does not restart anything once stop() was called: a pending restart is cancelled', async () => {
    const { s } = supervisor({ initialBackoffMs: 60_000 });
    const counter = { starts: 0 };
    await s.add(spec('worker', LONG_RUNNING, counter));
    process.kill(s.status()[0]!.pid!, 'SIGKILL');
    await until('the backoff', () => s.status()[0]!.state === 'backoff');
    await s.stop();
    expect(s.status()[0]!.state).toBe('stopped');
    expect(counter.starts).toBe(1);
  });

  it('stops a child whose restart was in progress when stop() was called', async () => {
    const { s } = supervisor({ initialBackoffMs: 1 });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let starts = 0;
    await s.add({
      name: 'slow',
      start: async () => {
        starts++;
        const child = nodeChild(LONG_RUNNING);
        if (starts > 1) await gate; // the restart waits "for readiness"
        return { child };
      },
    });
    process.kill(s.status()[0]!.pid!, 'SIGKILL');
    await until('the restart in progress', () => starts === 2);
    const stopped = s.stop();
    release();
    await stopped;
    expect(spawned).toHaveLength(2);
    for (const child of spawned) expect(alive(child.pid!), `pid ${child.pid}`).toBe(false);
    expect(s.status()[0]).toMatchObject({ state: 'stopped', pid: null });
  });

  it('stop() during a first start waits for it and stops what it started', async () => {
    const { s } = supervisor({});
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const adding = s.add({
      name: 'temporal',
      start: async () => {
        const child = nodeChild(LONG_RUNNING);
        await gate; // waiting for its port
        return { child };
      },
    });
    await until('the child', () => spawned.length === 1);
    const stopped = s.stop();
    release();
    await stopped;
    expect(alive(spawned[0]!.pid!)).toBe(false); // stopped by the time stop() resolved
    await adding;
    expect(s.status()).toMatchObject([{ name: 'temporal', state: 'stopped', pid: null }]);
  });

  it('a first start that fails rejects add() and supervises nothing', async () => {
    const { s } = supervisor({});
    await expect(s.add({ name: 'pg', start: async () => Promise.reject(new Error('port 5433 in use')) })).rejects.toThrow('port 5433 in use');
    expect(s.status()).toEqual([]);
  });

  it('the exits stop() causes are not restarted', async () => {
    const { s } = supervisor({ initialBackoffMs: 0 });
    const counter = { starts: 0 };
    await s.add(spec('api', LONG_RUNNING, counter));
    await s.add(spec('gateway', LONG_RUNNING, counter));
    await s.stop({ parallel: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(counter.starts).toBe(2);
    expect(s.status().every((p) => p.state === 'stopped')).toBe(true);
  });
});

describe('policyFromEnv', () => {
  it('reads the SUPERVISE_* variables and rejects bad values', () => {
    expect(policyFromEnv({})).toEqual({ initialBackoffMs: 500, maxBackoffMs: 30_000, stableAfterMs: 30_000, maxRestarts: 5, windowMs: 60_000 });
    expect(policyFromEnv({ SUPERVISE_MAX_RESTARTS: '2', SUPERVISE_RESTART_WINDOW_MS: '10000', SUPERVISE_BACKOFF_INITIAL_MS: '100' })).toMatchObject({
      maxRestarts: 2,
      windowMs: 10_000,
      initialBackoffMs: 100,
    });
    expect(() => policyFromEnv({ SUPERVISE_MAX_RESTARTS: '-1' })).toThrow(/SUPERVISE_MAX_RESTARTS must be an integer >= 0/);
    expect(() => policyFromEnv({ SUPERVISE_BACKOFF_MAX_MS: 'soon' })).toThrow(/SUPERVISE_BACKOFF_MAX_MS/);
  });
});
