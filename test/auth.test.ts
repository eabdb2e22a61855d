import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveIdentityKey, signIdentity } from '@rp/platform';
import { IDENTITY_SECRET, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let memberToken: string;

const v2Unauthorized = (detail: RegExp) => ({ type: 'unauthorized', status: 401, title: 'Unauthorized', detail: expect.stringMatching(detail) });

beforeAll(async () => {
  stack = await startStack();
  [orgA, orgB] = await Promise.all([stack.onboard('Org A'), stack.onboard('Org B')]);
  const member = await stack.request('POST', '/v2/users', { token: orgA.token, body: { email: 'member@a.example', name: 'Mia Member', role: 'member' } });
  expect(member.status).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const token = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', member.body.id], stack.env)) as { token: string };
  memberToken = token.token;
});
afterAll(async () => stack?.close());

describe('bearer authentication at the gateway', () => {
  it('refuses a request without Authorization with 401 in the v2 shape', async () => {
    const res = await stack.request('GET', '/v2/business-units');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body).toEqual(v2Unauthorized(/Missing Authorization/));
  });

  it('refuses a malformed header', async () => {
    const res = await stack.request('GET', '/v2/business-units', { headers: { authorization: `Token ${orgA.token}` } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(v2Unauthorized(/Malformed/));
  });

  it('refuses an unknown token', async () => {
    const forged = 'rpu_' + 'A'.repeat(43);
    const res = await stack.request('GET', '/v2/business-units', { token: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(v2Unauthorized(/not valid/));
  });

  it('answers 401 in the v1 shape on /v1 paths', async () => {
    const res = await stack.request('GET', '/v1/remittances');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ data: {}, error: 'unauthorized', message: expect.stringMatching(/Missing Authorization/) });
  });

  it('checks the token before routing: unknown paths are 401 without a token, 404 with one', async () => {
    expect((await stack.request('GET', '/v2/nothing-here')).status).toBe(401);
    const res = await stack.request('GET', '/v2/nothing-here', { token: orgA.token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'route-not-found', status: 404 });
  });

  it('stops accepting an API key the moment it is revoked', async () => {
    const created = await stack.request('POST', '/v2/api-keys', { token: orgA.token, body: { name: 'middleware' } });
    expect(created.status).toBe(200);
    expect(created.body.token).toMatch(/^rpk_/);
    const key = created.body.token as string;
    // The key authenticates (and is refused by a user-only endpoint with 403, proving it was recognised).
    expect((await stack.request('GET', '/v2/business-units', { token: key })).status).toBe(403);
    const revoked = await stack.request('DELETE', `/v2/api-keys/${created.body.id}`, { token: orgA.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    expect(revoked.body.token).toBeUndefined();
    // Revocation is pushed to the gateway through Postgres NOTIFY: effective within moments.
    await expect.poll(async () => (await stack.request('GET', '/v2/business-units', { token: key })).status, { timeout: 2000, interval: 20 }).toBe(401);
  });

  it('stops accepting a user token revoked with the CLI', async () => {
    const { runCli } = await import('@rp/admin/cli');
    const t = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', orgA.userId, '--name', 'short-lived'], stack.env)) as { id: string; token: string };
    expect((await stack.request('GET', '/v2/users/me', { token: t.token })).status).toBe(200);
    await runCli(['token', 'revoke', '--org', orgA.organizationId, '--id', t.id], stack.env);
    await expect.poll(async () => (await stack.request('GET', '/v2/users/me', { token: t.token })).status, { timeout: 2000, interval: 20 }).toBe(401);
  });

  it('refuses an expired API key', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const created = await stack.request('POST', '/v2/api-keys', { token: orgA.token, body: { name: 'expiring', expires_at: expiresAt } });
    expect(created.status).toBe(200);
    expect((await stack.request('GET', '/v2/users/me', { token: created.body.token })).status).toBe(403);
    await new Promise((r) => setTimeout(r, 1700));
    const res = await stack.request('GET', '/v2/users/me', { token: created.body.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(v2Unauthorized(/expired/));
  });

  it('stores only the hash of a token', async () => {
    const rows = await stack.sql(`SELECT token_hash, token_hint FROM admin.credentials WHERE id = $1`, [orgA.tokenId]);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].token_hash).not.toContain(orgA.token);
    expect(orgA.token.startsWith(rows[0].token_hint)).toBe(true);
    const all = await stack.sql(`SELECT * FROM admin.credentials`);
    expect(JSON.stringify(all)).not.toContain(orgA.token.slice(10));
  });
});

describe('roles and credential kinds', () => {
  it('refuses an admin-only endpoint to a member with 403', async () => {
    const res = await stack.request('POST', '/v2/business-units', { token: memberToken, body: { name: 'Nope' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ type: 'forbidden', status: 403, title: 'Forbidden' });
    expect((await stack.request('POST', '/v2/api-keys', { token: memberToken, body: { name: 'x' } })).status).toBe(403);
    expect(await stack.sql(`SELECT count(*)::int AS n FROM admin.business_units`)).toEqual([{ n: 0 }]);
  });

  it('lets a member read', async () => {
    const me = await stack.request('GET', '/v2/users/me', { token: memberToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ object: 'user', email: 'member@a.example', role: 'member' });
  });

  it('refuses a user-token endpoint to an organization API key with 403', async () => {
    const res = await stack.request('GET', '/v2/users', { token: orgA.apiKey });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/user access token/);
  });
});

describe('business-unit access and tenant isolation', () => {
  let unitA1: string;
  let unitA2: string;

  beforeAll(async () => {
    const u1 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'EMEA', description: 'Europe' } });
    const u2 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'APAC' } });
    expect([u1.status, u2.status]).toEqual([200, 200]);
    unitA1 = u1.body.id;
    unitA2 = u2.body.id;
  });

  it('refuses a duplicate unit name with 409', async () => {
    const res = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'emea' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ type: 'conflict', status: 409 });
  });

  it('shows admins every unit and members only theirs', async () => {
    const member = await stack.request('POST', '/v2/users', {
      token: orgA.token,
      body: { email: 'scoped@a.example', name: 'Sam Scoped', role: 'member', business_unit_ids: [unitA2] },
    });
    expect(member.status).toBe(200);
    expect(member.body.business_unit_ids).toEqual([unitA2]);
    const { runCli } = await import('@rp/admin/cli');
    const t = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', member.body.id], stack.env)) as { token: string };

    const admin = await stack.request('GET', '/v2/business-units', { token: orgA.token });
    expect(admin.body.data.map((u: { name: string }) => u.name)).toEqual(['APAC', 'EMEA']);
    const scoped = await stack.request('GET', '/v2/business-units', { token: t.token });
    expect(scoped.body).toMatchObject({ total_records: 1, data: [{ id: unitA2, name: 'APAC', object: 'business_unit' }] });
    expect((await stack.request('GET', `/v2/business-units/${unitA1}`, { token: t.token })).status).toBe(404);
    expect((await stack.request('GET', `/v2/business-units/${unitA2}`, { token: t.token })).status).toBe(200);
  });

  it('gives another organization 404 for org A\'s units, users and keys', async () => {
    const unit = await stack.request('GET', `/v2/business-units/${unitA1}`, { token: orgB.token });
    expect(unit.status).toBe(404);
    expect(unit.body).toEqual({ type: 'entity-not-found', status: 404, title: 'Entity not found', detail: expect.any(String) });
    expect((await stack.request('GET', `/v2/users/${orgA.userId}`, { token: orgB.token })).status).toBe(404);
    expect((await stack.request('DELETE', `/v2/api-keys/${orgA.apiKeyId}`, { token: orgB.token })).status).toBe(404);
    const list = await stack.request('GET', '/v2/business-units', { token: orgB.token });
    expect(list.body.total_records).toBe(0);
    const users = await stack.request('GET', '/v2/users', { token: orgB.token });
    expect(users.body.data.map((u: { id: string }) => u.id)).toEqual([orgB.userId]);
  });

  it('refuses a user with another organization\'s business unit (422) and creates nothing', async () => {
    const res = await stack.request('POST', '/v2/users', {
      token: orgB.token,
      body: { email: 'x@b.example', name: 'X', business_unit_ids: [unitA1] },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ loc: ['body', 'business_unit_ids', 0], msg: expect.stringContaining(unitA1), type: 'unknown_reference' }]);
    expect(await stack.sql(`SELECT count(*)::int AS n FROM admin.users WHERE email = 'x@b.example'`)).toEqual([{ n: 0 }]);
  });

  it('ignores identity headers a client sends', async () => {
    const forged = signIdentity({ org: orgA.organizationId, sub: orgA.userId, role: 'admin', kind: 'user', cred: orgA.tokenId, bu: '*', iat: Math.floor(Date.now() / 1000) }, deriveIdentityKey(IDENTITY_SECRET, 'admin'), {
      method: 'GET',
      target: '/v2/business-units',
    });
    expect((await stack.request('GET', '/v2/business-units', { headers: { 'x-rp-identity': forged } })).status).toBe(401);
    const res = await stack.request('GET', '/v2/business-units', { token: orgB.token, headers: { 'x-rp-identity': forged } });
    expect(res.status).toBe(200);
    expect(res.body.total_records).toBe(0);
  });
});
