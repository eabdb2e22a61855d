/**
 * A customer's timeline, GET /v2/partners/{partner_id}/activity, through the gateway (which routes
 * that exact path to admin although /v2/partners belongs to integrations): cash-app's part (a
 * payment approved and its receipt emailed) merged with admin's (collection emails and texts, tasks,
 * promises to pay, disputes), newest first, paginated, filtered by type; tenant isolation and
 * business units.
 *
 * Reached through the API: business units, the member, the organization's timezone, customers and
 * invoices (middleware push), a collection policy (an SMS reminder before due, an email once due, a
 * follow-up task ten days later) and real collection runs done by the admin worker (texts through the
 * SMS sink, emails through MailDev), the task completed, a promise to pay and its cancellation, a
 * dispute and its resolution, the bank statement, its matched payment, the payment's approval and
 * its receipt (sent by the payment-receipt workflow through MailDev).
 * SQL set-up, for states no endpoint produces: the first real run is moved one day back (a real run
 * is always as of today, and an invoice acted on today waits for a later day's run for its next
 * step); one email still `sending` (the engine's intent recorded, its result not yet: the moment
 * between the two, which no call holds still) with its run and action; and one broken promise to pay
 * as its workflow records it (broken needs its promised date plus the grace days to pass, which a
 * test cannot wait for).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFor } from '@rp/api-gateway';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { actionsOf, emailTemplate, plusDays, policy, runCollections, todayIn, zoneWithHour } from './support/collections.js';
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
/** the collection actions of the customer without a unit, as GET /v2/collections/actions shows them */
const act = {} as Record<'email' | 'sms' | 'task', { id: string; sent_at: string; task_id: string | null }>;
/** admin-side rows of the customer without a unit */
const row = {} as Record<'task' | 'promise' | 'promiseJpy' | 'dispute', string>;
/** the tasks of North's and South's customers (the second run's task step) */
const unitTask = {} as Record<'north' | 'south', string>;
let promisedDate: string;
const phone = `+4930${randomInt(1_000_000, 9_999_999)}`;
const smsBody = `Invoice 7100003 is due soon. ${'Please pay. '.repeat(12)}`;

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

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  org = await stack.onboard('Timeline Org');
  other = await stack.onboard('Other Timeline Org');
  // a timezone where it is day now: the run's text goes out at once instead of waiting for 08:00
  const zone = zoneWithHour(9, 18);
  const tz = await req('PATCH', '/v2/organization', org.token, { timezone: zone });
  expect(tz.status, tz.text).toBe(200);
  const today = todayIn(zone);
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
    customerRecord({ customer_code: 'TL-U', name1: 'Ohne Einheit GmbH', smtp_addr: 'ap@ohne.example', tel_number: phone, telnr_long: phone }),
  ]);
  expect(pushed.body.results.every((r) => r.success), pushed.text).toBe(true);
  [cust.north, cust.south, cust.none] = pushed.body.results.map((r) => r.service_id!) as [string, string, string];
  const overdue = plusDays(today, -15);
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '7100001', reference: 'INV-7100001', customer_code: 'TL-U', amount_in_document_currency: 1190, net_due_date: overdue }),
    invoiceRecord({ document_number: '7100002', reference: 'INV-7100002', customer_code: 'TL-U', amount_in_document_currency: 595, net_due_date: overdue }),
    invoiceRecord({ document_number: '7100003', reference: 'INV-7100003', customer_code: 'TL-U', amount_in_document_currency: 300, net_due_date: plusDays(today, 2) }),
    invoiceRecord({ document_number: '7100004', reference: 'INV-7100004', customer_code: 'TL-U', amount_in_document_currency: 50000, amount_in_local_currency: 310, currency: 'JPY', net_due_date: overdue }),
    invoiceRecord({ document_number: '7100005', reference: 'INV-7100005', customer_code: 'TL-N', net_due_date: overdue }),
    invoiceRecord({ document_number: '7100006', reference: 'INV-7100006', customer_code: 'TL-S', net_due_date: overdue }),
  ]);
  expect(invoices.body.results.every((r) => r.success), invoices.text).toBe(true);
  const [, inv2, inv3, inv4] = invoices.body.results.map((r) => r.service_id!) as [string, string, string, string];

  // the collections engine: a text three days before due, an email once due, a task ten days after
  const sms = await req('POST', '/v2/sms-templates', org.token, { name: 'Before due', body: `Invoice {{ action.invoices[0].number }} is due soon. ${'Please pay. '.repeat(12)}` });
  expect(sms.status, sms.text).toBe(200);
  const mail = await emailTemplate(stack, org, 'Reminder: {{ action.invoices.size }} invoices overdue', '<p>Please pay</p>');
  await policy(stack, org, {
    steps: [
      { offset_days: -3, channel: 'sms', sms_template_id: sms.body.id },
      { offset_days: 0, channel: 'email', email_template_id: mail },
      { offset_days: 10, channel: 'task' },
    ],
  });
  const first = await runCollections(stack, org);
  expect(first, JSON.stringify(first)).toMatchObject({ status: 'completed', sent: 4, skipped: 0, failed: 0 });
  const firstActions = await actionsOf(stack, org.token, `run_id=${first.id}&partner_id=${cust.none}`);
  act.email = firstActions.find((a) => a.channel === 'email')!;
  act.sms = firstActions.find((a) => a.channel === 'sms')!;
  expect(firstActions, JSON.stringify(firstActions)).toHaveLength(2);
  // the next day as the engine sees it (see the header): the overdue invoices' next step, the task
  await stack.sql('UPDATE admin.collection_runs SET as_of_date = as_of_date - 1 WHERE organization_id = $1', [org.organizationId]);
  const second = await runCollections(stack, org);
  expect(second, JSON.stringify(second)).toMatchObject({ status: 'completed', sent: 3, skipped: 0, failed: 0 });
  const tasks = await actionsOf(stack, org.token, `run_id=${second.id}&channel=task`);
  const taskOf = (partnerId: string) => tasks.find((a) => a.partner_id === partnerId)!.task_id as string;
  act.task = tasks.find((a) => a.partner_id === cust.none)!;
  row.task = taskOf(cust.none);
  unitTask.north = taskOf(cust.north);
  unitTask.south = taskOf(cust.south);
  const done = await req('PATCH', `/v2/tasks/${row.task}`, org.token, { status: 'done', note: 'Called, payment next week' });
  expect(done.status, done.text).toBe(200);

  // admin through its API: a promise to pay made and cancelled, a dispute opened and resolved
  promisedDate = plusDays(today, 7);
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

  // SQL (see the header): an email mid-send, and a promise to pay broken weeks ago
  const [run] = await stack.sql(
    `INSERT INTO admin.collection_runs (id, organization_id, as_of_date, dry_run, trigger, status) VALUES ($1, $2, $3::date, false, 'schedule', 'running') RETURNING id`,
    [randomUUID(), org.organizationId, today],
  );
  const [sending] = await stack.sql(
    `INSERT INTO admin.collection_actions (id, organization_id, run_id, partner_id, step_index, offset_days, channel, invoice_ids, status)
     VALUES ($1, $2, $3, $4, 1, 0, 'email', ARRAY[gen_random_uuid()], 'planned') RETURNING id`,
    [randomUUID(), org.organizationId, run.id, cust.none],
  );
  await stack.sql(
    `INSERT INTO admin.collection_messages (id, organization_id, action_id, partner_id, channel, to_address, from_address, subject, body, status)
     VALUES ($1, $2, $3, $4, 'email', 'ap@ohne.example', 'no-reply@receivables.local', 'Still sending', 'x', 'sending')`,
    [randomUUID(), org.organizationId, sending.id, cust.none],
  );
  const [pj] = await stack.sql(
    `INSERT INTO admin.promises_to_pay (id, organization_id, partner_id, invoice_ids, amount, currency, promised_date, status, open_amounts_at_creation, covered_amount, resolved_at, created_at)
     VALUES ($1, $2, $3, ARRAY[$4]::uuid[], 50000, 'JPY', '2026-11-01', 'broken', jsonb_build_object($4::text, '50000'), 0, '2026-11-04T23:00:00Z', '2026-10-20T09:00:00Z') RETURNING id`,
    [randomUUID(), org.organizationId, cust.none, inv4],
  );
  row.promiseJpy = pj.id;
}, 240_000);

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
    // then the collection runs', as GET /v2/collections/actions shows them: the task done, the second
    // run's task, the first run's text and email (an email still sending is not history yet), and
    // the promise broken weeks ago
    const runItems = [
      {
        type: 'collection_sms',
        occurred_at: act.sms.sent_at,
        summary: `Text sent to ${phone}: "${smsBody.slice(0, 100)}…"`,
        ref: { object: 'collection_action', id: act.sms.id },
      },
      { type: 'collection_email', occurred_at: act.email.sent_at, summary: 'Email "Reminder: 3 invoices overdue" sent to ap@ohne.example', ref: { object: 'collection_action', id: act.email.id } },
    ].sort((x, y) => y.occurred_at.localeCompare(x.occurred_at) || y.type.localeCompare(x.type));
    expect(items.slice(6)).toEqual([
      { type: 'task', occurred_at: expect.any(String), summary: 'Task done: Follow up on 3 invoice(s): 7100001, 7100002, 7100004 (Called, payment next week)', ref: { object: 'task', id: row.task } },
      { type: 'task', occurred_at: act.task.sent_at, summary: 'Task created: Follow up on 3 invoice(s): 7100001, 7100002, 7100004', ref: { object: 'task', id: row.task } },
      ...runItems,
      { type: 'promise_to_pay', occurred_at: '2026-11-04T23:00:00.000Z', summary: 'Promise to pay 50000 JPY by 2026-11-01 broken', ref: { object: 'promise_to_pay', id: row.promiseJpy } },
      { type: 'promise_to_pay', occurred_at: '2026-10-20T09:00:00.000Z', summary: 'Promise to pay 50000 JPY by 2026-11-01 for 1 invoice', ref: { object: 'promise_to_pay', id: row.promiseJpy } },
    ]);
    // the task done is the task's completion as GET /v2/tasks shows it
    const task = await req('GET', `/v2/tasks?partner_id=${cust.none}`, org.token);
    expect(task.body.data, task.text).toEqual([expect.objectContaining({ id: row.task, action_id: act.task.id, status: 'done' })]);
    expect(items[6]!.occurred_at).toBe(task.body.data[0].completed_at);
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
    expect((sms.body.data as { ref: { id: string } }[]).map((i) => i.ref.id)).toEqual([act.sms.id]);
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
    expect(own.body.data).toEqual((await activity(cust.north, org.token)).body.data);
    expect(own.body.data).toEqual([
      expect.objectContaining({ type: 'task', summary: 'Task created: Follow up on 1 invoice(s): 7100005', ref: { object: 'task', id: unitTask.north } }),
      expect.objectContaining({ type: 'collection_email', summary: 'Email "Reminder: 1 invoices overdue" sent to ap@nord.example' }),
    ]);
    const unassigned = await activity(cust.none, member);
    expect(unassigned.status).toBe(200);
    expect(unassigned.body.total_records).toBe((await activity(cust.none, org.token)).body.total_records);
    const outside = await activity(cust.south, member);
    const random = await activity(randomUUID(), member);
    expect(outside.status).toBe(404);
    expect({ type: outside.body.type, title: outside.body.title }).toEqual({ type: random.body.type, title: random.body.title });
    // the admin sees South's
    expect((await activity(cust.south, org.token)).body.data).toEqual([
      expect.objectContaining({ summary: 'Task created: Follow up on 1 invoice(s): 7100006', ref: { object: 'task', id: unitTask.south } }),
      expect.objectContaining({ summary: 'Email "Reminder: 1 invoices overdue" sent to ap@sued.example' }),
    ]);
  });
});
