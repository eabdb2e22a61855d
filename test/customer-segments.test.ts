/**
 * Customer segments, tags and partners (spec 2.9, 2.13, rows 11, 14, 15) through the
 * gateway, on a hand-built ledger pushed through the middleware endpoints (no SQL set-up). Dates are
 * relative to today in the organization's timezone (Europe/Berlin), so the aging fields are known:
 *
 *   code  name                                   country  open invoices (EUR LC)                      total  overdue  max  count  currency  unit/assignee
 *   A1    Alpha GmbH                             DE       1000 due T-45, 500 due T+10                 1500   1000     45   2      EUR       bu1 / admin
 *   B2    Beta Ltd                               GB       GBP 200 = 230 EUR due T-100                 230    230      100  1      GBP       -
 *   G3    Gamma SA                               FR       none (one closed invoice of 700)            0      0        0    0      EUR       -
 *   D4    alpha beta Corp                        US       USD 3000 = 2800 EUR due T-10                2800   2800     10   1      USD       bu2
 *   E5    Delta'); DROP TABLE …;--               DE       50 due T+5                                  50     0        0    1      EUR       -
 *
 * Tag VIP: G3 tagged by hand, rule max_days_overdue >= 100 (B2). Tag Plain: no rule, nobody tagged.
 * The partners API's effective assignee uses an out-of-office period set through POST/PATCH /v2/users/{id}/ooo.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let bu1: string;
let bu2: string;
let member1: { id: string; token: string };
let vip: string;
let plain: string;
const P: Record<string, string> = {};
const NAME_OF: Record<string, string> = {};
const SMUGGLED = "Delta'); DROP TABLE integrations.partners;--";

function day(offset: number): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  return new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

let seq = 0;
function inv(customer: string, due: number, amount: number, local: number, currency = 'EUR', extra: Record<string, unknown> = {}) {
  seq++;
  return invoiceRecord({
    document_number: `SG-${seq}`,
    reference: `SG-${seq}`,
    customer_code: customer,
    currency,
    document_date: day(-200 + seq),
    posting_date: day(-200 + seq),
    net_due_date: day(due),
    amount_in_document_currency: amount,
    amount_in_local_currency: local,
    ...extra,
  });
}

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });

let priority = 100;
/** The codes of the partners a condition matches (a throw-away segment, listed by row 14). */
async function match(conditions: unknown): Promise<string[]> {
  const seg = await req('POST', '/v2/customer-segments', orgA.token, { name: `probe ${priority + 1}`, priority: ++priority, conditions });
  expect(seg.status, JSON.stringify(seg.body)).toBe(200);
  const res = await req('GET', `/v2/customer-segments/${seg.body.id}/partners?page_size=500`, orgA.token);
  expect(res.status).toBe(200);
  expect((await req('DELETE', `/v2/customer-segments/${seg.body.id}`, orgA.token)).status).toBe(204);
  return (res.body as { remote_id: string }[]).map((p) => p.remote_id).sort();
}

async function invalid(conditions: unknown): Promise<{ loc: (string | number)[]; msg: string }[]> {
  const res = await req('POST', '/v2/customer-segments', orgA.token, { name: 'bad', priority: 999, conditions });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.type).toBe('request-validation');
  return res.body.errors;
}

beforeAll(async () => {
  // Hundreds of calls with one credential (every field and op of the condition language): on a fast
  // machine they exceed the gateway's per-credential limit (50/s, burst 100; tested in gateway.test.ts),
  // which would answer 429 instead of the behaviour under test.
  stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  orgA = await stack.onboard('Segments A');
  orgB = await stack.onboard('Segments B');
  bu1 = (await req('POST', '/v2/business-units', orgA.token, { name: 'North' })).body.id;
  bu2 = (await req('POST', '/v2/business-units', orgA.token, { name: 'South' })).body.id;
  const customers = [
    ['A1', 'Alpha GmbH', 'DE'],
    ['B2', 'Beta Ltd', 'GB'],
    ['G3', 'Gamma SA', 'FR'],
    ['D4', 'alpha beta Corp', 'US'],
    ['E5', SMUGGLED, 'DE'],
  ];
  const c = await pushCustomers(stack, orgA.apiKey, customers.map(([code, name, country]) => customerRecord({ customer_code: code!, name1: name!, country: country!, smtp_addr: `ap@${code!.toLowerCase()}.example` })));
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  c.body.results.forEach((r, i) => {
    P[customers[i]![0]!] = r.service_id!;
    NAME_OF[customers[i]![0]!] = customers[i]![1]!;
  });
  const i = await pushInvoices(stack, orgA.apiKey, [
    inv('A1', -45, 1000, 1000),
    inv('A1', 10, 500, 500),
    inv('B2', -100, 200, 230, 'GBP'),
    inv('G3', -30, 700, 700, 'EUR', { status_open: false, clearing_date: day(-20), clearing_document_number: 'CL-1' }),
    inv('D4', -10, 3000, 2800, 'USD'),
    inv('E5', 5, 50, 50),
  ]);
  expect(i.body.results.every((r) => r.success), JSON.stringify(i.body)).toBe(true);
  // org B: a partner of the same name, never in A's results
  await pushCustomers(stack, orgB.apiKey, [customerRecord({ customer_code: 'A1', name1: 'Alpha GmbH', country: 'DE' })]);
  await pushInvoices(stack, orgB.apiKey, [inv('A1', -45, 1000, 1000)]);

  expect((await req('PATCH', `/v2/partners/${P.A1}`, orgA.token, { business_unit_id: bu1, assignee_id: orgA.userId })).status).toBe(200);
  expect((await req('PATCH', `/v2/partners/${P.D4}`, orgA.token, { business_unit_id: bu2 })).status).toBe(200);

  vip = (await req('POST', '/v1/tags', orgA.token, { name: 'VIP', color: '#FF0000', rule_condition: { field: 'max_days_overdue', op: 'gte', value: 100 } })).body.id;
  plain = (await req('POST', '/v1/tags', orgA.token, { name: 'Plain', color: '#00ff00' })).body.id;
  expect((await req('POST', `/v1/tags/${vip}/partners`, orgA.token, { partner_ids: [P.G3] })).status).toBe(204);

  const m = await req('POST', '/v2/users', orgA.token, { email: 'm1@segments.example', name: 'M1', role: 'member', business_unit_ids: [bu1], permissions: [] });
  expect(m.status, JSON.stringify(m.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', m.body.id], stack.env)) as { token: string };
  member1 = { id: m.body.id, token: t.token };
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const leaf = (field: string, op: string, value: unknown) => ({ field, op, value });

describe('condition compiler: every field and op against the hand-built ledger', () => {
  const cases: [string, unknown, string[]][] = [
    ['name eq (case-insensitive)', leaf('name', 'eq', 'alpha gmbh'), ['A1']],
    ['name ne', leaf('name', 'ne', 'Alpha GmbH'), ['B2', 'D4', 'E5', 'G3']],
    ['name in', leaf('name', 'in', ['Beta Ltd', 'gamma sa']), ['B2', 'G3']],
    ['name contains', leaf('name', 'contains', 'ALPHA'), ['A1', 'D4']],
    ['name starts_with', leaf('name', 'starts_with', 'alpha'), ['A1', 'D4']],
    ['name starts_with (not contains)', leaf('name', 'starts_with', 'beta'), ['B2']],
    ['country eq', leaf('country', 'eq', 'de'), ['A1', 'E5']],
    ['country ne', leaf('country', 'ne', 'DE'), ['B2', 'D4', 'G3']],
    ['country in', leaf('country', 'in', ['GB', 'FR']), ['B2', 'G3']],
    ['currency eq', leaf('currency', 'eq', 'USD'), ['D4']],
    ['currency in', leaf('currency', 'in', ['EUR']), ['A1', 'E5', 'G3']],
    ['currency ne', leaf('currency', 'ne', 'EUR'), ['B2', 'D4']],
    ['total_open_lc gt', leaf('total_open_lc', 'gt', 1000), ['A1', 'D4']],
    ['total_open_lc gte', leaf('total_open_lc', 'gte', '1500.00'), ['A1', 'D4']],
    ['total_open_lc lt', leaf('total_open_lc', 'lt', '230'), ['E5', 'G3']],
    ['total_open_lc lte', leaf('total_open_lc', 'lte', 230), ['B2', 'E5', 'G3']],
    ['total_open_lc eq', leaf('total_open_lc', 'eq', '50.00'), ['E5']],
    ['total_open_lc ne', leaf('total_open_lc', 'ne', 0), ['A1', 'B2', 'D4', 'E5']],
    ['overdue_lc gt', leaf('overdue_lc', 'gt', 0), ['A1', 'B2', 'D4']],
    ['overdue_lc eq', leaf('overdue_lc', 'eq', 0), ['E5', 'G3']],
    ['overdue_lc lte', leaf('overdue_lc', 'lte', '1000'), ['A1', 'B2', 'E5', 'G3']],
    ['max_days_overdue gt', leaf('max_days_overdue', 'gt', 30), ['A1', 'B2']],
    ['max_days_overdue gte', leaf('max_days_overdue', 'gte', 45), ['A1', 'B2']],
    ['max_days_overdue lt', leaf('max_days_overdue', 'lt', 45), ['D4', 'E5', 'G3']],
    ['max_days_overdue lte', leaf('max_days_overdue', 'lte', 10), ['D4', 'E5', 'G3']],
    ['max_days_overdue eq', leaf('max_days_overdue', 'eq', 100), ['B2']],
    ['max_days_overdue ne', leaf('max_days_overdue', 'ne', 0), ['A1', 'B2', 'D4']],
    ['max_days_overdue in', leaf('max_days_overdue', 'in', [10, 45]), ['A1', 'D4']],
    ['open_invoice_count eq', leaf('open_invoice_count', 'eq', 0), ['G3']],
    ['open_invoice_count gt', leaf('open_invoice_count', 'gt', 1), ['A1']],
    ['open_invoice_count in', leaf('open_invoice_count', 'in', [1]), ['B2', 'D4', 'E5']],
    ['open_invoice_count lt', leaf('open_invoice_count', 'lt', 2), ['B2', 'D4', 'E5', 'G3']],
    ['open_invoice_count gte', leaf('open_invoice_count', 'gte', 1), ['A1', 'B2', 'D4', 'E5']],
    ['open_invoice_count lte', leaf('open_invoice_count', 'lte', 0), ['G3']],
    ['open_invoice_count ne', leaf('open_invoice_count', 'ne', 1), ['A1', 'G3']],
  ];
  for (const [name, condition, expected] of cases) {
    it(name, async () => {
      expect(await match(condition)).toEqual(expected);
    });
  }

  it('business_unit_id and assignee_id: eq, ne, in, null', async () => {
    expect(await match(leaf('business_unit_id', 'eq', bu1))).toEqual(['A1']);
    expect(await match(leaf('business_unit_id', 'ne', bu1))).toEqual(['B2', 'D4', 'E5', 'G3']);
    expect(await match(leaf('business_unit_id', 'in', [bu1, bu2]))).toEqual(['A1', 'D4']);
    expect(await match(leaf('business_unit_id', 'eq', null))).toEqual(['B2', 'E5', 'G3']);
    expect(await match(leaf('assignee_id', 'eq', orgA.userId))).toEqual(['A1']);
    expect(await match(leaf('assignee_id', 'ne', null))).toEqual(['A1']);
    expect(await match(leaf('assignee_id', 'in', [orgA.userId, member1.id]))).toEqual(['A1']);
    expect(await match(leaf('assignee_id', 'ne', orgA.userId))).toEqual(['B2', 'D4', 'E5', 'G3']);
  });

  it('tag: hand-tagged OR matched by the tag rule; eq, ne, in', async () => {
    expect(await match(leaf('tag', 'eq', vip))).toEqual(['B2', 'G3']);
    expect(await match(leaf('tag', 'ne', vip))).toEqual(['A1', 'D4', 'E5']);
    expect(await match(leaf('tag', 'in', [vip, plain]))).toEqual(['B2', 'G3']);
    expect(await match(leaf('tag', 'eq', plain))).toEqual([]);
  });

  it('nested all / any / not', async () => {
    expect(
      await match({
        all: [
          { any: [leaf('country', 'eq', 'DE'), leaf('country', 'eq', 'US')] },
          { not: leaf('open_invoice_count', 'eq', 0) },
          { not: leaf('name', 'contains', 'delta') },
        ],
      }),
    ).toEqual(['A1', 'D4']);
    expect(await match({ any: [{ all: [leaf('overdue_lc', 'gt', 0), leaf('currency', 'eq', 'EUR')] }, leaf('tag', 'eq', vip)] })).toEqual(['A1', 'B2', 'G3']);
    expect(await match({ not: { any: [leaf('country', 'eq', 'DE'), { not: leaf('max_days_overdue', 'gt', 0) }] } })).toEqual(['B2', 'D4']);
  });

  it('SQL smuggled through a value is only ever a value; through a field name it is refused (422)', async () => {
    expect(await match(leaf('name', 'eq', SMUGGLED))).toEqual(['E5']);
    expect(await match(leaf('name', 'contains', "' OR '1'='1"))).toEqual([]);
    expect(await match(leaf('country', 'in', ["DE') OR true --"]))).toEqual([]);
    const errors = await invalid({ all: [leaf('name', 'eq', 'x'), leaf('name) OR true; DROP TABLE integrations.partners;--', 'eq', 'x')] });
    expect(errors[0]!.loc).toEqual(['body', 'conditions', 'all', 1, 'field']);
    // the ledger is intact
    expect(await match(leaf('open_invoice_count', 'gte', 0))).toEqual(['A1', 'B2', 'D4', 'E5', 'G3']);
  });

  it('validation errors carry their loc inside the tree; depth and size limits', async () => {
    expect((await invalid({ all: [{ any: [leaf('colour', 'eq', 'x')] }] }))[0]!.loc).toEqual(['body', 'conditions', 'all', 0, 'any', 0, 'field']);
    expect((await invalid({ not: leaf('name', 'gt', 'a') }))[0]!.loc).toEqual(['body', 'conditions', 'not', 'op']);
    expect((await invalid(leaf('total_open_lc', 'contains', '1')))[0]!.loc).toEqual(['body', 'conditions', 'op']);
    expect((await invalid(leaf('max_days_overdue', 'gt', '30')))[0]!.loc).toEqual(['body', 'conditions', 'value']);
    expect((await invalid(leaf('country', 'in', ['DE', 7])))[0]!.loc).toEqual(['body', 'conditions', 'value', 1]);
    expect((await invalid(leaf('assignee_id', 'eq', 'nobody')))[0]!.loc).toEqual(['body', 'conditions', 'value']);
    expect((await invalid({ all: [] }))[0]!.loc).toEqual(['body', 'conditions', 'all']);
    expect((await invalid({ all: [leaf('name', 'eq', 'x')], any: [] }))[0]!.loc).toEqual(['body', 'conditions', 'all']);
    let deep: unknown = leaf('name', 'eq', 'x');
    for (let k = 0; k < 8; k++) deep = { not: deep };
    expect((await invalid(deep))[0]!.msg).toMatch(/levels deep/);
    expect((await invalid({ any: Array.from({ length: 100 }, () => leaf('name', 'eq', 'x')) }))[0]!.msg).toMatch(/at most 100 nodes/);
    // an unknown tag id is a reference error at its loc
    expect((await invalid({ all: [leaf('tag', 'eq', orgB.userId)] }))[0]!.loc).toEqual(['body', 'conditions', 'all', 0, 'value']);
    // a tag rule may not use tags
    const t = await req('POST', '/v1/tags', orgA.token, { name: 'Loop', color: '#000000', rule_condition: leaf('tag', 'eq', vip) });
    expect(t.status).toBe(422);
    expect(t.body.detail.body['rule_condition.field']).toBeDefined();
  });
});

describe('customer segments (v2)', () => {
  it('row 14: a bare array of 2.13 summaries by name then id, paginated; 500 ok, 501 and -1 refused', async () => {
    const seg = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Named', priority: 50, conditions: leaf('name', 'in', ['Alpha GmbH', 'Beta Ltd', 'Gamma SA']) });
    expect(seg.status).toBe(200);
    expect(seg.body).toMatchObject({ object: 'customer_segment', name: 'Named', priority: 50, description: null });
    const all = await req('GET', `/v2/customer-segments/${seg.body.id}/partners?page_size=500`, orgA.token);
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((p: { remote_id: string }) => p.remote_id)).toEqual(['A1', 'B2', 'G3']);
    expect(Object.keys(all.body[0]).sort()).toEqual(
      ['account_number', 'assignee_id', 'business_unit_id', 'created_at', 'currency', 'email', 'id', 'legal_name', 'modified_at', 'name', 'object', 'parent_id', 'phone', 'remote_id'].sort(),
    );
    expect(all.body[0]).toMatchObject({ object: 'partner', id: P.A1, name: 'Alpha GmbH', business_unit_id: bu1, assignee_id: orgA.userId, email: 'ap@a1.example' });
    const p1 = await req('GET', `/v2/customer-segments/${seg.body.id}/partners?page=1&page_size=2`, orgA.token);
    expect(p1.body.map((p: { remote_id: string }) => p.remote_id)).toEqual(['G3']);
    for (const q of ['page_size=501', 'page_size=0', 'page=-1', 'exclude_higher_priority=yes']) {
      const bad = await req('GET', `/v2/customer-segments/${seg.body.id}/partners?${q}`, orgA.token);
      expect(bad.status, q).toBe(422);
      expect(bad.body.type).toBe('request-validation');
    }
    expect((await req('DELETE', `/v2/customer-segments/${seg.body.id}`, orgA.token)).status).toBe(204);
  });

  it('exclusion by priority; priorities unique (409); delete 204 then 404', async () => {
    const s1 = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Germany', priority: 1, conditions: leaf('country', 'eq', 'DE') });
    const s2 = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Open', description: 'anyone owing', priority: 2, conditions: leaf('total_open_lc', 'gt', 0) });
    const s3 = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Late', priority: 3, conditions: leaf('max_days_overdue', 'gte', 10) });
    expect([s1.status, s2.status, s3.status]).toEqual([200, 200, 200]);
    const codes = (r: { body: { remote_id: string }[] }) => r.body.map((p) => p.remote_id).sort();
    expect(codes(await req('GET', `/v2/customer-segments/${s2.body.id}/partners`, orgA.token))).toEqual(['A1', 'B2', 'D4', 'E5']);
    expect(codes(await req('GET', `/v2/customer-segments/${s2.body.id}/partners?exclude_higher_priority=true`, orgA.token))).toEqual(['B2', 'D4']);
    expect(codes(await req('GET', `/v2/customer-segments/${s3.body.id}/partners?exclude_higher_priority=true`, orgA.token))).toEqual([]);
    expect(codes(await req('GET', `/v2/customer-segments/${s3.body.id}/partners?exclude_higher_priority=false`, orgA.token))).toEqual(['A1', 'B2', 'D4']);
    expect(codes(await req('GET', `/v2/customer-segments/${s1.body.id}/partners?exclude_higher_priority=true`, orgA.token))).toEqual(['A1', 'E5']);

    const dup = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Dup', priority: 2, conditions: leaf('name', 'eq', 'x') });
    expect(dup.status).toBe(409);
    expect(dup.body.type).toBe('conflict');
    const moved = await req('PATCH', `/v2/customer-segments/${s3.body.id}`, orgA.token, { priority: 1 });
    expect(moved.status).toBe(409);
    const renamed = await req('PATCH', `/v2/customer-segments/${s3.body.id}`, orgA.token, { name: 'Later', priority: 4 });
    expect(renamed.body).toMatchObject({ name: 'Later', priority: 4, conditions: leaf('max_days_overdue', 'gte', 10) });
    // another organization may use the same priority
    const other = await req('POST', '/v2/customer-segments', orgB.token, { name: 'B1', priority: 1, conditions: leaf('country', 'eq', 'DE') });
    expect(other.status).toBe(200);

    const list = await req('GET', '/v2/customer-segments', orgA.token);
    expect(list.body.data.map((s: { priority: number }) => s.priority)).toEqual([1, 2, 4]);
    expect(list.body.total_records).toBe(3);

    for (const s of [s1, s2, s3]) expect((await req('DELETE', `/v2/customer-segments/${s.body.id}`, orgA.token)).status).toBe(204);
    const gone = await req('DELETE', `/v2/customer-segments/${s1.body.id}`, orgA.token);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    const partners = await req('GET', `/v2/customer-segments/${s1.body.id}/partners`, orgA.token);
    expect(partners.status).toBe(404);
    expect(partners.body.title).toBe('Entity not found');
    await req('DELETE', `/v2/customer-segments/${other.body.id}`, orgB.token);
  });

  it('members see only partners of their units (or of none) and may not write segments', async () => {
    const seg = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Everyone', priority: 60, conditions: leaf('open_invoice_count', 'gte', 0) });
    const res = await req('GET', `/v2/customer-segments/${seg.body.id}/partners`, member1.token);
    expect(res.body.map((p: { remote_id: string }) => p.remote_id).sort()).toEqual(['A1', 'B2', 'E5', 'G3']);
    expect((await req('POST', '/v2/customer-segments', member1.token, { name: 'M', priority: 61, conditions: leaf('name', 'eq', 'x') })).status).toBe(403);
    const tagList = await req('GET', `/v1/tags/${vip}/partners`, member1.token);
    expect(tagList.body.data.map((p: { remote_id: string }) => p.remote_id).sort()).toEqual(['B2', 'G3']);
    expect((await req('POST', `/v1/tags/${plain}/partners`, member1.token, { partner_ids: [P.D4] })).status).toBe(422);
    await req('DELETE', `/v2/customer-segments/${seg.body.id}`, orgA.token);
  });
});

describe('tags (v1)', () => {
  it('create, unique name ignoring case (409 v1 shape), colour check (422 v1 shape), get, patch, list', async () => {
    const dup = await req('POST', '/v1/tags', orgA.token, { name: 'vip', color: '#123456' });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ data: {}, error: 'conflict' });
    expect(typeof dup.body.message).toBe('string');
    const bad = await req('POST', '/v1/tags', orgA.token, { name: 'Red', color: 'red' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.detail.body)).toEqual(['color']);
    expect(typeof bad.body.message).toBe('string');
    const got = await req('GET', `/v1/tags/${vip}`, orgA.token);
    expect(got.body).toMatchObject({ object: 'tag', id: vip, name: 'VIP', color: '#FF0000', rule_condition: leaf('max_days_overdue', 'gte', 100) });
    const list = await req('GET', '/v1/tags?page_size=1', orgA.token);
    expect(list.body).toMatchObject({ total_records: 2, current_page: 0, next_page: 1 });
    expect(list.body.data[0].name).toBe('Plain');
    expect((await req('GET', '/v1/tags?page_size=501', orgA.token)).body.detail.query).toBeDefined();
    expect((await req('PATCH', `/v1/tags/${plain}`, orgA.token, { name: 'VIP' })).status).toBe(409);
    const patched = await req('PATCH', `/v1/tags/${plain}`, orgA.token, { color: '#0000FF', rule_condition: leaf('country', 'eq', 'GB') });
    expect(patched.body).toMatchObject({ name: 'Plain', color: '#0000FF' });
    expect((await req('GET', `/v1/tags/${plain}/partners`, orgA.token)).body.data.map((p: { remote_id: string }) => p.remote_id)).toEqual(['B2']);
    expect((await req('PATCH', `/v1/tags/${plain}`, orgA.token, { rule_condition: null })).body.rule_condition).toBeNull();
    const missing = await req('GET', `/v1/tags/${orgB.userId}`, orgA.token);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ data: {}, error: 'entity-not-found' });
  });

  it('hand-tagging: unknown partners refused (422), idempotent add, removal keeps rule matches', async () => {
    const bad = await req('POST', `/v1/tags/${plain}/partners`, orgA.token, { partner_ids: [P.A1, orgB.userId] });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.detail.body)).toEqual(['partner_ids.1']);
    expect((await req('GET', `/v1/tags/${plain}/partners`, orgA.token)).body.total_records).toBe(0);
    expect((await req('POST', `/v1/tags/${plain}/partners`, orgA.token, { partner_ids: [P.A1, P.E5] })).status).toBe(204);
    expect((await req('POST', `/v1/tags/${plain}/partners`, orgA.token, { partner_ids: [P.A1] })).status).toBe(204);
    expect((await req('GET', `/v1/tags/${plain}/partners`, orgA.token)).body.data.map((p: { remote_id: string }) => p.remote_id)).toEqual(['A1', 'E5']);
    expect((await req('DELETE', `/v1/tags/${plain}/partners?partner_ids=${P.A1},${P.E5}`, orgA.token)).status).toBe(204);
    expect((await req('GET', `/v1/tags/${plain}/partners`, orgA.token)).body.total_records).toBe(0);
    // at most 100 ids in the query: 101 is a 422 in the v1 shape (500 made a URL the server refused with 431)
    const many = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const tooMany = await req('DELETE', `/v1/tags/${plain}/partners?partner_ids=${many.join(',')}`, orgA.token);
    expect(tooMany.status).toBe(422);
    expect(Object.keys(tooMany.body.detail.query)).toEqual(['partner_ids']);
    expect(tooMany.body.detail.query.partner_ids.join(' ')).toMatch(/<=\s*100\b|at most 100\b/);
    // VIP: removing G3's hand-tag leaves B2 (rule)
    const tmp = await req('POST', '/v1/tags', orgA.token, { name: 'Tmp', color: '#111111', rule_condition: leaf('max_days_overdue', 'gte', 100) });
    await req('POST', `/v1/tags/${tmp.body.id}/partners`, orgA.token, { partner_ids: [P.G3, P.B2] });
    await req('DELETE', `/v1/tags/${tmp.body.id}/partners?partner_ids=${P.G3},${P.B2}`, orgA.token);
    expect((await req('GET', `/v1/tags/${tmp.body.id}/partners`, orgA.token)).body.data.map((p: { remote_id: string }) => p.remote_id)).toEqual(['B2']);
    expect((await req('DELETE', `/v1/tags/${tmp.body.id}`, orgA.token)).status).toBe(204);
    expect((await req('GET', `/v1/tags/${tmp.body.id}`, orgA.token)).status).toBe(404);
  });
});

describe('partners API (integrations)', () => {
  const codes = (r: { body: { data: { remote_id: string }[] } }) => r.body.data.map((p) => p.remote_id);

  it('lists with filters: name, tag, segment_id, business_unit_id, assignee_id; paginated', async () => {
    const all = await req('GET', '/v2/partners', orgA.token);
    expect(all.body.total_records).toBe(5);
    expect(codes(await req('GET', '/v2/partners?name=ALPHA', orgA.token)).sort()).toEqual(['A1', 'D4']);
    expect(codes(await req('GET', `/v2/partners?tag=${vip}`, orgA.token)).sort()).toEqual(['B2', 'G3']);
    expect(codes(await req('GET', `/v2/partners?business_unit_id=${bu1}`, orgA.token))).toEqual(['A1']);
    expect(codes(await req('GET', `/v2/partners?assignee_id=${orgA.userId}`, orgA.token))).toEqual(['A1']);
    const seg = await req('POST', '/v2/customer-segments', orgA.token, { name: 'DE', priority: 70, conditions: leaf('country', 'eq', 'DE') });
    expect(codes(await req('GET', `/v2/partners?segment_id=${seg.body.id}`, orgA.token)).sort()).toEqual(['A1', 'E5']);
    expect(codes(await req('GET', `/v2/partners?segment_id=${seg.body.id}&name=alpha`, orgA.token))).toEqual(['A1']);
    const page = await req('GET', '/v2/partners?page=2&page_size=2', orgA.token);
    expect(page.body).toMatchObject({ current_page: 2, total_records: 5, next_page: null });
    expect(page.body.data).toHaveLength(1);
    expect((await req('GET', '/v2/partners?page_size=501', orgA.token)).status).toBe(422);
    expect((await req('GET', '/v2/partners?page=-1', orgA.token)).status).toBe(422);
    expect((await req('GET', `/v2/partners?segment_id=${orgB.userId}`, orgA.token)).body.errors[0].loc).toEqual(['query', 'segment_id']);
    expect((await req('GET', `/v2/partners?tag=${orgB.userId}`, orgA.token)).body.errors[0].loc).toEqual(['query', 'tag']);
    expect(codes(await req('GET', '/v2/partners', member1.token)).sort()).toEqual(['A1', 'B2', 'E5', 'G3']);
    await req('DELETE', `/v2/customer-segments/${seg.body.id}`, orgA.token);
  });

  it('detail: 2.13 fields, open/overdue figures and tags', async () => {
    const a1 = await req('GET', `/v2/partners/${P.A1}`, orgA.token);
    expect(a1.body).toMatchObject({
      object: 'partner', id: P.A1, name: 'Alpha GmbH', business_unit_id: bu1, assignee_id: orgA.userId,
      open_invoice_count: 2, total_open_lc: '1500.00', overdue_lc: '1000.00', max_days_overdue: 45, tags: [],
    });
    const b2 = await req('GET', `/v2/partners/${P.B2}`, orgA.token);
    expect(b2.body).toMatchObject({ total_open_lc: '230.00', overdue_lc: '230.00', max_days_overdue: 100, tags: [{ id: vip, name: 'VIP', color: '#FF0000' }] });
    const g3 = await req('GET', `/v2/partners/${P.G3}`, orgA.token);
    expect(g3.body).toMatchObject({ open_invoice_count: 0, total_open_lc: '0.00', max_days_overdue: 0, tags: [{ id: vip }] });
    expect((await req('GET', `/v2/partners/${P.D4}`, member1.token)).status).toBe(404);
  });

  it('PATCH: assignee must be an active user of the organization, unit one of its units', async () => {
    const other = await req('PATCH', `/v2/partners/${P.E5}`, orgA.token, { assignee_id: orgB.userId });
    expect(other.status).toBe(422);
    expect(other.body.errors[0].loc).toEqual(['body', 'assignee_id']);
    const unit = await req('PATCH', `/v2/partners/${P.E5}`, orgA.token, { business_unit_id: orgB.userId });
    expect(unit.body.errors[0].loc).toEqual(['body', 'business_unit_id']);
    expect((await req('PATCH', `/v2/partners/${P.E5}`, member1.token, { business_unit_id: bu2 })).status).toBe(422);
    expect((await req('GET', `/v2/partners/${P.E5}`, orgA.token)).body).toMatchObject({ assignee_id: null, business_unit_id: null });
    const ok = await req('PATCH', `/v2/partners/${P.E5}`, orgA.token, { assignee_id: member1.id });
    expect(ok.body).toMatchObject({ assignee_id: member1.id, business_unit_id: null });
    const cleared = await req('PATCH', `/v2/partners/${P.E5}`, orgA.token, { assignee_id: null });
    expect(cleared.body.assignee_id).toBeNull();
  });

  it('effective assignee: the backup while the assignee is out of office today, the assignee outside the period; handled_by filters on it', async () => {
    const u = await req('POST', '/v2/users', orgA.token, { email: 'ooo@segments.example', name: 'Olga', role: 'member', permissions: [] });
    expect(u.status, JSON.stringify(u.body)).toBe(200);
    const olga = u.body.id as string;
    expect((await req('PATCH', `/v2/partners/${P.G3}`, orgA.token, { assignee_id: olga })).body).toMatchObject({ assignee_id: olga, effective_assignee_id: olga });
    const handled = async (userId: string) => codes(await req('GET', `/v2/partners?handled_by=${userId}`, orgA.token)).sort();
    const g3 = async () => {
      const detail = (await req('GET', `/v2/partners/${P.G3}`, orgA.token)).body;
      const listed = (await req('GET', '/v2/partners?name=gamma', orgA.token)).body.data[0];
      expect(listed.effective_assignee_id).toBe(detail.effective_assignee_id);
      return detail;
    };

    // scheduled, not in force today: the assignee handles the customer
    const ooo = await req('POST', `/v2/users/${olga}/ooo`, orgA.token, { backup_user_id: member1.id, start_date: day(3), end_date: day(5) });
    expect(ooo.status, JSON.stringify(ooo.body)).toBe(200);
    expect(await g3()).toMatchObject({ assignee_id: olga, effective_assignee_id: olga });
    expect(await handled(olga)).toEqual(['G3']);
    expect(await handled(member1.id)).toEqual([]);

    // in force today (organization timezone): the backup handles it; assignee_id stays literal
    expect((await req('PATCH', `/v2/users/${olga}/ooo`, orgA.token, { start_date: day(0) })).status).toBe(200);
    expect(await g3()).toMatchObject({ assignee_id: olga, effective_assignee_id: member1.id });
    expect(await handled(olga)).toEqual([]);
    expect(await handled(member1.id)).toEqual(['G3']);
    expect(codes(await req('GET', `/v2/partners?assignee_id=${olga}`, orgA.token))).toEqual(['G3']);
    // unaffected: A1's assignee is not out; unassigned partners have none
    const a1 = (await req('GET', `/v2/partners/${P.A1}`, orgA.token)).body;
    expect(a1).toMatchObject({ assignee_id: orgA.userId, effective_assignee_id: orgA.userId });
    expect(await handled(orgA.userId)).toEqual(['A1']);
    expect((await req('GET', `/v2/partners/${P.B2}`, orgA.token)).body).toMatchObject({ assignee_id: null, effective_assignee_id: null });
    // another organization's user handles nothing here; a bad id is a 422
    expect(await handled(orgB.userId)).toEqual([]);
    expect((await req('GET', '/v2/partners?handled_by=nope', orgA.token)).status).toBe(422);
  });
});

describe('tenant isolation: organization B sees none of A', () => {
  it('every segment, tag and partner endpoint answers 404 (or an empty list) to B', async () => {
    const seg = await req('POST', '/v2/customer-segments', orgA.token, { name: 'Iso', priority: 80, conditions: leaf('country', 'eq', 'DE') });
    const t = orgB.token;
    const v2 = [
      await req('GET', `/v2/customer-segments/${seg.body.id}`, t),
      await req('PATCH', `/v2/customer-segments/${seg.body.id}`, t, { name: 'x' }),
      await req('GET', `/v2/customer-segments/${seg.body.id}/partners`, t),
      await req('DELETE', `/v2/customer-segments/${seg.body.id}`, t),
      await req('GET', `/v2/partners/${P.A1}`, t),
      await req('PATCH', `/v2/partners/${P.A1}`, t, { assignee_id: null }),
    ];
    for (const r of v2) expect(r.status).toBe(404);
    const v1 = [
      await req('GET', `/v1/tags/${vip}`, t),
      await req('PATCH', `/v1/tags/${vip}`, t, { color: '#000000' }),
      await req('GET', `/v1/tags/${vip}/partners`, t),
      await req('POST', `/v1/tags/${vip}/partners`, t, { partner_ids: [P.A1] }),
      await req('DELETE', `/v1/tags/${vip}/partners?partner_ids=${P.G3}`, t),
      await req('DELETE', `/v1/tags/${vip}`, t),
    ];
    for (const r of v1) {
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('entity-not-found');
    }
    expect((await req('GET', '/v2/customer-segments', t)).body.total_records).toBe(0);
    expect((await req('GET', '/v1/tags', t)).body.total_records).toBe(0);
    const bList = await req('GET', '/v2/partners', t);
    expect(bList.body.data.map((p: { id: string }) => p.id)).not.toContain(P.A1);
    expect(bList.body.total_records).toBe(1);
    // A's tag in B's condition is an unknown reference
    const ref = await req('POST', '/v2/customer-segments', t, { name: 'Steal', priority: 5, conditions: leaf('tag', 'eq', vip) });
    expect(ref.status).toBe(422);
    // A's segment and tag are unchanged
    expect((await req('GET', `/v1/tags/${vip}/partners`, orgA.token)).body.data.map((p: { remote_id: string }) => p.remote_id)).toEqual(['B2', 'G3']);
    expect((await req('GET', `/v2/customer-segments/${seg.body.id}`, orgA.token)).body.name).toBe('Iso');
  });
});
