import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard();
  for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) {
    expect((await stack.request('POST', '/v2/business-units', { token: org.token, body: { name } })).status).toBe(200);
  }
});
afterAll(async () => stack?.close());

const names = (body: { data: { name: string }[] }) => body.data.map((u) => u.name);

describe('GET /v2/business-units pagination (spec row 19)', () => {
  it('pages 0-indexed with the envelope', async () => {
    const first = await stack.request('GET', '/v2/business-units?page=0&page_size=2', { token: org.token });
    expect(first.body).toMatchObject({ current_page: 0, total_records: 5, next_page: 1 });
    expect(names(first.body)).toEqual(['Alpha', 'Bravo']);
    const last = await stack.request('GET', '/v2/business-units?page=2&size=2', { token: org.token });
    expect(last.body).toMatchObject({ current_page: 2, total_records: 5, next_page: null });
    expect(names(last.body)).toEqual(['Echo']);
    const beyond = await stack.request('GET', '/v2/business-units?page=9&page_size=2', { token: org.token });
    expect(beyond.body).toEqual({ data: [], current_page: 9, total_records: 5, next_page: null });
    expect((await stack.request('GET', '/v2/business-units?page_size=500', { token: org.token })).status).toBe(200);
  });

  it.each([
    ['page=-1', ['query', 'page']],
    ['page_size=0', ['query', 'page_size']],
    ['page_size=501', ['query', 'page_size']],
    ['size=501', ['query', 'size']],
    ['page=first', ['query', 'page']],
  ])('refuses %s with 422 naming the parameter', async (qs, loc) => {
    const res = await stack.request('GET', `/v2/business-units?${qs}`, { token: org.token });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', status: 422, title: 'Request validation failed' });
    expect(res.body.errors).toEqual([{ loc, msg: expect.any(String), type: expect.any(String) }]);
  });

  it('validates bodies with loc arrays through the gateway, and writes nothing', async () => {
    const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email: 'not-an-email', name: '', role: 'owner', business_unit_ids: 'x' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { loc: unknown[] }) => e.loc)).toEqual(
      expect.arrayContaining([['body', 'email'], ['body', 'name'], ['body', 'role'], ['body', 'business_unit_ids']]),
    );
    expect(await stack.sql(`SELECT count(*)::int AS n FROM admin.users`)).toEqual([{ n: 1 }]);
  });
});
