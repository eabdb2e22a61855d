/**
 * User lifecycle through the gateway: PATCH /v2/users/{id} changes name and role,
 * deactivates (the user's tokens are refused from the very next request: the gateway that answered the
 * PATCH has applied the commit's NOTIFY first; other gateways within moments) and reactivates; an
 * organization always keeps one active admin (409, also when two admins demote each other at once);
 * a user covering a pending out-of-office cannot be deactivated (409); another organization: 404.
 * No SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;

async function user(o: Org, name: string, role: 'admin' | 'member' = 'member') {
  const res = await stack.request('POST', '/v2/users', { token: o.token, body: { email: `${name}.${Math.random().toString(36).slice(2, 8)}@example.com`, name, role } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', o.organizationId, '--user', res.body.id], stack.env)) as { token: string };
  return { id: res.body.id as string, token: t.token };
}
const patch = (id: string, body: unknown, token = org.token) => stack.request('PATCH', `/v2/users/${id}`, { token, body });
const me = (token: string) => stack.request('GET', '/v2/users/me', { token });

beforeAll(async () => {
  stack = await startStack();
  [org, other] = await Promise.all([stack.onboard('Lifecycle Org'), stack.onboard('Other Org')]);
}, 120_000);
afterAll(async () => stack?.close());

describe('user lifecycle', () => {
  it('deactivation refuses the user\'s tokens from the next request; reactivation restores them', async () => {
    const max = await user(org, 'max');
    expect((await me(max.token)).status).toBe(200); // cached as valid in the gateway now
    const off = await patch(max.id, { is_active: false });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.is_active).toBe(false);
    // at once: the gateway applies the NOTIFY of the commit before it answers the PATCH (CredentialResolver.sync)
    const refused = await me(max.token);
    expect(refused.status).toBe(401);
    expect(refused.body.type).toBe('unauthorized');
    // still listed, shown inactive
    expect((await stack.request('GET', `/v2/users/${max.id}`, { token: org.token })).body.is_active).toBe(false);
    const on = await patch(max.id, { is_active: true });
    expect(on.body.is_active).toBe(true);
    // the gateway had cached the token as refused: reactivation drops that too (before: refused for the negative TTL)
    expect((await me(max.token)).status).toBe(200);
  });

  it('name and role change; a promoted member reaches admin-only endpoints at once, a demoted admin no more', async () => {
    const nia = await user(org, 'nia');
    expect((await stack.request('GET', '/v2/api-keys', { token: nia.token })).status).toBe(403);
    const promoted = await patch(nia.id, { name: 'Nia Admin', role: 'admin' });
    expect(promoted.body).toMatchObject({ name: 'Nia Admin', role: 'admin', is_active: true });
    const apiKeys = async () => (await stack.request('GET', '/v2/api-keys', { token: nia.token })).status;
    expect(await apiKeys()).toBe(200);
    expect((await patch(nia.id, { role: 'member' })).body.role).toBe('member');
    expect(await apiKeys()).toBe(403);
    // members may not change users; bad input is 422 and changes nothing
    expect((await patch(nia.id, { name: 'Self' }, nia.token)).status).toBe(403);
    for (const body of [{ role: 'owner' }, { name: '' }, { is_active: 'no' }, { unknown: 1 }]) expect((await patch(nia.id, body)).status, JSON.stringify(body)).toBe(422);
    expect((await stack.request('GET', `/v2/users/${nia.id}`, { token: org.token })).body).toMatchObject({ name: 'Nia Admin', role: 'member', is_active: true });
  });

  it('the last active admin can be neither demoted nor deactivated (409); two admins demoting each other at once: one stays', async () => {
    const solo = await stack.onboard('Solo Org');
    const conflict = await patch(solo.userId, { role: 'member' }, solo.token);
    expect(conflict.status).toBe(409);
    expect(conflict.body.type).toBe('conflict');
    expect((await patch(solo.userId, { is_active: false }, solo.token)).status).toBe(409);
    expect((await me(solo.token)).body.role).toBe('admin');

    const second = await user(solo, 'second', 'admin');
    // a deactivated admin does not count
    expect((await patch(second.id, { is_active: false }, solo.token)).status).toBe(200);
    expect((await patch(solo.userId, { role: 'member' }, solo.token)).status).toBe(409);
    expect((await patch(second.id, { is_active: true }, solo.token)).status).toBe(200);

    const [a, b] = await Promise.all([patch(second.id, { role: 'member' }, solo.token), patch(solo.userId, { role: 'member' }, second.token)]);
    // one wins; the other is refused: 409 when both are checked against the same two admins, or 403 when
    // the winner had demoted the loser's own account before the loser's request was authorized
    const statuses = [a.status, b.status].sort();
    expect(statuses[0], JSON.stringify([a.body, b.body])).toBe(200);
    expect([403, 409], JSON.stringify([a.body, b.body])).toContain(statuses[1]);
    const roles = await Promise.all([solo.userId, second.id].map(async (id) => (await stack.request('GET', `/v2/users/${id}`, { token: solo.token })).body.role));
    // exactly one admin is left (whichever request won); the loser's token may be the demoted one
    const stillAdmin = [solo.userId, second.id][roles.indexOf('admin')]!;
    expect(roles.filter((r) => r === 'admin')).toHaveLength(1);
    expect(stillAdmin).toBeTruthy();
  });

  it('a user covering a pending out-of-office cannot be deactivated until the coverage changes', async () => {
    const out = await user(org, 'out');
    const backup = await user(org, 'backup');
    const spare = await user(org, 'spare');
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
    expect((await stack.request('POST', `/v2/users/${out.id}/ooo`, { token: out.token, body: { backup_user_id: backup.id, start_date: today } })).status).toBe(200);
    const refused = await patch(backup.id, { is_active: false });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(out.id);
    expect((await me(backup.token)).status).toBe(200);
    expect((await stack.request('PATCH', `/v2/users/${out.id}/ooo`, { token: out.token, body: { backup_user_id: spare.id } })).status).toBe(200);
    expect((await patch(backup.id, { is_active: false })).status).toBe(200);
  });

  it('another organization\'s user is 404 and unchanged', async () => {
    const res = await patch(org.userId, { is_active: false }, other.token);
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('entity-not-found');
    expect((await me(org.token)).status).toBe(200);
  });
});
