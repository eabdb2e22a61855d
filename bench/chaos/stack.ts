/**
 * The real local stack for the fault-injection suite: `scripts/start.ts` (the `npm start` launcher)
 * on free ports with a data directory of its own, and the handles a scenario needs to hurt it:
 * the processes of the launcher's tree (found in /proc, so it works whatever supervises them), kill -9,
 * stopping and restarting the embedded PostgreSQL and the Temporal dev server, readiness probes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { portOpen } from '../../scripts/local/components.js';
import { fixedFreePorts } from './ports.js';
import { alive, descendants, type Proc, readProc } from './processes.js';
import { Fatal, sleep, waitFor } from './wait.js';

export type Role = 'cash-app-worker' | 'integrations-worker' | 'admin-worker' | 'integrations-api' | 'cash-app-api' | 'admin-api' | 'api-gateway';

const ROLE_FILE: Record<Role, string> = {
  'cash-app-worker': 'services/cash-app/src/worker.ts',
  'integrations-worker': 'services/integrations/src/worker.ts',
  'admin-worker': 'services/admin/src/worker.ts',
  'integrations-api': 'services/integrations/src/server.ts',
  'cash-app-api': 'services/cash-app/src/server.ts',
  'admin-api': 'services/admin/src/server.ts',
  'api-gateway': 'services/api-gateway/src/server.ts',
};

export interface StackPorts {
  gateway: number;
  pg: number;
  temporal: number;
  temporalUi: number;
  smtp: number;
  mailWeb: number;
  integrations: number;
  cashApp: number;
  knowledge: number;
  admin: number;
}

export class Stack {
  launcher: ChildProcess | null = null;
  /** processes the suite itself started (a PostgreSQL or Temporal restarted by hand): stopped at teardown */
  private own: { pid: number; stop: () => Promise<void> }[] = [];
  exitNote = '';
  localEnv: { DATABASE_URL: string; TEMPORAL_ADDRESS: string; TEMPORAL_NAMESPACE: string } | null = null;

  constructor(
    readonly root: string,
    readonly varDir: string,
    readonly ports: StackPorts,
    public extraEnv: Record<string, string>,
    private readonly log: (m: string) => void,
  ) {}

  static async create(root: string, varDir: string, extraEnv: Record<string, string>, log: (m: string) => void): Promise<Stack> {
    const [gateway, pg, temporal, temporalUi, smtp, mailWeb, integrations, cashApp, knowledge, admin] = await fixedFreePorts(10);
    return new Stack(root, varDir, { gateway, pg, temporal, temporalUi, smtp, mailWeb, integrations, cashApp, knowledge, admin }, extraEnv, log);
  }

  get gatewayUrl() {
    return `http://127.0.0.1:${this.ports.gateway}`;
  }
  get mailUrl() {
    return `http://127.0.0.1:${this.ports.mailWeb}`;
  }
  get logDir() {
    return path.join(this.varDir, 'logs');
  }

  /** The launcher writes var/supervisor.json when it supervises (restarts) its processes and components. */
  supervised(): boolean {
    return existsSync(path.join(this.varDir, 'supervisor.json'));
  }

  running(): boolean {
    return !!this.launcher && this.launcher.exitCode === null && this.launcher.signalCode === null;
  }

  /** Start the launcher and wait until the gateway answers /readyz 200. */
  async start(timeoutMs = 240_000): Promise<number> {
    mkdirSync(this.logDir, { recursive: true });
    const t0 = Date.now();
    const out = createWriteStream(path.join(this.varDir, 'launcher.log'), { flags: 'a' });
    const p = this.ports;
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: this.root,
      env: {
        ...process.env,
        PORT: String(p.gateway),
        LOCAL_PG_PORT: String(p.pg),
        LOCAL_TEMPORAL_PORT: String(p.temporal),
        LOCAL_TEMPORAL_UI_PORT: String(p.temporalUi),
        LOCAL_SMTP_PORT: String(p.smtp),
        LOCAL_MAIL_WEB_PORT: String(p.mailWeb),
        LOCAL_INTEGRATIONS_PORT: String(p.integrations),
        LOCAL_CASH_APP_PORT: String(p.cashApp),
        LOCAL_KNOWLEDGE_PORT: String(p.knowledge),
        LOCAL_ADMIN_PORT: String(p.admin),
        LOCAL_VAR_DIR: this.varDir,
        ...this.extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: teardown can reach everything it started
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    child.on('exit', (code, signal) => {
      this.exitNote = `the launcher exited (${code ?? signal}); see ${path.join(this.varDir, 'launcher.log')}`;
    });
    this.launcher = child;
    this.exitNote = '';
    await waitFor(`the stack to be ready (gateway /readyz on port ${p.gateway}); ${path.join(this.varDir, 'launcher.log')}`, timeoutMs, async () => {
      if (!this.running()) throw new Fatal(this.exitNote);
      if ((await this.readyz()) !== 200) return false;
      for (const port of [p.integrations, p.cashApp, p.knowledge, p.admin]) {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
        await res.text();
        if (res.status !== 200) return false;
      }
      return true;
    }, 500).catch((err) => {
      if (!this.running()) throw new Error(`the stack did not start: ${this.exitNote}`);
      throw err;
    });
    this.localEnv = JSON.parse(readFileSync(path.join(this.varDir, 'local-env.json'), 'utf8'));
    return Date.now() - t0;
  }

  async readyz(): Promise<number> {
    try {
      const res = await fetch(`${this.gatewayUrl}/readyz`, { signal: AbortSignal.timeout(3000) });
      await res.text();
      return res.status;
    } catch {
      return 0;
    }
  }

  /** Ctrl-C to the launcher (a clean stop), then SIGKILL to whatever of its process group is left, and what the suite started itself. */
  async stop(): Promise<void> {
    this.thaw();
    const child = this.launcher;
    if (child) {
      const tree = descendants(child.pid!);
      if (this.running()) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGINT');
        await Promise.race([exited, sleep(30_000)]);
      }
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
      for (const p of tree) if (alive(p.pid)) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      this.launcher = null;
    }
    for (const o of this.own.splice(0)) await o.stop().catch(() => {});
  }

  processes(role: Role): Proc[] {
    if (!this.launcher?.pid) return [];
    const file = ROLE_FILE[role];
    return descendants(this.launcher.pid).filter((p) => p.argv.some((a) => a === file || a.endsWith(`/${file}`)));
  }

  pidOf(role: Role): number | null {
    return this.processes(role)[0]?.pid ?? null;
  }

  logSize(role: Role): number {
    const file = path.join(this.logDir, `${role}.log`);
    return existsSync(file) ? statSync(file).size : 0;
  }

  logSince(role: Role, offset: number): string {
    const file = path.join(this.logDir, `${role}.log`);
    if (!existsSync(file)) return '';
    return readFileSync(file).subarray(offset).toString('utf8');
  }

  /**
   * kill -9 the process of `role`; resolves with the kill time. `ready` waits until a new process of
   * that role is ready (an API: its port answers /readyz 200; a worker: it logged "worker polling"
   * again) and returns the milliseconds from the kill.
   */
  kill9(role: Role): { pid: number; at: number; ready: (timeoutMs: number) => Promise<number> } {
    const pid = this.pidOf(role);
    if (!pid) throw new Error(`no ${role} process in the launcher's tree${this.running() ? '' : ` (${this.exitNote})`}`);
    const offset = this.logSize(role);
    process.kill(pid, 'SIGKILL');
    const at = Date.now();
    this.log(`  kill -9 ${role} (pid ${pid})`);
    const port = role === 'integrations-api' ? this.ports.integrations : role === 'cash-app-api' ? this.ports.cashApp : role === 'admin-api' ? this.ports.admin : role === 'api-gateway' ? this.ports.gateway : null;
    return {
      pid,
      at,
      ready: async (timeoutMs) => {
        await waitFor(`${role} to come back after kill -9 (a new, ready process)`, timeoutMs, async () => {
          if (!this.running()) throw new Fatal(this.exitNote);
          const now = this.pidOf(role);
          if (!now || now === pid) return false;
          if (port) {
            const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
            await res.text();
            return res.status === 200;
          }
          return /worker polling/.test(this.logSince(role, offset));
        }).catch((err: Error) => {
          throw new Error(this.running() ? err.message : `${role} did not come back: ${this.exitNote}`);
        });
        return Date.now() - at;
      },
    };
  }

  // ------------------------------------------------------------ PostgreSQL and Temporal

  private postmaster(): Proc | null {
    if (!this.launcher?.pid) return this.ownPostmaster();
    const tree = descendants(this.launcher.pid);
    const pgs = tree.filter((p) => /(^|\/)postgres$/.test(p.argv[0] ?? '') && p.argv.includes('-D'));
    const pids = new Set(pgs.map((p) => p.pid));
    return pgs.find((p) => !pids.has(p.ppid)) ?? this.ownPostmaster();
  }

  private ownPostmaster(): Proc | null {
    for (const o of this.own) {
      const p = readProc(o.pid);
      if (p && /(^|\/)postgres$/.test(p.argv[0] ?? '')) return p;
    }
    return null;
  }

  private temporalServer(): Proc | null {
    const tree = this.launcher?.pid ? descendants(this.launcher.pid) : [];
    const own = this.own.map((o) => readProc(o.pid)).filter((p): p is Proc => p !== null);
    return [...tree, ...own].find((p) => p.argv.includes('start-dev') && p.argv.includes('server')) ?? null;
  }

  /**
   * Take a dependency away for up to `outageMs`, run `during` meanwhile, and return once it answers again.
   * - `stop`: a clean stop (PostgreSQL: SIGINT to the postmaster = pg_ctl stop -m fast; Temporal:
   *   SIGTERM). The launcher's supervisor starts it again (same port and data) after its restart
   *   backoff, which the suite sets to the outage (SUPERVISE_BACKOFF_INITIAL_MS); an unsupervised
   *   launcher does not, so the suite starts the same command line itself after `outageMs`.
   * - `freeze`: SIGSTOP of every process of the component for `outageMs`, then SIGCONT: unreachable
   *   for the whole outage whatever supervises it (a supervisor restarts a stopped process at once).
   */
  async outage(
    what: 'postgres' | 'temporal',
    mode: 'stop' | 'freeze',
    outageMs: number,
    during: () => Promise<void>,
  ): Promise<{ stoppedAt: number; backAt: number; restartedBy: string; downMs: number }> {
    const proc = what === 'postgres' ? this.postmaster() : this.temporalServer();
    if (!proc) throw new Error(`no ${what} process found in the launcher's tree`);
    const port = what === 'postgres' ? this.ports.pg : this.ports.temporal;
    let restartedBy = 'launcher';
    let backAt = 0;
    let stoppedAt: number;
    let duringDone: Promise<void>;
    if (mode === 'freeze') {
      const frozen = [proc.pid, ...descendants(proc.pid).map((p) => p.pid)];
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
      this.frozen = frozen;
      stoppedAt = Date.now();
      this.log(`  froze ${what} (SIGSTOP of ${frozen.length} processes)`);
      duringDone = during();
      await sleep(outageMs);
      this.thaw();
      backAt = Date.now();
      restartedBy = 'SIGCONT';
    } else {
      process.kill(proc.pid, what === 'postgres' ? 'SIGINT' : 'SIGTERM');
      stoppedAt = Date.now();
      this.log(`  stopped ${what} (pid ${proc.pid})`);
      await waitFor(`${what} (pid ${proc.pid}) to stop`, 30_000, async () => !alive(proc.pid));
      duringDone = during();
      // a supervising launcher restarts it after its backoff (the suite sets it to the outage); give it a minute more
      const until = stoppedAt + outageMs + (this.supervised() ? 60_000 : 0);
      while (Date.now() < until) {
        const now = what === 'postgres' ? this.postmaster() : this.temporalServer();
        if (now && now.pid !== proc.pid && (await portOpen(port))) {
          backAt = Date.now();
          break;
        }
        await sleep(100);
      }
      if (!backAt) {
        restartedBy = 'chaos suite';
        this.restartByHand(what, proc);
        await waitFor(`${what} to accept connections again after the restart`, 60_000, () => portOpen(port));
        backAt = Date.now();
      }
    }
    this.log(`  ${what} back (${restartedBy}) after ${((backAt - stoppedAt) / 1000).toFixed(1)} s`);
    await duringDone;
    return { stoppedAt, backAt, restartedBy, downMs: backAt - stoppedAt };
  }

  private frozen: number[] = [];

  /** SIGCONT to whatever the suite froze (also at teardown). */
  thaw(): void {
    for (const pid of this.frozen.splice(0)) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
  }

  private restartByHand(what: 'postgres' | 'temporal', proc: Proc): void {
    const logFile = path.join(this.logDir, `${what}-restarted.log`);
    const out = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(proc.argv[0]!, proc.argv.slice(1), {
      cwd: this.root,
      uid: proc.uid,
      gid: proc.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    child.on('error', (err) => this.log(`  restarting ${what} failed: ${err.message}`));
    this.log(`  restarted ${what} by hand (pid ${child.pid}; the launcher did not within the outage)`);
    this.own.push({
      pid: child.pid!,
      stop: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill(what === 'postgres' ? 'SIGINT' : 'SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      },
    });
  }
}
