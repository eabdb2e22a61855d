/**
 * Connections end to end through the gateway: CRUD and validation, derived fields, the OAuth
 * authorization URL and its signed state, authenticate (OAuth against fake QuickBooks/Xero token
 * endpoints on loopback, API key, username/password), secrets at rest, token refresh, health
 * checks, sync schedules and tenant isolation.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, createDb, type Db } from '@rp/platform';
import { loadIntegrationsConfig, type IntegrationsConfig } from '../services/integrations/src/config.js';
import { getProviderAccess, ProviderAuthenticationRequiredError } from '../services/integrations/src/domain/connection-auth.js';
import { signState, verifyState } from '../services/integrations/src/domain/oauth.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { FakeProviders } from './support/fake-providers.js';

const REDIRECT = 'https://app.example.com/oauth/callback';
const clients = {
  qbo: { client_id: 'qbo-client-id', client_secret: 'qbo-client-secret-xyz' },
  xero: { client_id: 'xero-client-id', client_secret: 'xero-client-secret-xyz' },
};

let stack: TestStack;
let fake: FakeProviders;
let orgA: Org;
let orgB: Org;
let db: Db;
let config: IntegrationsConfig;

beforeAll(async () => {
  fake = new FakeProviders(clients);
  await fake.start();
  stack = await startStack({
    env: {
      OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: clients.qbo, xero: clients.xero }),
      OAUTH_REDIRECT_URI: REDIRECT,
      PROVIDER_HTTP_TIMEOUT_MS: '3000',
      PROVIDER_URL_OVERRIDES: JSON.stringify({
        quickbooks_online: { authorize_url: `${fake.url}/qbo/connect/oauth2`, token_url: `${fake.url}/qbo/oauth2/v1/tokens/bearer`, api_base_url: `${fake.url}/qbo` },
        xero: { authorize_url: `${fake.url}/xero/identity/connect/authorize`, token_url: `${fake.url}/xero/connect/token`, api_base_url: `${fake.url}/xero` },
        stripe: { api_base_url: `${fake.url}/stripe` },
      }),
    },
  });
  [orgA, orgB] = [await stack.onboard(), await stack.onboard()];
  config = loadIntegrationsConfig(stack.env);
  db = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 4 });
});

afterAll(async () => {
  await db?.destroy();
  await stack?.close();
  await fake?.close();
});

async function create(org: Org, body: Record<string, unknown>) {
  return stack.request('POST', '/v2/integrations/connections', { token: org.token, body });
}

async function createOk(org: Org, body: Record<string, unknown>) {
  const res = await create(org, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function stateOf(connection: { authorization_url: string }): string {
  return new URL(connection.authorization_url).searchParams.get('state')!;
}

async function authenticateQbo(org: Org, connection: any, opts: { state?: string | null; realmId?: string } = {}) {
  const code = fake.approve('qbo', REDIRECT, opts.realmId ?? '9130357');
  return stack.request('POST', `/v2/integrations/connections/${connection.id}/authenticate`, {
    token: org.token,
    body: {
      provider_name: 'quickbooks_online',
      authorization_code: code,
      redirect_uri: REDIRECT,
      state: opts.state === undefined ? stateOf(connection) : opts.state,
      extra_data: { realmId: opts.realmId ?? '9130357' },
    },
  });
}

const ACUMATICA_SETTINGS = {
  base_url: 'https://erp.example.com',
  tenant: 'Company',
  endpoint_name: 'Default',
  endpoint_version: '23.200.001',
  scope: 'api offline_access',
  branches: ['HQ', 'EAST'],
  default_currency: 'USD',
};

describe('connections: create, read, update, delete', () => {
  it('creates an Acumatica connection with every 2.2 field, settings flattened and derived fields', async () => {
    const c = await createOk(orgA, { provider_name: 'acumatica', name: 'Acumatica prod', settings: { base_url: 'https://erp.example.com', tenant: 'Company', branches: ['HQ'] } });
    expect(c).toMatchObject({
      object: 'connection',
      provider_name: 'acumatica',
      name: 'Acumatica prod',
      owner_id: orgA.userId,
      is_authentication_pending: true,
      is_running_setup: false,
      is_sync_disabled: false,
      requires_setup: true,
      is_configured: false,
      missing_settings: ['endpoint_name', 'endpoint_version', 'scope', 'default_currency'],
      is_healthy: false,
      linked_integration_id: null,
      next_sync_at: null,
      models: [],
      base_url: 'https://erp.example.com',
      tenant: 'Company',
      endpoint_name: null,
      endpoint_version: null,
      scope: null,
      branches: ['HQ'],
      default_currency: null,
    });
    expect(c.provider).toMatchObject({ object: 'provider', name: 'acumatica', is_enabled: false });
    expect(c.health).toMatchObject({ healthy: false, status_code: 'misconfigured', authentication_required: false });
    expect(c.health.message).toContain('endpoint_name');
    expect(Date.parse(c.health.timestamp)).not.toBeNaN();
    // No OAuth client is configured for Acumatica on this platform.
    expect(c.authorization_url).toBeNull();
    for (const f of ['id', 'created_at', 'modified_at', 'health', 'models', 'provider', 'is_healthy', 'authorization_url', 'missing_settings']) expect(c).toHaveProperty(f);

    // Completing the settings makes it configured; without an adapter its health says so.
    const patched = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: orgA.token, body: { settings: ACUMATICA_SETTINGS } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ is_configured: true, missing_settings: [], requires_setup: true, endpoint_version: '23.200.001', branches: ['HQ', 'EAST'] });
    expect(patched.body.health.status_code).toBe('misconfigured'); // no OAuth client for Acumatica
    expect(patched.body.health.message).toMatch(/OAuth client/);

    const got = await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(patched.body);
  });

  it('creates a QuickBooks Online connection with its three models and a pending, paused schedule', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO' });
    expect(c).toMatchObject({ is_authentication_pending: true, requires_setup: true, is_configured: true, missing_settings: [], next_sync_at: null, realm_id: null });
    expect(c.provider.is_enabled).toBe(true);
    expect(c.health).toMatchObject({ status_code: 'authentication_required', authentication_required: true, healthy: false });
    expect(c.models.map((m: any) => m.name)).toEqual(['customers', 'invoices', 'credit_memos']);
    for (const m of c.models) {
      expect(m).toMatchObject({ object: 'connection_model', connection_id: c.id, is_read_enabled: true, is_read_supported: true, is_sync_supported: true, last_sync: null, next_sync_at: null });
    }
    const rows = await stack.sql('SELECT name FROM integrations.connection_models WHERE connection_id = $1 ORDER BY name', [c.id]);
    expect(rows.map((r) => r.name)).toEqual(['credit_memos', 'customers', 'invoices']);
  });

  it('creates a middleware connection that needs no authentication and is healthy', async () => {
    const c = await createOk(orgA, { provider_name: 'middleware', name: 'SAP via middleware' });
    expect(c).toMatchObject({ is_authentication_pending: false, requires_setup: false, is_configured: true, is_healthy: true, authorization_url: null });
    expect(c.health.status_code).toBe('healthy');
    expect(c.models.map((m: any) => [m.name, m.is_sync_supported])).toEqual([
      ['customers', false],
      ['invoices', false],
      ['credit_memos', false],
    ]);
  });

  it('refuses unknown providers, bad setting types, unknown settings and unknown fields with 422', async () => {
    const unknown = await create(orgA, { provider_name: 'telepathy', name: 'x' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].loc).toEqual(['body', 'provider_name']);

    const badType = await create(orgA, { provider_name: 'acumatica', name: 'x', settings: { branches: 'HQ', base_url: 'not a url', default_currency: 'XXY' } });
    expect(badType.status).toBe(422);
    const locs = badType.body.errors.map((e: any) => e.loc.join('.')).sort();
    expect(locs).toEqual(['body.settings.base_url', 'body.settings.branches', 'body.settings.default_currency']);

    const unknownSetting = await create(orgA, { provider_name: 'quickbooks_online', name: 'x', settings: { tenant: 'nope' } });
    expect(unknownSetting.status).toBe(422);
    expect(unknownSetting.body.errors[0].loc).toEqual(['body', 'settings', 'tenant']);

    const noName = await create(orgA, { provider_name: 'stripe' });
    expect(noName.status).toBe(422);
    expect(noName.body.errors[0].loc).toEqual(['body', 'name']);

    const extra = await create(orgA, { provider_name: 'stripe', name: 'x', api_key: 'sk_live_should_not_be_here' });
    expect(extra.status).toBe(422);

    const patchBad = await stack.request('PATCH', '/v2/integrations/connections/00000000-0000-7000-8000-000000000000', { token: orgA.token, body: { is_sync_disabled: 'yes' } });
    expect(patchBad.status).toBe(422);
  });

  it('refuses a lone surrogate in settings (values and list items) with 422 naming the setting, and changes nothing', async () => {
    const created = await create(orgA, { provider_name: 'quickbooks_online', name: 'QBO surrogate', settings: { realm_id: 'company\ud800' } });
    expect(created.status, JSON.stringify(created.body)).toBe(422);
    expect(created.body.errors).toEqual([{ loc: ['body', 'settings', 'realm_id'], msg: expect.stringContaining('lone UTF-16 surrogate'), type: 'lone_surrogate' }]);
    expect(await stack.sql(`SELECT id FROM integrations.connections WHERE organization_id = $1 AND name = 'QBO surrogate'`, [orgA.organizationId])).toEqual([]);

    const c = await createOk(orgA, { provider_name: 'acumatica', name: 'Acumatica surrogate', settings: { branches: ['HQ'] } });
    const patched = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: orgA.token, body: { settings: { branches: ['HQ', 'B\udc00'] } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(422);
    expect(patched.body.errors).toEqual([{ loc: ['body', 'settings', 'branches', 1], msg: expect.stringContaining('lone UTF-16 surrogate'), type: 'lone_surrogate' }]);
    expect((await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token })).body.branches).toEqual(['HQ']);
  });

  it('lists with kernel pagination and page bounds', async () => {
    const org = await stack.onboard();
    for (let i = 0; i < 3; i++) await createOk(org, { provider_name: 'stripe', name: `Stripe ${i}` });
    const p0 = await stack.request('GET', '/v2/integrations/connections?page=0&page_size=2', { token: org.token });
    expect(p0.status).toBe(200);
    expect(p0.body).toMatchObject({ current_page: 0, total_records: 3, next_page: 1 });
    expect(p0.body.data.map((c: any) => c.name)).toEqual(['Stripe 0', 'Stripe 1']);
    const p1 = await stack.request('GET', '/v2/integrations/connections?page=1&page_size=2', { token: org.token });
    expect(p1.body).toMatchObject({ current_page: 1, total_records: 3, next_page: null });
    expect(p1.body.data.map((c: any) => c.name)).toEqual(['Stripe 2']);
    for (const q of ['page=-1', 'page_size=0', 'page_size=101', 'page=abc']) {
      const bad = await stack.request('GET', `/v2/integrations/connections?${q}`, { token: org.token });
      expect(bad.status, q).toBe(422);
    }
    // Another organization sees none of them.
    const other = await stack.request('GET', '/v2/integrations/connections', { token: orgB.token });
    expect(other.body.data.every((c: any) => !c.name.startsWith('Stripe '))).toBe(true);
  });

  it('updates name and is_sync_disabled, deletes with 204, then 404', async () => {
    const c = await createOk(orgA, { provider_name: 'middleware', name: 'Before' });
    const renamed = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: orgA.token, body: { name: 'After', is_sync_disabled: true } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'After', is_sync_disabled: true });
    expect(Date.parse(renamed.body.modified_at)).toBeGreaterThanOrEqual(Date.parse(c.modified_at));
    const del = await stack.request('DELETE', `/v2/integrations/connections/${c.id}`, { token: orgA.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token })).status).toBe(404);
    expect((await stack.request('DELETE', `/v2/integrations/connections/${c.id}`, { token: orgA.token })).status).toBe(404);
    expect((await stack.request('GET', '/v2/integrations/connections/not-a-uuid', { token: orgA.token })).status).toBe(422); // ids are validated as ids
    expect((await stack.sql('SELECT count(*)::int AS n FROM integrations.connection_models WHERE connection_id = $1', [c.id]))[0].n).toBe(0);
  });
});

describe('OAuth: authorization URL and authenticate', () => {
  it('builds the authorization URL with client, redirect, scope and a state that verifies', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO url' });
    const url = new URL(c.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/qbo/connect/oauth2`);
    expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'state' && k !== 'code_challenge'))).toEqual({
      client_id: clients.qbo.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'com.intuit.quickbooks.accounting',
      code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [nonceRow] = await stack.sql('SELECT oauth_state_nonce FROM integrations.connections WHERE id = $1', [c.id]);
    const state = stateOf(c);
    expect(verifyState(config, state, { connectionId: c.id, organizationId: orgA.organizationId, nonce: nonceRow.oauth_state_nonce })).toEqual({ ok: true });
    expect(verifyState(config, state, { connectionId: c.id, organizationId: orgB.organizationId, nonce: nonceRow.oauth_state_nonce }).ok).toBe(false);
    const payload = JSON.parse(Buffer.from(state.split('.')[0], 'base64url').toString());
    expect(payload).toMatchObject({ c: c.id, o: orgA.organizationId });
    expect(payload.e).toBeGreaterThan(Date.now() / 1000);
    expect(state).not.toContain(clients.qbo.client_secret);
  });

  it('exchanges the code, stores the tokens encrypted, clears pending and checks health', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO auth' });
    const before = fake.requests.length;
    const res = await authenticateQbo(orgA, c);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, is_authentication_pending: false, requires_setup: false, is_healthy: true, realm_id: '9130357' });
    expect(res.body.health).toMatchObject({ healthy: true, status_code: 'healthy', authentication_required: false });
    expect(Date.parse(res.body.next_sync_at)).toBeGreaterThan(Date.now());
    for (const m of res.body.models) expect(m.next_sync_at).toBe(res.body.next_sync_at);

    // The token request followed Intuit's documented shape.
    const calls = fake.requests.slice(before);
    const tokenCall = calls.find((r) => r.path === '/qbo/oauth2/v1/tokens/bearer')!;
    expect(tokenCall.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(tokenCall.headers.authorization).toBe(`Basic ${Buffer.from(`${clients.qbo.client_id}:${clients.qbo.client_secret}`).toString('base64')}`);
    expect(tokenCall.form).toMatchObject({ grant_type: 'authorization_code', redirect_uri: REDIRECT });
    const infoCall = calls.find((r) => r.path === '/qbo/v3/company/9130357/companyinfo/9130357')!;
    const accessToken = /^Bearer (.+)$/.exec(infoCall.headers.authorization!)![1];
    expect(fake.accessTokens.has(accessToken)).toBe(true);

    // Never returned, never stored in plaintext.
    const [row] = await stack.sql('SELECT row_to_json(c)::text AS text, secrets FROM integrations.connections c WHERE id = $1', [c.id]);
    expect(row.text).not.toContain(accessToken);
    expect(row.text).not.toMatch(/rt-qbo-/);
    expect(row.secrets).toMatch(/^v1\.[0-9a-f]{8}\./);
    const got = await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token });
    expect(got.text).not.toContain(accessToken);
    expect(got.text).not.toMatch(/rt-qbo-|access_token|refresh_token/);
    const listed = await stack.request('GET', '/v2/integrations/connections?page_size=100', { token: orgA.token });
    expect(listed.text).not.toContain(accessToken);

    // The state is spent: the same authorization URL cannot authenticate again.
    const replay = await authenticateQbo(orgA, c);
    expect(replay.status).toBe(422);
    expect(replay.body.errors[0].loc).toEqual(['body', 'state']);

    // Sync disabled pauses the schedule: no next sync.
    const disabled = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: orgA.token, body: { is_sync_disabled: true } });
    expect(disabled.body.next_sync_at).toBeNull();
    const enabled = await stack.request('PATCH', `/v2/integrations/connections/${c.id}`, { token: orgA.token, body: { is_sync_disabled: false } });
    expect(Date.parse(enabled.body.next_sync_at)).toBeGreaterThan(Date.now());

    // Delete removes the schedule too.
    const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
    try {
      await t.client.schedule.getHandle(`connection-sync-${c.id}`).describe();
      expect((await stack.request('DELETE', `/v2/integrations/connections/${c.id}`, { token: orgA.token })).status).toBe(204);
      await expect(t.client.schedule.getHandle(`connection-sync-${c.id}`).describe()).rejects.toThrow();
    } finally {
      await t.close();
    }
  });

  it('refused code: 422 naming the provider error, still pending, nothing stored', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO refused' });
    const res = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'quickbooks_online', authorization_code: 'never-approved', redirect_uri: REDIRECT, state: stateOf(c), extra_data: { realmId: '1' } },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'authentication-refused', status: 422 });
    expect(res.body.detail).toContain('invalid_grant');
    expect(res.body.detail).toContain('QuickBooks Online');
    const [row] = await stack.sql('SELECT is_authentication_pending, secrets FROM integrations.connections WHERE id = $1', [c.id]);
    expect(row).toEqual({ is_authentication_pending: true, secrets: null });
  });

  it('bad, forged, expired or foreign state: 422, still pending; missing realmId: 422', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO states' });
    const other = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO other' });
    const [{ oauth_state_nonce: nonce }] = await stack.sql('SELECT oauth_state_nonce FROM integrations.connections WHERE id = $1', [c.id]);
    const [payload, mac] = stateOf(c).split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), e: 4102444800 })).toString('base64url');
    const cases: [string, string][] = [
      ['garbage', 'not-a-state'],
      ['forged', `${forgedPayload}.${mac}`],
      ['wrong key', signState({ ...config, CONNECTION_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }, { connectionId: c.id, organizationId: orgA.organizationId, nonce, expiresAt: 4102444800 })],
      ['expired', signState(config, { connectionId: c.id, organizationId: orgA.organizationId, nonce, expiresAt: Math.floor(Date.now() / 1000) - 5 })],
      ['other connection', stateOf(other)],
    ];
    const tokenCalls = () => fake.requests.filter((r) => r.path.includes('tokens/bearer')).length;
    const tokenCallsBefore = tokenCalls();
    for (const [label, state] of cases) {
      const res = await authenticateQbo(orgA, c, { state });
      expect(res.status, label).toBe(422);
      expect(res.body.errors[0].loc, label).toEqual(['body', 'state']);
    }
    // A bad state is refused before the code reaches the provider.
    expect(tokenCalls()).toBe(tokenCallsBefore);

    const noRealm = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'quickbooks_online', authorization_code: fake.approve('qbo', REDIRECT), redirect_uri: REDIRECT, state: stateOf(c) },
    });
    expect(noRealm.status).toBe(422);
    expect(noRealm.body.errors[0].loc).toEqual(['body', 'extra_data', 'realm_id']);
    const wrongRedirect = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'quickbooks_online', authorization_code: 'x', redirect_uri: 'https://evil.example.com/cb', state: stateOf(c), extra_data: { realm_id: '1' } },
    });
    expect(wrongRedirect.status).toBe(422);
    expect(wrongRedirect.body.errors[0].loc).toEqual(['body', 'redirect_uri']);

    const [row] = await stack.sql('SELECT is_authentication_pending, secrets FROM integrations.connections WHERE id = $1', [c.id]);
    expect(row).toEqual({ is_authentication_pending: true, secrets: null });
  });

  it('mismatched or malformed variants: 422', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO variant' });
    const xeroBody = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'xero', authorization_code: 'abc', state: 'x' } });
    expect(xeroBody.status).toBe(422);
    expect(xeroBody.body.errors[0].loc).toEqual(['body', 'provider_name']);
    const stripeBody = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'stripe', api_key: 'sk_test_valid_key_123456' } });
    expect(stripeBody.status).toBe(422);
    const noCode = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'quickbooks_online', redirect_uri: REDIRECT } });
    expect(noCode.status).toBe(422);
    expect(noCode.body.errors.map((e: any) => e.loc.join('.'))).toContain('body.authorization_code');
    const unknown = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'netsuite', authorization_code: 'x' } });
    expect(unknown.status).toBe(422);
  });

  it('token endpoint failing (5xx) gives 502 and leaves the connection pending', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO 5xx' });
    fake.tokenFailure = { status: 503, body: { error: 'temporarily_unavailable' } };
    try {
      const res = await authenticateQbo(orgA, c);
      expect(res.status).toBe(502);
      expect(res.body.detail).toMatch(/token endpoint/);
    } finally {
      fake.tokenFailure = null;
    }
    expect((await stack.sql('SELECT is_authentication_pending FROM integrations.connections WHERE id = $1', [c.id]))[0].is_authentication_pending).toBe(true);
  });

  it('state is optional and nullable (spec 4.3.1): without it the code is bound to the connection\'s authorization URL by PKCE (S256)', async () => {
    const authenticate = (c: any, body: Record<string, unknown>) => stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body });
    const challengeOf = (c: { authorization_url: string }) => new URL(c.authorization_url).searchParams.get('code_challenge')!;

    // Xero, state absent: a code issued for another authorization request (another code_challenge: an
    // attacker's consent) is refused by the provider; the connection stays pending
    const xero = await createOk(orgA, { provider_name: 'xero', name: 'Xero without state' });
    const foreign = fake.approve('xero', REDIRECT, undefined, createHash('sha256').update('an attacker\'s verifier').digest('base64url'));
    const refused = await authenticate(xero, { provider_name: 'xero', authorization_code: foreign });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body).toMatchObject({ type: 'authentication-refused' });
    expect(refused.body.detail).toContain('invalid_grant');
    expect((await stack.sql('SELECT is_authentication_pending FROM integrations.connections WHERE id = $1', [xero.id]))[0].is_authentication_pending).toBe(true);
    const ok = await authenticate(xero, { provider_name: 'xero', authorization_code: fake.approve('xero', REDIRECT, undefined, challengeOf(xero)) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.is_authentication_pending).toBe(false);

    // QuickBooks, state null
    const qbo = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO state null' });
    const res = await authenticate(qbo, {
      provider_name: 'quickbooks_online',
      authorization_code: fake.approve('qbo', REDIRECT, undefined, challengeOf(qbo)),
      redirect_uri: REDIRECT,
      state: null,
      extra_data: { realmId: '1' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.is_authentication_pending).toBe(false);
    // the authorization URL of the next authorization carries a new challenge (the verifier is spent with the nonce)
    const again = (await stack.request('GET', `/v2/integrations/connections/${qbo.id}`, { token: orgA.token })).body;
    expect(challengeOf(again)).not.toBe(challengeOf(qbo));

    const doc = (await stack.request('GET', '/openapi.json')).body;
    const variants = doc.components.schemas.AuthenticateConnectionRequest.oneOf;
    for (const v of variants.slice(0, 2)) {
      expect(v.required).not.toContain('state');
      expect(JSON.stringify(v.properties.state)).toContain('null');
      expect(v.properties.state.description).toContain('PKCE');
    }
  });

  it('authenticates the second OAuth variant (Xero): credentials verified, no adapter', async () => {
    const c = await createOk(orgA, { provider_name: 'xero', name: 'Xero' });
    expect(new URL(c.authorization_url).searchParams.get('scope')).toContain('offline_access');
    const res = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'xero', authorization_code: fake.approve('xero', REDIRECT), state: stateOf(c) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ is_authentication_pending: false, is_healthy: false, next_sync_at: null });
    expect(res.body.health).toMatchObject({ status_code: 'unsupported_provider', authentication_required: false });
    expect(res.body.health.message).toMatch(/accepted the credentials/);
  });
});

describe('token refresh', () => {
  it('refreshes before expiry, once for concurrent callers, and reports a refused refresh', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO refresh' });
    fake.expiresIn = 3600;
    expect((await authenticateQbo(orgA, c)).status).toBe(200);

    // A token valid for an hour is used as is.
    const startCount = fake.refreshCount;
    const a1 = await getProviderAccess({ db, config }, orgA.organizationId, c.id);
    expect(a1).toEqual({ accessToken: expect.stringMatching(/^at-qbo-/), realmId: '9130357', apiBaseUrl: `${fake.url}/qbo`, outbound: config.OUTBOUND_ALLOWLIST });
    expect(fake.refreshCount).toBe(startCount);

    // Within 5 minutes of expiry, the health check refreshes first (refresh_token grant) and uses the new token.
    await shortenStoredExpiry(c.id);
    const viaHealth = await stack.request('POST', `/v2/integrations/connections/${c.id}/health-check`, { token: orgA.token });
    expect(viaHealth.body.health.status_code).toBe('healthy');
    expect(fake.refreshCount).toBe(startCount + 1);
    const refreshCall = fake.requests.filter((r) => r.form.grant_type === 'refresh_token').at(-1)!;
    expect(refreshCall.form.refresh_token).toMatch(/^rt-qbo-/);
    expect(refreshCall.headers.authorization).toMatch(/^Basic /);

    // Five concurrent callers in the refresh window: one refresh, all get the new token.
    const before = fake.refreshCount;
    fake.refreshDelayMs = 300;
    await shortenStoredExpiry(c.id);
    const results = await Promise.all(Array.from({ length: 5 }, () => getProviderAccess({ db, config }, orgA.organizationId, c.id)));
    fake.refreshDelayMs = 0;
    expect(fake.refreshCount - before).toBe(1);
    expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
    expect(results[0].accessToken).not.toBe(a1.accessToken);
    expect(fake.accessTokens.has(results[0].accessToken)).toBe(true);
    const healthy = await stack.request('POST', `/v2/integrations/connections/${c.id}/health-check`, { token: orgA.token });
    expect(healthy.body.health.status_code).toBe('healthy');
    expect(fake.refreshCount - before).toBe(1);
    const [row] = await stack.sql('SELECT secrets FROM integrations.connections WHERE id = $1', [c.id]);
    expect(row.secrets).not.toContain(results[0].accessToken);

    // The provider revokes the refresh token: a clear error and health authentication_required.
    fake.revokeAll();
    await shortenStoredExpiry(c.id);
    await expect(getProviderAccess({ db, config }, orgA.organizationId, c.id)).rejects.toBeInstanceOf(ProviderAuthenticationRequiredError);
    const got = await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token });
    expect(got.body.health).toMatchObject({ status_code: 'authentication_required', authentication_required: true });
    expect(got.body.health.message).toContain('invalid_grant');
  });
});

/** Rewrite the stored (encrypted) expiry to 1 minute from now, through the service's own crypto. */
async function shortenStoredExpiry(connectionId: string): Promise<void> {
  const { decryptSecrets, encryptSecrets } = await import('../services/integrations/src/domain/secrets.js');
  const row = await db('connections').where({ id: connectionId }).first();
  const binding = { organizationId: row.organization_id, connectionId };
  const secrets = decryptSecrets(config, binding, row.secrets);
  secrets.expires_at = new Date(Date.now() + 60_000).toISOString();
  await db('connections').where({ id: connectionId }).update({ secrets: encryptSecrets(config, binding, secrets) });
}

describe('API key and username/password variants', () => {
  it('Stripe: a valid key is verified with a real call and stored encrypted; a refused key gives 422', async () => {
    const c = await createOk(orgA, { provider_name: 'stripe', name: 'Stripe' });
    expect(c.authorization_url).toBeNull();
    const refused = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'stripe', api_key: 'sk_test_wrong_key_000' } });
    expect(refused.status).toBe(422);
    expect(refused.body.type).toBe('authentication-refused');
    expect((await stack.sql('SELECT secrets, is_authentication_pending FROM integrations.connections WHERE id = $1', [c.id]))[0]).toEqual({ secrets: null, is_authentication_pending: true });

    const ok = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, { token: orgA.token, body: { provider_name: 'stripe', api_key: 'sk_test_valid_key_123456' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ is_authentication_pending: false });
    expect(ok.body.health.status_code).toBe('unsupported_provider');
    expect(ok.text).not.toContain('sk_test_valid_key_123456');
    const [row] = await stack.sql('SELECT row_to_json(c)::text AS text FROM integrations.connections c WHERE id = $1', [c.id]);
    expect(row.text).not.toContain('sk_test_valid_key_123456');
    const call = fake.requests.filter((r) => r.path === '/stripe/v1/balance').at(-1)!;
    expect(call.headers.authorization).toBe('Bearer sk_test_valid_key_123456');
  });

  it('Jira: basic credentials checked at the site URL; unreachable site keeps it pending', async () => {
    const c = await createOk(orgA, { provider_name: 'jira_service_management', name: 'Jira', settings: { site_url: `${fake.url}/jira`, service_desk_id: '1' } });
    const ok = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'jira_service_management', username: 'ada@example.com', password: 'jira-api-token-xyz' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ is_authentication_pending: false, site_url: `${fake.url}/jira` });
    expect(ok.body.health.status_code).toBe('unsupported_provider');

    const bad = await stack.request('POST', `/v2/integrations/connections/${c.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'jira_service_management', username: 'ada@example.com', password: 'wrong' },
    });
    expect(bad.status).toBe(422);

    const far = await createOk(orgA, { provider_name: 'jira_service_management', name: 'Jira far', settings: { site_url: 'http://127.0.0.1:1', service_desk_id: '1' } });
    const unreachable = await stack.request('POST', `/v2/integrations/connections/${far.id}/authenticate`, {
      token: orgA.token,
      body: { provider_name: 'jira_service_management', username: 'ada@example.com', password: 'jira-api-token-xyz' },
    });
    expect(unreachable.status).toBe(200);
    expect(unreachable.body).toMatchObject({ is_authentication_pending: true });
    expect(unreachable.body.health.status_code).toBe('unreachable');
  });
});

describe('health check endpoint', () => {
  it('reports healthy, rate_limited (429), provider_error (5xx), authentication_required (401) and unreachable', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO health' });
    fake.expiresIn = 3600;
    expect((await authenticateQbo(orgA, c)).status).toBe(200);
    const check = async () => (await stack.request('POST', `/v2/integrations/connections/${c.id}/health-check`, { token: orgA.token })).body;

    expect((await check()).health.status_code).toBe('healthy');
    fake.apiStatus = 429;
    expect((await check()).health).toMatchObject({ status_code: 'rate_limited', healthy: false });
    fake.apiStatus = 500;
    expect((await check()).health.status_code).toBe('provider_error');
    fake.apiStatus = null;
    fake.expireAccessTokens();
    const auth = await check();
    expect(auth.health).toMatchObject({ status_code: 'authentication_required', authentication_required: true, healthy: false });
    expect(auth.is_healthy).toBe(false);
    // The latest health is stored.
    expect((await stack.request('GET', `/v2/integrations/connections/${c.id}`, { token: orgA.token })).body.health.status_code).toBe('authentication_required');

    const far = await createOk(orgA, { provider_name: 'stripe', name: 'Stripe far' });
    await db('connections').where({ id: far.id }).update({ settings: JSON.stringify({}) });
    const stripeFar = await stack.request('POST', `/v2/integrations/connections/${far.id}/health-check`, { token: orgA.token });
    expect(stripeFar.body.health.status_code).toBe('authentication_required'); // no key yet

    const jira = await createOk(orgA, { provider_name: 'jira_service_management', name: 'Jira gone', settings: { site_url: 'http://127.0.0.1:1', service_desk_id: '1' } });
    const { encryptSecrets } = await import('../services/integrations/src/domain/secrets.js');
    await db('connections')
      .where({ id: jira.id })
      .update({ secrets: encryptSecrets(config, { organizationId: orgA.organizationId, connectionId: jira.id }, { username: 'ada@example.com', password: 'x' }) });
    const gone = await stack.request('POST', `/v2/integrations/connections/${jira.id}/health-check`, { token: orgA.token });
    expect(gone.body.health.status_code).toBe('unreachable');
    expect(gone.body.health.message).toContain('127.0.0.1:1');

    // Secrets sealed with a key this platform no longer has: the connection must authenticate again.
    const otherKey = { ...config, CONNECTION_SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'), CONNECTION_SECRETS_PREVIOUS_KEYS: [] };
    await db('connections')
      .where({ id: c.id })
      .update({ secrets: encryptSecrets(otherKey, { organizationId: orgA.organizationId, connectionId: c.id }, { access_token: 'x', expires_at: '2099-01-01T00:00:00Z' }) });
    await expect(getProviderAccess({ db, config }, orgA.organizationId, c.id)).rejects.toBeInstanceOf(ProviderAuthenticationRequiredError);
    const unreadable = await stack.request('POST', `/v2/integrations/connections/${c.id}/health-check`, { token: orgA.token });
    expect(unreadable.body.health.status_code).toBe('authentication_required');
    expect(unreadable.body.health.message).toMatch(/cannot be read/);

    const netsuite = await createOk(orgA, { provider_name: 'netsuite', name: 'NS', settings: { account_id: '123', subsidiaries: ['1'], default_currency: 'USD' } });
    const ns = await stack.request('POST', `/v2/integrations/connections/${netsuite.id}/health-check`, { token: orgA.token });
    expect(ns.body.health.status_code).toBe('misconfigured'); // no OAuth client for NetSuite
  });
});

describe('tenant isolation', () => {
  it('another organization cannot get, update, delete, authenticate or health-check a connection (404)', async () => {
    const c = await createOk(orgA, { provider_name: 'quickbooks_online', name: 'QBO private' });
    const base = `/v2/integrations/connections/${c.id}`;
    const attempts = [
      await stack.request('GET', base, { token: orgB.token }),
      await stack.request('PATCH', base, { token: orgB.token, body: { name: 'stolen' } }),
      await stack.request('DELETE', base, { token: orgB.token }),
      await stack.request('POST', `${base}/authenticate`, {
        token: orgB.token,
        body: { provider_name: 'quickbooks_online', authorization_code: fake.approve('qbo', REDIRECT), redirect_uri: REDIRECT, state: stateOf(c), extra_data: { realmId: '1' } },
      }),
      await stack.request('POST', `${base}/health-check`, { token: orgB.token }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    const still = await stack.request('GET', base, { token: orgA.token });
    expect(still.body).toMatchObject({ name: 'QBO private', is_authentication_pending: true });
  });

  it('organization API keys may not call connection endpoints (403)', async () => {
    const viaKey = await stack.request('GET', '/v2/integrations/connections', { token: orgA.apiKey });
    expect(viaKey.status).toBe(403);
  });
});
