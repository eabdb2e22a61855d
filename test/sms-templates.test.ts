/**
 * SMS templates (spec 2.4, row 5, part 8) through the gateway: limits, segment counts on
 * hand-computed GSM-7, extension and UCS-2 bodies, Liquid validation, one default per organization,
 * PATCH semantics and tenant isolation. One SQL statement checks the partial unique index behind the
 * default rule (no endpoint can produce two defaults).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let a: Org;
let b: Org;

beforeAll(async () => {
  stack = await startStack();
  [a, b] = await Promise.all([stack.onboard('SMS A'), stack.onboard('SMS B')]);
});
afterAll(async () => stack?.close());

const req = (org: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: org.token, body });
const create = (org: Org, over: Record<string, unknown> = {}) => req(org, 'POST', '/v2/sms-templates', { name: 'Reminder', body: 'Hi {{ customer.name }}', ...over });

function expect422(res: { status: number; body: any }, loc: (string | number)[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.type).toBe('request-validation');
  expect(res.body.errors.map((e: any) => e.loc.slice(0, loc.length))).toContainEqual(loc);
}

describe('limits (part 8)', () => {
  it('name 128 / 129 and body 1600 / 1601, on create and on PATCH', async () => {
    const ok = await create(a, { name: 'n'.repeat(128), body: 'a'.repeat(1600) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ object: 'sms_template', character_count: 1600, estimated_segment_count: 11, encoding: 'GSM-7' });
    expect422(await create(a, { name: 'n'.repeat(129) }), ['body', 'name']);
    expect422(await create(a, { body: 'a'.repeat(1601) }), ['body', 'body']);
    expect422(await req(a, 'PATCH', `/v2/sms-templates/${ok.body.id}`, { name: 'n'.repeat(129) }), ['body', 'name']);
    expect422(await req(a, 'PATCH', `/v2/sms-templates/${ok.body.id}`, { body: 'a'.repeat(1601) }), ['body', 'body']);
    expect((await req(a, 'GET', `/v2/sms-templates/${ok.body.id}`)).body.name).toBe('n'.repeat(128));
  });

  it('page_size 1..200 and page >= 0', async () => {
    const org = await stack.onboard('SMS paging');
    for (const n of ['one', 'two', 'three']) expect((await create(org, { name: n })).status).toBe(200);
    const all = await req(org, 'GET', '/v2/sms-templates?page_size=200');
    expect(all.body).toMatchObject({ total_records: 3, current_page: 0, next_page: null });
    expect(all.body.data.map((t: any) => t.name)).toEqual(['one', 'two', 'three']);
    const p = await req(org, 'GET', '/v2/sms-templates?page=1&page_size=2');
    expect(p.body.data.map((t: any) => t.name)).toEqual(['three']);
    expect422(await req(org, 'GET', '/v2/sms-templates?page_size=201'), ['query', 'page_size']);
    expect422(await req(org, 'GET', '/v2/sms-templates?page=-1'), ['query', 'page']);
  });
});

describe('segment estimate (before substitution)', () => {
  const cases: Array<[string, string, number, number, 'GSM-7' | 'UCS-2']> = [
    ['160 GSM-7 characters: one segment', 'a'.repeat(160), 160, 1, 'GSM-7'],
    ['161: two parts of at most 153', 'a'.repeat(161), 161, 2, 'GSM-7'],
    ['306 = 2 x 153', 'a'.repeat(306), 306, 2, 'GSM-7'],
    ['307: three parts', 'a'.repeat(307), 307, 3, 'GSM-7'],
    ['80 euro signs are 160 septets: one segment', '€'.repeat(80), 160, 1, 'GSM-7'],
    ['81 euro signs are 162 septets: two', '€'.repeat(81), 162, 2, 'GSM-7'],
    ['brackets and braces are extension characters', 'Pay [now] ~ ^ |'.padEnd(155, 'x'), 160, 1, 'GSM-7'],
    ['GSM-7 accented letters stay GSM-7', 'äöüÄÖÜßé'.repeat(20), 160, 1, 'GSM-7'],
    ['70 non-GSM characters: one UCS-2 segment', 'ł'.repeat(70), 70, 1, 'UCS-2'],
    ['71: two UCS-2 parts of at most 67', 'ł'.repeat(71), 71, 2, 'UCS-2'],
    ['134 = 2 x 67', 'ł'.repeat(134), 134, 2, 'UCS-2'],
    ['one non-GSM character switches all of it', 'a'.repeat(100) + 'ł', 101, 2, 'UCS-2'],
  ];
  for (const [title, body, chars, segments, encoding] of cases) {
    it(title, async () => {
      const res = await create(a, { body });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ character_count: chars, estimated_segment_count: segments, encoding });
    });
  }

  it('counts the body as written (variables unsubstituted) and recomputes on PATCH', async () => {
    const t = (await create(a, { body: 'Hi {{ customer.name }}' })).body;
    // 22 characters, of which the four braces are extension characters (two septets each): 26
    expect(t).toMatchObject({ character_count: 26, estimated_segment_count: 1, encoding: 'GSM-7' });
    const patched = await req(a, 'PATCH', `/v2/sms-templates/${t.id}`, { body: 'ł'.repeat(71) });
    expect(patched.body).toMatchObject({ estimated_segment_count: 2, encoding: 'UCS-2', name: 'Reminder' });
  });
});

describe('Liquid, defaults, PATCH and isolation', () => {
  it('refuses Liquid errors and unknown variables with the line and column', async () => {
    const syntax = await create(a, { body: 'Hi\n{% if x %}' });
    expect(syntax.status).toBe(422);
    expect(JSON.stringify(syntax.body)).toMatch(/line 2, column 1/);
    const unknown = await create(a, { body: 'Hi {{ customer.iban }}' });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body)).toMatch(/line 1, column 7: unknown variable customer\.iban/);
  });

  it('keeps one default per organization, atomically', async () => {
    const org = await stack.onboard('SMS defaults');
    const t1 = (await create(org, { is_default: true })).body.id;
    const t2 = (await create(org, { is_default: true })).body.id;
    expect((await req(org, 'GET', `/v2/sms-templates/${t1}`)).body.is_default).toBe(false);
    const both = await Promise.all([t1, t2].map((id) => req(org, 'PATCH', `/v2/sms-templates/${id}`, { is_default: true })));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const n = await stack.sql('SELECT count(*)::int AS n FROM admin.sms_templates WHERE organization_id = $1 AND is_default', [org.organizationId]);
    expect(n[0].n).toBe(1);
    await expect(stack.sql('UPDATE admin.sms_templates SET is_default = true WHERE organization_id = $1', [org.organizationId])).rejects.toThrow(/sms_templates_one_default/);
    // an unknown id does not clear the current default
    const current = (await req(org, 'GET', '/v2/sms-templates')).body.data.find((t: any) => t.is_default).id;
    expect((await req(org, 'PATCH', '/v2/sms-templates/00000000-0000-4000-8000-000000000000', { is_default: true })).status).toBe(404);
    expect((await req(org, 'GET', `/v2/sms-templates/${current}`)).body.is_default).toBe(true);
    // another organization's default is independent
    expect((await create(b, { is_default: true })).body.is_default).toBe(true);
    expect((await req(org, 'GET', `/v2/sms-templates/${current}`)).body.is_default).toBe(true);
  });

  it('PATCH changes only the fields sent; description null clears', async () => {
    const t = (await create(a, { description: 'first' })).body;
    const p = await req(a, 'PATCH', `/v2/sms-templates/${t.id}`, { name: 'Second' });
    expect(p.body).toMatchObject({ name: 'Second', body: t.body, description: 'first', is_default: false });
    expect((await req(a, 'PATCH', `/v2/sms-templates/${t.id}`, { description: null })).body.description).toBeNull();
    expect((await req(a, 'DELETE', `/v2/sms-templates/${t.id}`)).status).toBe(204);
    const gone = await req(a, 'GET', `/v2/sms-templates/${t.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.type).toBe('entity-not-found');
  });

  it("never shows or changes another organization's templates", async () => {
    const t = (await create(a, { name: 'Private' })).body.id;
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Stolen' }], ['DELETE']] as const) {
      expect((await req(b, method, `/v2/sms-templates/${t}`, body)).status).toBe(404);
    }
    expect((await req(b, 'GET', '/v2/sms-templates?page_size=200')).body.data.map((x: any) => x.id)).not.toContain(t);
    expect((await req(a, 'GET', `/v2/sms-templates/${t}`)).body.name).toBe('Private');
  });
});
