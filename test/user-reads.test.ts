/**
 * A user's detail (GET /v2/users/me, GET /v2/users/{id}) is kept per admin API process
 * (USER_READ_CACHE_TTL_MS): every change still applies from the user's next request, whichever
 * process answers it. Changes go through the API (PATCH /v2/users/{id}, the OOO endpoints), on the
 * stack's admin process; the reads are made after the answers have been cached, on the same process
 * through the gateway and on a second admin API process of the same database (a second instance, as
 * scaled out behind the gateway; its cache lives for ten minutes, so only the change it heard can
 * explain a fresh answer). No SQL set-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { deriveIdentityKey, signIdentity, startServiceApi, type Identity, type RunningApi } from '@rp/platform';
import { adminModule, loadAdminConfig } from '@rp/admin';
import type { AdminDeps } from '../services/admin/src/deps.js';
import { IDENTITY_SECRET, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let second: RunningApi;

function todayIn(timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

async function user(name: string) {
  const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email: `${name}.${Math.random().toString(36).slice(2, 8)}@example.com`, name, role: 'member' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', org.organizationId, '--user', res.body.id], stack.env)) as { token: string };
  return { id: res.body.id as string, token: t.token };
}

const me = async (token: string) => {
  const res = await stack.request('GET', '/v2/users/me', { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** GET on the second admin process, signed as the gateway signs it for the user. */
function onSecond(target: string, userId: string): Promise<{ status: number; body: any }> {
  const identity: Identity = { org: org.organizationId, sub: userId, role: 'member', kind: 'user', cred: 'test', bu: [], perms: [], iat: Math.floor(Date.now() / 1000) };
  const signed = signIdentity(identity, deriveIdentityKey(IDENTITY_SECRET, 'admin'), { method: 'GET', target });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: second.port, method: 'GET', path: target, headers: { 'x-rp-identity': signed } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard('Read cache Org');
  second = await startServiceApi(adminModule, loadAdminConfig({ ...stack.env, USER_READ_CACHE_TTL_MS: '600000' }), { port: 0 });
}, 120_000);
afterAll(async () => {
  await second?.close();
  await stack?.close();
});

describe('user details kept per process', () => {
  it('a change through the API is seen by the user\'s next request (name, permissions, OOO, the backup\'s name)', async () => {
    const mia = await user('Mia');
    const ben = await user('Ben');
    // read twice: the second answer comes from the cache
    await me(mia.token);
    expect(await me(mia.token)).toMatchObject({ id: mia.id, name: 'Mia', permissions: [], ooo: null, covered_by: null });

    const patched = await stack.request('PATCH', `/v2/users/${mia.id}`, { token: org.token, body: { name: 'Mia Moe', permissions: ['payments:write'] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(await me(mia.token)).toMatchObject({ name: 'Mia Moe', permissions: ['payments:write'] });

    const today = todayIn('Europe/Berlin');
    const created = await stack.request('POST', `/v2/users/${mia.id}/ooo`, { token: mia.token, body: { backup_user_id: ben.id, start_date: today } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(await me(mia.token)).toMatchObject({ ooo: { id: created.body.id, end_date: null }, covered_by: { id: ben.id, name: 'Ben' } });
    // the admin's view of the same user, cached as well
    expect((await stack.request('GET', `/v2/users/${mia.id}`, { token: org.token })).body).toMatchObject({ covered_by: { id: ben.id, name: 'Ben' } });

    // the backup's own change shows in covered_by
    expect((await stack.request('PATCH', `/v2/users/${ben.id}`, { token: org.token, body: { name: 'Ben Bo' } })).status).toBe(200);
    expect(await me(mia.token)).toMatchObject({ covered_by: { id: ben.id, name: 'Ben Bo' } });
    expect((await stack.request('GET', `/v2/users/${mia.id}`, { token: org.token })).body).toMatchObject({ covered_by: { id: ben.id, name: 'Ben Bo' } });

    const changed = await stack.request('PATCH', `/v2/users/${mia.id}/ooo`, { token: mia.token, body: { end_date: today } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(await me(mia.token)).toMatchObject({ ooo: { id: created.body.id, end_date: today } });
  });

  it('a change made through another admin process is seen by this one', async () => {
    const lea = await user('Lea');
    const tom = await user('Tom');
    const target = '/v2/users/me';
    await onSecond(target, lea.id);
    expect((await onSecond(target, lea.id)).body).toMatchObject({ id: lea.id, name: 'Lea', ooo: null });
    expect((await onSecond(`/v2/users/${lea.id}`, lea.id)).body).toMatchObject({ id: lea.id, name: 'Lea' });

    // the change goes through the gateway to the stack's admin process, not to the second one
    expect((await stack.request('PATCH', `/v2/users/${lea.id}`, { token: org.token, body: { name: 'Lea Lu', permissions: ['payments:approve'] } })).status).toBe(200);
    // every change committed so far has reached the second process's listener (notifications arrive in commit order)
    await (second.deps as AdminDeps).userReads!.sync();
    expect((await onSecond(target, lea.id)).body).toMatchObject({ name: 'Lea Lu', permissions: ['payments:approve'] });
    expect((await onSecond(`/v2/users/${lea.id}`, lea.id)).body).toMatchObject({ name: 'Lea Lu' });

    const created = await stack.request('POST', `/v2/users/${lea.id}/ooo`, { token: lea.token, body: { backup_user_id: tom.id, start_date: todayIn('Europe/Berlin') } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await (second.deps as AdminDeps).userReads!.sync();
    expect((await onSecond(target, lea.id)).body).toMatchObject({ ooo: { id: created.body.id }, covered_by: { id: tom.id, name: 'Tom' } });

    expect((await stack.request('PATCH', `/v2/users/${tom.id}`, { token: org.token, body: { name: 'Tom Ty' } })).status).toBe(200);
    await (second.deps as AdminDeps).userReads!.sync();
    expect((await onSecond(target, lea.id)).body).toMatchObject({ covered_by: { id: tom.id, name: 'Tom Ty' } });

    // a deactivated user's detail is not answered from a cache either
    expect((await stack.request('PATCH', `/v2/users/${lea.id}/ooo`, { token: lea.token, body: { end_date: todayIn('Europe/Berlin') } })).status).toBe(200);
    expect((await stack.request('PATCH', `/v2/users/${lea.id}`, { token: org.token, body: { is_active: false } })).status).toBe(200);
    await (second.deps as AdminDeps).userReads!.sync();
    expect((await onSecond(`/v2/users/${lea.id}`, lea.id)).body).toMatchObject({ is_active: false });
  });

  it('an announcement that names nothing readable (JSON null, a number, not JSON) empties the caches and breaks no process', async () => {
    const zoe = await user('Zoe');
    await me(zoe.token);
    for (const payload of ['null', '42', 'not json']) await stack.sql(`SELECT pg_notify('rp_auth_changed', $1)`, [payload]);
    // every listener (the gateway's credentials, both admin processes' user reads) has heard them: they still answer
    await (second.deps as AdminDeps).userReads!.sync();
    await (stack.apis.admin.deps as AdminDeps).userReads!.sync();
    // the gateway waits for its own listener before answering a write to admin
    expect((await stack.request('PATCH', `/v2/users/${zoe.id}`, { token: org.token, body: { name: 'Zoe Z' } })).status).toBe(200);
    expect(await me(zoe.token)).toMatchObject({ id: zoe.id, name: 'Zoe Z' });
    expect((await onSecond('/v2/users/me', zoe.id)).body).toMatchObject({ id: zoe.id });
  });
});
