/**
 * A customer's timeline, GET /v2/partners/{partner_id}/activity, through the gateway (which routes
 * that exact path to admin although /v2/partners belongs to integrations): cash-app's part (a
 * payment approved and its receipt emailed) merged with admin's (collection emails and texts, tasks,
 * promises to pay, disputes), newest first, paginated, filtered by type; tenant isolation and
 * business units.
 *
 * Reached through the API: business units, the member, customers and invoices (middleware push),
 * a promise to pay and its cancellation, a dispute and its resolution, the bank statement, its
 * matched payment, the payment's approval and its receipt (sent by the payment-receipt workflow
 * through MailDev).
 * SQL set-up: collection runs, actions, messages and tasks are inserted as the collections engine
 * writes them (migration 012's tables; the engine is not part of this branch, so no call produces
 * them here), and one broken promise to pay as its workflow records it (broken needs its promised
 * date plus the grace days to pass, which a test cannot wait for).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFor } from '@rp/api-gateway';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;
let member: string;
let north: string;
let south: string;
const cust = {} as Record<'north' | 'south' | 'none', string>;
let paymentId: string;
let receiptId: string;
/** admin-side rows of the customer without a unit */
const row = {} as Record<'email' | 'sms' | 'task' | 'promise' | 'promiseJpy' | 'dispute', string>;
let promisedDate: string;

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });
const activity = (partnerId: string, token: string, query = '') => req('GET', `/v2/partners/${partnerId}/activity${query}`, token);

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A collection action of a run (the engine's rows) for the customer; returns the action id. */
async function action(partnerId: string, channel: 'email' | 'sms' | 'task', at: string): Promise<string> {
  const [run] = await stack.sql(
    `INSERT INTO admin.collection_runs (id, organization_id, as_of_date, dry_run, trigger, status, completed_at) VALUES ($1, $2, $3::date, false, 'schedule', 'completed', $3) RETURNING id`,
    [randomUUID(), org.organizationId, at],
  );
  const [a] = await stack.sql(
    `INSERT INTO admin.collection_actions (id, organization_id, run_id, partner_id, step_index, offset_days, channel, invoice_ids, status, sent_at, created_at)
     VALUES ($1, $2, $3, $4, 0, 7, $5, ARRAY[gen_random_uuid()], 'sent', $6, $6) RETURNING id`,
    [randomUUID(), org.organizationId, run.id, partnerId, channel, at],
  );
  return a.id as string;
}

async function message(partnerId: string, m: { channel: 'email' | 'sms'; to: string; subject?: string; body: string; status: 'sending' | 'sent' | 'failed'; at: string }): Promise<string> {
  const actionId = await action(partnerId, m.channel, m.at);
  await stack.sql(
    `INSERT INTO admin.collection_messages (id, organization_id, action_id, partner_id, channel, to_address, from_address, subject, body, status, sent_at, created_at, modified_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'ar@org.example', $7, $8, $9, CASE WHEN $9 = 'sent' THEN $10::timestamptz END, $10, $10)`,
    [randomUUID(), org.organizationId, actionId, partnerId, m.channel, m.to, m.subject ?? null, m.body, m.status, m.at],
  );
  return actionId;
}

async function task(partnerId: string, title: string, at: string, doneAt?: string): Promise<string> {
  const [t] = await stack.sql(
    `INSERT INTO admin.collection_tasks (id, organization_id, partner_id, title, status, note, completed_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [randomUUID(), org.organizationId, partnerId, title, doneAt ? 'done' : 'open', doneAt ? 'Called, payment next week' : null, doneAt ?? null, at],
  );
  return t.id as string;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  org = await stack.onboard('Timeline Org');
  other = await stack.onboard('Other Timeline Org');
  const unit = async (name: string) => {
    const res = await req('POST', '/v2/business-units', org.token, { name });
    expect(res.status, res.text).toBe(200);
    return res.body.id as string;
  };
  north = await unit('North');
  south = await unit('South');
  const created = await req('POST', '/v2/users', org.token, { email: 'north@timeline.example', name: 'North member', role: 'member', business_unit_ids: [north], permissions: [] });
  expect(created.status, created.text).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  member = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;

  const pushed = await pushCustomers(stack, org.apiKey, [
    { ...customerRecord({ customer_code: 'TL-N', name1: 'Nord Handel GmbH', smtp_addr: 'ap@nord.example' }), business_unit_id: north },
    { ...customerRecord({ customer_code: 'TL-S', name1: 'Sued Handel GmbH', smtp_addr: 'ap@sued.example' }), business_unit_id: south },
    customerRecord({ customer_code: 'TL-U', name1: 'Ohne Einheit GmbH', smtp_addr: 'ap@ohne.example' }),
  ]);
  expect(pushed.body.results.every((r) => r.success), pushed.text).toBe(true);
  [cust.north, cust.south, cust.none] = pushed.body.results.map((r) => r.service_id!) as [string, string, string];
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '7100001', reference: 'INV-7100001', customer_code: 'TL-U', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '7100002', reference: 'INV-7100002', customer_code: 'TL-U', amount_in_document_currency: 595 }),
    invoiceRecord({ document_number: '7100003', reference: 'INV-7100003', customer_code: 'TL-U', amount_in_document_currency: 300 }),
    invoiceRecord({ document_number: '7100004', reference: 'INV-7100004', customer_code: 'TL-U', amount_in_document_currency: 50000, amount_in_local_currency: 310, currency: 'JPY' }),
  ]);
  expect(invoices.body.results.every((r) => r.success), invoices.text).toBe(true);
  const [, inv2, inv3, inv4] = invoices.body.results.map((r) => r.service_id!) as [string, string, string, string];

  // admin through its API: a promise to pay made and cancelled, a dispute opened and resolved
  const berlinToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  promisedDate = new Date(Date.parse(`${berlinToday}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
  const promise = await req('POST', '/v2/promises-to-pay', org.token, { partner_id: cust.none, invoice_ids: [inv3], amount: '300', promised_date: promisedDate });
  expect(promise.status, promise.text).toBe(200);
  row.promise = promise.body.id;
  const cancelled = await req('POST', `/v2/promises-to-pay/${row.promise}/cancel`, org.token);
  expect(cancelled.status, cancelled.text).toBe(200);
  const dispute = await req('POST', '/v2/disputes', org.token, { invoice_id: inv2, reason_code: 'not_received', amount: '95.50' });
  expect(dispute.status, dispute.text).toBe(200);
  row.dispute = dispute.body.id;
  const resolved = await req('POST', `/v2/disputes/${row.dispute}/resolve`, org.token, { status: 'resolved', resolution: 'Proof of delivery sent' });
  expect(resolved.status, resolved.text).toBe(200);

  // cash-app: a deposit matched to both invoices, approved, and its receipt emailed
  const st = await req('POST', '/v2/bank-statements', org.token, {
    account: 'DE44500105175407324931',
    currency: 'EUR',
    statement_number: `S-${randomUUID()}`,
    transactions: [
      {
        amount: '1785.00',
        booking_date: '2026-11-20',
        value_date: '2026-11-20',
        counterparty_name: 'Ohne Einheit GmbH',
        counterparty_account: null,
        remittance_information: 'RE INV-7100001 / INV-7100002',
        bank_reference: null,
      },
    ],
  });
  expect(st.status, st.text).toBe(200);
  const ready = await waitForStatement(stack, org.token, st.body.id as string);
  const txId = (ready.transactions as { id: string }[])[0]!.id;
  const payments = await req('GET', `/v2/payments?bank_transaction_id=${txId}`, org.token);
  expect(payments.body.data, payments.text).toHaveLength(1);
  paymentId = payments.body.data[0].id;
  expect(payments.body.data[0].partner_id).toBe(cust.none);
  const approved = await req('POST', `/v2/payments/${paymentId}/approve`, org.token);
  expect(approved.status, approved.text).toBe(200);
  const receipt = await req('POST', '/v2/cash-app/outreach/payment-receipt', org.token, { payment_id: paymentId });
  expect(receipt.status, receipt.text).toBe(200);
  receiptId = receipt.body.id;
  await until('the receipt to be sent', async () => (await req('GET', `/v2/cash-app/outreach/${receiptId}`, org.token)).body.status === 'sent');

  // admin: what the collections engine, tasks, promises and disputes write (see the header)
  row.email = await message(cust.none, { channel: 'email', to: 'ap@ohne.example', subject: 'Reminder: 2 invoices overdue', body: '<p>Please pay</p>', status: 'sent', at: '2026-11-02T08:00:00Z' });
  row.sms = await message(cust.none, { channel: 'sms', to: '+4930901820', body: `Invoice INV-7100001 is overdue. ${'Please pay. '.repeat(12)}`, status: 'sent', at: '2026-11-03T08:00:00Z' });
  await message(cust.none, { channel: 'email', to: 'ap@ohne.example', subject: 'Still sending', body: 'x', status: 'sending', at: '2026-11-04T08:00:00Z' });
  row.task = await task(cust.none, 'Call the customer', '2026-11-05T09:00:00Z', '2026-11-06T10:00:00Z');
  const [pj] = await stack.sql(
    `INSERT INTO admin.promises_to_pay (id, organization_id, partner_id, invoice_ids, amount, currency, promised_date, status, open_amounts_at_creation, covered_amount, resolved_at, created_at)
     VALUES ($1, $2, $3, ARRAY[$4]::uuid[], 50000, 'JPY', '2026-11-01', 'broken', jsonb_build_object($4::text, '50000'), 0, '2026-11-04T23:00:00Z', '2026-10-20T09:00:00Z') RETURNING id`,
    [randomUUID(), org.organizationId, cust.none, inv4],
  );
  row.promiseJpy = pj.id;
  await task(cust.north, 'Call Nord', '2026-11-05T09:00:00Z');
  await task(cust.south, 'Call Sued', '2026-11-05T09:00:00Z');
});

afterAll(async () => {
  await stack?.close();
});

describe('the gateway', () => {
  it('routes exactly /v2/partners/{id}/activity to admin; the rest of /v2/partners stays with integrations', () => {
    expect(serviceFor('/v2/partners/0b5e2f4e-1111-4222-8333-944445555666/activity')).toBe('admin');
    expect(serviceFor('/v2/partners/0b5e2f4e-1111-4222-8333-944445555666')).toBe('integrations');
    expect(serviceFor('/v2/partners')).toBe('integrations');
    expect(serviceFor('/v2/partners/x/activity/more')).toBe('integrations');
    expect(serviceFor('/v2/partners/x/y/activity')).toBe('integrations');
  });
});

describe('GET /v2/partners/{partner_id}/activity', () => {
  it('merges cash application and collections, newest first, amounts in each currency\'s minor units', async () => {
    const res = await activity(cust.none, org.token);
    expect(res.status, res.text).toBe(200);
    const items = res.body.data as { type: string; occurred_at: string; summary: string; ref: { object: string; id: string } }[];
    expect(res.body.total_records).toBe(items.length);
    const times = items.map((i) => i.occurred_at);
    expect([...times].sort().reverse()).toEqual(times);
    // what happened today through the API, newest first: the receipt after the payment's approval,
    // both after the dispute and the promise; then the November rows
    expect(items.slice(0, 6).map(({ type, summary, ref }) => ({ type, summary, ref }))).toEqual([
      { type: 'receipt', summary: 'Payment receipt for 1785.00 EUR emailed to ap@ohne.example', ref: { object: 'outreach_record', id: receiptId } },
      { type: 'payment_applied', summary: 'Payment of 1785.00 EUR applied to 2 invoices', ref: { object: 'payment', id: paymentId } },
      { type: 'dispute', summary: 'Dispute resolved (not received): Proof of delivery sent', ref: { object: 'dispute', id: row.dispute } },
      { type: 'dispute', summary: 'Dispute opened (not received) for 95.50 EUR', ref: { object: 'dispute', id: row.dispute } },
      { type: 'promise_to_pay', summary: `Promise to pay 300.00 EUR by ${promisedDate} cancelled`, ref: { object: 'promise_to_pay', id: row.promise } },
      { type: 'promise_to_pay', summary: `Promise to pay 300.00 EUR by ${promisedDate} for 1 invoice`, ref: { object: 'promise_to_pay', id: row.promise } },
    ]);
    expect(items.slice(6)).toEqual([
      { type: 'task', occurred_at: '2026-11-06T10:00:00.000Z', summary: 'Task done: Call the customer (Called, payment next week)', ref: { object: 'task', id: row.task } },
      { type: 'task', occurred_at: '2026-11-05T09:00:00.000Z', summary: 'Task created: Call the customer', ref: { object: 'task', id: row.task } },
      { type: 'promise_to_pay', occurred_at: '2026-11-04T23:00:00.000Z', summary: 'Promise to pay 50000 JPY by 2026-11-01 broken', ref: { object: 'promise_to_pay', id: row.promiseJpy } },
      {
        type: 'collection_sms',
        occurred_at: '2026-11-03T08:00:00.000Z',
        summary: `Text sent to +4930901820: "${`Invoice INV-7100001 is overdue. ${'Please pay. '.repeat(12)}`.slice(0, 100)}…"`,
        ref: { object: 'collection_action', id: row.sms },
      },
      { type: 'collection_email', occurred_at: '2026-11-02T08:00:00.000Z', summary: 'Email "Reminder: 2 invoices overdue" sent to ap@ohne.example', ref: { object: 'collection_action', id: row.email } },
      { type: 'promise_to_pay', occurred_at: '2026-10-20T09:00:00.000Z', summary: 'Promise to pay 50000 JPY by 2026-11-01 for 1 invoice', ref: { object: 'promise_to_pay', id: row.promiseJpy } },
    ]);
  });

  it('pages without overlap or gaps, and filters by type', async () => {
    const all = (await activity(cust.none, org.token)).body.data as unknown[];
    const pages: unknown[] = [];
    for (let page = 0; ; page++) {
      const res = await activity(cust.none, org.token, `?page=${page}&page_size=3`);
      expect(res.status).toBe(200);
      expect(res.body.total_records).toBe(all.length);
      pages.push(...(res.body.data as unknown[]));
      if (res.body.next_page === null) break;
      expect(res.body.next_page).toBe(page + 1);
    }
    expect(pages).toEqual(all);

    const promises = await activity(cust.none, org.token, '?type=promise_to_pay');
    expect((promises.body.data as { type: string }[]).map((i) => i.type)).toEqual(['promise_to_pay', 'promise_to_pay', 'promise_to_pay', 'promise_to_pay']);
    expect(promises.body.total_records).toBe(4);
    const receipts = await activity(cust.none, org.token, '?type=receipt');
    expect(receipts.body.data).toHaveLength(1);
    expect(receipts.body.data[0].ref.id).toBe(receiptId);
    const sms = await activity(cust.none, org.token, '?type=collection_sms');
    expect((sms.body.data as { ref: { id: string } }[]).map((i) => i.ref.id)).toEqual([row.sms]);
    const replies = await activity(cust.none, org.token, '?type=reply');
    expect(replies.body).toMatchObject({ data: [], total_records: 0, next_page: null });
  });

  it('refuses bad input with 422 in the v2 shape', async () => {
    const badId = await activity('not-a-uuid', org.token);
    expect(badId.status).toBe(422);
    expect(badId.body).toMatchObject({ status: 422, errors: [expect.objectContaining({ loc: expect.arrayContaining(['partner_id']) })] });
    const badType = await activity(cust.none, org.token, '?type=letter');
    expect(badType.status).toBe(422);
    expect(badType.body.errors[0].loc).toContain('type');
    expect((await activity(cust.none, org.token, '?page_size=201')).status).toBe(422);
  });

  it('answers 404 for an unknown customer and for another organization\'s', async () => {
    expect((await activity(randomUUID(), org.token)).status).toBe(404);
    const foreign = await activity(cust.none, other.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ status: 404 });
    expect(JSON.stringify(foreign.body)).not.toContain('Ohne');
  });

  it('a member sees the timelines of customers in their units or in none; others are 404 like a random id', async () => {
    const own = await activity(cust.north, member);
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toEqual([expect.objectContaining({ type: 'task', summary: 'Task created: Call Nord' })]);
    const unassigned = await activity(cust.none, member);
    expect(unassigned.status).toBe(200);
    expect(unassigned.body.total_records).toBe((await activity(cust.none, org.token)).body.total_records);
    const outside = await activity(cust.south, member);
    const random = await activity(randomUUID(), member);
    expect(outside.status).toBe(404);
    expect({ type: outside.body.type, title: outside.body.title }).toEqual({ type: random.body.type, title: random.body.title });
    // the admin sees South's
    expect((await activity(cust.south, org.token)).body.data).toEqual([expect.objectContaining({ summary: 'Task created: Call Sued' })]);
  });
});
