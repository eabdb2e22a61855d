/**
 * Outbound security of the integrations service, through the gateway as an API client (and an
 * attacker with an admin account) would try it:
 *
 * - tenant-supplied URLs (`site_url`, `base_url`) naming a blocked address are refused at creation
 *   (422 at body.settings.<key>), in every spelling;
 * - a host name that resolves to loopback is refused at call time, after DNS, and the loopback
 *   server it names never receives a request;
 * - redirects are followed (same origin: the health check succeeds) but re-checked on every hop:
 *   a redirect from an allowed host to a blocked one is not followed;
 * - the platform's OAuth client secret goes only to the registered token URL, never to the
 *   tenant's own host (Acumatica's documented token endpoint is on the tenant's instance);
 * - OAuth `state` is optional on the authorization-code variants (spec 4.3.1): without it PKCE binds
 *   the code to the connection's authorization request; an empty one is refused before any call.
 *
 * The stack's OUTBOUND_ALLOWLIST names only the ports of the "allowed" fakes (127.0.0.1:<port>),
 * not loopback as a whole. SQL set-up: the Acumatica connection's stored refresh token (no endpoint
 * can store OAuth tokens for a provider without an authenticate variant) — sealed with the
 * service's own sealSecrets and written by UPDATE; the refresh is then driven through the domain
 * function every adapter calls (getProviderAccess), since no route refreshes Acumatica tokens.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '@rp/platform';
import { loadIntegrationsConfig, type IntegrationsConfig } from '../services/integrations/src/config.js';
import { getProviderAccess, ProviderConfigurationError, sealSecrets } from '../services/integrations/src/domain/connection-auth.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { FakeProviders } from './support/fake-providers.js';

const REDIRECT = 'https://app.example.com/oauth/callback';
const clients = {
  qbo: { client_id: 'qbo-client-id', client_secret: 'qbo-platform-secret-xyz' },
  xero: { client_id: 'xero-client-id', client_secret: 'xero-platform-secret-xyz' },
};
const ACUMATICA_SECRET = 'acumatica-platform-secret-xyz';

/** A recording HTTP server on loopback; `route` decides each answer. */
class Recorder {
  server!: http.Server;
  readonly requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  constructor(private readonly route: (req: http.IncomingMessage, res: http.ServerResponse) => void) {}
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
        this.route(req, res);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this;
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
  /** Everything this server was sent, as text. */
  seen(): string {
    return JSON.stringify(this.requests);
  }
}

let stack: TestStack;
let org: Org;
let fake: FakeProviders;
let db: Db;
let config: IntegrationsConfig;
/** blocked: loopback and not allowlisted; must never be contacted */
let blocked: Recorder;
/** allowed (allowlisted by port): redirects, or answers like Jira's /myself */
let allowed: Recorder;
/** the tenant's own Acumatica instance (allowlisted, so only the token-URL rule keeps the secret away) */
let tenant: Recorder;

beforeAll(async () => {
  blocked = await new Recorder((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"accountId":"x"}')).start();
  allowed = await new Recorder((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/same-origin/')) return res.writeHead(302, { location: url.replace('/same-origin/', '/ok/') }).end();
    if (url.startsWith('/ok/')) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"accountId":"557058"}');
    if (url.startsWith('/to-blocked-ip/')) return res.writeHead(302, { location: `http://127.0.0.1:${blocked.port}/rest/api/3/myself` }).end();
    if (url.startsWith('/to-blocked-name/')) return res.writeHead(307, { location: `http://localhost:${blocked.port}/rest/api/3/myself` }).end();
    if (url.startsWith('/to-metadata/')) return res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    res.writeHead(404).end();
  }).start();
  tenant = await new Recorder((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"stolen","expires_in":3600}')).start();
  fake = new FakeProviders(clients);
  await fake.start();
  const fakePort = new URL(fake.url).port;
  stack = await startStack({
    env: {
      OUTBOUND_ALLOWLIST: `127.0.0.1:${allowed.port},127.0.0.1:${tenant.port},127.0.0.1:${fakePort}`,
      OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: clients.qbo, xero: clients.xero, acumatica: { client_id: 'acu-client', client_secret: ACUMATICA_SECRET } }),
      OAUTH_REDIRECT_URI: REDIRECT,
      PROVIDER_HTTP_TIMEOUT_MS: '3000',
      PROVIDER_URL_OVERRIDES: JSON.stringify({
        quickbooks_online: { authorize_url: `${fake.url}/qbo/connect/oauth2`, token_url: `${fake.url}/qbo/oauth2/v1/tokens/bearer`, api_base_url: `${fake.url}/qbo` },
        xero: { authorize_url: `${fake.url}/xero/identity/connect/authorize`, token_url: `${fake.url}/xero/connect/token`, api_base_url: `${fake.url}/xero` },
      }),
    },
  });
  org = await stack.onboard();
  config = loadIntegrationsConfig(stack.env);
  db = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 2 });
});

afterAll(async () => {
  await db?.destroy();
  await stack?.close();
  for (const s of [blocked, allowed, tenant]) await s?.close();
  await fake?.close();
});

const jira = (siteUrl: string) => ({ provider_name: 'jira_service_management', name: 'Jira', settings: { site_url: siteUrl, service_desk_id: '1' } });
const create = (body: unknown) => stack.request('POST', '/v2/integrations/connections', { token: org.token, body });
const count = async () => (await stack.sql('SELECT count(*)::int AS n FROM integrations.connections'))[0].n as number;

async function jiraConnection(siteUrl: string) {
  const c = await create(jira(siteUrl));
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  return c.body;
}

const authenticateJira = (id: string) =>
  stack.request('POST', `/v2/integrations/connections/${id}/authenticate`, {
    token: org.token,
    body: { provider_name: 'jira_service_management', username: 'ada@example.com', password: 'jira-api-token-xyz' },
  });

describe('tenant-supplied URLs naming a blocked address are refused when stored', () => {
  const refused = [
    'http://127.0.0.1:8080/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://[::1]:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://10.1.2.3/',
    'http://192.168.0.10/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://user:pass@example.com/',
    'ftp://example.com/',
    'file:///etc/passwd',
    'gopher://example.com/',
  ];

  it.each(refused)('POST with site_url %s: 422 at body.settings.site_url, nothing created', async (url) => {
    const before = await count();
    const res = await create(jira(url));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect(res.body.errors.map((e: { loc: unknown[] }) => e.loc)).toContainEqual(['body', 'settings', 'site_url']);
    expect(await count()).toBe(before);
  });

  it('refuses the same on PATCH and on Acumatica\'s base_url; accepts public and allowlisted addresses', async () => {
    const c = await jiraConnection('https://example.atlassian.net');
    const patched = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: org.token, body: { settings: { site_url: 'http://[::ffff:7f00:1]/' } } });
    expect(patched.status).toBe(422);
    expect(patched.body.errors[0]).toMatchObject({ loc: ['body', 'settings', 'site_url'], type: 'url_not_allowed' });
    const [row] = await stack.sql('SELECT settings FROM integrations.connections WHERE id = $1', [c.id]);
    expect(row.settings.site_url).toBe('https://example.atlassian.net');
    const acu = await create({ provider_name: 'acumatica', name: 'Acu', settings: { base_url: 'http://169.254.169.254' } });
    expect(acu.status).toBe(422);
    expect(acu.body.errors[0].loc).toEqual(['body', 'settings', 'base_url']);
    expect((await create(jira('http://8.8.8.8/'))).status).toBe(200);
    expect((await create(jira(`http://127.0.0.1:${allowed.port}/ok`))).status).toBe(200);
  });
});

describe('the guard at call time', () => {
  it('refuses a host name that resolves to loopback (after DNS): the loopback server receives nothing', async () => {
    const c = await jiraConnection(`http://localhost:${blocked.port}`);
    const res = await authenticateJira(c.id);
    expect(res.status).toBe(200);
    expect(res.body.health).toMatchObject({ status_code: 'unreachable', healthy: false });
    expect(res.body.health.message).toMatch(/refused: localhost resolves to .* loopback address/);
    expect(blocked.requests).toEqual([]);
  });

  it('follows a redirect within an allowed origin, but not one from an allowed host to a blocked one', async () => {
    const followed = await jiraConnection(`http://127.0.0.1:${allowed.port}/same-origin`);
    const ok = await authenticateJira(followed.id);
    expect(ok.status).toBe(200);
    // Jira accepted the credentials (after the redirect); there is no Jira adapter, so "unsupported".
    expect(ok.body).toMatchObject({ is_authentication_pending: false, health: { status_code: 'unsupported_provider' } });
    expect(allowed.requests.map((r) => r.url)).toEqual(['/same-origin/rest/api/3/myself', '/ok/rest/api/3/myself']);

    for (const path of ['to-blocked-ip', 'to-blocked-name', 'to-metadata']) {
      const c = await jiraConnection(`http://127.0.0.1:${allowed.port}/${path}`);
      const res = await authenticateJira(c.id);
      expect(res.status, path).toBe(200);
      expect(res.body.health.status_code, path).toBe('unreachable');
      expect(res.body.health.message, path).toMatch(/refused: .*(loopback|metadata) address/);
      expect(allowed.requests.at(-1)!.url).toBe(`/${path}/rest/api/3/myself`);
    }
    expect(blocked.requests).toEqual([]);
  });
});

describe('the platform\'s OAuth client secret', () => {
  it('goes to the registered token URL (QuickBooks) and never to the tenant\'s own host (Acumatica)', async () => {
    // QuickBooks: the registered (configured) token URL gets the client credentials.
    const qbo = await create({ provider_name: 'quickbooks_online', name: 'QBO' });
    expect(qbo.status).toBe(200);
    const state = new URL(qbo.body.authorization_url).searchParams.get('state');
    const auth = await stack.request('POST', `/v2/integrations/connections/${qbo.body.id}/authenticate`, {
      token: org.token,
      body: { provider_name: 'quickbooks_online', authorization_code: fake.approve('qbo', REDIRECT, '9130357'), redirect_uri: REDIRECT, state, extra_data: { realmId: '9130357' } },
    });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    const basic = `Basic ${Buffer.from(`${clients.qbo.client_id}:${clients.qbo.client_secret}`).toString('base64')}`;
    expect(fake.requests.some((r) => r.path === '/qbo/oauth2/v1/tokens/bearer' && r.headers.authorization === basic)).toBe(true);

    // Acumatica: its documented token endpoint is {base_url}/identity/connect/token, the tenant's host.
    const acu = await create({
      provider_name: 'acumatica',
      name: 'Acumatica',
      settings: { base_url: `http://127.0.0.1:${tenant.port}`, tenant: 'Co', endpoint_name: 'Default', endpoint_version: '23.200.001', scope: 'api', branches: ['HQ'], default_currency: 'USD' },
    });
    expect(acu.status).toBe(200);
    const [row] = await stack.sql('SELECT id, organization_id FROM integrations.connections WHERE id = $1', [acu.body.id]);
    const sealed = sealSecrets(config, row, { access_token: 'old', refresh_token: 'tenant-refresh-token', expires_at: new Date(Date.now() - 60_000).toISOString() });
    await stack.sql('UPDATE integrations.connections SET secrets = $2, is_authentication_pending = false WHERE id = $1', [acu.body.id, sealed]);

    const refresh = getProviderAccess({ db, config }, org.organizationId, acu.body.id);
    await expect(refresh).rejects.toBeInstanceOf(ProviderConfigurationError);
    await expect(refresh).rejects.toThrow(/tenant's own host/);
    expect(tenant.seen()).not.toContain(ACUMATICA_SECRET);
    expect(tenant.seen()).not.toContain(Buffer.from(`acu-client:${ACUMATICA_SECRET}`).toString('base64'));
    expect(tenant.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('OAuth state', () => {
  it('is optional (spec 4.3.1): without it a code of another authorization request (another PKCE challenge) is refused; an empty state is 422 before the provider is called', async () => {
    const qbo = await create({ provider_name: 'quickbooks_online', name: 'QBO without state' });
    const xero = await create({ provider_name: 'xero', name: 'Xero without state' });
    const tokenCalls = () => fake.requests.filter((r) => r.method === 'POST').length;
    // codes the provider issued for someone else's authorization request (its own code_challenge)
    const foreignChallenge = createHash('sha256').update('someone else\'s verifier').digest('base64url');
    const variants = [
      { id: qbo.body.id, body: { provider_name: 'quickbooks_online', authorization_code: fake.approve('qbo', REDIRECT, '1', foreignChallenge), redirect_uri: REDIRECT, extra_data: { realmId: '1' } } },
      { id: xero.body.id, body: { provider_name: 'xero', authorization_code: fake.approve('xero', REDIRECT, undefined, foreignChallenge), redirect_uri: REDIRECT } },
    ];
    for (const v of variants) {
      const before = tokenCalls();
      const empty = await stack.request('POST', `/v2/integrations/connections/${v.id}/authenticate`, { token: org.token, body: { ...v.body, state: '' } });
      expect(empty.status, `${v.body.provider_name} state=""`).toBe(422);
      expect(empty.body.errors.map((e: { loc: unknown[] }) => e.loc)).toContainEqual(['body', 'state']);
      expect(tokenCalls()).toBe(before);
      for (const state of [undefined, null]) {
        const res = await stack.request('POST', `/v2/integrations/connections/${v.id}/authenticate`, { token: org.token, body: { ...v.body, state } });
        expect(res.status, `${v.body.provider_name} state=${JSON.stringify(state)}`).toBe(422);
        expect(res.body).toMatchObject({ type: 'authentication-refused' });
      }
    }
    const rows = await stack.sql('SELECT is_authentication_pending, secrets FROM integrations.connections WHERE id = ANY($1)', [[qbo.body.id, xero.body.id]]);
    expect(rows).toEqual([
      { is_authentication_pending: true, secrets: null },
      { is_authentication_pending: true, secrets: null },
    ]);
  });
});
