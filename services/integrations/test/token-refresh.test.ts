/**
 * A refreshed OAuth token pair survives whatever happens after the provider rotated it: the new pair
 * is stored first, on its own (getProviderAccess against the fake Intuit token endpoint on loopback,
 * which rotates refresh tokens and refuses a used one, as Intuit does; real Postgres).
 *
 * Failures are injected where no API can reach: the database session of the refresh is killed
 * (pg_terminate_backend) while the provider is answering, and a caller wraps the access in a
 * transaction that then fails. The connection rows are set up with SQL (sealed with the service's
 * own crypto), as the gateway would after an authorization.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrate, newId, type Db } from '@rp/platform';
import { integrationsMigrations } from '@rp/integrations';
import { loadIntegrationsConfig } from '../src/config.js';
import { getProviderAccess, ProviderAuthenticationRequiredError, sealSecrets } from '../src/domain/connection-auth.js';
import { requestTokens } from '../src/domain/oauth.js';
import { decryptSecrets } from '../src/domain/secrets.js';
import { createTestDatabase } from '../../../test/support/stack.js';
import { FakeProviders } from '../../../test/support/fake-providers.js';

const APP = 'token-refresh-under-test';
const clients = { qbo: { client_id: 'qbo-id', client_secret: 'qbo-secret' }, xero: { client_id: 'x', client_secret: 'y' } };
let fake: FakeProviders;
let url: string;
let db: Db;
let admin: Db;
let config: ReturnType<typeof loadIntegrationsConfig>;
const orgId = newId();

beforeAll(async () => {
  fake = new FakeProviders(clients);
  await fake.start();
  url = await createTestDatabase();
  admin = createDb({ url, schema: 'integrations', poolMax: 2, applicationName: 'token-refresh-admin' });
  await migrate(admin, 'integrations', integrationsMigrations);
  db = createDb({ url, schema: 'integrations', poolMax: 2, applicationName: APP });
  config = loadIntegrationsConfig({
    DATABASE_URL: url,
    IDENTITY_SECRET: 'x'.repeat(32),
    CONNECTION_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: clients.qbo }),
    OAUTH_REDIRECT_URI: 'https://app.example.com/cb',
    PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${fake.url}/qbo/oauth2/v1/tokens/bearer`, api_base_url: `${fake.url}/qbo` } }),
    OUTBOUND_ALLOWLIST: '127.0.0.0/8', // the fake providers
  });
});

afterAll(async () => {
  await db?.destroy();
  await admin?.destroy();
  await fake?.close();
});

/** An authorized QuickBooks connection whose access token expires within the refresh margin. */
async function connectionDueForRefresh(): Promise<string> {
  const id = newId();
  const code = fake.approve('qbo', 'https://app.example.com/cb', '4620816365');
  const tokens = await requestTokens(config, 'quickbooks_online', {}, { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example.com/cb' });
  const secrets = sealSecrets(config, { organization_id: orgId, id }, { ...tokens, expires_at: new Date(Date.now() + 60_000).toISOString() });
  await admin('connections').insert({ id, organization_id: orgId, provider_name: 'quickbooks_online', name: 'qbo', settings: { realm_id: '4620816365' }, secrets, is_authentication_pending: false });
  return id;
}

async function storedSecrets(id: string) {
  const row = await admin('connections').where({ id }).first();
  return decryptSecrets(config, { organizationId: orgId, connectionId: id }, row.secrets);
}

async function expireStored(id: string) {
  const row = await admin('connections').where({ id }).first();
  const secrets = decryptSecrets(config, { organizationId: orgId, connectionId: id }, row.secrets);
  await admin('connections')
    .where({ id })
    .update({ secrets: sealSecrets(config, row, { ...secrets, expires_at: new Date(Date.now() + 60_000).toISOString() }) });
}

describe('OAuth token refresh', () => {
  it('keeps the rotated refresh token when the database session dies while the provider answers', async () => {
    const id = await connectionDueForRefresh();
    const before = await storedSecrets(id);
    const count = fake.refreshCount;
    fake.refreshDelayMs = 1_000;
    try {
      const pending = getProviderAccess({ db, config }, orgId, id).then(
        (a) => ({ ok: true as const, a }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      // The refresh request is at the provider (which rotates the refresh token): kill the sessions of the refreshing pool.
      while (fake.refreshCount === count) await new Promise((r) => setTimeout(r, 10));
      const killed = await admin.raw(`SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE application_name = ?`, [APP]);
      expect(killed.rows.length).toBeGreaterThan(0);
      const outcome = await pending;
      expect(outcome.ok ? 'returned' : String(outcome.e)).toBe('returned');
    } finally {
      fake.refreshDelayMs = 0;
    }

    // The new pair is stored: the old refresh token is spent at the provider, the stored one is live.
    const after = await storedSecrets(id);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(fake.refreshTokens.has(before.refresh_token!)).toBe(false);
    expect(fake.refreshTokens.has(after.refresh_token!)).toBe(true);
    // And the connection keeps working: the next refresh succeeds with it.
    await expireStored(id);
    const next = await getProviderAccess({ db, config }, orgId, id);
    expect(fake.accessTokens.has(next.accessToken)).toBe(true);
    expect((await storedSecrets(id)).refresh_token).not.toBe(after.refresh_token);
  });

  it('does not tie a refresh to a caller transaction that fails afterwards: it refuses to run inside one', async () => {
    const id = await connectionDueForRefresh();
    const before = await storedSecrets(id);
    const count = fake.refreshCount;
    const failed = await db
      .transaction(async (trx) => {
        await getProviderAccess({ db: trx, config }, orgId, id);
        throw new Error('the caller work after the refresh failed');
      })
      .catch((e: Error) => e.message);
    expect(failed).toMatch(/must not run inside a transaction/);
    expect(fake.refreshCount).toBe(count);
    // Nothing was spent at the provider: the stored pair still works.
    expect((await storedSecrets(id)).refresh_token).toBe(before.refresh_token);
    const access = await getProviderAccess({ db, config }, orgId, id);
    expect(fake.accessTokens.has(access.accessToken)).toBe(true);
  });

  it('still refreshes once for concurrent callers and reports a refused refresh', async () => {
    const id = await connectionDueForRefresh();
    const count = fake.refreshCount;
    fake.refreshDelayMs = 200;
    try {
      const results = await Promise.all(Array.from({ length: 4 }, () => getProviderAccess({ db, config }, orgId, id)));
      expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
    } finally {
      fake.refreshDelayMs = 0;
    }
    expect(fake.refreshCount - count).toBe(1);
    fake.revokeAll();
    await expireStored(id);
    await expect(getProviderAccess({ db, config }, orgId, id)).rejects.toBeInstanceOf(ProviderAuthenticationRequiredError);
    const row = await admin('connections').where({ id }).first();
    expect(row.health).toMatchObject({ status_code: 'authentication_required' });
  });
});
