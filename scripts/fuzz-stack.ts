/**
 * The platform for `npm run fuzz` (scripts/fuzz.sh): a throw-away embedded PostgreSQL, a Temporal dev
 * server, MailDev and the SMS sink on free ports, migrations, every service's API and worker and the gateway in
 * this one process (services on free ports too, so it runs next to `npm start` or a test run).
 * Writes `{gateway_url, database_url, temporal_address, smtp_url}` to the file given as the first
 * argument once the gateway answers, then runs until SIGTERM/SIGINT, stopping everything.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import {
  connectTemporal,
  createDb,
  ensureNamespace,
  migrate,
  startServiceApi,
  startServiceWorker,
  type CommonConfig,
  type Migration,
  type RunningApi,
  type RunningWorker,
  type ServiceModule,
} from '@rp/platform';
import { loadGatewayConfig, startGateway, type ServiceName } from '@rp/api-gateway';
import { startEmbeddedPostgres, startMailDev, startTemporalDevServer, takeOverSignals } from './local/components.js';
import { SERVICE_MODULES } from './local/services.js';
import { startObjectStorage } from './local/object-storage.js';
import { startSmsSink } from './local/sms-sink.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outFile = process.argv[2];
if (!outFile) throw new Error('usage: fuzz-stack.ts <ready-file>');
const dir = path.join(root, 'var', 'fuzz');
rmSync(path.join(dir, 'pg'), { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const stops: Array<() => Promise<void>> = [];
let stopping = false;
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
  process.exit(code);
}
takeOverSignals(() => void shutdown(0));

async function main(): Promise<void> {
  const pgServer = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), persistent: false });
  stops.push(pgServer.stop);
  const admin = new pg.Client({ connectionString: pgServer.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE receivables');
  await admin.end();
  const databaseUrl = pgServer.url('receivables');

  const temporal = await startTemporalDevServer({ uiPort: null, logFile: path.join(dir, 'temporal.log') });
  stops.push(temporal.stop);
  const mail = await startMailDev({});
  stops.push(mail.stop);
  rmSync(path.join(dir, 's3'), { recursive: true, force: true });
  const s3 = await startObjectStorage({ dataDir: path.join(dir, 's3'), accessKeyId: 'fuzz-access-key', secretAccessKey: 'fuzz-secret-access-key-0123456789' });
  stops.push(s3.stop);
  const sms = await startSmsSink({ accountSid: 'ACfuzz', authToken: 'fuzz-sms-auth-token-0123456789' });
  stops.push(sms.stop);

  const namespace = 'default';
  const t = await connectTemporal({ address: temporal.address, namespace });
  await ensureNamespace(t.connection, namespace);
  await t.close();

  for (const [name, entry] of Object.entries(SERVICE_MODULES)) {
    const mod = entry.module as { schema: string; migrations: Migration[] };
    const db = createDb({ url: databaseUrl, schema: mod.schema, poolMax: 1, applicationName: `${name}-migrate` });
    await migrate(db, mod.schema, mod.migrations);
    await db.destroy();
  }
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } });
  writeFileSync(bundlePath, bundle.code);

  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: namespace,
    SMTP_URL: mail.smtpUrl,
    IDENTITY_SECRET: 'fuzz-identity-secret-0123456789abcdef0123456789',
    CONNECTION_SECRETS_KEY: Buffer.from('fuzz-connection-secrets-key-0123').toString('base64'),
    WORKFLOW_BUNDLE_PATH: bundlePath,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: '5',
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: 'fuzz',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_REGION: s3.region,
    SMS_PROVIDER_URL: sms.url,
    SMS_ACCOUNT_SID: 'ACfuzz',
    SMS_AUTH_TOKEN: 'fuzz-sms-auth-token-0123456789',
  };
  const apis = {} as Record<ServiceName, RunningApi>;
  const workers: RunningWorker[] = [];
  for (const [name, entry] of Object.entries(SERVICE_MODULES) as [ServiceName, (typeof SERVICE_MODULES)[ServiceName]][]) {
    const mod = entry.module as ServiceModule<CommonConfig, unknown>;
    apis[name] = await startServiceApi(mod, entry.config(env), { port: 0 });
    stops.push(() => apis[name].close());
    const worker = await startServiceWorker(mod, entry.config(env), { workflowsPath, workflowBundlePath: bundlePath });
    workers.push(worker);
    stops.push(() => worker.close());
  }
  const gateway = await startGateway(
    loadGatewayConfig({
      ...env,
      ADMIN_URL: `http://127.0.0.1:${apis.admin.port}`,
      INTEGRATIONS_URL: `http://127.0.0.1:${apis.integrations.port}`,
      CASH_APP_URL: `http://127.0.0.1:${apis['cash-app'].port}`,
      KNOWLEDGE_URL: `http://127.0.0.1:${apis.knowledge.port}`,
      // the fuzzer is one client sending as fast as it can: no rate limit to hide the answers behind 429s
      RATE_LIMIT_PER_SECOND: '0',
      // nor for the public invite-accept route, whose generated tokens are all 401s (which would also
      // exhaust the address's failed-authentication budget)
      PUBLIC_RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_PER_MINUTE: '0',
    }),
    { port: 0 },
  );
  stops.push(gateway.close);
  writeFileSync(
    outFile!,
    JSON.stringify({ gateway_url: `http://127.0.0.1:${gateway.port}`, database_url: databaseUrl, temporal_address: temporal.address, smtp_url: mail.smtpUrl }, null, 2),
  );
  process.stdout.write(`fuzz stack ready: gateway http://127.0.0.1:${gateway.port}\n`);
}

main().catch(async (err) => {
  process.stderr.write(`fuzz stack failed: ${(err as Error).stack ?? err}\n`);
  await shutdown(1);
});
