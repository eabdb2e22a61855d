/**
 * End to end: `scripts/start.ts` (what `npm start` runs) on free ports with its own var directory.
 * A worker and the Temporal dev server are killed with SIGKILL; the launcher starts them again
 * (var/supervisor.json shows new pids) and the gateway's /readyz — which needs every service ready,
 * Temporal included — is green again; SIGTERM then stops everything, restarted processes included.
 * Uses none of the shared stack: the launcher brings up its own PostgreSQL, Temporal and MailDev.
 * It runs while the fixed ports of `npm start` are taken (held by this test, as a newcomer's running
 * `npm start` holds them): every one of them is moved to a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { freePorts } from '../scripts/local/components.js';
import { NPM_START_PORTS } from '../scripts/local/ports.js';

interface Status {
  launcher_pid: number;
  phase: string;
  processes: { name: string; kind: string; state: string; pid: number | null; restarts: number; exits: { code: number | null; signal: string | null }[] }[];
}

// under the repo like the run's own data (a mkdtemp directory is private to root; PostgreSQL runs as `postgres`)
const dir = path.resolve('var', 'test', `start-supervision-${process.pid}`);
mkdirSync(dir, { recursive: true });
const statusFile = path.join(dir, 'supervisor.json');
let launcher: ChildProcess;
let output = '';
let gatewayPort = 0;
const everyPid = new Set<number>();

function status(): Status | null {
  if (!existsSync(statusFile)) return null;
  try {
    const s = JSON.parse(readFileSync(statusFile, 'utf8')) as Status;
    for (const p of s.processes) if (p.pid) everyPid.add(p.pid);
    return s;
  } catch {
    return null; // being replaced
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, fn: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (launcher.exitCode !== null) throw new Error(`the launcher exited (${launcher.exitCode}) while waiting for ${what}:\n${output}`);
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function gatewayReady(): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${gatewayPort}/readyz`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

function proc(name: string) {
  return status()?.processes.find((p) => p.name === name);
}

/**
 * Listens on every fixed port of `npm start` that is free, as a newcomer's running `npm start`
 * would; a port some other process holds already is held all the same.
 */
async function holdNpmStartPorts(): Promise<net.Server[]> {
  const held: net.Server[] = [];
  for (const { port } of NPM_START_PORTS) {
    const server = net.createServer((socket) => socket.destroy());
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) held.push(server);
  }
  return held;
}
let held: net.Server[] = [];

beforeAll(async () => {
  held = await holdNpmStartPorts();
  const ports = await freePorts(NPM_START_PORTS.length);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('VITEST') && k !== 'NODE_OPTIONS') env[k] = v;
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SMTP_URL']) delete env[k];
  // every port of npm start moved to a free one: the test never uses the fixed ports
  NPM_START_PORTS.forEach(({ variable }, i) => (env[variable] = String(ports[i])));
  gatewayPort = Number(env.PORT);
  // READYZ_CACHE_MS 0: the gateway's /readyz answers from the services' state of the moment
  Object.assign(env, { LOCAL_VAR_DIR: dir, LOG_LEVEL: 'warn', SUPERVISE_BACKOFF_INITIAL_MS: '200', READYZ_CACHE_MS: '0' });
  launcher = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: path.resolve(import.meta.dirname, '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  launcher.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  launcher.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await until('the stack to be ready', () => status()?.phase === 'ready', 300_000);
}, 330_000);

afterAll(async () => {
  if (launcher && launcher.exitCode === null) {
    launcher.kill('SIGTERM');
    await new Promise((r) => launcher.once('exit', r));
  }
  for (const pid of everyPid) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
}, 60_000);

describe('npm start supervises', () => {
  it('starts a worker killed with SIGKILL again', async () => {
    await until('the gateway ready', gatewayReady);
    const before = proc('knowledge-worker')!;
    expect(before).toMatchObject({ kind: 'process', state: 'running', restarts: 0 });
    process.kill(before.pid!, 'SIGKILL');
    const after = await until('knowledge-worker back', () => {
      const p = proc('knowledge-worker');
      return p?.state === 'running' && p.pid !== before.pid && p;
    });
    expect(after.restarts).toBe(1);
    expect(after.exits).toEqual([expect.objectContaining({ signal: 'SIGKILL' })]);
    expect(output).toMatch(/! knowledge-worker exited \(SIGKILL\); restarting in 200 ms; log: .*knowledge-worker\.log/);
    // the rest kept running
    expect(status()!.processes.filter((p) => p.name !== 'knowledge-worker').every((p) => p.state === 'running' && p.restarts === 0)).toBe(true);
  }, 300_000);

  it('starts the Temporal dev server killed with SIGKILL again on its port, and the stack gets ready again', async () => {
    const before = proc('temporal')!;
    expect(before).toMatchObject({ kind: 'component', state: 'running' });
    process.kill(before.pid!, 'SIGKILL');
    await until('temporal back', () => {
      const p = proc('temporal');
      return p?.state === 'running' && p.pid !== before.pid && p;
    });
    await until('the gateway ready again', gatewayReady);
    expect(output).toMatch(/temporal restarted \(pid \d+, restart 1\)/);
  }, 300_000);

  it('SIGTERM stops everything, restarted processes included, and restarts nothing', async () => {
    const pids = status()!.processes.map((p) => p.pid!);
    expect(pids.every((pid) => alive(pid))).toBe(true);
    launcher.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => launcher.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    const final = JSON.parse(readFileSync(statusFile, 'utf8')) as Status;
    expect(final.phase).toBe('stopped');
    expect(final.processes.every((p) => p.state === 'stopped' && p.pid === null)).toBe(true);
    for (const pid of [...everyPid, ...pids]) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(output).toContain('Stopped.');
  }, 120_000);
});
