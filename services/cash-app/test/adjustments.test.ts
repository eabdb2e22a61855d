import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack, type Org } from '../../../test/support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const EXPECTED = [
  { name: 'Bank fee', automated: true, number: '6850', account: 'Bank charges', classification: 'expense' },
  { name: 'Early-payment discount', automated: false, number: '4900', account: 'Sales discounts', classification: 'expense' },
  { name: 'FX difference', automated: true, number: '7900', account: 'Exchange rate differences', classification: 'expense' },
  { name: 'Short-pay write-off', automated: false, number: '6900', account: 'Bad debt write-offs', classification: 'expense' },
];

beforeAll(async () => {
  stack = await startStack();
  orgA = await stack.onboard('Org A');
  orgB = await stack.onboard('Org B');
});
afterAll(async () => stack?.close());

describe('adjustments', () => {
  it('lists the four system adjustments of a new organization', async () => {
    const res = await stack.request('GET', '/v2/adjustments', { token: orgA.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ current_page: 0, total_records: 4, next_page: null });
    expect(res.body.data).toHaveLength(4);
    expect(
      res.body.data.map((a: any) => ({
        name: a.name,
        automated: a.automated,
        number: a.ledger_account.number,
        account: a.ledger_account.name,
        classification: a.ledger_account.classification,
      })),
    ).toEqual(EXPECTED);
    for (const a of res.body.data) {
      expect(a).toMatchObject({ object: 'adjustment', is_system: true, is_active: true, can_delete: false });
      expect(a.ledger_account_id).toBe(a.ledger_account.id);
      expect(a.ledger_account.object).toBe('ledger_account');
      expect(a.created_at).toMatch(ISO);
      expect(a.ledger_account.modified_at).toMatch(ISO);
      expect(typeof a.description).toBe('string');
    }
  });

  it('creates the system adjustments once, even under concurrent first access', async () => {
    const org = await stack.onboard();
    const results = await Promise.all(Array.from({ length: 6 }, () => stack.request('GET', '/v2/adjustments', { token: org.token })));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    for (const r of results) expect(r.body.total_records).toBe(4);
    const again = await stack.request('GET', '/v2/adjustments', { token: org.token });
    expect(again.body.data.map((a: any) => a.id)).toEqual(results[0].body.data.map((a: any) => a.id));
    const [{ adjustments, accounts }] = await stack.sql(
      `SELECT (SELECT count(*) FROM cash_app.adjustments WHERE organization_id = $1)::int AS adjustments,
              (SELECT count(*) FROM cash_app.ledger_accounts WHERE organization_id = $1)::int AS accounts`,
      [org.organizationId],
    );
    expect({ adjustments, accounts }).toEqual({ adjustments: 4, accounts: 4 });
  });

  it('reuses an existing ledger account with the same number', async () => {
    const org = await stack.onboard();
    const [existing] = await stack.sql(
      `INSERT INTO cash_app.ledger_accounts (id, organization_id, name, number, classification)
       VALUES (gen_random_uuid(), $1, 'Bank and card charges', '6850', 'expense') RETURNING id`,
      [org.organizationId],
    );
    const res = await stack.request('GET', '/v2/adjustments', { token: org.token });
    const bankFee = res.body.data.find((a: any) => a.name === 'Bank fee');
    expect(bankFee.ledger_account).toMatchObject({ id: existing.id, name: 'Bank and card charges', number: '6850' });
    const [{ n }] = await stack.sql('SELECT count(*)::int AS n FROM cash_app.ledger_accounts WHERE organization_id = $1', [org.organizationId]);
    expect(n).toBe(4);
  });

  it('gets an adjustment by id in the Adjustment shape', async () => {
    const list = await stack.request('GET', '/v2/adjustments', { token: orgA.token });
    const listed = list.body.data[0];
    const res = await stack.request('GET', `/v2/adjustments/${listed.id}`, { token: orgA.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(listed);
    expect(Object.keys(res.body).sort()).toEqual(
      ['object', 'id', 'name', 'description', 'is_active', 'is_system', 'automated', 'ledger_account_id', 'ledger_account', 'can_delete', 'created_at', 'modified_at'].sort(),
    );
    expect(Object.keys(res.body.ledger_account).sort()).toEqual(['classification', 'created_at', 'id', 'modified_at', 'name', 'number', 'object']);
  });

  it('answers 404 for another organization\'s adjustment, an unknown id and a non-UUID id', async () => {
    const list = await stack.request('GET', '/v2/adjustments', { token: orgA.token });
    const idOfA = list.body.data[0].id;
    const other = await stack.request('GET', `/v2/adjustments/${idOfA}`, { token: orgB.token });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ type: 'entity-not-found', status: 404, title: 'Entity not found' });

    const unknown = await stack.request('GET', '/v2/adjustments/0190a8b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b', { token: orgA.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.type).toBe('entity-not-found');

    const notUuid = await stack.request('GET', '/v2/adjustments/not-a-uuid', { token: orgA.token });
    expect(notUuid.status).toBe(422); // ids are validated as ids
    expect(notUuid.body).toMatchObject({ type: 'request-validation', errors: [{ loc: ['path', 'adjustment_id'], msg: 'must be a UUID' }] });
  });

  it('paginates and validates the page size', async () => {
    const first = await stack.request('GET', '/v2/adjustments?page_size=3', { token: orgA.token });
    expect(first.body).toMatchObject({ current_page: 0, total_records: 4, next_page: 1 });
    expect(first.body.data).toHaveLength(3);
    const second = await stack.request('GET', '/v2/adjustments?page=1&page_size=3', { token: orgA.token });
    expect(second.body).toMatchObject({ current_page: 1, total_records: 4, next_page: null });
    expect(second.body.data.map((a: any) => a.name)).toEqual(['Short-pay write-off']);

    expect((await stack.request('GET', '/v2/adjustments?page_size=500', { token: orgA.token })).status).toBe(200);
    const tooBig = await stack.request('GET', '/v2/adjustments?page_size=501', { token: orgA.token });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.type).toBe('request-validation');
    expect(tooBig.body.errors[0].loc).toEqual(['query', 'page_size']);
  });

  it('filters by is_active', async () => {
    const org = await stack.onboard();
    await stack.request('GET', '/v2/adjustments', { token: org.token });
    await stack.sql(`UPDATE cash_app.adjustments SET is_active = false WHERE organization_id = $1 AND system_key = 'fx_difference'`, [org.organizationId]);

    const inactive = await stack.request('GET', '/v2/adjustments?is_active=false', { token: org.token });
    expect(inactive.status).toBe(200);
    expect(inactive.body.total_records).toBe(1);
    expect(inactive.body.data.map((a: any) => [a.name, a.is_active, a.can_delete])).toEqual([['FX difference', false, false]]);

    const active = await stack.request('GET', '/v2/adjustments?is_active=true', { token: org.token });
    expect(active.body.total_records).toBe(3);
    expect(active.body.data.every((a: any) => a.is_active)).toBe(true);

    const bad = await stack.request('GET', '/v2/adjustments?is_active=maybe', { token: org.token });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['query', 'is_active']);
  });
});
