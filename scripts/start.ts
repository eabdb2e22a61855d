/**
 * `npm start`: the whole platform on this machine. Embedded PostgreSQL, the Temporal dev server
 * (with its Web UI), MailDev and the SMS sink start unless DATABASE_URL, TEMPORAL_ADDRESS, SMTP_URL
 * or SMS_PROVIDER_URL point at external ones; then migrations, a demo organization on first start, the gateway and every
 * service's API and worker as separate processes. Ctrl-C stops everything; data lives in var/
 * (LOCAL_VAR_DIR moves it).
 *
 * Supervision (scripts/local/supervisor.ts; docs/operations/supervision.md): a process or
 * embedded component that exits without being asked to is started again (same ports, same data)
 * after a doubling backoff; on a crash loop the launcher gives up on that one only and says why.
 * var/supervisor.json lists every supervised process with its current pid and state.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import { connectTemporal, createDb, ensureNamespace, migrate, type Migration } from '@rp/platform';
import { portOpen, startEmbeddedPostgres, takeOverSignals, startMailDev, startTemporalDevServer } from './local/components.js';
import { SERVICE_MODULES } from './local/services.js';
import { npmStartPort, servicePorts } from './local/ports.js';
import { seedDemo } from './local/demo.js';
import { policyFromEnv, Supervisor, type ProcessStatus } from './local/supervisor.js';
import { objectStorageForStart } from './local/object-storage.js';
import { spawnSmsSink } from './local/sms-sink.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const varDir = path.resolve(root, process.env.LOCAL_VAR_DIR ?? 'var');
const logDir = path.join(varDir, 'logs');
mkdirSync(logDir, { recursive: true });
const statusFile = path.join(varDir, 'supervisor.json');
/** A path for messages: relative to the repo when inside it. */
const shown = (p: string) => (path.relative(root, p).startsWith('..') ? p : path.relative(root, p));

const env = process.env;
const GATEWAY_PORT = npmStartPort('PORT', env);
const PG_PORT = npmStartPort('LOCAL_PG_PORT', env);
const TEMPORAL_PORT = npmStartPort('LOCAL_TEMPORAL_PORT', env);
const TEMPORAL_UI_PORT = npmStartPort('LOCAL_TEMPORAL_UI_PORT', env);
const SMTP_PORT = npmStartPort('LOCAL_SMTP_PORT', env);
const MAIL_WEB_PORT = npmStartPort('LOCAL_MAIL_WEB_PORT', env);
const SMS_PORT = npmStartPort('LOCAL_SMS_PORT', env);
// The inbound SMTP listener runs in the admin API process (services/admin/src/server.ts).
const INBOUND_SMTP_PORT = npmStartPort('LOCAL_INBOUND_SMTP_PORT', env);
const SERVICE_PORTS = servicePorts(env);
const policy = policyFromEnv(env);

function log(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

// Embedded PostgreSQL, Temporal and MailDev; then the APIs, workers and the gateway. Stopped in
// the reverse order: the processes first (all at once), then the components one by one, Postgres last.
const components = new Supervisor({ policy, log, onChange: () => writeStatus() });
const processes = new Supervisor({ policy, log, onChange: () => writeStatus() });
let phase: 'starting' | 'ready' | 'stopping' | 'stopped' = 'starting';
let stopping: Promise<void> | null = null;

/**
 * var/supervisor.json, rewritten (atomically) on every change: the launcher's pid and phase, and
 * for each supervised process its kind, state (starting|running|backoff|gave-up|stopped), current
 * pid, restart count, last exits, log file and, when given up, the reason. Other tools (the chaos
 * suite) read it to find the pid to kill and to see a process come back.
 */
function writeStatus(): void {
  const entry = (kind: 'component' | 'process') => (p: ProcessStatus) => ({ kind, ...p });
  const body = {
    launcher_pid: process.pid,
    phase,
    updated_at: new Date().toISOString(),
    policy,
    processes: [...components.status().map(entry('component')), ...processes.status().map(entry('process'))],
  };
  try {
    writeFileSync(`${statusFile}.tmp`, `${JSON.stringify(body, null, 2)}\n`);
    renameSync(`${statusFile}.tmp`, statusFile);
  } catch {
    // best effort: the console says the same
  }
}

async function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    phase = 'stopping';
    log('\nStopping…');
    await processes.stop({ parallel: true });
    await components.stop();
    phase = 'stopped';
    writeStatus();
    log('Stopped.');
  })();
  await stopping;
  process.exit(code);
}
// Supervised children run in process groups of their own, so a terminal's Ctrl-C reaches only this
// launcher (and embedded PostgreSQL), which stops them in order. SIGHUP (terminal closed) too.
takeOverSignals(() => void shutdown(0), ['SIGINT', 'SIGTERM', 'SIGHUP']);

async function ensurePortFree(port: number, what: string): Promise<void> {
  if (await portOpen(port)) {
    throw new Error(`port ${port} (${what}) is already in use — is another \`npm start\` running? Set the matching LOCAL_*_PORT/PORT variable to move it.`);
  }
}

function persistentSecret(file: string): string {
  const p = path.join(varDir, file);
  if (existsSync(p)) return readFileSync(p, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(p, secret, { mode: 0o600 });
  return secret;
}

async function main(): Promise<void> {
  log(`Receivables Platform — starting the local stack (data in ${shown(varDir)}/, logs in ${shown(logDir)}/)`);

  // --- PostgreSQL
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    await ensurePortFree(PG_PORT, 'PostgreSQL');
    let pgUrl = '';
    await components.add({
      name: 'postgres',
      logFile: shown(path.join(logDir, 'postgres.log')),
      start: async () => {
        const server = await startEmbeddedPostgres({ dataDir: path.join(varDir, 'pg'), port: PG_PORT, persistent: true, logFile: path.join(logDir, 'postgres.log') });
        pgUrl = server.url('postgres');
        return { child: server.process, stop: server.stop };
      },
    });
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'receivables'`);
    if (!exists.rowCount) await admin.query('CREATE DATABASE receivables');
    await admin.end();
    databaseUrl = pgUrl.replace(/\/postgres$/, '/receivables');
    log(`  PostgreSQL      embedded, port ${PG_PORT}`);
  } else log('  PostgreSQL      external (DATABASE_URL)');

  // --- Temporal
  let temporalAddress = env.TEMPORAL_ADDRESS;
  let temporalUi: string | null = null;
  if (!temporalAddress) {
    await ensurePortFree(TEMPORAL_PORT, 'Temporal');
    await ensurePortFree(TEMPORAL_UI_PORT, 'Temporal Web UI');
    await components.add({
      name: 'temporal',
      logFile: shown(path.join(logDir, 'temporal.log')),
      start: async () => {
        const temporal = await startTemporalDevServer({
          port: TEMPORAL_PORT,
          uiPort: TEMPORAL_UI_PORT,
          dbFile: path.join(varDir, 'temporal.db'),
          logFile: path.join(logDir, 'temporal.log'),
          detached: true,
        });
        return { child: temporal.process, stop: temporal.stop };
      },
    });
    temporalAddress = `127.0.0.1:${TEMPORAL_PORT}`;
    temporalUi = `http://localhost:${TEMPORAL_UI_PORT}`;
    log(`  Temporal        dev server, port ${TEMPORAL_PORT}`);
  } else log('  Temporal        external (TEMPORAL_ADDRESS)');
  const namespace = env.TEMPORAL_NAMESPACE ?? 'default';

  // --- SMTP
  let smtpUrl = env.SMTP_URL;
  let inbox: string | null = null;
  if (!smtpUrl) {
    await ensurePortFree(SMTP_PORT, 'SMTP');
    await ensurePortFree(MAIL_WEB_PORT, 'mail inbox');
    await components.add({
      name: 'maildev',
      start: async () => {
        const mail = await startMailDev({ smtpPort: SMTP_PORT, webPort: MAIL_WEB_PORT, mailDir: path.join(varDir, 'mail'), detached: true });
        return { child: mail.process, stop: mail.stop };
      },
    });
    smtpUrl = `smtp://127.0.0.1:${SMTP_PORT}`;
    inbox = `http://localhost:${MAIL_WEB_PORT}`;
    log(`  SMTP            MailDev, port ${SMTP_PORT}`);
  } else log('  SMTP            external (SMTP_URL)');

  // --- SMS: the local sink (Twilio-compatible Messages API) unless SMS_PROVIDER_URL names a provider
  const sms: Record<string, string> = {};
  let smsInbox: string | null = null;
  if (!env.SMS_PROVIDER_URL) {
    await ensurePortFree(SMS_PORT, 'SMS sink');
    sms.SMS_ACCOUNT_SID = env.SMS_ACCOUNT_SID ?? 'AC00000000000000000000000000000000';
    sms.SMS_AUTH_TOKEN = env.SMS_AUTH_TOKEN ?? persistentSecret('sms-auth-token');
    await components.add({
      name: 'sms-sink',
      logFile: shown(path.join(logDir, 'sms-sink.log')),
      start: async () => {
        const sink = await spawnSmsSink({
          port: SMS_PORT,
          accountSid: sms.SMS_ACCOUNT_SID!,
          authToken: sms.SMS_AUTH_TOKEN!,
          file: path.join(varDir, 'sms', 'messages.json'),
          logFile: path.join(logDir, 'sms-sink.log'),
          detached: true,
        });
        return { child: sink.process, stop: sink.stop };
      },
    });
    sms.SMS_PROVIDER_URL = `http://127.0.0.1:${SMS_PORT}`;
    smsInbox = `http://localhost:${SMS_PORT}`;
    log(`  SMS             local sink, port ${SMS_PORT}`);
  } else log('  SMS             external (SMS_PROVIDER_URL)');

  // --- object storage (S3): versitygw unless S3_ENDPOINT points at an external one
  const s3 = await objectStorageForStart({
    env,
    varDir,
    logDir,
    secret: persistentSecret,
    supervise: (spec) => components.add({ ...spec, logFile: shown(spec.logFile) }),
  });
  log(s3.line);

  await ensurePortFree(GATEWAY_PORT, 'gateway');
  for (const [name, port] of Object.entries(SERVICE_PORTS)) await ensurePortFree(port, `${name} service`);
  await ensurePortFree(INBOUND_SMTP_PORT, 'inbound SMTP');

  const temporalConn = await connectTemporal({ address: temporalAddress, namespace });
  await ensureNamespace(temporalConn.connection, namespace);

  // --- migrations, once, before any process starts
  for (const [name, entry] of Object.entries(SERVICE_MODULES)) {
    const mod = entry.module as { schema: string; migrations: Migration[] };
    const db = createDb({ url: databaseUrl, schema: mod.schema, poolMax: 1, applicationName: `${name}-migrate` });
    await migrate(db, mod.schema, mod.migrations);
    await db.destroy();
  }
  log('  Migrations      applied');

  // --- workflow bundle, built once for every worker
  const bundlePath = path.join(varDir, 'workflow-bundle.js');
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } });
  writeFileSync(bundlePath, bundle.code);

  const common: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    SMTP_URL: smtpUrl,
    IDENTITY_SECRET: env.IDENTITY_SECRET ?? persistentSecret('identity-secret'),
    CONNECTION_SECRETS_KEY: env.CONNECTION_SECRETS_KEY ?? persistentSecret('connection-secrets-key'),
    // /metrics of the gateway and every service: `Authorization: Bearer $(cat var/metrics-token)`.
    METRICS_TOKEN: env.METRICS_TOKEN ?? persistentSecret('metrics-token'),
    WORKFLOW_BUNDLE_PATH: bundlePath,
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL ?? `http://localhost:${GATEWAY_PORT}`,
    LOG_LEVEL: env.LOG_LEVEL ?? 'info',
    ...s3.env,
    ...sms,
  };
  writeFileSync(
    path.join(varDir, 'local-env.json'),
    JSON.stringify({ DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace }, null, 2),
  );

  // --- demo organization on first start
  const demo = await seedDemo({ databaseUrl, temporal: temporalConn.client, file: path.join(varDir, 'demo-credentials.json') });
  await temporalConn.close();

  // --- processes: each service's API and worker, then the gateway; each one supervised, its
  // output appended to var/logs/<name>.log (one stream for all its restarts).
  const logs = new Map<string, WriteStream>();
  const spawnTs = (name: string, file: string, extra: Record<string, string>) =>
    processes.add({
      name,
      logFile: shown(path.join(logDir, `${name}.log`)),
      start: async () => {
        let out = logs.get(name);
        if (!out) logs.set(name, (out = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' })));
        const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', file], {
          cwd: root,
          env: { ...process.env, ...common, ...extra },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
        child.stdout!.pipe(out, { end: false });
        child.stderr!.pipe(out, { end: false });
        return { child };
      },
    });
  for (const [name, port] of Object.entries(SERVICE_PORTS)) {
    await spawnTs(`${name}-api`, `services/${name}/src/server.ts`, { PORT: String(port), ...(name === 'admin' ? { INBOUND_SMTP_PORT: String(INBOUND_SMTP_PORT) } : {}) });
    await spawnTs(`${name}-worker`, `services/${name}/src/worker.ts`, {});
  }
  const serviceUrls = Object.fromEntries(
    Object.entries(SERVICE_PORTS).map(([name, port]) => [`${name.toUpperCase().replace('-', '_')}_URL`, `http://127.0.0.1:${port}`]),
  );
  await spawnTs('api-gateway', 'services/api-gateway/src/server.ts', { PORT: String(GATEWAY_PORT), ...serviceUrls });

  // A process given up on (crash loop) does not stop the others: the stack is ready without it.
  for (const [name, port] of Object.entries(SERVICE_PORTS)) await waitListening(`${name}-api`, port);
  await waitListening('api-gateway', GATEWAY_PORT);
  const givenUp = processes.status().filter((p) => p.state === 'gave-up');
  phase = 'ready';
  writeStatus();

  const api = `http://localhost:${GATEWAY_PORT}`;
  log('');
  log(givenUp.length ? `Ready, WITHOUT ${givenUp.map((p) => p.name).join(', ')} (given up, see above).` : 'Ready.');
  log(`  API             ${api}`);
  log(`  API reference   ${api}/docs   (OpenAPI: ${api}/openapi.json)`);
  log(`  Metrics         ${api}/metrics with "Authorization: Bearer <var/metrics-token>"`);
  if (temporalUi) log(`  Temporal UI     ${temporalUi}`);
  if (inbox) log(`  Mail inbox      ${inbox}`);
  log(`  Inbound SMTP    smtp://localhost:${INBOUND_SMTP_PORT}   (mail to anything@<organization id>.${env.MAIL_INBOUND_DOMAIN ?? 'inbound.receivables.local'})`);
  if (smsInbox) log(`  SMS inbox       ${smsInbox}`);
  log('');
  log(`Demo organization "${demo.organization_name}" (credentials in ${shown(path.join(varDir, 'demo-credentials.json'))}):`);
  log(`  access token    ${demo.access_token}`);
  log(`  API key         ${demo.api_key}`);
  log('');
  log(`Try: curl -H "Authorization: Bearer ${demo.access_token}" ${api}/v2/business-units`);
  log(`Crashed processes are restarted (status: ${shown(statusFile)}). Ctrl-C stops everything.`);
}

/** Until the supervised process `name` listens on `port` (restarts allowed) or was given up on. */
async function waitListening(name: string, port: number, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen(port))) {
    const st = processes.status().find((p) => p.name === name);
    if (st?.state === 'gave-up') return;
    if (Date.now() > deadline) throw new Error(`${name} did not listen on port ${port} within ${timeoutMs / 1000} s; see ${st?.logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

main().catch(async (err) => {
  process.stderr.write(`npm start failed: ${(err as Error).stack ?? err}\n`);
  await shutdown(1);
});
