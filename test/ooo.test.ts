/**
 * Out-of-office coverage (spec 2.6 and row 8), end to end through the gateway: create,
 * list, PATCH of only the fields present (`end_date: null` clears), DELETE (active ends today,
 * scheduled removed), every rule as a 422 naming its field (backup self / unknown / other
 * organization's / deactivated / out of office themself, chains both ways, start ≤ end, end not
 * past, overlap), member vs admin, the user's `ooo` and `covered_by`, concurrent creates, tenant
 * isolation, and the kernel's "who handles this customer today".
 *
 * SQL set-up, for states no endpoint produces: an organization's timezone (no endpoint changes it),
 * a customer's assignee (no endpoint sets `partners.assignee_id` yet), and one direct INSERT that
 * shows the exclusion constraint refuses an overlap the API would never write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, customerHandlerToday, type Db } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, pushCustomers } from './support/ledger.js';

let stack: TestStack;
let org: Org;
let other: Org;
let db: Db;

function todayIn(timeZone: string, offsetDays = 0): string {
  const d = new Date(Date.now() + offsetDays * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
}
const day = (offset: number) => todayIn('Europe/Berlin', offset);

async function user(o: Org, name: string, role: 'admin' | 'member' = 'member') {
  const res = await stack.request('POST', '/v2/users', { token: o.token, body: { email: `${name}.${Math.random().toString(36).slice(2, 8)}@example.com`, name, role } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', o.organizationId, '--user', res.body.id], stack.env)) as { token: string };
  return { id: res.body.id as string, token: t.token };
}

const ooo = (method: string, userId: string, token: string, body?: unknown) => stack.request(method, `/v2/users/${userId}/ooo`, { token, ...(body !== undefined ? { body } : {}) });

function expect422(res: { status: number; body: any }, loc: (string | number)[], type?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.type).toBe('request-validation');
  const hit = (res.body.errors as { loc: unknown[]; type: string }[]).find((e) => JSON.stringify(e.loc) === JSON.stringify(loc));
  expect(hit, JSON.stringify(res.body.errors)).toBeTruthy();
  if (type) expect(hit!.type).toBe(type);
}

beforeAll(async () => {
  stack = await startStack();
  [org, other] = await Promise.all([stack.onboard('OOO Org'), stack.onboard('Other Org')]);
  db = createDb({ url: stack.databaseUrl, poolMax: 2 });
}, 120_000);
afterAll(async () => {
  await db?.destroy();
  await stack?.close();
});

describe('out-of-office coverage', () => {
  it('a member manages their own OOO (self-service, created_by_id null); the user shows ooo and covered_by while it is active', async () => {
    const mia = await user(org, 'mia');
    const ben = await user(org, 'ben');
    const created = await ooo('POST', mia.id, mia.token, { backup_user_id: ben.id, start_date: day(0), end_date: day(3) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ object: 'user_ooo', user_id: mia.id, backup_user_id: ben.id, created_by_id: null, start_date: day(0), end_date: day(3) });

    const shown = await stack.request('GET', `/v2/users/${mia.id}`, { token: ben.token });
    expect(shown.status).toBe(200);
    expect(shown.body.ooo).toMatchObject({ id: created.body.id, backup_user_id: ben.id });
    expect(shown.body.covered_by).toMatchObject({ id: ben.id, name: 'ben' });
    const me = await stack.request('GET', '/v2/users/me', { token: mia.token });
    expect(me.body.covered_by.id).toBe(ben.id);
    const benShown = await stack.request('GET', `/v2/users/${ben.id}`, { token: org.token });
    expect(benShown.body).toMatchObject({ ooo: null, covered_by: null });

    // a member may not manage somebody else's OOO, nor create one for them
    expect((await ooo('POST', ben.id, mia.token, { backup_user_id: mia.id, start_date: day(10) })).status).toBe(403);
    expect((await ooo('PATCH', mia.id, ben.token, { end_date: day(5) })).status).toBe(403);
    expect((await ooo('DELETE', mia.id, ben.token)).status).toBe(403);
    // but may read it
    const list = await ooo('GET', mia.id, ben.token);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total_records: 1, current_page: 0, next_page: null });
  });

  it('an admin manages anyone\'s OOO (created_by_id = the admin); a scheduled one is not in force today', async () => {
    const kai = await user(org, 'kai');
    const lea = await user(org, 'lea');
    const res = await ooo('POST', kai.id, org.token, { backup_user_id: lea.id, start_date: day(5) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created_by_id: org.userId, end_date: null, start_date: day(5) });
    expect((await stack.request('GET', `/v2/users/${kai.id}`, { token: org.token })).body).toMatchObject({ ooo: null, covered_by: null });
    // the admin's own OOO is self-service
    const own = await ooo('POST', org.userId, org.token, { backup_user_id: lea.id, start_date: day(40), end_date: day(41) });
    expect(own.body.created_by_id).toBeNull();
  });

  it('refuses each rule with a 422 naming the field, and changes nothing', async () => {
    const ann = await user(org, 'ann');
    const bob = await user(org, 'bob');
    const cid = await user(org, 'cid');
    const gone = await user(org, 'gone');
    expect((await stack.request('PATCH', `/v2/users/${gone.id}`, { token: org.token, body: { is_active: false } })).status).toBe(200);
    const foreign = await user(other, 'foreign');
    const post = (body: unknown) => ooo('POST', ann.id, org.token, body);

    expect422(await post({ backup_user_id: ann.id, start_date: day(1) }), ['body', 'backup_user_id'], 'backup_is_self');
    const unknown = await post({ backup_user_id: '0190f3a2-0000-7000-8000-000000000001', start_date: day(1) });
    expect422(unknown, ['body', 'backup_user_id'], 'unknown_reference');
    const foreignBackup = await post({ backup_user_id: foreign.id, start_date: day(1) });
    expect422(foreignBackup, ['body', 'backup_user_id'], 'unknown_reference');
    expect(foreignBackup.body.errors.map((e: any) => e.type)).toEqual(unknown.body.errors.map((e: any) => e.type)); // indistinguishable
    expect422(await post({ backup_user_id: gone.id, start_date: day(1) }), ['body', 'backup_user_id'], 'unknown_reference');
    expect422(await post({ backup_user_id: bob.id, start_date: day(3), end_date: day(2) }), ['body', 'end_date'], 'date_order');
    expect422(await post({ backup_user_id: bob.id, start_date: day(-5), end_date: day(-1) }), ['body', 'end_date'], 'date_past');
    expect422(await post({ backup_user_id: bob.id, start_date: 'tomorrow' }), ['body', 'start_date']);
    expect422(await post({ backup_user_id: bob.id }), ['body', 'start_date']);
    expect422(await post({ backup_user_id: bob.id, start_date: day(1), extra: 1 }), ['body']);

    // overlap: ann is out 10..20; 15..25, 5..10, 20..open, 0..open all overlap
    expect((await post({ backup_user_id: bob.id, start_date: day(10), end_date: day(20) })).status).toBe(200);
    for (const [s, e] of [[15, 25], [5, 10], [20, null], [0, null], [12, 13]] as const) {
      expect422(await post({ backup_user_id: cid.id, start_date: day(s), end_date: e === null ? null : day(e) }), ['body', 'start_date'], 'ooo_overlap');
    }
    // chained: cid's backup bob... bob is covering ann 10..20; bob going out then is refused (he covers somebody)
    expect422(await ooo('POST', bob.id, org.token, { backup_user_id: cid.id, start_date: day(18), end_date: day(22) }), ['body', 'start_date'], 'covering_others');
    // chained the other way: cid out 12..14 with ann as backup, but ann is out then herself
    expect422(await ooo('POST', cid.id, org.token, { backup_user_id: ann.id, start_date: day(12), end_date: day(14) }), ['body', 'backup_user_id'], 'backup_out_of_office');
    // adjacent periods are fine (no overlap, no chain)
    expect((await post({ backup_user_id: cid.id, start_date: day(21), end_date: day(22) })).status).toBe(200);
    expect((await ooo('POST', cid.id, org.token, { backup_user_id: ann.id, start_date: day(23), end_date: day(24) })).status).toBe(200);

    const list = await ooo('GET', ann.id, org.token);
    expect(list.body.total_records).toBe(2);
    expect(list.body.data.map((r: any) => r.start_date)).toEqual([day(21), day(10)]); // newest first
  });

  it('PATCH changes only the fields present of the pending OOO; end_date null clears it; rules apply again', async () => {
    const eva = await user(org, 'eva');
    const fin = await user(org, 'fin');
    const gus = await user(org, 'gus');
    expect((await ooo('PATCH', eva.id, eva.token, { end_date: day(3) })).body).toMatchObject({ status: 404, type: 'entity-not-found', title: 'Entity not found' });
    const first = (await ooo('POST', eva.id, eva.token, { backup_user_id: fin.id, start_date: day(1), end_date: day(4) })).body;

    const onlyEnd = await ooo('PATCH', eva.id, eva.token, { end_date: day(6) });
    expect(onlyEnd.status, JSON.stringify(onlyEnd.body)).toBe(200);
    expect(onlyEnd.body).toMatchObject({ id: first.id, backup_user_id: fin.id, start_date: day(1), end_date: day(6), created_by_id: null });
    const onlyBackup = await ooo('PATCH', eva.id, eva.token, { backup_user_id: gus.id });
    expect(onlyBackup.body).toMatchObject({ id: first.id, backup_user_id: gus.id, start_date: day(1), end_date: day(6) });
    const cleared = await ooo('PATCH', eva.id, org.token, { end_date: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ id: first.id, backup_user_id: gus.id, start_date: day(1), end_date: null, created_by_id: null });
    const empty = await ooo('PATCH', eva.id, eva.token, {});
    expect(empty.body).toMatchObject({ id: first.id, end_date: null });
    const onlyStart = await ooo('PATCH', eva.id, eva.token, { start_date: day(2) });
    expect(onlyStart.body).toMatchObject({ id: first.id, backup_user_id: gus.id, start_date: day(2), end_date: null });

    // a later period needs an end to the pending one; then clearing the end again would overlap it
    expect((await ooo('PATCH', eva.id, eva.token, { end_date: day(8) })).body.end_date).toBe(day(8));
    const later = (await ooo('POST', eva.id, eva.token, { backup_user_id: fin.id, start_date: day(30), end_date: day(31) })).body;
    expect(later.id).toBeTruthy();
    const before = (await ooo('GET', eva.id, eva.token)).body;
    expect422(await ooo('PATCH', eva.id, eva.token, { end_date: null }), ['body', 'start_date'], 'ooo_overlap');
    expect422(await ooo('PATCH', eva.id, eva.token, { end_date: day(30) }), ['body', 'start_date'], 'ooo_overlap');
    expect422(await ooo('PATCH', eva.id, eva.token, { backup_user_id: null }), ['body', 'backup_user_id']);
    expect422(await ooo('PATCH', eva.id, eva.token, { start_date: null }), ['body', 'start_date']);
    expect422(await ooo('PATCH', eva.id, eva.token, { start_date: day(9) }), ['body', 'end_date'], 'date_order');
    expect422(await ooo('PATCH', eva.id, eva.token, { backup_user_id: eva.id }), ['body', 'backup_user_id'], 'backup_is_self');
    expect((await ooo('GET', eva.id, eva.token)).body).toEqual(before);
  });

  it('DELETE ends an active OOO today and removes a scheduled one; none pending → 404', async () => {
    const hal = await user(org, 'hal');
    const ivy = await user(org, 'ivy');
    const active = (await ooo('POST', hal.id, hal.token, { backup_user_id: ivy.id, start_date: day(-3) })).body;
    expect(active.start_date).toBe(day(-3));
    const ended = await ooo('DELETE', hal.id, hal.token);
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ id: active.id, start_date: day(-3), end_date: day(0) });
    // today is its last day: still in force today
    expect((await stack.request('GET', `/v2/users/${hal.id}`, { token: hal.token })).body.covered_by.id).toBe(ivy.id);

    const jan = await user(org, 'jan');
    const scheduled = (await ooo('POST', jan.id, jan.token, { backup_user_id: ivy.id, start_date: day(9), end_date: day(12) })).body;
    const removed = await ooo('DELETE', jan.id, org.token);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: scheduled.id, start_date: day(9), end_date: day(12) });
    expect((await ooo('GET', jan.id, jan.token)).body).toMatchObject({ total_records: 0, data: [] });
    expect((await ooo('DELETE', jan.id, jan.token)).body).toMatchObject({ status: 404, type: 'entity-not-found' });
  });

  it('"pending" and "today" follow the organization\'s timezone', async () => {
    // Kiritimati (UTC+14) and Pago Pago (UTC-11): at any time at least one has another date than UTC.
    for (const tz of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const o = await stack.onboard(`TZ ${tz}`);
      await stack.sql(`UPDATE admin.organizations SET timezone = $2 WHERE id = $1`, [o.organizationId, tz]);
      const a = await user(o, 'tza');
      const b = await user(o, 'tzb');
      expect((await ooo('POST', a.id, a.token, { backup_user_id: b.id, start_date: todayIn(tz, -2) })).status).toBe(200);
      const ended = await ooo('DELETE', a.id, a.token);
      expect(ended.body.end_date, tz).toBe(todayIn(tz));
      expect((await stack.request('GET', `/v2/users/${a.id}`, { token: a.token })).body.ooo?.id, tz).toBe(ended.body.id);
      // an end before the organization's today is refused
      expect422(await ooo('POST', b.id, b.token, { backup_user_id: a.id, start_date: todayIn(tz, -3), end_date: todayIn(tz, -1) }), ['body', 'end_date'], 'date_past');
    }
  });

  it('concurrent overlapping creates: exactly one is stored; the database refuses an overlap by itself', async () => {
    const jo = await user(org, 'jo');
    const backups = await Promise.all(['k1', 'k2', 'k3', 'k4'].map((n) => user(org, n)));
    const results = await Promise.all(
      backups.map((b, i) => ooo('POST', jo.id, org.token, { backup_user_id: b.id, start_date: day(50 + i), end_date: day(60) })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.errors[0]).toMatchObject({ loc: ['body', 'start_date'], type: 'ooo_overlap' });
    expect((await ooo('GET', jo.id, org.token)).body.total_records).toBe(1);
    // the exclusion constraint (migration admin 003) holds without the domain's check
    await expect(
      stack.sql(`INSERT INTO admin.user_ooo (id, organization_id, user_id, backup_user_id, start_date, end_date) VALUES (gen_random_uuid(), $1, $2, $3, $4, NULL)`, [
        org.organizationId,
        jo.id,
        backups[0]!.id,
        day(59),
      ]),
    ).rejects.toThrow(/user_ooo_no_overlap/);
  });

  it('another organization gets 404 on every endpoint with our user ids', async () => {
    const lu = await user(org, 'lu');
    const mo = await user(org, 'mo');
    expect((await ooo('POST', lu.id, lu.token, { backup_user_id: mo.id, start_date: day(1) })).status).toBe(200);
    const foreignBackup = await user(other, 'fb');
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { backup_user_id: foreignBackup.id, start_date: day(70) }],
      ['PATCH', { end_date: day(2) }],
      ['DELETE', undefined],
    ] as const) {
      const res = await ooo(method, lu.id, other.token, body);
      expect(res.status, method).toBe(404);
      expect(res.body.type).toBe('entity-not-found');
    }
    expect((await stack.request('GET', `/v2/users/${lu.id}`, { token: other.token })).status).toBe(404);
    expect((await ooo('GET', lu.id, lu.token)).body.data[0]).toMatchObject({ backup_user_id: mo.id, end_date: null });
  });

  it('the kernel resolves who handles a customer today: the assignee, or their backup while they are out', async () => {
    const pia = await user(org, 'pia');
    const rob = await user(org, 'rob');
    const pushed = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'COV-1', name1: 'Covered Kunde' })]);
    const partnerId = pushed.body.results[0]!.service_id!;
    expect(await customerHandlerToday(db, org.organizationId, partnerId)).toMatchObject({ assignee_id: null, handler_id: null });
    await stack.sql(`UPDATE integrations.partners SET assignee_id = $2 WHERE id = $1`, [partnerId, pia.id]);
    expect(await customerHandlerToday(db, org.organizationId, partnerId)).toMatchObject({ assignee_id: pia.id, handler_id: pia.id, coverage: null });
    // scheduled: still the assignee
    await ooo('POST', pia.id, pia.token, { backup_user_id: rob.id, start_date: day(2), end_date: day(4) });
    expect((await customerHandlerToday(db, org.organizationId, partnerId))!.handler_id).toBe(pia.id);
    // active today: the backup
    await ooo('PATCH', pia.id, pia.token, { start_date: day(0) });
    const covered = await customerHandlerToday(db, org.organizationId, partnerId);
    expect(covered).toMatchObject({ assignee_id: pia.id, handler_id: rob.id, coverage: { user_id: pia.id, backup_user_id: rob.id, start_date: day(0), end_date: day(4) } });
    // another organization's view of the customer: none
    expect(await customerHandlerToday(db, other.organizationId, partnerId)).toBeNull();
  });
});
