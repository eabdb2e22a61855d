/**
 * `npm start`: the whole platform on this machine. Embedded PostgreSQL, the Temporal dev server
 * (with its Web UI) and MailDev start unless DATABASE_URL, TEMPORAL_ADDRESS or SMTP_URL point at
 * external ones; then migrations, a demo organization on first start, the gateway and every
 * service's API and worker as separate processes. Ctrl-C stops everything; data lives in var/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import { connectTemporal, createDb, ensureNamespace, migrate, type Migration } from '@rp/platform';
import { portOpen, startEmbeddedPostgres, takeOverSignals, startMailDev, startTemporalDevServer, stopChild, waitForPort } from './local/components.js';
import { SERVICE_MODULES } from './local/services.js';
import { SERVICE_PORTS } from './local/ports.js';
import { seedDemo } from './local/demo.js';
import { objectStorageForStart } from './local/object-storage.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const varDir = path.join(root, 'var');
const logDir = path.join(varDir, 'logs');
mkdirSync(logDir, { recursive: true });

const env = process.env;
const GATEWAY_PORT = Number(env.PORT ?? 8080);
const PG_PORT = Number(env.LOCAL_PG_PORT ?? 5433);
const TEMPORAL_PORT = Number(env.LOCAL_TEMPORAL_PORT ?? 7233);
const TEMPORAL_UI_PORT = Number(env.LOCAL_TEMPORAL_UI_PORT ?? 8233);
const SMTP_PORT = Number(env.LOCAL_SMTP_PORT ?? 1025);
const MAIL_WEB_PORT = Number(env.LOCAL_MAIL_WEB_PORT ?? 1080);

const stops: Array<() => Promise<void>> = [];
const children: Array<{ name: string; child: ChildProcess }> = [];
let stopping = false;

function log(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log('\nStopping…');
    await Promise.allSettled(children.map(({ child }) => stopChild(child)));
    for (const stop of stops.reverse()) await stop().catch(() => {});
    log('Stopped.');
  }
  process.exit(code);
}
takeOverSignals(() => void shutdown(0));

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
  log('Receivables Platform — starting the local stack (data in var/, logs in var/logs/)');

  // --- PostgreSQL
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    await ensurePortFree(PG_PORT, 'PostgreSQL');
    const pgServer = await startEmbeddedPostgres({ dataDir: path.join(varDir, 'pg'), port: PG_PORT, persistent: true });
    stops.push(pgServer.stop);
    const admin = new pg.Client({ connectionString: pgServer.url('postgres') });
    await admin.connect();
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'receivables'`);
    if (!exists.rowCount) await admin.query('CREATE DATABASE receivables');
    await admin.end();
    databaseUrl = pgServer.url('receivables');
    log(`  PostgreSQL      embedded, port ${PG_PORT}`);
  } else log('  PostgreSQL      external (DATABASE_URL)');

  // --- Temporal
  let temporalAddress = env.TEMPORAL_ADDRESS;
  let temporalUi: string | null = null;
  if (!temporalAddress) {
    await ensurePortFree(TEMPORAL_PORT, 'Temporal');
    await ensurePortFree(TEMPORAL_UI_PORT, 'Temporal Web UI');
    const temporal = await startTemporalDevServer({
      port: TEMPORAL_PORT,
      uiPort: TEMPORAL_UI_PORT,
      dbFile: path.join(varDir, 'temporal.db'),
      logFile: path.join(logDir, 'temporal.log'),
    });
    stops.push(temporal.stop);
    temporalAddress = temporal.address;
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
    const mail = await startMailDev({ smtpPort: SMTP_PORT, webPort: MAIL_WEB_PORT, mailDir: path.join(varDir, 'mail') });
    stops.push(mail.stop);
    smtpUrl = mail.smtpUrl;
    inbox = `http://localhost:${MAIL_WEB_PORT}`;
    log(`  SMTP            MailDev, port ${SMTP_PORT}`);
  } else log('  SMTP            external (SMTP_URL)');

  // --- object storage (S3): versitygw unless S3_ENDPOINT points at an external one
  const s3 = await objectStorageForStart({ env, varDir, logDir, secret: persistentSecret });
  if (s3.stop) stops.push(s3.stop);
  log(s3.line);

  await ensurePortFree(GATEWAY_PORT, 'gateway');
  for (const [name, port] of Object.entries(SERVICE_PORTS)) await ensurePortFree(port, `${name} service`);

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
  };
  writeFileSync(
    path.join(varDir, 'local-env.json'),
    JSON.stringify({ DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace }, null, 2),
  );

  // --- demo organization on first start
  const demo = await seedDemo({ databaseUrl, temporal: temporalConn.client, file: path.join(varDir, 'demo-credentials.json') });
  await temporalConn.close();

  // --- processes: each service's API and worker, then the gateway
  const spawnTs = (name: string, file: string, extra: Record<string, string>) => {
    const out = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      env: { ...process.env, ...common, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    child.on('exit', (code, signal) => {
      if (!stopping) {
        log(`! ${name} exited (${code ?? signal}); see var/logs/${name}.log. Stopping the stack.`);
        void shutdown(1);
      }
    });
    children.push({ name, child });
    return child;
  };
  for (const [name, port] of Object.entries(SERVICE_PORTS)) {
    spawnTs(`${name}-api`, `services/${name}/src/server.ts`, { PORT: String(port) });
    spawnTs(`${name}-worker`, `services/${name}/src/worker.ts`, {});
  }
  const serviceUrls = Object.fromEntries(
    Object.entries(SERVICE_PORTS).map(([name, port]) => [`${name.toUpperCase().replace('-', '_')}_URL`, `http://127.0.0.1:${port}`]),
  );
  spawnTs('api-gateway', 'services/api-gateway/src/server.ts', { PORT: String(GATEWAY_PORT), ...serviceUrls });

  for (const [name, port] of Object.entries(SERVICE_PORTS)) {
    await waitForPort(port, `${name} API`, 120_000, children.find((c) => c.name === `${name}-api`)!.child);
  }
  await waitForPort(GATEWAY_PORT, 'gateway', 120_000, children.find((c) => c.name === 'api-gateway')!.child);

  const api = `http://localhost:${GATEWAY_PORT}`;
  log('');
  log('Ready.');
  log(`  API             ${api}`);
  log(`  API reference   ${api}/docs   (OpenAPI: ${api}/openapi.json)`);
  log(`  Metrics         ${api}/metrics with "Authorization: Bearer <var/metrics-token>"`);
  if (temporalUi) log(`  Temporal UI     ${temporalUi}`);
  if (inbox) log(`  Mail inbox      ${inbox}`);
  log('');
  log(`Demo organization "${demo.organization_name}" (credentials in var/demo-credentials.json):`);
  log(`  access token    ${demo.access_token}`);
  log(`  API key         ${demo.api_key}`);
  log('');
  log(`Try: curl -H "Authorization: Bearer ${demo.access_token}" ${api}/v2/business-units`);
  log('Ctrl-C stops everything.');
}

main().catch(async (err) => {
  process.stderr.write(`npm start failed: ${(err as Error).stack ?? err}\n`);
  await shutdown(1);
});
