/**
 * Disputes, end to end through the gateway: validation (422 at the field's loc, nothing recorded),
 * one open dispute per invoice (409, also when requests race: never a 500), resolve and reject (409
 * once closed), the list's filters, events in GET /v2/events, business-unit scope and tenant
 * isolation. Everything is set up through the API (ledger by the middleware push).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
/** member of business unit North only */
let member: string;
const partner: Record<'acme' | 'south', string> = {} as never;
const inv: Record<string, string> = {};

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });
const ids = (res: { body: any }) => (res.body.data as { id: string }[]).map((d) => d.id).sort();

async function push(org: Org, customers: unknown[], invoices: unknown[]): Promise<string[]> {
  const c = await pushCustomers(stack, org.apiKey, customers);
  expect(c.body.results.every((r) => r.success), JSON.stringify(c.body)).toBe(true);
  const i = await pushInvoices(stack, org.apiKey, invoices);
  expect(i.body.results.every((r) => r.success), JSON.stringify(i.body)).toBe(true);
  return [...c.body.results.map((r) => r.service_id!), ...i.body.results.map((r) => r.service_id!)];
}

async function eventsOf(type: string, resourceId: string) {
  const res = await req('GET', `/v2/events?type=${type}&page_size=100`, orgA.token);
  expect(res.status).toBe(200);
  return (res.body.data as { data: { object: { id: string } } }[]).filter((e) => e.data.object.id === resourceId);
}

beforeAll(async () => {
  stack = await startStack();
  orgA = await stack.onboard('Disputes A');
  orgB = await stack.onboard('Disputes B');
  const north = (await req('POST', '/v2/business-units', orgA.token, { name: 'North' })).body.id;
  const south = (await req('POST', '/v2/business-units', orgA.token, { name: 'South' })).body.id;
  const created = await req('POST', '/v2/users', orgA.token, { email: 'north@disputes.example', name: 'North member', role: 'member', business_unit_ids: [north], permissions: [] });
  const { runCli } = await import('@rp/admin/cli');
  member = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;
  const one = (n: string, code: string, amount: number, extra: Record<string, unknown> = {}) =>
    invoiceRecord({ document_number: n, reference: `INV-${n}`, customer_code: code, amount_in_document_currency: amount, ...extra });
  const got = await push(
    orgA,
    [{ ...customerRecord({ customer_code: 'ACME', name1: 'Acme Handels GmbH' }), business_unit_id: north }, { ...customerRecord({ customer_code: 'SOUTH', name1: 'Sued Handel GmbH' }), business_unit_id: south }],
    [
      { ...one('8100001', 'ACME', 1000), business_unit_id: north },
      { ...one('8100002', 'ACME', 1190, { currency: 'JPY', exchange_rate: '0.00600' }), business_unit_id: north },
      { ...one('8100003', 'ACME', 80, { status_open: false, clearing_date: '2026-10-01' }), business_unit_id: north },
      { ...one('8100004', 'ACME', 50, { debit_credit_indicator: 'H' }), business_unit_id: north },
      { ...one('8100005', 'ACME', 600), business_unit_id: north },
      { ...one('8300001', 'SOUTH', 400), business_unit_id: south },
    ],
  );
  [partner.acme, partner.south] = got as [string, string];
  ['8100001', '8100002', '8100003', '8100004', '8100005', '8300001'].forEach((n, i) => (inv[n] = got[2 + i]!));
  const b = await push(orgB, [customerRecord({ customer_code: 'OTHER', name1: 'Other Org' })], [one('B-1', 'OTHER', 100)]);
  inv['B-1'] = b[1]!;
});

afterAll(async () => {
  await stack?.close();
});

describe('opening a dispute', () => {
  it('refuses bad input with 422 at the field and records nothing', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ invoice_id: randomUUID(), reason_code: 'pricing' }, ['body', 'invoice_id']],
      [{ invoice_id: inv['B-1'], reason_code: 'pricing' }, ['body', 'invoice_id']],
      [{ invoice_id: inv['8100004'], reason_code: 'pricing' }, ['body', 'invoice_id']],
      [{ invoice_id: inv['8100001'], reason_code: 'too_expensive' }, ['body', 'reason_code']],
      [{ invoice_id: inv['8100001'], reason_code: 'pricing', amount: '1000.01' }, ['body', 'amount']],
      [{ invoice_id: inv['8100001'], reason_code: 'pricing', amount: '10.005' }, ['body', 'amount']],
      [{ invoice_id: inv['8100002'], reason_code: 'pricing', amount: '10.5' }, ['body', 'amount']],
      [{ invoice_id: inv['8100001'], reason_code: 'pricing', amount: '0.00' }, ['body', 'amount']],
      [{ invoice_id: inv['8100001'], reason_code: 'pricing', note: 'n'.repeat(2001) }, ['body', 'note']],
    ];
    for (const [body, loc] of cases) {
      const res = await req('POST', '/v2/disputes', orgA.token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
      expect(res.body.errors.map((e: { loc: unknown }) => e.loc), JSON.stringify(res.body)).toContainEqual(loc);
    }
    expect((await req('GET', '/v2/disputes', orgA.token)).body.total_records).toBe(0);
  });

  it('opens one dispute per invoice (409 for a second, and for all but one of racing requests) and records dispute.created', async () => {
    const res = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100001'], reason_code: 'damaged', amount: 250, note: 'Pallet 3 broken' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      object: 'dispute',
      id: expect.any(String),
      invoice_id: inv['8100001'],
      partner_id: partner.acme,
      reason_code: 'damaged',
      amount: '250.00',
      currency: 'EUR',
      status: 'open',
      resolution: null,
      note: 'Pallet 3 broken',
      // opened through the API: no inbox message is its source
      source: null,
      created_at: expect.stringMatching(/Z$/),
      modified_at: expect.stringMatching(/Z$/),
    });
    expect((await req('GET', `/v2/disputes/${res.body.id}`, orgA.token)).body).toEqual(res.body);
    const events = await eventsOf('dispute.created', res.body.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.object).toEqual(res.body);
    const second = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100001'], reason_code: 'pricing' });
    expect(second.status).toBe(409);
    expect(second.body.type).toBe('conflict');

    const racing = await Promise.all(Array.from({ length: 6 }, () => req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100005'], reason_code: 'quantity' })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const listed = await req('GET', `/v2/disputes?invoice_id=${inv['8100005']}`, orgA.token);
    expect(listed.body.total_records).toBe(1);

    // a closed invoice may be disputed; an amount in JPY has no decimals
    const closed = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100003'], reason_code: 'quality' });
    expect(closed.status).toBe(200);
    const jpy = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100002'], reason_code: 'tax', amount: '190' });
    expect(jpy.body).toMatchObject({ amount: '190', currency: 'JPY' });
  });
});

describe('resolving and listing', () => {
  it('resolves or rejects an open dispute once, records dispute.resolved, and frees the invoice for a new dispute', async () => {
    const open = (await req('GET', `/v2/disputes?invoice_id=${inv['8100001']}&status=open`, orgA.token)).body.data[0];
    expect((await req('POST', `/v2/disputes/${open.id}/resolve`, orgA.token, { status: 'open', resolution: 'x' })).status).toBe(422);
    expect((await req('POST', `/v2/disputes/${open.id}/resolve`, orgA.token, { status: 'resolved' })).status).toBe(422);
    const resolved = await req('POST', `/v2/disputes/${open.id}/resolve`, orgA.token, { status: 'resolved', resolution: 'Credit note 250 issued' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: open.id, status: 'resolved', resolution: 'Credit note 250 issued' });
    expect((await req('POST', `/v2/disputes/${open.id}/resolve`, orgA.token, { status: 'rejected', resolution: 'again' })).status).toBe(409);
    const events = await eventsOf('dispute.resolved', open.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.object).toMatchObject({ status: 'resolved' });

    const next = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8100001'], reason_code: 'pricing' });
    expect(next.status).toBe(200);
    const rejected = await req('POST', `/v2/disputes/${next.body.id}/resolve`, orgA.token, { status: 'rejected', resolution: 'Prices as agreed in contract' });
    expect(rejected.body.status).toBe('rejected');
    expect((await eventsOf('dispute.resolved', next.body.id))[0]!.data.object).toMatchObject({ status: 'rejected' });
  });

  it('filters by partner, invoice, status and reason code', async () => {
    const all = await req('GET', '/v2/disputes?page_size=100', orgA.token);
    expect(all.body.total_records).toBe(5);
    const byReason = await req('GET', '/v2/disputes?reason_code=quantity', orgA.token);
    expect(byReason.body.data.map((d: { invoice_id: string }) => d.invoice_id)).toEqual([inv['8100005']]);
    const open = await req('GET', `/v2/disputes?partner_id=${partner.acme}&status=open`, orgA.token);
    expect(open.body.data.map((d: { invoice_id: string }) => d.invoice_id).sort()).toEqual([inv['8100002'], inv['8100003'], inv['8100005']].sort());
    expect((await req('GET', '/v2/disputes?status=closed', orgA.token)).status).toBe(422);
  });
});

describe('scope', () => {
  it("keeps other organizations' and other business units' disputes out of sight; members act on their units' customers", async () => {
    const south = await req('POST', '/v2/disputes', orgA.token, { invoice_id: inv['8300001'], reason_code: 'not_received' });
    expect(south.status).toBe(200);
    const refused = await req('POST', '/v2/disputes', member, { invoice_id: inv['8300001'], reason_code: 'other' });
    expect(refused.status).toBe(422);
    expect((await req('GET', `/v2/disputes/${south.body.id}`, member)).status).toBe(404);
    expect((await req('POST', `/v2/disputes/${south.body.id}/resolve`, member, { status: 'rejected', resolution: 'no' })).status).toBe(404);
    expect(ids(await req('GET', '/v2/disputes?page_size=100', member))).not.toContain(south.body.id);

    const mine = (await req('GET', `/v2/disputes?invoice_id=${inv['8100005']}`, member)).body.data[0];
    expect(mine).toBeDefined();
    const done = await req('POST', `/v2/disputes/${mine.id}/resolve`, member, { status: 'resolved', resolution: 'Short delivery credited' });
    expect(done.status).toBe(200);
    expect((await req('POST', '/v2/disputes', member, { invoice_id: inv['8100005'], reason_code: 'other' })).status).toBe(200);

    expect((await req('GET', `/v2/disputes/${south.body.id}`, orgB.token)).status).toBe(404);
    expect((await req('POST', `/v2/disputes/${south.body.id}/resolve`, orgB.token, { status: 'resolved', resolution: 'x' })).status).toBe(404);
    expect((await req('GET', '/v2/disputes', orgB.token)).body.total_records).toBe(0);
    expect((await req('GET', `/v2/disputes/${south.body.id}`, orgA.token)).body.status).toBe('open');
  });
});
