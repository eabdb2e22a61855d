/**
 * The whole platform for one test file: its own database and Temporal namespace, every service's
 * API, the gateway in front, and the workers the file asks for. Tests talk to the gateway as an
 * API client would.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';
import {
  connectTemporal,
  createDb,
  ensureNamespace,
  startServiceApi,
  startServiceWorker,
  type RunningApi,
  type RunningWorker,
  type ServiceModule,
  type CommonConfig,
} from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { loadAdminConfig, onboardOrganization, startInboundSmtp, type RunningInboundSmtp } from '@rp/admin';
import { startGateway, loadGatewayConfig, type Gateway, type ServiceName } from '@rp/api-gateway';
import { SERVICE_MODULES } from '../../scripts/local/services.js';

export const IDENTITY_SECRET = 'test-identity-secret-0123456789abcdef0123456789';
/** Bearer token of /metrics on the gateway and every service. */
export const METRICS_TOKEN = 'test-metrics-token-0123456789abcdef0123456789';
/**
 * What the guarded HTTP client may reach besides public addresses: the loopback fake providers.
 * Tests of the SSRF guard start their stack with a narrower list (env OUTBOUND_ALLOWLIST).
 */
export const LOOPBACK_ALLOWLIST = '127.0.0.0/8,::1';
/** AES-256-GCM key of connection secrets (32 bytes, base64). */
export const CONNECTION_SECRETS_KEY = Buffer.from('test-connection-secrets-key-0123').toString('base64');

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Org {
  organizationId: string;
  userId: string;
  token: string;
  apiKey: string;
  apiKeyId: string;
  tokenId: string;
}

export interface TestStack {
  gatewayUrl: string;
  databaseUrl: string;
  namespace: string;
  env: Record<string, string>;
  apis: Record<ServiceName, RunningApi>;
  workers: Partial<Record<ServiceName, RunningWorker>>;
  gateway: Gateway;
  /** The inbound SMTP listener (admin's mail intake) on a free loopback port: deliver mail for an organization's inbound host here. */
  inboundSmtp: { host: string; port: number };
  request<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> }): Promise<HttpResult<T>>;
  onboard(name?: string): Promise<Org>;
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  startWorker(name: ServiceName): Promise<RunningWorker>;
  close(): Promise<void>;
}

export async function createTestDatabase(): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return inject('pgUrlTemplate').replace('{db}', name);
}

export async function createTestNamespace(): Promise<string> {
  const namespace = `t-${randomBytes(6).toString('hex')}`;
  const t = await connectTemporal({ address: inject('temporalAddress'), namespace });
  await ensureNamespace(t.connection, namespace);
  await t.close();
  return namespace;
}

export async function startStack(opts: { workers?: ServiceName[]; env?: Record<string, string> } = {}): Promise<TestStack> {
  const [databaseUrl, namespace] = await Promise.all([createTestDatabase(), createTestNamespace()]);
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: namespace,
    IDENTITY_SECRET,
    METRICS_TOKEN,
    OUTBOUND_ALLOWLIST: LOOPBACK_ALLOWLIST,
    CONNECTION_SECRETS_KEY,
    SMTP_URL: inject('smtpUrl'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: '5',
    // The run's versitygw; a bucket of this file's own (created on first use).
    S3_ENDPOINT: inject('s3Endpoint'),
    S3_BUCKET: `t-${randomBytes(6).toString('hex')}`,
    S3_ACCESS_KEY_ID: inject('s3AccessKeyId'),
    S3_SECRET_ACCESS_KEY: inject('s3SecretAccessKey'),
    S3_REGION: inject('s3Region'),
    // The run's SMS sink (Twilio-compatible Messages API).
    SMS_PROVIDER_URL: inject('smsSinkUrl'),
    SMS_ACCOUNT_SID: inject('smsAccountSid'),
    SMS_AUTH_TOKEN: inject('smsAuthToken'),
    // Processes spawned with this env (server.ts) run no SMTP listener; the stack starts its own below.
    INBOUND_SMTP_PORT: '0',
    ...opts.env,
  };
  const apis = {} as Record<ServiceName, RunningApi>;
  for (const [name, entry] of Object.entries(SERVICE_MODULES) as [ServiceName, (typeof SERVICE_MODULES)[ServiceName]][]) {
    apis[name] = await startServiceApi(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(env), { port: 0 });
  }
  const gateway = await startGateway(
    loadGatewayConfig({
      ...env,
      ADMIN_URL: `http://127.0.0.1:${apis.admin.port}`,
      INTEGRATIONS_URL: `http://127.0.0.1:${apis.integrations.port}`,
      CASH_APP_URL: `http://127.0.0.1:${apis['cash-app'].port}`,
      KNOWLEDGE_URL: `http://127.0.0.1:${apis.knowledge.port}`,
    }),
    { port: 0 },
  );
  const gatewayUrl = `http://127.0.0.1:${gateway.port}`;
  const smtp: RunningInboundSmtp = await startInboundSmtp(loadAdminConfig(env), { port: 0, host: '127.0.0.1' });
  const workers: Partial<Record<ServiceName, RunningWorker>> = {};
  const startWorker = async (name: ServiceName) => {
    const entry = SERVICE_MODULES[name];
    const w = await startServiceWorker(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(env), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    workers[name] = w;
    return w;
  };
  for (const name of opts.workers ?? []) await startWorker(name);

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });

  return {
    gatewayUrl,
    databaseUrl,
    namespace,
    env,
    apis,
    workers,
    gateway,
    inboundSmtp: { host: '127.0.0.1', port: smtp.port },
    startWorker,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | Buffer | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(gatewayUrl + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      return { status: res.status, headers: res.headers, body: parsed as any, text };
    },
    async onboard(name = `Org ${randomBytes(3).toString('hex')}`) {
      const t = await connectTemporal({ address: env.TEMPORAL_ADDRESS, namespace });
      const db = createDb({ url: databaseUrl, schema: 'admin', poolMax: 1 });
      try {
        const o = await onboardOrganization(
          { db, temporal: t.client },
          { name, base_currency: 'EUR', timezone: 'Europe/Berlin', admin: { email: `admin-${randomBytes(4).toString('hex')}@example.com`, name: 'Ada Admin' } },
        );
        return {
          organizationId: o.organization.id,
          userId: o.user.id,
          token: o.accessToken.token,
          tokenId: o.accessToken.row.id,
          apiKey: o.apiKey.token,
          apiKeyId: o.apiKey.row.id,
        };
      } finally {
        await db.destroy();
        await t.close();
      }
    },
    async sql(text, params = []) {
      return (await pool.query(text, params as unknown[])).rows;
    },
    async close() {
      await Promise.allSettled(Object.values(workers).map((w) => w!.close()));
      await gateway.close();
      await smtp.close();
      await Promise.allSettled(Object.values(apis).map((a) => a.close()));
      await pool.end();
    },
  };
}


/** Messages MailDev received for a recipient (polls until `count` arrive or the timeout). */
export async function waitForMail(to: string, opts: { count?: number; timeoutMs?: number } = {}): Promise<any[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const res = await fetch(`${inject('mailApiUrl')}/email`);
    const all = (await res.json()) as any[];
    const mine = all.filter((m) => (m.to ?? []).some((t: { address: string }) => t.address.toLowerCase() === to.toLowerCase()));
    if (mine.length >= (opts.count ?? 1) || Date.now() > deadline) return mine;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Texts the run's SMS sink received for `to` (E.164), newest first (polls until `count` arrive or the timeout). */
export async function waitForSms(to: string, opts: { count?: number; timeoutMs?: number } = {}): Promise<any[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const res = await fetch(`${inject('smsSinkUrl')}/messages?to=${encodeURIComponent(to)}`);
    const { messages } = (await res.json()) as { messages: any[] };
    if (messages.length >= (opts.count ?? 1) || Date.now() > deadline) return messages;
    await new Promise((r) => setTimeout(r, 250));
  }
}
