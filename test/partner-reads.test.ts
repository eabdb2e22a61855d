/**
 * A partner's detail (GET /v2/partners/{id}) is kept per integrations API process, and every
 * committed change to what it reads drops it: the database announces each change (triggers on the
 * ledger's partners and documents and on admin's organizations, tags, hand tagging and out-of-office
 * periods, one notification per organization a statement touched, on `rp_partner_reads`), and the
 * integrations API drops its organization's entries itself once a write route has answered.
 *
 * The stack's integrations API runs with entries that live ten minutes, so only an invalidation can
 * explain a fresh answer. Changes go through the API (pushes, assignment, tags, out-of-office, the
 * organization's timezone); a change announced from another service is awaited by polling with a
 * bounded deadline. Whether an answer came from the cache is seen by the integrations database's
 * queries (knex's `query` event), never by timing.
 * SQL set-up, for what no endpoint produces: one UPDATE touching two organizations' documents (the
 * trigger's one-notification-per-organization rule for a multi-row statement), a partner renamed by
 * hand in the database (a change made outside every service), a TRUNCATE, and the listener's backend
 * terminated (a lost connection).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PARTNER_READS, PARTNER_READS_CHANNEL, ReadCache, createLogger } from '@rp/platform';
import type { IntegrationsDeps } from '../services/integrations/src/deps.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let north: string;
let south: string;
/** a member of North only */
let member: { id: string; token: string };
/** A's customers: C1 in North, C2 in South; B's customer B1 */
const P: Record<'C1' | 'C2' | 'B1', string> = { C1: '', C2: '', B1: '' };
/** the integrations API's queries (its knex `query` event) */
let queries = 0;
/** everything heard on the partner reads' channel, in order */
const heard: string[] = [];
let listener: pg.Client;

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });
const deps = () => stack.apis.integrations.deps as IntegrationsDeps;
/** Until the integrations API's listener has heard every change committed so far (so none lands between the reads that follow). */
const settled = () => deps().partnerReads!.sync();

async function detail(id: string, token: string) {
  const res = await req('GET', `/v2/partners/${id}`, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The answer and how many queries the integrations API made for it. */
async function counted(id: string, token: string) {
  const before = queries;
  const body = await detail(id, token);
  return { body, queries: queries - before };
}

/** Polls the detail until `check` holds (a change announced by another service reaches this process on commit). */
async function eventually(id: string, token: string, check: (body: any) => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await detail(id, token);
    if (check(body)) return body;
    if (Date.now() > deadline) throw new Error(`partner ${id} still answers ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * What the channel carried between now and the end of `action`: a sync marker sent after it comes
 * back only once every notification committed before it has been delivered (commit order).
 */
async function announced(action: () => Promise<unknown>): Promise<string[]> {
  return (await heardDuring(action)).filter((p, i, all) => all.indexOf(p) === i);
}

/** Every notification (not deduplicated across transactions) committed during `action`. */
async function heardDuring(action: () => Promise<unknown>): Promise<string[]> {
  const from = heard.length;
  await action();
  const marker = `sync:${Math.random().toString(36).slice(2)}`;
  await stack.sql('SELECT pg_notify($1, $2)', [PARTNER_READS_CHANNEL, marker]);
  const deadline = Date.now() + 5_000;
  while (!heard.includes(marker)) {
    if (Date.now() > deadline) throw new Error('sync marker not heard');
    await new Promise((r) => setTimeout(r, 10));
  }
  return heard.slice(from, heard.indexOf(marker));
}

function day(offset: number): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  return new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

let seq = 0;
const invoice = (customer: string, amount: number, extra: Record<string, unknown> = {}) =>
  invoiceRecord({
    document_number: `PR-${++seq}`,
    reference: `PR-${seq}`,
    customer_code: customer,
    currency: 'EUR',
    document_date: day(-30),
    posting_date: day(-30),
    net_due_date: day(-10),
    amount_in_document_currency: amount,
    amount_in_local_currency: amount,
    ...extra,
  });

beforeAll(async () => {
  stack = await startStack({ env: { PARTNER_READ_CACHE_TTL_MS: '600000', RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  deps().db.on('query', () => queries++);
  listener = new pg.Client({ connectionString: stack.databaseUrl });
  await listener.connect();
  listener.on('notification', (m) => heard.push(m.payload ?? ''));
  await listener.query(`LISTEN ${PARTNER_READS_CHANNEL}`);

  orgA = await stack.onboard('Partner reads A');
  orgB = await stack.onboard('Partner reads B');
  north = (await req('POST', '/v2/business-units', orgA.token, { name: 'North' })).body.id;
  south = (await req('POST', '/v2/business-units', orgA.token, { name: 'South' })).body.id;
  const a = await pushCustomers(stack, orgA.apiKey, [customerRecord({ customer_code: 'C1', name1: 'One GmbH' }), customerRecord({ customer_code: 'C2', name1: 'Two GmbH' })]);
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  [P.C1, P.C2] = a.body.results.map((r) => r.service_id!);
  const b = await pushCustomers(stack, orgB.apiKey, [customerRecord({ customer_code: 'C1', name1: 'Other One' })]);
  P.B1 = b.body.results[0]!.service_id!;
  expect((await pushInvoices(stack, orgA.apiKey, [invoice('C1', 100), invoice('C2', 40)])).body.results.every((r) => r.success)).toBe(true);
  expect((await pushInvoices(stack, orgB.apiKey, [invoice('C1', 7)])).body.results.every((r) => r.success)).toBe(true);
  expect((await req('PATCH', `/v2/partners/${P.C1}`, orgA.token, { business_unit_id: north })).status).toBe(200);
  expect((await req('PATCH', `/v2/partners/${P.C2}`, orgA.token, { business_unit_id: south })).status).toBe(200);

  const m = await req('POST', '/v2/users', orgA.token, { email: 'north@partner-reads.example', name: 'Nora', role: 'member', business_unit_ids: [north], permissions: [] });
  expect(m.status, JSON.stringify(m.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', m.body.id], stack.env)) as { token: string };
  member = { id: m.body.id, token: t.token };
}, 120_000);

afterAll(async () => {
  await listener?.end();
  await stack?.close();
});

describe('the database announces every change a partner detail reads', () => {
  it('a push, an assignment, a tag, an out-of-office period and the timezone announce their organization', async () => {
    const org = orgA.organizationId;
    const from = heard.length;
    expect(await announced(() => pushInvoices(stack, orgA.apiKey, [invoice('C1', 1), invoice('C1', 2), invoice('C2', 3)]))).toEqual([org]);
    expect(await announced(() => pushCustomers(stack, orgA.apiKey, [customerRecord({ customer_code: 'C1', name1: 'One GmbH' })]))).toEqual([org]);
    expect(await announced(() => req('PATCH', `/v2/partners/${P.C1}`, orgA.token, { assignee_id: orgA.userId }))).toEqual([org]);
    let tag = '';
    expect(
      await announced(async () => {
        tag = (await req('POST', '/v1/tags', orgA.token, { name: 'Announced', color: '#123456' })).body.id;
      }),
    ).toEqual([org]);
    expect(await announced(() => req('POST', `/v1/tags/${tag}/partners`, orgA.token, { partner_ids: [P.C2] }))).toEqual([org]);
    expect(await announced(() => req('DELETE', `/v1/tags/${tag}`, orgA.token))).toEqual([org]);
    const ooo = await announced(async () => {
      const r = await req('POST', `/v2/users/${member.id}/ooo`, orgA.token, { backup_user_id: orgA.userId, start_date: day(30), end_date: day(31) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    });
    expect(ooo).toEqual([org]);
    expect(await announced(() => req('DELETE', `/v2/users/${member.id}/ooo`, orgA.token))).toEqual([org]);
    const tz = await announced(async () => expect((await req('PATCH', '/v2/organization', orgA.token, { timezone: 'Europe/Berlin' })).status).toBe(200));
    expect(tz).toEqual([org]);
    // the other organization heard nothing of all this
    expect(heard.slice(from)).not.toContain(orgB.organizationId);
  });

  it('one statement touching many rows of two organizations announces each organization once; TRUNCATE announces everything', async () => {
    const got = await heardDuring(() =>
      stack.sql(`UPDATE integrations.documents SET modified_at = now() WHERE organization_id = ANY($1::uuid[])`, [[orgA.organizationId, orgB.organizationId]]),
    );
    expect(got.sort()).toEqual([orgA.organizationId, orgB.organizationId].sort());
    // a statement that touches no row announces nothing
    expect(await heardDuring(() => stack.sql(`DELETE FROM admin.tag_partners WHERE false`))).toEqual([]);
    // a TRUNCATE names no rows: '*' (everything)
    expect(await heardDuring(() => stack.sql('TRUNCATE admin.tag_partners'))).toEqual(['*']);
  });
});

describe('answers kept per process', () => {
  it('a repeated read is answered without querying; a change through either service is read next', async () => {
    await settled();
    const first = await counted(P.C1, orgA.token);
    expect(first.queries).toBeGreaterThan(0);
    const again = await counted(P.C1, orgA.token);
    expect(again.queries).toBe(0);
    expect(again.body).toEqual(first.body);

    // integrations' own writes: the next read, no waiting (the write route dropped the entries before answering)
    const open = Number(first.body.total_open_lc);
    expect((await pushInvoices(stack, orgA.apiKey, [invoice('C1', 25)])).body.results[0]!.success).toBe(true);
    expect((await detail(P.C1, orgA.token)).total_open_lc).toBe((open + 25).toFixed(2));
    expect((await req('PATCH', `/v2/partners/${P.C1}`, orgA.token, { assignee_id: member.id })).status).toBe(200);
    expect(await detail(P.C1, orgA.token)).toMatchObject({ assignee_id: member.id, effective_assignee_id: member.id });
    await settled();
    await detail(P.C1, orgA.token);
    expect((await counted(P.C1, orgA.token)).queries).toBe(0);

    // admin's writes reach this process by the triggers' notifications
    const tag = (await req('POST', '/v1/tags', orgA.token, { name: 'Key account', color: '#00AA00' })).body.id as string;
    expect((await req('POST', `/v1/tags/${tag}/partners`, orgA.token, { partner_ids: [P.C1] })).status).toBe(204);
    await eventually(P.C1, orgA.token, (b) => b.tags.some((t: { id: string }) => t.id === tag));
    expect((await req('PATCH', `/v1/tags/${tag}`, orgA.token, { color: '#FF00FF' })).status).toBe(200);
    await eventually(P.C1, orgA.token, (b) => b.tags.some((t: { color: string }) => t.color === '#FF00FF'));
    // out of office later: nothing changes today; in force from today: the backup handles the customer
    const ooo = await req('POST', `/v2/users/${member.id}/ooo`, orgA.token, { backup_user_id: orgA.userId, start_date: day(3), end_date: day(5) });
    expect(ooo.status, JSON.stringify(ooo.body)).toBe(200);
    expect(await detail(P.C1, orgA.token)).toMatchObject({ effective_assignee_id: member.id });
    expect((await req('PATCH', `/v2/users/${member.id}/ooo`, orgA.token, { start_date: day(0) })).status).toBe(200);
    await eventually(P.C1, orgA.token, (b) => b.effective_assignee_id === orgA.userId);

    // a change by hand in the database is announced as well
    await stack.sql(`UPDATE integrations.partners SET name = 'One by hand' WHERE id = $1`, [P.C1]);
    await eventually(P.C1, orgA.token, (b) => b.name === 'One by hand');
    await settled();
    await detail(P.C1, orgA.token);
    expect((await counted(P.C1, orgA.token)).queries).toBe(0);
  });

  it('an organization\'s change drops its own entries only', async () => {
    await settled();
    await detail(P.C1, orgA.token);
    await detail(P.B1, orgB.token);
    expect((await counted(P.B1, orgB.token)).queries).toBe(0);
    expect((await pushInvoices(stack, orgA.apiKey, [invoice('C2', 5)])).body.results[0]!.success).toBe(true);
    expect((await counted(P.B1, orgB.token)).queries).toBe(0);
    expect((await counted(P.C1, orgA.token)).queries).toBeGreaterThan(0);
  });

  it('tenant isolation: an entry of one organization or scope never answers another', async () => {
    await settled();
    // A's partner, cached for A's admin ('*'), is still no partner of B
    await detail(P.C1, orgA.token);
    expect((await counted(P.C1, orgA.token)).queries).toBe(0);
    expect((await req('GET', `/v2/partners/${P.C1}`, orgB.token)).status).toBe(404);
    // C2 (South), cached for the admin: the North member still gets 404; C1 (North) is theirs, read for their own scope
    await detail(P.C2, orgA.token);
    expect((await counted(P.C2, orgA.token)).queries).toBe(0);
    expect((await req('GET', `/v2/partners/${P.C2}`, member.token)).status).toBe(404);
    const mine = await counted(P.C1, member.token);
    expect(mine.queries).toBeGreaterThan(0);
    expect(mine.body.id).toBe(P.C1);
  });

  it('a lost listener: the cache is emptied and bypassed, then listens again', async () => {
    const cache = deps().partnerReads!;
    await settled();
    await detail(P.C1, orgA.token);
    expect((await counted(P.C1, orgA.token)).queries).toBe(0);
    await stack.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'integrations-partner-reads-listener'`);
    const lost = Date.now() + 5_000;
    while (cache.connected && Date.now() < lost) await new Promise((r) => setTimeout(r, 10));
    expect(cache.connected).toBe(false);
    // a change nobody hears (no listener): what was cached before is not answered
    await stack.sql(`UPDATE integrations.partners SET name = 'One unheard' WHERE id = $1`, [P.C1]);
    expect((await detail(P.C1, orgA.token)).name).toBe('One unheard');
    // back within its retry; then answers are kept and changes heard again
    const back = Date.now() + 10_000;
    while (!cache.connected && Date.now() < back) await new Promise((r) => setTimeout(r, 50));
    expect(cache.connected).toBe(true);
    await settled();
    await detail(P.C1, orgA.token);
    expect((await counted(P.C1, orgA.token)).queries).toBe(0);
    await stack.sql(`UPDATE integrations.partners SET name = 'One heard' WHERE id = $1`, [P.C1]);
    await eventually(P.C1, orgA.token, (b) => b.name === 'One heard');
  });
});

describe('the read cache on the partner reads\' channel', () => {
  it('a read that began before a change was heard is not stored; a later one is', async () => {
    const cache = new ReadCache<{ n: number }, string>({
      name: 'test-partner-reads',
      db: deps().db,
      databaseUrl: stack.databaseUrl,
      log: createLogger('test', 'silent'),
      ttlMs: 600_000,
      channel: PARTNER_READS,
      stale: (_v, org, key) => key.startsWith(`${org}|`),
    });
    await cache.start();
    try {
      const org = orgA.organizationId;
      const key = `${org}|x|*`;
      const began = cache.generation();
      // the change is committed and heard while the read is under way
      await stack.sql('SELECT pg_notify($1, $2)', [PARTNER_READS_CHANNEL, orgB.organizationId]);
      await cache.sync();
      cache.set(key, { n: 1 }, began);
      expect(cache.get(key)).toBeUndefined();
      cache.set(key, { n: 2 }, cache.generation());
      expect(cache.get(key)).toEqual({ n: 2 });
      // another organization's change drops nothing of A; A's drops A's; '*' or an unreadable payload drops everything
      await stack.sql('SELECT pg_notify($1, $2)', [PARTNER_READS_CHANNEL, orgB.organizationId]);
      await cache.sync();
      expect(cache.get(key)).toEqual({ n: 2 });
      await stack.sql('SELECT pg_notify($1, $2)', [PARTNER_READS_CHANNEL, org.toUpperCase()]);
      await cache.sync();
      expect(cache.get(key)).toBeUndefined();
      for (const payload of ['*', 'not an organization']) {
        cache.set(key, { n: 3 }, cache.generation());
        expect(cache.get(key)).toEqual({ n: 3 });
        await stack.sql('SELECT pg_notify($1, $2)', [PARTNER_READS_CHANNEL, payload]);
        await cache.sync();
        expect(cache.get(key)).toBeUndefined();
      }
      // forget (a write of this process) counts as a change heard
      const before = cache.generation();
      cache.forget(orgB.organizationId);
      cache.set(key, { n: 4 }, before);
      expect(cache.get(key)).toBeUndefined();
    } finally {
      await cache.close();
    }
  });
});
