import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack, type Org } from './support/stack.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard();
});
afterAll(async () => stack?.close());

describe('smoke', () => {
  it('lists business units through the gateway', async () => {
    const res = await stack.request('GET', '/v2/business-units', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], current_page: 0, total_records: 0, next_page: null });
  });
});
