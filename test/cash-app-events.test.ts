/**
 * cash-app's events, end to end through the gateway: each change reached through the API (statement
 * upload and processing, approvals, the middleware's posting answers, remittances, receipts), then
 * read from `GET /v2/events` with the organization's token: one event per change that happened, its
 * `data.object` equal to what `GET` of the resource answers at that moment, none for an idempotent
 * repeat, none for a change that rolled back, none for another organization, and only in-scope
 * payment events for a member restricted to business units.
 *
 * SQL set-up stands only for states no endpoint produces: a stored statement whose file no longer
 * parses (its processing fails), as test/bank-statements.test.ts does. A request that dies after
 * its change is written and before it commits is injected by calling the domain function the route
 * calls with its `beforeCommit` hook, as test/payment-posting.test.ts does. A posting outcome
 * recorded again (a retried activity) calls cash-app's activity as the workflow would. A receipt
 * that cannot be sent runs on a worker whose SMTP server does not answer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporal, createDb, createLogger, EVENT_CATALOGUE, startServiceWorker, type Db, type TemporalHandle } from '@rp/platform';
import { cashAppModule, loadCashAppConfig } from '@rp/cash-app';
import { workflowsPath } from '@rp/workflows/paths';
import { bankStatement, bankStatementWorkflowId, paymentPosting, paymentPostingWorkflowId, paymentReceiptWorkflowId, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { approvePayment } from '../services/cash-app/src/domain/payment-changes.js';
import { createPaymentPostingActivities } from '../services/cash-app/src/activities/payment-posting.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let temporal: TemporalHandle;
let db: Db;
/** every event id orgA's changes recorded (orgB must see none of them) */
const seenA = new Set<string>();

async function seedLedger(org: Org) {
  const customers = await pushCustomers(stack, org.apiKey, [
    customerRecord({ customer_code: 'C-100', name1: 'Acme Handels GmbH', smtp_addr: `ap.${randomBytes(3).toString('hex')}@acme.example` }),
    customerRecord({ customer_code: 'C-200', name1: 'Beta Logistics Ltd', smtp_addr: `ap.${randomBytes(3).toString('hex')}@beta.example` }),
  ]);
  expect(customers.body.results.every((r) => r.success), JSON.stringify(customers.body)).toBe(true);
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '9000001', reference: 'INV-9000001', customer_code: 'C-100', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '9000002', reference: 'INV-9000002', customer_code: 'C-100', amount_in_document_currency: 500 }),
    invoiceRecord({ document_number: '9000010', reference: 'INV-9000010', customer_code: 'C-200', amount_in_document_currency: 1000 }),
    invoiceRecord({ document_number: '9000011', reference: 'INV-9000011', customer_code: 'C-200', amount_in_document_currency: 640 }),
  ]);
  expect(invoices.body.results.every((r) => r.success), JSON.stringify(invoices.body)).toBe(true);
}

/** Uploads a JSON statement and waits until it is ready; returns its id and its payments as GET /v2/payments answers them. */
async function statement(org: Org, txs: { amount: string; remittance_information?: string; counterparty_name?: string }[]) {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: txs.map((t, i) => ({
        amount: t.amount,
        booking_date: '2026-10-15',
        value_date: '2026-10-15',
        counterparty_name: t.counterparty_name ?? null,
        remittance_information: t.remittance_information ?? null,
        bank_reference: `REF-${randomUUID().slice(0, 8)}-${i}`,
      })),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await waitForStatement(stack, org.token, res.body.id as string);
  const payments = await stack.request('GET', `/v2/payments?statement_id=${res.body.id}&page_size=500`, { token: org.token });
  return { statementId: res.body.id as string, payments: payments.body.data as any[] };
}

/** The organization's events of `type` (newest first) as its token reads them, those of `resourceId` only when given. */
async function events(org: Pick<Org, 'token'>, type: string, resourceId?: string): Promise<any[]> {
  const res = await stack.request('GET', `/v2/events?type=${type}&page_size=200`, { token: org.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const all = (res.body.data as any[]).filter((e) => resourceId === undefined || e.data.object.id === resourceId);
  for (const e of all) if (org === orgA) seenA.add(e.id as string);
  return all;
}

/** Exactly one event of `type` for the resource; its envelope, with `data.object` compared by the caller. */
async function oneEvent(org: Org, type: string, resourceId: string) {
  const found = await events(org, type, resourceId);
  expect(found, `${type} of ${resourceId}`).toHaveLength(1);
  expect(found[0]).toMatchObject({ object: 'event', type });
  expect(found[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  return found[0];
}

const getPayment = async (org: Org, id: string) => (await stack.request('GET', `/v2/payments/${id}`, { token: org.token })).body;
const getStatement = async (org: Org, id: string) => (await stack.request('GET', `/v2/bank-statements/${id}?transactions=omit`, { token: org.token })).body;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const middlewareQueue = (org: Org) => stack.request('GET', '/v2/integrations/providers/middleware/payments?status=ready_to_post', { token: org.apiKey });
const queued = (org: Org, id: string) => waitFor(`payment ${id} queued`, async () => (await middlewareQueue(org)).body.data.find((e: { id: string }) => e.id === id));
const postingIs = (org: Org, id: string, status: string) => waitFor(`payment ${id} ${status}`, async () => ((await getPayment(org, id)).posting_status === status ? getPayment(org, id) : null));

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app', 'integrations'], env: { PAYMENT_RECEIPT_MAX_ATTEMPTS: '1', PAYMENT_RECEIPT_RETRY_SECONDS: '1' } });
  orgA = await stack.onboard('Events A');
  orgB = await stack.onboard('Events B');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
  await seedLedger(orgA);
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await temporal?.close();
  await stack?.close();
});

describe('cash-app events', () => {
  it('declares every cash-app type of the catalogue in its module, each with its resource\'s response schema', () => {
    const own = Object.entries(EVENT_CATALOGUE).filter(([, e]) => e.service === 'cash-app').map(([type]) => type);
    expect((cashAppModule.events ?? []).map((e) => e.type).sort()).toEqual(own.sort());
    for (const e of cashAppModule.events ?? []) expect(e.object, e.type).toBeDefined();
  });

  let proposals: any[];
  let statementId: string;

  it('a processed statement records bank_statement.processed and one payment.proposed per proposal, each as GET answers it', async () => {
    const s = await statement(orgA, [
      { amount: '1190.00', remittance_information: 'Rechnung 9000001', counterparty_name: 'ACME HANDELS GMBH' },
      { amount: '1000.00', remittance_information: 'Invoice 9000010', counterparty_name: 'Beta Logistics Ltd' },
      { amount: '640.00', remittance_information: 'Invoice 9000011', counterparty_name: 'Beta Logistics Ltd' },
    ]);
    statementId = s.statementId;
    proposals = s.payments;
    expect(proposals).toHaveLength(3);
    const processed = await oneEvent(orgA, 'bank_statement.processed', statementId);
    expect(processed.data.object).toEqual(await getStatement(orgA, statementId));
    expect(processed.data.object).toMatchObject({ status: 'ready', match_counts: { proposed: 3 } });
    expect(processed.previous_attributes).toBeUndefined();
    for (const p of proposals) {
      const e = await oneEvent(orgA, 'payment.proposed', p.id as string);
      expect(e.data.object).toEqual(await getPayment(orgA, p.id as string));
      expect(e.data.object).toMatchObject({ status: 'unapproved', match_score: expect.any(Number) });
    }
    // one by id as well
    const byId = await stack.request('GET', `/v2/events/${processed.id}`, { token: orgA.token });
    expect(byId.body).toEqual(processed);
  });

  it('a user\'s approval records payment.approved once; approving again (409) records nothing', async () => {
    const id = proposals[0].id as string;
    const approved = await stack.request('POST', `/v2/payments/${id}/approve`, { token: orgA.token });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const e = await oneEvent(orgA, 'payment.approved', id);
    expect(e.data.object).toEqual(approved.body);
    expect(e.data.object).toMatchObject({ status: 'approved', approved_by: orgA.userId, auto_approved: false, posting_status: 'pending' });
    expect((await stack.request('POST', `/v2/payments/${id}/approve`, { token: orgA.token })).status).toBe(409);
    await oneEvent(orgA, 'payment.approved', id);
  });

  it('an approval that dies after its change is written, before its commit, records nothing; asked again, it records one', async () => {
    const id = proposals[1].id as string;
    const dies = { beforeCommit: async () => Promise.reject(new Error('process killed')) };
    await expect(approvePayment({ db, temporal: temporal.client }, { organizationId: orgA.organizationId, userId: orgA.userId, paymentId: id, onAccount: false }, dies)).rejects.toThrow('process killed');
    expect((await getPayment(orgA, id)).status).toBe('unapproved');
    expect(await events(orgA, 'payment.approved', id)).toHaveLength(0);
    const approved = await stack.request('POST', `/v2/payments/${id}/approve`, { token: orgA.token });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect((await oneEvent(orgA, 'payment.approved', id)).data.object).toEqual(approved.body);
  });

  it('the middleware\'s answers record payment.posted and payment.posting_failed once each; a repeated answer or a retried outcome records nothing', async () => {
    const [posted, failed] = [proposals[0].id as string, proposals[1].id as string];
    await queued(orgA, posted);
    await queued(orgA, failed);
    const ok = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${posted}/posted`, { token: orgA.apiKey, body: { erp_document_number: '1400000123' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const nok = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${failed}/failed`, { token: orgA.apiKey, body: { error: 'Posting period 010/2026 is closed' } });
    expect(nok.status, JSON.stringify(nok.body)).toBe(200);
    const nowPosted = await postingIs(orgA, posted, 'posted');
    const nowFailed = await postingIs(orgA, failed, 'failed');
    expect((await oneEvent(orgA, 'payment.posted', posted)).data.object).toEqual(nowPosted);
    expect((await oneEvent(orgA, 'payment.posting_failed', failed)).data.object).toEqual(nowFailed);
    expect(nowFailed.posting_error).toBe('Posting period 010/2026 is closed');

    // the same answer again, and the outcome recorded again as a retried activity would
    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${failed}/failed`, { token: orgA.apiKey, body: { error: 'Posting period 010/2026 is closed' } })).status).toBe(200);
    const activities = createPaymentPostingActivities({ db, log: createLogger('test', 'silent') });
    await activities.recordPaymentPosting({
      organizationId: orgA.organizationId,
      paymentId: posted,
      operation: 'post',
      outcome: { status: 'posted', postingId: randomUUID(), provider: 'middleware', canUnpost: false, erpPaymentId: null, erpDocumentNumber: '1400000123', postedAt: nowPosted.posted_at },
    });
    await activities.recordPaymentPosting({ organizationId: orgA.organizationId, paymentId: failed, operation: 'post', outcome: { status: 'failed', postingId: randomUUID(), provider: 'middleware', error: 'again' } });
    await oneEvent(orgA, 'payment.posted', posted);
    await oneEvent(orgA, 'payment.posting_failed', failed);
    expect(await getPayment(orgA, failed)).toEqual(nowFailed);
  });

  it('an approval whose posting cannot start records payment.approved and payment.posting_failed, each with the payment as it committed', async () => {
    // A posting workflow of the payment that never closes (on a task queue no worker polls): the approval's start fails.
    const id = proposals[2].id as string;
    const stuck = await temporal.client.workflow.start(paymentPosting, { taskQueue: 'nobody-polls-this', workflowId: paymentPostingWorkflowId(id), args: [{ organizationId: orgA.organizationId, paymentId: id, operation: 'post' }] });
    try {
      const approved = await stack.request('POST', `/v2/payments/${id}/approve`, { token: orgA.token });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body).toMatchObject({ status: 'approved', posting_status: 'failed', posting_error: expect.stringContaining('Could not start the ERP posting') });
      const [a, f] = [await oneEvent(orgA, 'payment.approved', id), await oneEvent(orgA, 'payment.posting_failed', id)];
      expect(a.data.object).toEqual(approved.body);
      expect(f.data.object).toEqual(approved.body);
    } finally {
      await stuck.terminate('test done');
    }
  });

  it('approving a statement records bank_statement.approved once; approving it again (409) records nothing', async () => {
    const approved = await stack.request('POST', `/v2/bank-statements/${statementId}/approve`, { token: orgA.token });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const e = await oneEvent(orgA, 'bank_statement.approved', statementId);
    expect(e.data.object).toEqual(approved.body);
    expect(e.data.object).toEqual(await getStatement(orgA, statementId));
    expect((await stack.request('POST', `/v2/bank-statements/${statementId}/approve`, { token: orgA.token })).status).toBe(409);
    await oneEvent(orgA, 'bank_statement.approved', statementId);
  });

  it('a statement whose processing fails records bank_statement.failed', async () => {
    // A stored file that no longer parses (written directly: uploads are validated first).
    const [{ id: accountId }] = await stack.sql(`SELECT id FROM cash_app.bank_accounts WHERE organization_id = $1 LIMIT 1`, [orgA.organizationId]);
    const id = randomUUID();
    await stack.sql(
      `INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, content, currency, workflow_id) VALUES ($1, $2, $3, 'bai2', 'uploaded', $4, 'USD', $5)`,
      [id, orgA.organizationId, accountId, Buffer.from('01,broken/\n'), bankStatementWorkflowId(id)],
    );
    const result = await temporal.client.workflow.execute(bankStatement, { taskQueue: TASK_QUEUES.cashApp, workflowId: bankStatementWorkflowId(id), args: [{ organizationId: orgA.organizationId, statementId: id }] });
    expect(result).toMatchObject({ status: 'failed' });
    const e = await oneEvent(orgA, 'bank_statement.failed', id);
    expect(e.data.object).toEqual(await getStatement(orgA, id));
    expect(e.data.object).toMatchObject({ status: 'failed', error: expect.stringContaining('line 1') });
    expect(await events(orgA, 'bank_statement.processed', id)).toHaveLength(0);
  });

  it('automatic approval records payment.proposed, then payment.approved with auto_approved', async () => {
    const set = await stack.request('PATCH', '/v2/organization', { token: orgA.token, body: { auto_approve_threshold: 0.8 } });
    expect(set.status).toBe(200);
    try {
      const s = await statement(orgA, [{ amount: '500.00', remittance_information: 'Rechnung 9000002', counterparty_name: 'ACME HANDELS GMBH' }]);
      const [p] = s.payments;
      expect(p).toMatchObject({ status: 'approved', auto_approved: true });
      const proposed = await oneEvent(orgA, 'payment.proposed', p.id as string);
      const approved = await oneEvent(orgA, 'payment.approved', p.id as string);
      expect(proposed.data.object).toMatchObject({ status: 'unapproved', auto_approved: false });
      expect(approved.data.object).toMatchObject({ status: 'approved', auto_approved: true, approved_by: null });
      expect(Date.parse(approved.created_at)).toBeGreaterThanOrEqual(Date.parse(proposed.created_at));
    } finally {
      await stack.request('PATCH', '/v2/organization', { token: orgA.token, body: { auto_approve_threshold: null } });
    }
  });

  it('a remittance recorded as JSON or CSV records remittance.created as GET answers it; a refused CSV records nothing', async () => {
    const before = (await events(orgA, 'remittance.created')).length;
    const json = await stack.request('POST', '/v1/remittances', { token: orgA.token, body: { payer_name: 'Acme Handels GmbH', transaction_amount: 1190, allocations: [{ invoice_number: '9000001', amount_paid: 1190 }] } });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    const csv = await stack.request('POST', '/v1/remittances/csv?transaction_amount=640.00', { token: orgA.token, rawBody: 'Invoice No.;Amount Paid\n9000011;640.00\n', headers: { 'content-type': 'text/csv' } });
    expect(csv.status, JSON.stringify(csv.body)).toBe(200);
    for (const r of [json.body, csv.body]) {
      const e = await oneEvent(orgA, 'remittance.created', r.id as string);
      expect(e.data.object).toEqual(r);
      expect(e.data.object).toEqual((await stack.request('GET', `/v1/remittances/${r.id}`, { token: orgA.token })).body);
    }
    const bad = await stack.request('POST', '/v1/remittances/csv', { token: orgA.token, rawBody: 'Invoice No.;Amount Paid\n9000011;lots\n', headers: { 'content-type': 'text/csv' } });
    expect(bad.status).toBe(422);
    expect(await events(orgA, 'remittance.created')).toHaveLength(before + 2);
  });

  it('a receipt sent records outreach.sent once (its "sent" is written twice), as GET answers it', async () => {
    const id = proposals[0].id as string;
    const res = await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: orgA.token, body: { payment_id: id } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(id)).result()).toMatchObject({ status: 'sent' });
    const e = await oneEvent(orgA, 'outreach.sent', res.body.id as string);
    expect(e.data.object).toEqual((await stack.request('GET', `/v2/cash-app/outreach/${res.body.id}`, { token: orgA.token })).body);
    expect(e.data.object).toMatchObject({ object: 'outreach_record', status: 'sent', payment_id: id });
    expect(await events(orgA, 'outreach.failed', res.body.id as string)).toHaveLength(0);
  });

  it('a receipt that cannot be sent records outreach.failed once', async () => {
    const id = proposals[1].id as string;
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    await stack.workers['cash-app']!.close();
    const broken = await startServiceWorker(cashAppModule, loadCashAppConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${port}` }), { workflowsPath, workflowBundlePath: inject('workflowBundlePath') });
    let recordId: string;
    try {
      const res = await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: orgA.token, body: { payment_id: id } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      recordId = res.body.id as string;
      expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(id)).result()).toMatchObject({ status: 'failed' });
    } finally {
      await broken.close();
      await stack.startWorker('cash-app');
    }
    const e = await oneEvent(orgA, 'outreach.failed', recordId);
    expect(e.data.object).toEqual((await stack.request('GET', `/v2/cash-app/outreach/${recordId}`, { token: orgA.token })).body);
    expect(e.data.object).toMatchObject({ status: 'failed', error: expect.any(String) });
    expect(await events(orgA, 'outreach.sent', recordId)).toHaveLength(0);
  });

  it('another organization sees none of these events, in the list or by id', async () => {
    expect(seenA.size).toBeGreaterThanOrEqual(12);
    const list = await stack.request('GET', '/v2/events?page_size=200', { token: orgB.token });
    expect(list.status).toBe(200);
    expect(list.body.data.filter((e: { id: string }) => seenA.has(e.id))).toEqual([]);
    for (const id of [...seenA].slice(0, 5)) expect((await stack.request('GET', `/v2/events/${id}`, { token: orgB.token })).status).toBe(404);
  });
});

describe('cash-app events and business units', () => {
  it('a member restricted to a unit sees the payment events of that unit and of none, not of another unit', async () => {
    const org = await stack.onboard('Events units');
    const unit = async (name: string) => (await stack.request('POST', '/v2/business-units', { token: org.token, body: { name } })).body.id as string;
    const [north, south] = [await unit('North'), await unit('South')];
    const user = await stack.request('POST', '/v2/users', { token: org.token, body: { email: `south.${randomBytes(3).toString('hex')}@units.example`, name: 'South', role: 'member', business_unit_ids: [south], permissions: [] } });
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const member = { token: ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', user.body.id], stack.env)) as { token: string }).token };
    const customers = await pushCustomers(stack, org.apiKey, [
      { ...customerRecord({ customer_code: 'C-N', name1: 'Nord Maschinen GmbH' }), business_unit_id: north },
      { ...customerRecord({ customer_code: 'C-S', name1: 'Sued Textil GmbH' }), business_unit_id: south },
      customerRecord({ customer_code: 'C-X', name1: 'Xaver Ohne Einheit KG' }),
    ]);
    expect(customers.body.results.every((r) => r.success), JSON.stringify(customers.body)).toBe(true);
    const pushed = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: '7100001', reference: 'INV-7100001', customer_code: 'C-N', amount_in_document_currency: 1100 }),
      invoiceRecord({ document_number: '7200001', reference: 'INV-7200001', customer_code: 'C-S', amount_in_document_currency: 220 }),
      invoiceRecord({ document_number: '7300001', reference: 'INV-7300001', customer_code: 'C-X', amount_in_document_currency: 33 }),
      { ...invoiceRecord({ document_number: '7300002', reference: 'INV-7300002', customer_code: 'C-X', amount_in_document_currency: 10 }), business_unit_id: north },
      { ...invoiceRecord({ document_number: '7300003', reference: 'INV-7300003', customer_code: 'C-X', amount_in_document_currency: 20 }), business_unit_id: south },
    ]);
    expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
    const s = await statement(org as Org, [
      { amount: '1100.00', remittance_information: 'Rechnung 7100001', counterparty_name: 'Nord Maschinen GmbH' },
      { amount: '220.00', remittance_information: 'Rechnung 7200001', counterparty_name: 'Sued Textil GmbH' },
      { amount: '33.00', remittance_information: 'Rechnung 7300001', counterparty_name: 'Xaver Ohne Einheit KG' },
      { amount: '5000.00', counterparty_name: 'Unbekannt' },
    ]);
    expect(s.payments).toHaveLength(3);
    const byPartner = (code: string) => s.payments.find((p) => p.allocations[0]?.invoice_id === pushed.body.results[['C-N', 'C-S', 'C-X'].indexOf(code)]!.service_id)!.id as string;
    const [n, so, x] = [byPartner('C-N'), byPartner('C-S'), byPartner('C-X')];

    const all = (await events(org as Org, 'payment.proposed')).map((e) => e.data.object.id as string);
    expect(all.sort()).toEqual([n, so, x].sort());
    const seen = (await events(member, 'payment.proposed')).map((e) => e.data.object.id as string);
    expect(seen.sort()).toEqual([so, x].sort());
    // as the payments themselves: the member reads the same two
    const payments = await stack.request('GET', `/v2/payments?statement_id=${s.statementId}`, { token: member.token });
    expect(payments.body.data.map((p: { id: string }) => p.id).sort()).toEqual([so, x].sort());
    // the statement is tied to no unit: the member sees its event
    expect(await events(member, 'bank_statement.processed', s.statementId)).toHaveLength(1);

    // a payment a user creates, applied to invoices of both units: only those who see every unit see it, and its event
    const lines = (await stack.request('GET', `/v2/bank-statements/${s.statementId}/transactions?match_status=unmatched`, { token: org.token })).body.data;
    expect(lines.map((t: { amount: string }) => t.amount)).toEqual(['5000.00']);
    const both = await stack.request('POST', '/v2/payments', {
      token: org.token,
      body: { bank_transaction_id: lines[0].id, allocations: [{ invoice_id: pushed.body.results[3]!.service_id, amount_paid: '10.00' }, { invoice_id: pushed.body.results[4]!.service_id, amount_paid: '20.00' }] },
    });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    const created = await events(org as Org, 'payment.proposed', both.body.id as string);
    expect(created).toHaveLength(1);
    expect(created[0].data.object).toEqual(both.body);
    expect((await stack.request('GET', `/v2/payments/${both.body.id}`, { token: member.token })).status).toBe(404);
    expect(await events(member, 'payment.proposed', both.body.id as string)).toHaveLength(0);
    expect((await stack.request('GET', `/v2/events/${created[0].id}`, { token: member.token })).status).toBe(404);
  });
});
