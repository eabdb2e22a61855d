/**
 * Tag and segment conditions after tag expansion, and the names and ids they carry (spec 2.9; the
 * condition language in packages/platform/src/conditions.ts), through the gateway.
 *
 * - The compiled size: a segment whose `tag` leaves expand past MAX_COMPILED_NODES is refused at write
 *   (422 at `conditions`), the organization's segments together included (exclude_higher_priority
 *   compiles every higher segment); a tag rule that would grow its segments past it is refused at the
 *   tag's write (422 at `rule_condition`). One state no endpoint produces on purpose (two concurrent
 *   writes that cross the bound together) is set up with SQL: a tag rule written directly; the
 *   segment's partners then answer 409 naming the segment, never a 504 or 500.
 * - Names unique after Unicode normalization, also under concurrent creates; bidi overrides refused.
 * - `business_unit_id` and `assignee_id` values inside conditions must be the organization's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_COMPILED_NODES } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, pushCustomers } from './support/ledger.js';

let stack: TestStack;
let a: Org;
let b: Org;

beforeAll(async () => {
  stack = await startStack();
  a = await stack.onboard('Bounds A');
  b = await stack.onboard('Bounds B');
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const req = (method: string, path: string, org: Org, body?: unknown) => stack.request(method, path, { token: org.token, body });
/** A 99-node rule: one `any` over 98 leaves. */
const bigRule = { any: Array.from({ length: 98 }, (_, i) => ({ field: 'name', op: 'eq', value: `customer ${i}` })) };
const tagLeaf = (id: string, times: number) => ({ field: 'tag', op: 'in', value: Array.from({ length: times }, () => id) });
let seq = 0;
const uniq = (s: string) => `${s} ${++seq}`;

async function tag(org: Org, rule: unknown = null): Promise<string> {
  const res = await req('POST', '/v1/tags', org, { name: uniq('t'), color: '#112233', rule_condition: rule });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

let priority = 0;
const segment = (org: Org, conditions: unknown, name = uniq('s')) => req('POST', '/v2/customer-segments', org, { name, priority: ++priority, conditions });

async function segmentCount(org: Org): Promise<number> {
  return (await req('GET', '/v2/customer-segments?page_size=500', org)).body.total_records;
}

describe('compiled size after tag expansion', () => {
  it('refuses at write a segment whose tag leaves expand past the bound (422 at conditions) and stores nothing', async () => {
    const org = await stack.onboard('Bounds size 1');
    const big = await tag(org, bigRule);
    const before = await segmentCount(org);
    // 1 + 500 × (1 hand-tagged test + 99 rule nodes) = 50,001 nodes from a 2-node tree
    const res = await segment(org, tagLeaf(big, 500));
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body).toMatchObject({ type: expect.stringContaining('request-validation'), status: 422 });
    expect(res.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'conditions'], type: 'value_error.condition_size' })]);
    expect(res.body.errors[0].msg).toContain(String(MAX_COMPILED_NODES));
    expect(await segmentCount(org)).toBe(before);

    // a PATCH growing an existing segment past it is refused the same way and changes nothing
    const small = await segment(org, tagLeaf(big, 1));
    expect(small.status).toBe(200);
    const grown = await req('PATCH', `/v2/customer-segments/${small.body.id}`, org, { conditions: tagLeaf(big, 500) });
    expect(grown.status).toBe(422);
    expect(grown.body.errors[0].loc).toEqual(['body', 'conditions']);
    expect((await req('GET', `/v2/customer-segments/${small.body.id}`, org)).body.conditions).toEqual(tagLeaf(big, 1));
  });

  it('counts the organization\'s segments together: each fits alone, the one that crosses the bound is refused', async () => {
    const org = await stack.onboard('Bounds size 2');
    const big = await tag(org, bigRule);
    // 1 + 45 × 100 = 4,501 nodes each
    expect((await segment(org, tagLeaf(big, 45))).status).toBe(200);
    expect((await segment(org, tagLeaf(big, 45))).status).toBe(200);
    const third = await segment(org, tagLeaf(big, 45));
    expect(third.status).toBe(422);
    expect(third.body.errors[0]).toMatchObject({ loc: ['body', 'conditions'], type: 'value_error.condition_size' });
    expect(third.body.errors[0].msg).toContain('exclude_higher_priority');
    // the lowest segment's exclude_higher_priority statement still runs
    const list = (await req('GET', '/v2/customer-segments?page_size=500', org)).body.data;
    const lowest = list[list.length - 1];
    expect((await req('GET', `/v2/customer-segments/${lowest.id}/partners?exclude_higher_priority=true`, org)).status).toBe(200);
  });

  it('refuses a tag rule that would grow the segments using the tag past the bound (422 at rule_condition naming them)', async () => {
    const org = await stack.onboard('Bounds size 3');
    const t = await tag(org);
    const seg = await segment(org, tagLeaf(t, 500), 'Uses the tag');
    expect(seg.status).toBe(200);
    const res = await req('PATCH', `/v1/tags/${t}`, org, { rule_condition: bigRule });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    const msgs = res.body.detail.body.rule_condition as string[];
    expect(msgs.join(' ')).toContain('"Uses the tag"');
    expect((await req('GET', `/v1/tags/${t}`, org)).body.rule_condition).toBeNull();
    // a small rule is fine
    expect((await req('PATCH', `/v1/tags/${t}`, org, { rule_condition: { field: 'country', op: 'eq', value: 'DE' } })).status).toBe(200);
  });

  it('a segment grown past the bound behind the API answers 409 naming it when listing its partners, not a timeout', async () => {
    const org = await stack.onboard('Bounds size 4');
    const t = await tag(org);
    const seg = await segment(org, tagLeaf(t, 500), 'Grown segment');
    expect(seg.status).toBe(200);
    // SQL set-up: the state two concurrent writes could leave (each checked against the other's old state)
    await stack.sql('UPDATE admin.tags SET rule_condition = $1::jsonb WHERE id = $2', [JSON.stringify(bigRule), t]);
    for (const q of ['', '?exclude_higher_priority=true']) {
      const res = await req('GET', `/v2/customer-segments/${seg.body.id}/partners${q}`, org);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toMatchObject({ type: expect.stringContaining('conflict'), status: 409 });
      expect(res.body.detail).toContain('"Grown segment"');
      expect(res.body.detail).toContain(seg.body.id);
    }
  });
});

describe('large conditions compile off the event loop', () => {
  it('a segment expanding past the inline bound compiles on the condition threads and lists what its small equivalent lists', async () => {
    const org = await stack.onboard('Bounds threads');
    const pushed = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: 'C3', name1: 'Customer 3' }),
      customerRecord({ customer_code: 'C50', name1: 'Customer 50' }),
      customerRecord({ customer_code: 'OTHER', name1: 'Someone else' }),
    ]);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
    const big = await tag(org, bigRule);
    // 1 + 45 × (1 + 99) = 4,501 nodes: compiled on a thread; the rule itself (99 nodes) on the event loop
    const threaded = await segment(org, tagLeaf(big, 45));
    const inline = await segment(org, bigRule);
    expect(threaded.status, JSON.stringify(threaded.body)).toBe(200);
    expect(inline.status, JSON.stringify(inline.body)).toBe(200);
    const names = async (id: string, q = '') => {
      const res = await req('GET', `/v2/customer-segments/${id}/partners${q}`, org);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body as { name: string }[]).map((p) => p.name);
    };
    expect(await names(threaded.body.id)).toEqual(['Customer 3', 'Customer 50']);
    expect(await names(inline.body.id)).toEqual(['Customer 3', 'Customer 50']);
    // the lower segment without the higher one's partners: its exclusion compiled on a thread as well
    expect(await names(inline.body.id, '?exclude_higher_priority=true')).toEqual([]);
  });
});

describe('names unique after Unicode normalization', () => {
  it('tags: full-width, zero-width and case variants of a name clash (409); bidi overrides are refused (422)', async () => {
    expect((await req('POST', '/v1/tags', a, { name: 'Straße VIP', color: '#000000' })).status).toBe(200);
    for (const name of ['ＳＴＲＡＳＳＥ ＶＩＰ', 'Stra\u200Bße VIP', 'strasse vip\u200E', 'STRASSE\u2060 VIP']) {
      const res = await req('POST', '/v1/tags', a, { name, color: '#000000' });
      expect(res.status, name).toBe(409);
    }
    const t = await req('POST', '/v1/tags', a, { name: 'Other', color: '#000000' });
    expect((await req('PATCH', `/v1/tags/${t.body.id}`, a, { name: 'straße\uFEFF vip' })).status).toBe(409);
    const spoof = await req('POST', '/v1/tags', a, { name: 'invoice\u202Efdp.exe', color: '#000000' });
    expect(spoof.status).toBe(422);
    expect(spoof.body.detail.body.name).toBeDefined();
    expect((await req('POST', '/v1/tags', a, { name: '\u2066Isolated\u2069', color: '#000000' })).status).toBe(422);
    expect((await req('POST', '/v1/tags', a, { name: '\u200B\u200D', color: '#000000' })).status).toBe(422);
    // another organization may use the name
    expect((await req('POST', '/v1/tags', b, { name: 'STRASSE VIP', color: '#000000' })).status).toBe(200);
  });

  it('segments: names are unique per organization after normalization (409); bidi overrides refused with the loc', async () => {
    expect((await segment(a, { field: 'country', op: 'eq', value: 'DE' }, 'Key accounts')).status).toBe(200);
    for (const name of ['KEY ACCOUNTS', 'Ｋｅｙ accounts', 'Key\u200C accounts']) {
      const res = await segment(a, { field: 'country', op: 'eq', value: 'DE' }, name);
      expect(res.status, name).toBe(409);
      expect(res.body).toMatchObject({ type: expect.stringContaining('conflict'), status: 409 });
    }
    const bad = await segment(a, { field: 'country', op: 'eq', value: 'DE' }, 'Key\u202Eaccounts');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'name']);
    expect((await segment(b, { field: 'country', op: 'eq', value: 'DE' }, 'Key accounts')).status).toBe(200);
  });

  it('holds under concurrent creates: one of many look-alike names wins, the others get 409', async () => {
    const names = ['Race', 'RACE', 'Ｒａｃｅ', 'ra\u200Bce', 'race\u200E', 'rAcE', 'Ｒace', 'RaCe'];
    const tags = await Promise.all(names.map((name) => req('POST', '/v1/tags', a, { name, color: '#000000' })));
    expect(tags.map((r) => r.status).sort()).toEqual([200, ...Array(names.length - 1).fill(409)]);
    const segs = await Promise.all(names.map((name) => segment(a, { field: 'country', op: 'eq', value: 'DE' }, `Seg ${name}`)));
    expect(segs.map((r) => r.status).sort()).toEqual([200, ...Array(names.length - 1).fill(409)]);
  });
});

describe('ids inside conditions are the organization\'s', () => {
  it('business_unit_id and assignee_id of another organization are 422 at their loc; own ids and null pass', async () => {
    const buA = (await req('POST', '/v2/business-units', a, { name: uniq('Unit') })).body.id;
    const buB = (await req('POST', '/v2/business-units', b, { name: uniq('Unit') })).body.id;
    const before = await segmentCount(a);
    const foreignBu = await segment(a, { all: [{ field: 'business_unit_id', op: 'in', value: [buA, buB] }] });
    expect(foreignBu.status).toBe(422);
    expect(foreignBu.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'conditions', 'all', 0, 'value', 1], type: 'value_error.not_found' })]);
    const foreignUser = await segment(a, { field: 'assignee_id', op: 'eq', value: b.userId });
    expect(foreignUser.status).toBe(422);
    expect(foreignUser.body.errors[0].loc).toEqual(['body', 'conditions', 'value']);
    expect(await segmentCount(a)).toBe(before);

    const tagRule = await req('POST', '/v1/tags', a, { name: uniq('BU rule'), color: '#000000', rule_condition: { field: 'business_unit_id', op: 'eq', value: buB } });
    expect(tagRule.status).toBe(422);
    expect(tagRule.body.detail.body['rule_condition.value']).toBeDefined();

    expect((await segment(a, { any: [{ field: 'business_unit_id', op: 'eq', value: buA }, { field: 'assignee_id', op: 'eq', value: a.userId }, { field: 'assignee_id', op: 'eq', value: null }] })).status).toBe(200);
  });
});
