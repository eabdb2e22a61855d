/**
 * The event log (`GET /v2/events`, `GET /v2/events/{event_id}`) through the gateway: newest first
 * across every service's outbox, the `type` filter (repeated and comma forms; an unknown type is
 * 422), `created_after` / `created_before` with the instants the API itself shows, pagination,
 * tenant isolation (another organization's event is 404 and absent from its list), business-unit
 * scope (a member sees events of their units and events tied to none) and API-key access.
 *
 * Set-up through the kernel: the events are recorded with the kernel's `recordEvent` on each
 * service's own schema connection (as a service records them in its change's transaction), because
 * on this branch no service records business-unit-tied events yet; units, the member and its token
 * come from the API and the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, newId, recordEvent, type Db, type EventType } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let cash: Db;
let integrations: Db;
let north: string;
let south: string;
let memberToken: string;

/** Events of orgA in the order recorded (oldest first). */
const recorded: { id: string; type: EventType; resourceId: string; unit: string | null }[] = [];

async function record(db: Db, org: Org, type: EventType, unit: string | null = null, previous?: object): Promise<string> {
  const resourceId = newId();
  const object = { object: type.split('.')[0], id: resourceId, zeta: 'kept first', amount: '12.30', alpha: 1 };
  const { id } = await db.transaction((trx) =>
    recordEvent(trx, { organizationId: org.organizationId, type, resourceId, object, businessUnitId: unit, previousAttributes: previous ?? null }),
  );
  if (org === orgA) recorded.push({ id, type, resourceId, unit });
  return id;
}

const list = (token: string, query = '') => stack.request('GET', `/v2/events${query}`, { token });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);

beforeAll(async () => {
  stack = await startStack();
  [orgA, orgB] = [await stack.onboard('Events A'), await stack.onboard('Events B')];
  cash = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 1 });
  integrations = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 1 });
  const unit = async (name: string) => (await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name } })).body.id as string;
  north = await unit('North');
  south = await unit('South');
  const member = await stack.request('POST', '/v2/users', { token: orgA.token, body: { email: 'member@events.example', name: 'Mo Member', role: 'member', business_unit_ids: [north] } });
  expect(member.status, JSON.stringify(member.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  memberToken = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', member.body.id], stack.env)) as { token: string }).token;

  await record(cash, orgA, 'payment.approved', north);
  await record(integrations, orgA, 'invoice.updated', null, { amount: '10.00' });
  await record(cash, orgA, 'payment.posted', south);
  await record(integrations, orgA, 'partner.created', null);
  await record(cash, orgA, 'payment.approved', null);
  await record(cash, orgB, 'payment.approved', null);
});
afterAll(async () => {
  await cash?.destroy();
  await integrations?.destroy();
  await stack?.close();
});

describe('GET /v2/events', () => {
  it('lists the organization\'s events of every service, newest first, each as its envelope', async () => {
    const res = await list(orgA.token);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(recorded.map((e) => e.id).reverse());
    expect(res.body.total_records).toBe(recorded.length);
    const updated = res.body.data.find((e: any) => e.type === 'invoice.updated');
    const r = recorded.find((e) => e.type === 'invoice.updated')!;
    expect(updated).toEqual({
      id: r.id,
      object: 'event',
      type: 'invoice.updated',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { object: { object: 'invoice', id: r.resourceId, zeta: 'kept first', amount: '12.30', alpha: 1 } },
      previous_attributes: { amount: '10.00' },
    });
    expect(Object.keys(updated.data.object)).toEqual(['object', 'id', 'zeta', 'amount', 'alpha']);
    expect(res.body.data.find((e: any) => e.type === 'partner.created')).not.toHaveProperty('previous_attributes');
  });

  it('filters by type, the parameter repeated or comma-separated', async () => {
    const approvedOrPosted = recorded.filter((e) => e.type === 'payment.approved' || e.type === 'payment.posted').map((e) => e.id).reverse();
    const repeated = await list(orgA.token, '?type=payment.approved&type=payment.posted');
    expect(repeated.status).toBe(200);
    expect(ids(repeated)).toEqual(approvedOrPosted);
    const comma = await list(orgA.token, '?type=payment.approved,payment.posted');
    expect(ids(comma)).toEqual(approvedOrPosted);
    expect(comma.body.total_records).toBe(approvedOrPosted.length);
    expect(ids(await list(orgA.token, '?type=partner.created'))).toEqual([recorded[3].id]);
  });

  it('refuses an unknown type with 422 naming the parameter', async () => {
    for (const q of ['?type=payment.exploded', '?type=payment.approved,payment.exploded', '?type=payment.approved&type=nope']) {
      const res = await list(orgA.token, q);
      expect(res.status, q).toBe(422);
      expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
      expect(res.body.errors[0].loc.slice(0, 2), q).toEqual(['query', 'type']);
    }
  });

  it('created_after and created_before take the instants the API shows, exclusively', async () => {
    const all = (await list(orgA.token)).body.data.reverse() as { id: string; created_at: string }[];
    const [first, second, , fourth] = all;
    const after = await list(orgA.token, `?created_after=${encodeURIComponent(first.created_at)}`);
    expect(after.status).toBe(200);
    expect(ids(after)).not.toContain(first.id);
    expect(ids(after)).toContain(second.id);
    const window = await list(orgA.token, `?created_after=${encodeURIComponent(first.created_at)}&created_before=${encodeURIComponent(fourth.created_at)}`);
    expect(ids(window)).toEqual(all.slice(1, 3).map((e) => e.id).reverse());
    const bad = await list(orgA.token, '?created_after=yesterday');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['query', 'created_after']);
  });

  it('pages through the log without gaps or overlaps', async () => {
    const p0 = await list(orgA.token, '?page=0&page_size=2');
    const p1 = await list(orgA.token, '?page=1&page_size=2');
    const p2 = await list(orgA.token, '?page=2&page_size=2');
    expect(p0.body).toMatchObject({ current_page: 0, total_records: recorded.length, next_page: 1 });
    expect(p2.body).toMatchObject({ current_page: 2, next_page: null });
    expect([...ids(p0), ...ids(p1), ...ids(p2)]).toEqual(recorded.map((e) => e.id).reverse());
    expect((await list(orgA.token, '?page_size=201')).status).toBe(422);
  });

  it('gets one event by id; another organization\'s event is 404 and not in its list', async () => {
    const mine = recorded[1];
    const got = await stack.request('GET', `/v2/events/${mine.id}`, { token: orgA.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: mine.id, type: 'invoice.updated', data: { object: { id: mine.resourceId } } });
    const foreign = await stack.request('GET', `/v2/events/${mine.id}`, { token: orgB.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    const theirs = await list(orgB.token);
    expect(theirs.body.total_records).toBe(1);
    expect(ids(theirs)).not.toEqual(expect.arrayContaining([mine.id]));
    expect((await stack.request('GET', `/v2/events/${newId()}`, { token: orgA.token })).status).toBe(404);
    expect((await stack.request('GET', '/v2/events/not-an-id', { token: orgA.token })).status).toBe(422);
  });

  it('a member sees the events of their business units and those tied to none', async () => {
    const visible = recorded.filter((e) => e.unit === null || e.unit === north).map((e) => e.id).reverse();
    const res = await list(memberToken);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(visible);
    expect(res.body.total_records).toBe(visible.length);
    const southEvent = recorded.find((e) => e.unit === south)!;
    expect((await stack.request('GET', `/v2/events/${southEvent.id}`, { token: memberToken })).status).toBe(404);
    const northEvent = recorded.find((e) => e.unit === north)!;
    expect((await stack.request('GET', `/v2/events/${northEvent.id}`, { token: memberToken })).status).toBe(200);
    expect(ids(await list(memberToken, '?type=payment.posted'))).toEqual([]);
  });

  it('an organization API key reads the log', async () => {
    const res = await list(orgA.apiKey, '?type=partner.created');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([recorded[3].id]);
    expect((await stack.request('GET', `/v2/events/${recorded[0].id}`, { token: orgA.apiKey })).status).toBe(200);
  });
});
