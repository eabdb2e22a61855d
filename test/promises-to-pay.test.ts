/**
 * Promises to pay, end to end through the gateway: validation (422 at the field's loc, nothing
 * recorded), one open promise per invoice (409), cancel, business-unit scope and tenant isolation,
 * and the promise-to-pay workflow on the real admin and cash-app workers: kept by a payment approved
 * through the cash-application API (statement → payment → approve), kept by a ledger closing (the
 * invoice pushed again with status_open false), broken when its grace period ends uncovered; each
 * with its event in GET /v2/events.
 *
 * The stack runs with PROMISE_RECHECK_SECONDS=1, so an open promise's workflow checks its coverage
 * every second instead of daily (the same timer and activities as in production, only closer).
 *
 * Read-only SQL cross-check: the coverage a check measured (`covered_amount`, not in the API) shows
 * that a check saw the partial closing and left the promise open.
 *
 * SQL set-up, one state no endpoint can produce: a promise whose promised date lies days in the past
 * (time has to pass for that; the API refuses a date before today). The broken test records a promise
 * through the API, then moves its `promised_date` back ten days, so its grace period is over at the
 * workflow's next check.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { promiseToPayWorkflowId } from '@rp/workflows';

let stack: TestStack;
let temporal: TemporalHandle;
let orgA: Org;
let orgB: Org;
let north: string;
/** member of business unit North only */
let member: string;
const partner: Record<'acme' | 'beta' | 'south' | 'other', string> = {} as never;
/** invoice ids by document number (org A); `B-1` is org B's */
const inv: Record<string, string> = {};

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });

/** The calendar date `days` after today in the organizations' timezone (onboarded as Europe/Berlin). */
function berlinDate(days = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  const d = new Date(`${today}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

async function push(org: Org, customers: unknown[], invoices: unknown[]): Promise<string[]> {
  const c = await pushCustomers(stack, org.apiKey, customers);
  expect(c.body.results.every((r) => r.success), JSON.stringify(c.body)).toBe(true);
  const i = await pushInvoices(stack, org.apiKey, invoices);
  expect(i.body.results.every((r) => r.success), JSON.stringify(i.body)).toBe(true);
  return [...c.body.results.map((r) => r.service_id!), ...i.body.results.map((r) => r.service_id!)];
}

async function promise(token: string, body: Record<string, unknown>) {
  return req('POST', '/v2/promises-to-pay', token, { promised_date: berlinDate(1), ...body });
}

/** Polls the promise until it leaves `open` (its workflow judged it) or 30 s pass. */
async function settled(id: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await req('GET', `/v2/promises-to-pay/${id}`, orgA.token);
    expect(res.status).toBe(200);
    if (res.body.status !== 'open' || Date.now() > deadline) return res.body;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Waits until a check of the promise's workflow measured `amount` as covered (read-only SQL cross-check:
 * the API does not show the coverage of an open promise), so what follows sees that check's outcome.
 */
async function coverageMeasured(id: string, amount: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await stack.sql(`SELECT covered_amount::numeric = $2::numeric AS measured FROM admin.promises_to_pay WHERE id = $1`, [id, amount]);
    if (row?.measured) return;
    if (Date.now() > deadline) throw new Error(`promise ${id}: coverage ${amount} never measured`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function eventsOf(type: string, resourceId: string) {
  const res = await req('GET', `/v2/events?type=${type}&page_size=100`, orgA.token);
  expect(res.status).toBe(200);
  return (res.body.data as { data: { object: { id: string } } }[]).filter((e) => e.data.object.id === resourceId);
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'], env: { PROMISE_RECHECK_SECONDS: '1' } });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  orgA = await stack.onboard('Promises A');
  orgB = await stack.onboard('Promises B');
  north = (await req('POST', '/v2/business-units', orgA.token, { name: 'North' })).body.id;
  const south = (await req('POST', '/v2/business-units', orgA.token, { name: 'South' })).body.id;
  const created = await req('POST', '/v2/users', orgA.token, { email: 'north@promises.example', name: 'North member', role: 'member', business_unit_ids: [north], permissions: [] });
  expect(created.status).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  member = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;

  const inv1 = (n: string, code: string, amount: number, extra: Record<string, unknown> = {}) =>
    invoiceRecord({ document_number: n, reference: `INV-${n}`, customer_code: code, amount_in_document_currency: amount, ...extra });
  const ids = await push(
    orgA,
    [
      { ...customerRecord({ customer_code: 'ACME', name1: 'Acme Handels GmbH' }), business_unit_id: north },
      customerRecord({ customer_code: 'BETA', name1: 'Beta Logistics Ltd' }),
      { ...customerRecord({ customer_code: 'SOUTH', name1: 'Sued Handel GmbH' }), business_unit_id: south },
    ],
    [
      { ...inv1('7100001', 'ACME', 1000), business_unit_id: north },
      { ...inv1('7100002', 'ACME', 500), business_unit_id: north },
      { ...inv1('7100003', 'ACME', 300, { currency: 'USD' }), business_unit_id: north },
      { ...inv1('7100004', 'ACME', 80, { status_open: false, clearing_date: '2026-10-01' }), business_unit_id: north },
      inv1('7200001', 'BETA', 1200),
      inv1('7200002', 'BETA', 700),
      inv1('7200003', 'BETA', 900),
      inv1('7200004', 'BETA', 250),
      { ...inv1('7300001', 'SOUTH', 400), business_unit_id: south },
    ],
  );
  [partner.acme, partner.beta, partner.south] = ids.slice(0, 3) as [string, string, string];
  ['7100001', '7100002', '7100003', '7100004', '7200001', '7200002', '7200003', '7200004', '7300001'].forEach((n, i) => (inv[n] = ids[3 + i]!));
  const idsB = await push(orgB, [customerRecord({ customer_code: 'OTHER', name1: 'Other Org Customer' })], [inv1('B-1', 'OTHER', 100)]);
  partner.other = idsB[0]!;
  inv['B-1'] = idsB[1]!;
});

afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('recording a promise to pay', () => {
  it('refuses bad input with 422 at the field and records nothing', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ partner_id: randomUUID(), invoice_ids: [inv['7100001']], amount: '10.00' }, ['body', 'partner_id']],
      [{ partner_id: partner.other, invoice_ids: [inv['B-1']], amount: '10.00' }, ['body', 'partner_id']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7200001']], amount: '10.00' }, ['body', 'invoice_ids', 0]],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001'], inv['7100004']], amount: '10.00' }, ['body', 'invoice_ids', 1]],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001'], inv['7100001']], amount: '10.00' }, ['body', 'invoice_ids', 1]],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001'], inv['7100003']], amount: '10.00' }, ['body', 'invoice_ids']],
      [{ partner_id: partner.acme, invoice_ids: [], amount: '10.00' }, ['body', 'invoice_ids']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '10.001' }, ['body', 'amount']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '0' }, ['body', 'amount']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001'], inv['7100002']], amount: '1500.01' }, ['body', 'amount']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '10.00', promised_date: berlinDate(-2) }, ['body', 'promised_date']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '10.00', promised_date: berlinDate(400) }, ['body', 'promised_date']],
      [{ partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '10.00', note: 'x'.repeat(2001) }, ['body', 'note']],
    ];
    for (const [body, loc] of cases) {
      const res = await promise(orgA.token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
      expect(res.body.errors.map((e: { loc: unknown }) => e.loc), JSON.stringify(res.body)).toContainEqual(loc);
    }
    const list = await req('GET', '/v2/promises-to-pay', orgA.token);
    expect(list.body.total_records).toBe(0);
  });

  it('records a promise on open invoices of one customer, answers it as the API shows it, and records promise_to_pay.created', async () => {
    const res = await promise(orgA.token, { partner_id: partner.acme, invoice_ids: [inv['7100001'], inv['7100002']], amount: 1500, note: 'Call on Friday' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      object: 'promise_to_pay',
      id: expect.any(String),
      partner_id: partner.acme,
      invoice_ids: [inv['7100001'], inv['7100002']],
      amount: '1500.00',
      currency: 'EUR',
      promised_date: berlinDate(1),
      status: 'open',
      note: 'Call on Friday',
      created_by: orgA.userId,
      // recorded through the API: no inbox message is its source
      source: null,
      created_at: expect.stringMatching(/Z$/),
      modified_at: expect.stringMatching(/Z$/),
    });
    expect((await req('GET', `/v2/promises-to-pay/${res.body.id}`, orgA.token)).body).toEqual(res.body);
    // the database holds the amount to the open total stored at creation, too (admin migration 015)
    await expect(stack.sql(`UPDATE admin.promises_to_pay SET amount = 1500.01 WHERE id = $1`, [res.body.id])).rejects.toThrow(/promises_to_pay_amount_within_open/);
    const events = await eventsOf('promise_to_pay.created', res.body.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.object).toEqual(res.body);

    // one open promise per invoice
    const again = await promise(orgA.token, { partner_id: partner.acme, invoice_ids: [inv['7100002']], amount: '10.00' });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('conflict');

    // cancel: only while open; the invoices are free for a new promise afterwards
    const cancelled = await req('POST', `/v2/promises-to-pay/${res.body.id}/cancel`, orgA.token);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: res.body.id, status: 'cancelled' });
    expect((await req('POST', `/v2/promises-to-pay/${res.body.id}/cancel`, orgA.token)).status).toBe(409);
    const handle = temporal.client.workflow.getHandle(promiseToPayWorkflowId(res.body.id));
    // the workflow ends: by the cancellation request, or by its own check seeing the promise cancelled first
    const ended = await handle.result().then((r) => r, () => 'CANCELLED');
    expect(ended === 'cancelled' ? 'COMPLETED' : 'CANCELLED').toBe((await handle.describe()).status.name);
    const fresh = await promise(orgA.token, { partner_id: partner.acme, invoice_ids: [inv['7100002']], amount: '10.00' });
    expect(fresh.status).toBe(200);

    const listed = await req('GET', `/v2/promises-to-pay?partner_id=${partner.acme}&status=cancelled`, orgA.token);
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([res.body.id]);
    const open = await req('GET', `/v2/promises-to-pay?partner_id=${partner.acme}&status=open`, orgA.token);
    expect(open.body.data.map((p: { id: string }) => p.id)).toEqual([fresh.body.id]);
  });
});

describe('scope', () => {
  it("keeps other organizations' and other business units' promises out of sight", async () => {
    const south = await promise(orgA.token, { partner_id: partner.south, invoice_ids: [inv['7300001']], amount: '100.00' });
    expect(south.status).toBe(200);
    // a member of North: South's customer is not a reference they may use, its promise not one they see
    const refused = await promise(member, { partner_id: partner.south, invoice_ids: [inv['7300001']], amount: '1.00' });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].loc).toEqual(['body', 'partner_id']);
    expect((await req('GET', `/v2/promises-to-pay/${south.body.id}`, member)).status).toBe(404);
    expect((await req('POST', `/v2/promises-to-pay/${south.body.id}/cancel`, member)).status).toBe(404);
    const memberList = await req('GET', '/v2/promises-to-pay?page_size=500', member);
    expect(memberList.body.data.map((p: { partner_id: string }) => p.partner_id)).not.toContain(partner.south);
    // the member may record and cancel promises of North's customers
    const mine = await promise(member, { partner_id: partner.acme, invoice_ids: [inv['7100001']], amount: '5.00' });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect((await req('POST', `/v2/promises-to-pay/${mine.body.id}/cancel`, member)).body.status).toBe('cancelled');
    // another organization sees nothing of it
    expect((await req('GET', `/v2/promises-to-pay/${south.body.id}`, orgB.token)).status).toBe(404);
    expect((await req('POST', `/v2/promises-to-pay/${south.body.id}/cancel`, orgB.token)).status).toBe(404);
    expect((await req('GET', '/v2/promises-to-pay', orgB.token)).body.total_records).toBe(0);
    expect((await req('GET', `/v2/promises-to-pay/${south.body.id}`, orgA.token)).body.status).toBe('open');
  });
});

describe('the promise-to-pay workflow', () => {
  it('marks a promise kept once a payment approved through cash application covers it, and records promise_to_pay.kept', async () => {
    const p = await promise(orgA.token, { partner_id: partner.beta, invoice_ids: [inv['7200001']], amount: '400.00' });
    expect(p.status).toBe(200);
    const upload = await req('POST', '/v2/bank-statements', orgA.token, {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount: '400.00', booking_date: berlinDate(0), value_date: berlinDate(0), counterparty_name: 'Beta Logistics Ltd', remittance_information: 'Rechnung 7200001 Teilzahlung' }],
    });
    expect(upload.status).toBe(200);
    const statement = await waitForStatement(stack, orgA.token, upload.body.id);
    const txId = statement.transactions[0].id as string;
    const allocations = [{ invoice_id: inv['7200001'], amount_paid: '400.00' }];
    const found = (await req('GET', `/v2/payments?bank_transaction_id=${txId}`, orgA.token)).body.data[0];
    const payment = found
      ? await req('PATCH', `/v2/payments/${found.id}`, orgA.token, { allocations, partner_id: partner.beta })
      : await req('POST', '/v2/payments', orgA.token, { bank_transaction_id: txId, allocations, partner_id: partner.beta });
    expect(payment.status, JSON.stringify(payment.body)).toBe(200);
    // not covered while the payment is only proposed
    await new Promise((r) => setTimeout(r, 2500));
    expect((await req('GET', `/v2/promises-to-pay/${p.body.id}`, orgA.token)).body.status).toBe('open');
    const approved = await req('POST', `/v2/payments/${payment.body.id}/approve`, orgA.token);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const after = await settled(p.body.id);
    expect(after.status).toBe('kept');
    const handle = temporal.client.workflow.getHandle(promiseToPayWorkflowId(p.body.id));
    expect(await handle.result()).toBe('kept');
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'promise-to-pay-kept.json');
    const events = await eventsOf('promise_to_pay.kept', p.body.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.object).toMatchObject({ id: p.body.id, status: 'kept' });
    // a settled promise cannot be cancelled
    expect((await req('POST', `/v2/promises-to-pay/${p.body.id}/cancel`, orgA.token)).status).toBe(409);
  });

  it('marks a promise kept when the ERP closes its invoices (ledger push with status_open false)', async () => {
    const p = await promise(orgA.token, { partner_id: partner.beta, invoice_ids: [inv['7200002'], inv['7200004']], amount: '800.00' });
    expect(p.status).toBe(200);
    // one invoice closed covers 700 of 800: still open
    const first = await pushInvoices(stack, orgA.apiKey, [invoiceRecord({ document_number: '7200002', reference: 'INV-7200002', customer_code: 'BETA', amount_in_document_currency: 700, status_open: false, clearing_date: berlinDate(0) })]);
    expect(first.body.results[0]!.success).toBe(true);
    await coverageMeasured(p.body.id, '700');
    expect((await req('GET', `/v2/promises-to-pay/${p.body.id}`, orgA.token)).body.status).toBe('open');
    // the second reduced by 100 (250 → 150 open): 800 covered
    const second = await pushInvoices(stack, orgA.apiKey, [invoiceRecord({ document_number: '7200004', reference: 'INV-7200004', customer_code: 'BETA', amount_in_document_currency: 250, amount_open: 150 })]);
    expect(second.body.results[0]!.success, JSON.stringify(second.body)).toBe(true);
    expect((await settled(p.body.id)).status).toBe('kept');
    expect(await eventsOf('promise_to_pay.kept', p.body.id)).toHaveLength(1);
  });

  it('breaks a promise whose grace period ended uncovered, records promise_to_pay.broken, and frees its invoices', async () => {
    const p = await promise(orgA.token, { partner_id: partner.beta, invoice_ids: [inv['7200003']], amount: '900.00' });
    expect(p.status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await req('GET', `/v2/promises-to-pay/${p.body.id}`, orgA.token)).body.status).toBe('open');
    // SQL set-up (see the header): the promised date passed ten days ago
    await stack.sql(`UPDATE admin.promises_to_pay SET promised_date = promised_date - 11 WHERE id = $1`, [p.body.id]);
    const after = await settled(p.body.id);
    expect(after.status).toBe('broken');
    const handle = temporal.client.workflow.getHandle(promiseToPayWorkflowId(p.body.id));
    expect(await handle.result()).toBe('broken');
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'promise-to-pay-broken.json');
    const events = await eventsOf('promise_to_pay.broken', p.body.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.object).toMatchObject({ id: p.body.id, status: 'broken' });
    expect(await eventsOf('promise_to_pay.kept', p.body.id)).toHaveLength(0);
    const next = await promise(orgA.token, { partner_id: partner.beta, invoice_ids: [inv['7200003']], amount: '900.00' });
    expect(next.status).toBe(200);
  });
});
