/**
 * Posting applied cash back to the ERP, end to end through the gateway with
 * real Temporal workers of cash-app and integrations:
 * - the middleware: approval queues the payment, the middleware pulls the queue with its API key
 *   and answers `posted` / `failed`; the open-amount rule (invoice 1000, approve 400 → 600 open;
 *   posted and pushed with 600 open → a 600 deposit can be allocated, not 200);
 * - QuickBooks Online: a loopback fake (Payment create with requestid, read, delete, faults) in
 *   front of the query/OAuth fake; Payment linked to the invoices, on-account remainder, refusal →
 *   posting_error → retry, unpost (delete with SyncToken), and "side effects once": the record of
 *   the result fails once after QuickBooks created the Payment (integrations' posting row, and
 *   cash-app's payment) and QuickBooks still holds exactly one Payment.
 *
 * SQL is used only to look up ledger ids (as the other end-to-end tests do) and, for the "record
 * the result fails once" cases, to inject the failure with a one-shot trigger in the real database
 * (no endpoint can make a database write fail). A process dying between starting the posting
 * workflow and committing (approve, post, unpost) is injected by calling the domain functions the
 * routes call with a hook at that point, as test/bank-statements.test.ts does for the upload.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { connectTemporal, createDb, createLogger, type TemporalHandle } from '@rp/platform';
import { ENTITY_ID, ORGANIZATION_ID, paymentPostingWorkflowId, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks } from './support/fake-quickbooks.js';
import { createPaymentPostingActivities } from '../services/cash-app/src/activities/payment-posting.js';
import { approvePayment } from '../services/cash-app/src/domain/payment-changes.js';
import { requestPaymentPosting } from '../services/cash-app/src/domain/payment-posting.js';
import { startFakeQboPayments, type FakeQboPayments } from './support/fake-quickbooks-payments.js';
import { replayHistory } from './support/histories.js';
import { failUpdates } from './support/faults.js';

const REDIRECT_URI = 'https://app.example.com/oauth/callback';
const OLD = '2026-01-10T08:00:00Z';

let stack: TestStack;
let qboBase: FakeQuickbooks;
let qbo: FakeQboPayments;
let orgM: Org;
let orgQ: Org;
let orgOther: Org;
let temporal: TemporalHandle;

/** The payment's finished posting workflow: on the integrations queue, with search attributes; its history replays (and is recorded with RECORD_HISTORIES=1). */
async function checkWorkflow(org: Org, paymentId: string, historyFile: string) {
  const handle = temporal.client.workflow.getHandle(paymentPostingWorkflowId(paymentId));
  const result = await handle.result();
  const description = await handle.describe();
  expect(description.taskQueue).toBe(TASK_QUEUES.integrations);
  expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);
  expect(description.typedSearchAttributes.get(ENTITY_ID)).toBe(paymentId);
  const history = await handle.fetchHistory();
  await replayHistory(stack, description.workflowId, history, historyFile);
  return result;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function statement(org: Org, currency: string, txs: { amount: string; counterparty_name?: string; remittance_information?: string }[]) {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: currency === 'USD' ? 'US-ACC-000123456' : 'DE44500105175407324931',
      currency,
      statement_number: `S-${randomUUID()}`,
      transactions: txs.map((t, i) => ({
        amount: t.amount,
        booking_date: '2026-10-15',
        value_date: '2026-10-15',
        counterparty_name: t.counterparty_name ?? `Payer ${randomUUID().slice(0, 8)}`,
        remittance_information: t.remittance_information ?? null,
        bank_reference: `REF-${randomUUID().slice(0, 8)}-${i}`,
      })),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const ready = await waitForStatement(stack, org.token, res.body.id);
  return (ready.transactions as { id: string; sequence: number }[]).sort((a, b) => a.sequence - b.sequence).map((t) => t.id);
}

/** The deposit's payment with these allocations: the proposal re-allocated, or a new payment. */
async function allocate(org: Org, txId: string, allocations: { invoice_id: string; amount_paid: string }[]) {
  const existing = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
  const p = existing.body.data[0];
  return p
    ? stack.request('PATCH', `/v2/payments/${p.id}`, { token: org.token, body: { allocations } })
    : stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId, allocations } });
}

async function documentId(org: Org, where: { document_number?: string; remote_id?: string }): Promise<string> {
  const [col, value] = where.document_number ? ['document_number', where.document_number] : ['remote_id', where.remote_id!];
  const rows = await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND ${col} = $2`, [org.organizationId, value]);
  expect(rows).toHaveLength(1);
  return rows[0].id as string;
}

function getPayment(org: Org, id: string) {
  return stack.request('GET', `/v2/payments/${id}`, { token: org.token });
}

async function paymentWhen(org: Org, id: string, postingStatus: string) {
  return waitFor(`payment ${id} ${postingStatus}`, async () => {
    const res = await getPayment(org, id);
    return res.body.posting_status === postingStatus ? res.body : null;
  });
}

function queue(org: Org, query = '?status=ready_to_post') {
  return stack.request('GET', `/v2/integrations/providers/middleware/payments${query}`, { token: org.apiKey });
}

async function queued(org: Org, paymentId: string) {
  return waitFor(`payment ${paymentId} in the posting queue`, async () => (await queue(org)).body.data.find((e: { id: string }) => e.id === paymentId));
}

/** A process that dies right after starting the posting workflow, before its transaction commits. */
const dies = { beforeCommit: async () => Promise.reject(new Error('process killed')) };

/** The posting workflow the crashed request started: it found the payment unchanged and ended without posting. */
async function skippedWorkflow(paymentId: string) {
  expect(await temporal.client.workflow.getHandle(paymentPostingWorkflowId(paymentId)).result()).toMatchObject({ status: 'skipped' });
}

async function metrics(org: Org) {
  const res = await stack.request('GET', '/v2/analytics/bank-transactions', { token: org.token });
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  qboBase = await startFakeQuickbooks();
  qbo = await startFakeQboPayments(qboBase);
  stack = await startStack({
    workers: ['cash-app', 'integrations'],
    env: {
      OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: { client_id: 'qbo-client', client_secret: 'qbo-secret' } }),
      OAUTH_REDIRECT_URI: REDIRECT_URI,
      PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${qbo.url}/oauth2/v1/tokens/bearer`, api_base_url: qbo.url } }),
    },
  });
  orgM = await stack.onboard('Posting Middleware');
  orgQ = await stack.onboard('Posting QuickBooks');
  orgOther = await stack.onboard('Posting Other');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  // orgQ's deposits are USD, its base currency EUR: the metrics convert with this rate
  const rate = await stack.request('PUT', '/v2/exchange-rates', { token: orgQ.token, body: [{ base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-01', rate: '1.10' }] });
  expect(rate.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await temporal?.close();
  await stack?.close();
  await qbo?.close();
  await qboBase?.close();
});

describe('OpenAPI', () => {
  it('documents the posting routes, the payment posting fields and the open-amount rule', async () => {
    const doc = (await stack.request('GET', '/openapi.json')).body;
    for (const path of ['/v2/payments/{payment_id}/post', '/v2/payments/{payment_id}/unpost', '/v2/integrations/providers/middleware/payments/{payment_id}/posted', '/v2/integrations/providers/middleware/payments/{payment_id}/failed']) {
      expect(doc.paths[path]?.post, path).toBeDefined();
    }
    expect(doc.paths['/v2/payments/{payment_id}/post'].post.description).toContain('until the ERP reports the invoice again');
    expect(doc.paths['/v2/integrations/providers/middleware/payments'].get.description).toContain('ready_to_post');
    expect(doc.paths['/v2/payments/{payment_id}/approve'].post.requestBody.required).toBe(false);
    const ref = doc.paths['/v2/payments/{payment_id}'].get.responses['200'].content['application/json'].schema.$ref as string;
    expect(ref).toBe('#/components/schemas/Payment');
    const payment = doc.components.schemas.Payment;
    expect(Object.keys(payment.properties)).toEqual(expect.arrayContaining(['posting_status', 'posting_error', 'posted_at', 'erp_payment_id', 'erp_document_number', 'can_unpost']));
  });
});

describe('middleware posting queue', () => {
  let invoice7001: string;

  beforeAll(async () => {
    expect((await pushCustomers(stack, orgM.apiKey, [customerRecord({ customer_code: 'C-1', name1: 'Queue Kunde GmbH' })])).status).toBe(200);
    const pushed = await pushInvoices(stack, orgM.apiKey, [
      invoiceRecord({ document_number: '7001', reference: 'INV-7001', customer_code: 'C-1', amount_in_document_currency: 1000 }),
      invoiceRecord({ document_number: '7002', reference: 'INV-7002', customer_code: 'C-1', amount_in_document_currency: 500 }),
    ]);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
    invoice7001 = await documentId(orgM, { document_number: '7001' });
  });

  it('invoice 1000, approve 400 → 600 open; posted, then pushed with 600 open → a 600 deposit can be allocated (never subtracted twice)', async () => {
    const [tx400, tx600] = await statement(orgM, 'EUR', [{ amount: '400.00' }, { amount: '600.00' }]);
    const p400 = await allocate(orgM, tx400!, [{ invoice_id: invoice7001, amount_paid: '400.00' }]);
    expect(p400.status, JSON.stringify(p400.body)).toBe(200);
    const approved = await stack.request('POST', `/v2/payments/${p400.body.id}/approve`, { token: orgM.token });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', posting_status: 'pending', posted_at: null, posting_error: null });

    // the middleware pulls the queue with its API key
    const entry = await queued(orgM, p400.body.id);
    expect(entry).toMatchObject({
      object: 'middleware_payment',
      status: 'ready_to_post',
      amount: '400.00',
      currency: 'EUR',
      payment_date: '2026-10-15',
      unallocated_amount: '0.00',
      customer: { customer_code: 'C-1', name: 'Queue Kunde GmbH' },
      lines: [{ invoice_id: invoice7001, document_number: '7001', company_code: '1000', fiscal_year: '2026', amount_paid: '400.00', amount_discount: '0.00' }],
      erp_document_number: null,
    });

    // cash-app sees 600 open: 601 on the other deposit is refused naming 600.00
    const over = await allocate(orgM, tx600!, [{ invoice_id: invoice7001, amount_paid: '601.00' }]);
    expect(over.status).toBe(422);
    expect(over.body.errors[0].msg).toContain('(600.00)');

    const posted = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p400.body.id}/posted`, { token: orgM.apiKey, body: { erp_document_number: '1400000123' } });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    expect(posted.body).toMatchObject({ status: 'posted', erp_document_number: '1400000123' });
    const done = await paymentWhen(orgM, p400.body.id, 'posted');
    expect(done).toMatchObject({ erp_provider: 'middleware', erp_document_number: '1400000123', posting_error: null, can_unpost: false });
    expect(Date.parse(done.posted_at)).not.toBeNaN();
    expect((await queue(orgM)).body.data.find((e: { id: string }) => e.id === p400.body.id)).toBeUndefined();
    expect(await checkWorkflow(orgM, p400.body.id, 'payment-posting-middleware.json')).toMatchObject({ status: 'posted', provider: 'middleware', erpDocumentNumber: '1400000123' });

    // posted, but the ledger still says 1000 until the ERP reports the invoice again: still 600 open
    expect((await allocate(orgM, tx600!, [{ invoice_id: invoice7001, amount_paid: '601.00' }])).status).toBe(422);

    // the middleware pushes the ERP's figure, which includes the payment: 600 open
    const repush = await pushInvoices(stack, orgM.apiKey, [
      invoiceRecord({ document_number: '7001', reference: 'INV-7001', customer_code: 'C-1', amount_in_document_currency: 1000, amount_open: 600 }),
    ]);
    expect(repush.body.results[0]).toMatchObject({ success: true, service_id: invoice7001 });

    // a 600 deposit is allocated and approved (the old rule subtracted the 400 again and saw 200)
    const p600 = await allocate(orgM, tx600!, [{ invoice_id: invoice7001, amount_paid: '600.00' }]);
    expect(p600.status, JSON.stringify(p600.body)).toBe(200);
    const approved600 = await stack.request('POST', `/v2/payments/${p600.body.id}/approve`, { token: orgM.token });
    expect(approved600.status, JSON.stringify(approved600.body)).toBe(200);
    // and now nothing is left open in cash-app's eyes
    const [tx1] = await statement(orgM, 'EUR', [{ amount: '1.00' }]);
    const none = await allocate(orgM, tx1!, [{ invoice_id: invoice7001, amount_paid: '1.00' }]);
    expect(none.status).toBe(422);
    expect(none.body.errors[0].msg).toContain('(0.00)');
  });

  it('a payment applying a credit memo is queued with the memo\'s line marked kind credit_memo; its cash is the invoices less the credit', async () => {
    const pushed = await pushInvoices(stack, orgM.apiKey, [
      invoiceRecord({ document_number: '7101', customer_code: 'C-1', amount_in_document_currency: 300 }),
      invoiceRecord({ document_number: '7102', customer_code: 'C-1', amount_in_document_currency: 20, debit_credit_indicator: 'H' }),
    ]);
    const [inv, memo] = pushed.body.results.map((r) => r.service_id!);
    const [tx] = await statement(orgM, 'EUR', [{ amount: '280.00' }]);
    const p = await allocate(orgM, tx!, [{ invoice_id: inv!, amount_paid: '300.00' }, { invoice_id: memo!, amount_paid: '20.00' }]);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgM.token })).status).toBe(200);
    const entry = await queued(orgM, p.body.id);
    expect(entry).toMatchObject({ amount: '280.00', unallocated_amount: '0.00' });
    expect(entry.lines.map((l: any) => [l.document_number, l.kind, l.amount_paid])).toEqual([
      ['7101', 'invoice', '300.00'],
      ['7102', 'credit_memo', '20.00'],
    ]);
  });

  it('a failure reported by the middleware is the posting_error (metrics count it); POST …/post queues it again', async () => {
    const invoice7002 = await documentId(orgM, { document_number: '7002' });
    const [tx] = await statement(orgM, 'EUR', [{ amount: '550.00' }]);
    const p = await allocate(orgM, tx!, [{ invoice_id: invoice7002, amount_paid: '500.00' }]);
    expect(p.status).toBe(200);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgM.token })).status).toBe(200);
    const first = await queued(orgM, p.body.id);
    expect(first).toMatchObject({ amount: '550.00', unallocated_amount: '50.00' });
    const before = (await metrics(orgM)).posting_errors_count;

    const failed = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/failed`, { token: orgM.apiKey, body: { error: 'Posting period 010/2026 is closed' } });
    expect(failed.status).toBe(200);
    const withError = await paymentWhen(orgM, p.body.id, 'failed');
    expect(withError).toMatchObject({ posting_error: 'Posting period 010/2026 is closed', posted_at: null, status: 'approved' });
    expect((await metrics(orgM)).posting_errors_count).toBe(before + 1);

    // the same answer again is harmless; a different one is a conflict
    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/failed`, { token: orgM.apiKey, body: { error: 'Posting period 010/2026 is closed' } })).status).toBe(200);
    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/posted`, { token: orgM.apiKey, body: { erp_document_number: 'X' } })).status).toBe(409);
    expect((await queue(orgM, '?status=failed')).body.data.map((e: { posting_id: string }) => e.posting_id)).toContain(first.posting_id);

    // retry: queued again under a new posting id
    const retry = await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgM.token });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ posting_status: 'pending', posting_error: null });
    const second = await queued(orgM, p.body.id);
    expect(second.posting_id).not.toBe(first.posting_id);
    // the ERP-side key stays: the middleware finds the earlier attempt's document by it
    expect(first.posting_key).toMatch(/^RP[0-9A-V]{19}$/);
    expect(second.posting_key).toBe(first.posting_key);
    expect((await metrics(orgM)).posting_errors_count).toBe(before);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgM.token })).status).toBe(409); // in progress

    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/posted`, { token: orgM.apiKey, body: { erp_document_number: '1400000200' } })).status).toBe(200);
    await paymentWhen(orgM, p.body.id, 'posted');
    // the middleware cannot take a posting back, and it is posted already
    const unpost = await stack.request('POST', `/v2/payments/${p.body.id}/unpost`, { token: orgM.token });
    expect(unpost.status).toBe(409);
    expect(unpost.body.detail).toContain('middleware');
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgM.token })).status).toBe(409);
  });

  it('an approve or post that dies between starting the posting workflow and committing changes nothing; asking again posts', async () => {
    const pushed = await pushInvoices(stack, orgM.apiKey, [invoiceRecord({ document_number: '7010', reference: 'INV-7010', customer_code: 'C-1', amount_in_document_currency: 300 })]);
    expect(pushed.body.results[0].success).toBe(true);
    const invoice = pushed.body.results[0].service_id!;
    const [tx] = await statement(orgM, 'EUR', [{ amount: '70.00' }]);
    const p = await allocate(orgM, tx!, [{ invoice_id: invoice, amount_paid: '70.00' }]);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
    try {
      const deps = { db, temporal: temporal.client };
      // approve dies: before, the approval was committed `pending` and the process died before the start (no workflow, pending forever)
      await expect(approvePayment(deps, { organizationId: orgM.organizationId, userId: orgM.userId, paymentId: p.body.id, onAccount: false }, dies)).rejects.toThrow('process killed');
      expect((await getPayment(orgM, p.body.id)).body).toMatchObject({ status: 'unapproved', posting_status: 'not_posted', approved_at: null });
      await skippedWorkflow(p.body.id);
      expect((await queue(orgM, '')).body.data.find((e: { id: string }) => e.id === p.body.id)).toBeUndefined();

      const approved = await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgM.token });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body).toMatchObject({ status: 'approved', posting_status: 'pending' });
      await queued(orgM, p.body.id);
      expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/failed`, { token: orgM.apiKey, body: { error: 'ERP down' } })).status).toBe(200);
      await paymentWhen(orgM, p.body.id, 'failed');

      // the retry (POST …/post) dies the same way: the payment stays failed with its error
      await expect(requestPaymentPosting(deps, { organizationId: orgM.organizationId, paymentId: p.body.id, operation: 'post' }, dies)).rejects.toThrow('process killed');
      expect((await getPayment(orgM, p.body.id)).body).toMatchObject({ status: 'approved', posting_status: 'failed', posting_error: 'ERP down' });
      await skippedWorkflow(p.body.id);
      const retry = await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgM.token });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body).toMatchObject({ posting_status: 'pending', posting_error: null });
      await queued(orgM, p.body.id);
      expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.body.id}/posted`, { token: orgM.apiKey, body: { erp_document_number: '1400000710' } })).status).toBe(200);
      expect(await paymentWhen(orgM, p.body.id, 'posted')).toMatchObject({ erp_document_number: '1400000710' });
    } finally {
      await db.destroy();
    }
  });

  it('the posting workflow\'s first activity waits for the approval it was started before, and gives up cleanly on its last attempt', async () => {
    const pushed = await pushInvoices(stack, orgM.apiKey, [invoiceRecord({ document_number: '7011', reference: 'INV-7011', customer_code: 'C-1', amount_in_document_currency: 90 })]);
    const [tx] = await statement(orgM, 'EUR', [{ amount: '90.00' }]);
    const p = await allocate(orgM, tx!, [{ invoice_id: pushed.body.results[0].service_id!, amount_paid: '90.00' }]);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 3 });
    const log = createLogger('test', 'silent');
    const load = { organizationId: orgM.organizationId, paymentId: p.body.id, operation: 'post' as const };
    try {
      let waited: Promise<unknown> | undefined;
      await approvePayment({ db, temporal: temporal.client }, { organizationId: orgM.organizationId, userId: orgM.userId, paymentId: p.body.id, onAccount: false }, {
        beforeCommit: async () => {
          // started, not committed: an early attempt asks to be retried, the last one returns what it sees (the workflow then skips)
          const quick = createPaymentPostingActivities({ db, log, uncommittedWaitMs: 0 });
          await expect(new MockActivityEnvironment({ attempt: 1 }).run(quick.loadPaymentForPosting, load)).rejects.toThrow('not committed yet');
          expect(await new MockActivityEnvironment({ attempt: 2 }).run(quick.loadPaymentForPosting, load)).toMatchObject({ status: 'unapproved', postingStatus: 'not_posted' });
          // an attempt that is waiting when the commit comes sees it
          waited = new MockActivityEnvironment({ attempt: 1 }).run(createPaymentPostingActivities({ db, log, uncommittedWaitMs: 10_000 }).loadPaymentForPosting, load);
          await new Promise((r) => setTimeout(r, 300));
        },
      });
      expect(await waited).toMatchObject({ status: 'approved', postingStatus: 'pending' });
      await queued(orgM, p.body.id);
    } finally {
      await db.destroy();
    }
  });

  it('the queue is for the organization\'s API key only; bad answers are refused', async () => {
    expect((await stack.request('GET', '/v2/integrations/providers/middleware/payments', { token: orgM.token })).status).toBe(403);
    expect((await queue(orgOther, '')).body).toMatchObject({ data: [], total_records: 0 });
    const all = await queue(orgM, '');
    expect(all.status).toBe(200);
    const someId = all.body.data[0].id as string;
    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/${someId}/posted`, { token: orgOther.apiKey, body: { erp_document_number: 'X' } })).status).toBe(404);
    expect((await stack.request('POST', `/v2/integrations/providers/middleware/payments/not-a-uuid/failed`, { token: orgM.apiKey, body: { error: 'x' } })).status).toBe(422); // ids are validated as ids
    const bad = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${someId}/posted`, { token: orgM.apiKey, body: { erp_document_number: '' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'erp_document_number']);
    expect((await queue(orgM, '?status=nope')).status).toBe(422);
    // post/unpost of an unapproved or unknown payment
    const [tx] = await statement(orgM, 'EUR', [{ amount: '5.00' }]);
    const p = await allocate(orgM, tx!, []);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgM.token })).status).toBe(409);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/unpost`, { token: orgM.token })).status).toBe(409);
    expect((await stack.request('POST', `/v2/payments/${randomUUID()}/post`, { token: orgM.token })).status).toBe(404);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgOther.token })).status).toBe(404);
  });
});

describe('QuickBooks Online posting', () => {
  let connectionId: string;
  let inv101: string;
  let inv102: string;
  let inv103: string;

  async function sync() {
    // the sync reads what changed before its start, to the second: let QuickBooks' clock move past the changes
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await stack.request('POST', `/v2/integrations/connections/${connectionId}/sync`, { token: orgQ.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const batch = res.body.batch_id as string;
    await waitFor('sync completed', async () => {
      const runs = await stack.request('GET', `/v2/integrations/connections/${connectionId}/sync-runs?page_size=100`, { token: orgQ.token });
      const mine = runs.body.data.filter((r: { batch_id: string }) => r.batch_id === batch);
      if (mine.some((r: { status: string }) => r.status === 'failed')) throw new Error(JSON.stringify(mine));
      return mine.length > 0 && mine.every((r: { status: string }) => r.status === 'completed');
    });
  }

  async function approveAndWait(org: Org, txId: string, allocations: { invoice_id: string; amount_paid: string }[], status: string) {
    const p = await allocate(org, txId, allocations);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    const approved = await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: org.token });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    return paymentWhen(org, p.body.id, status);
  }

  function creates(postingId: string) {
    return qbo.requests.filter((r) => r.operation === 'create' && r.requestId === postingId);
  }

  beforeAll(async () => {
    qboBase.records.Customer = [qboCustomer(1, OLD), qboCustomer(2, OLD)];
    qboBase.records.Invoice = [
      qboInvoice(101, 1, OLD, [{ qty: 1, unitPrice: 1000, amount: 1000 }], { TotalAmt: 1000, Balance: 1000 }),
      qboInvoice(102, 1, OLD, [{ qty: 1, unitPrice: 300, amount: 300 }], { TotalAmt: 300, Balance: 300 }),
      qboInvoice(103, 2, OLD, [{ qty: 1, unitPrice: 250.25, amount: 250.25 }], { TotalAmt: 250.25, Balance: 250.25 }),
      qboInvoice(104, 2, OLD, [{ qty: 1, unitPrice: 80, amount: 80 }], { TotalAmt: 80, Balance: 80 }),
    ];
    const created = await stack.request('POST', '/v2/integrations/connections', { token: orgQ.token, body: { provider_name: 'quickbooks_online', name: 'QBO' } });
    expect(created.status).toBe(200);
    connectionId = created.body.id;
    const state = new URL(created.body.authorization_url).searchParams.get('state');
    const auth = await stack.request('POST', `/v2/integrations/connections/${connectionId}/authenticate`, {
      token: orgQ.token,
      body: { provider_name: 'quickbooks_online', authorization_code: qboBase.authorizationCode, redirect_uri: REDIRECT_URI, state, extra_data: { realmId: qboBase.realmId } },
    });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    await sync();
    [inv101, inv102, inv103] = [await documentId(orgQ, { remote_id: '101' }), await documentId(orgQ, { remote_id: '102' }), await documentId(orgQ, { remote_id: '103' })];
    const descriptor = await stack.request('GET', '/v2/integrations/providers/quickbooks_online', { token: orgQ.token });
    expect(descriptor.body.cash_app_features).toEqual({ can_unpost_payment: true, can_post_on_account_payment: true });
  }, 120_000);

  it('creates a Payment linked to the invoices with the posting id as requestid, the remainder on account; the ERP figure is not subtracted twice', async () => {
    const [tx, txLater] = await statement(orgQ, 'USD', [{ amount: '1150.00' }, { amount: '200.00' }]);
    const payment = await approveAndWait(orgQ, tx!, [
      { invoice_id: inv101, amount_paid: '1000.00' },
      { invoice_id: inv102, amount_paid: '100.00' },
    ], 'posted');
    expect(payment).toMatchObject({ erp_provider: 'quickbooks_online', erp_payment_id: expect.any(String), erp_posting_adopted: false, posting_error: null, can_unpost: true });
    const qboPayment = qbo.payments.find((p) => p.Id === payment.erp_payment_id)!;
    expect(qboPayment).toMatchObject({
      CustomerRef: { value: '1' },
      TotalAmt: 1150,
      UnappliedAmt: 50, // the unallocated 50.00 is posted on account
      TxnDate: '2026-10-15',
      Line: [
        { Amount: 1000, LinkedTxn: [{ TxnId: '101', TxnType: 'Invoice' }] },
        { Amount: 100, LinkedTxn: [{ TxnId: '102', TxnType: 'Invoice' }] },
      ],
    });
    expect(await checkWorkflow(orgQ, payment.id, 'payment-posting-quickbooks.json')).toMatchObject({ status: 'posted', provider: 'quickbooks_online', canUnpost: true });
    const sent = qbo.requests.filter((r) => r.operation === 'create' && r.body?.TotalAmt === 1150);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[0]!.raw).toContain('"TotalAmt":1150');

    // before QuickBooks is read again, cash-app subtracts the 100 itself: 200 open on 102
    const over = await allocate(orgQ, txLater!, [{ invoice_id: inv102, amount_paid: '200.01' }]);
    expect(over.status).toBe(422);
    expect(over.body.errors[0].msg).toContain('(200.00)');
    // the sync reads Balance 200 (QuickBooks applied the Payment): still 200 open, not 100
    await sync();
    expect((await stack.sql(`SELECT amount_open::text AS open FROM integrations.documents WHERE id = $1`, [inv102]))[0].open).toBe('200.0000');
    const later = await allocate(orgQ, txLater!, [{ invoice_id: inv102, amount_paid: '200.00' }]);
    expect(later.status, JSON.stringify(later.body)).toBe(200);
  });

  it('a QuickBooks refusal (ValidationFault) is the posting_error, counted by the metrics; POST …/post retries', async () => {
    const [tx] = await statement(orgQ, 'USD', [{ amount: '250.25' }]);
    qbo.refuseCreates = { message: 'Business Validation Error: The transaction date is in a closed period', detail: 'Closed period', code: '6000' };
    const before = (await metrics(orgQ)).posting_errors_count;
    const failed = await approveAndWait(orgQ, tx!, [{ invoice_id: inv103, amount_paid: '250.25' }], 'failed');
    expect(failed.posting_error).toContain('closed period');
    expect(failed).toMatchObject({ posted_at: null, erp_payment_id: null, status: 'approved' });
    expect((await metrics(orgQ)).posting_errors_count).toBe(before + 1);

    qbo.refuseCreates = null;
    const retry = await stack.request('POST', `/v2/payments/${failed.id}/post`, { token: orgQ.token });
    expect(retry.status).toBe(200);
    const posted = await paymentWhen(orgQ, failed.id, 'posted');
    expect(qbo.payments.find((p) => p.Id === posted.erp_payment_id)).toMatchObject({ TotalAmt: 250.25, CustomerRef: { value: '2' } });
    expect((await metrics(orgQ)).posting_errors_count).toBe(before);

    // unpost: QuickBooks deletes the Payment (with its SyncToken); the payment is unapproved again
    const unpost = await stack.request('POST', `/v2/payments/${failed.id}/unpost`, { token: orgQ.token });
    expect(unpost.status, JSON.stringify(unpost.body)).toBe(200);
    expect(unpost.body.posting_status).toBe('unposting');
    const unposted = await waitFor('unposted', async () => {
      const r = await getPayment(orgQ, failed.id);
      return r.body.posting_status === 'not_posted' ? r.body : null;
    });
    expect(unposted).toMatchObject({ status: 'unapproved', posted_at: null, erp_payment_id: null, approved_at: null });
    expect(await checkWorkflow(orgQ, failed.id, 'payment-posting-unpost.json')).toMatchObject({ status: 'unposted' });
    expect(qbo.deleted.map((p) => p.Id)).toContain(posted.erp_payment_id);
    expect(qbo.requests.filter((r) => r.operation === 'delete').at(-1)!.body).toEqual({ Id: posted.erp_payment_id, SyncToken: '0' });
    expect(qboBase.records.Invoice.find((i) => i.Id === '103')!.Balance).toBe(250.25);
    expect((await stack.request('POST', `/v2/payments/${failed.id}/unpost`, { token: orgQ.token })).status).toBe(409);
  });

  it('a deposit without allocations is approved on account of its payer and posted as unapplied credit', async () => {
    const partner = (await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND remote_id = '2'`, [orgQ.organizationId]))[0].id as string;
    const [tx] = await statement(orgQ, 'USD', [{ amount: '60.00' }]);
    const existing = (await stack.request('GET', `/v2/payments?bank_transaction_id=${tx}`, { token: orgQ.token })).body.data[0];
    const p = existing
      ? await stack.request('PATCH', `/v2/payments/${existing.id}`, { token: orgQ.token, body: { allocations: [], partner_id: partner } })
      : await stack.request('POST', '/v2/payments', { token: orgQ.token, body: { bank_transaction_id: tx, allocations: [], partner_id: partner } });
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgQ.token })).status).toBe(409);
    const approved = await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgQ.token, body: { on_account: true } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const posted = await paymentWhen(orgQ, p.body.id, 'posted');
    expect(qbo.payments.find((x) => x.Id === posted.erp_payment_id)).toMatchObject({ CustomerRef: { value: '2' }, TotalAmt: 60, UnappliedAmt: 60, Line: [] });
  });

  it('an unpost that dies between starting the workflow and committing leaves the payment posted; unposting again removes it', async () => {
    const partner = (await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND remote_id = '2'`, [orgQ.organizationId]))[0].id as string;
    const [tx] = await statement(orgQ, 'USD', [{ amount: '33.00' }]);
    const existing = (await stack.request('GET', `/v2/payments?bank_transaction_id=${tx}`, { token: orgQ.token })).body.data[0];
    const p = existing
      ? await stack.request('PATCH', `/v2/payments/${existing.id}`, { token: orgQ.token, body: { allocations: [], partner_id: partner } })
      : await stack.request('POST', '/v2/payments', { token: orgQ.token, body: { bank_transaction_id: tx, allocations: [], partner_id: partner } });
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgQ.token, body: { on_account: true } })).status).toBe(200);
    const posted = await paymentWhen(orgQ, p.body.id, 'posted');
    await temporal.client.workflow.getHandle(paymentPostingWorkflowId(p.body.id)).result();
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
    try {
      await expect(requestPaymentPosting({ db, temporal: temporal.client }, { organizationId: orgQ.organizationId, paymentId: p.body.id, operation: 'unpost' }, dies)).rejects.toThrow(
        'process killed',
      );
    } finally {
      await db.destroy();
    }
    expect((await getPayment(orgQ, p.body.id)).body).toMatchObject({ status: 'approved', posting_status: 'posted', erp_payment_id: posted.erp_payment_id });
    await skippedWorkflow(p.body.id);
    expect(qbo.deleted.map((x) => x.Id)).not.toContain(posted.erp_payment_id);

    const matchStatusOfTx = async () =>
      (await stack.request('GET', `/v2/bank-statements/${posted.statement_id}/transactions?page_size=500`, { token: orgQ.token })).body.data.find((t: { id: string }) => t.id === tx).match_status;
    expect(await matchStatusOfTx()).toBe('approved');
    const unpost = await stack.request('POST', `/v2/payments/${p.body.id}/unpost`, { token: orgQ.token });
    expect(unpost.status, JSON.stringify(unpost.body)).toBe(200);
    await paymentWhen(orgQ, p.body.id, 'not_posted');
    expect(qbo.deleted.map((x) => x.Id)).toContain(posted.erp_payment_id);
    // unposted: the payment is unapproved again, and its deposit is a proposal again
    expect((await getPayment(orgQ, p.body.id)).body).toMatchObject({ status: 'unapproved', approved_by: null, auto_approved: false });
    expect(await matchStatusOfTx()).toBe('proposed');
  });

  it('a failed write of the result after QuickBooks created the Payment does not post twice (integrations record)', async () => {
    const inv104 = await documentId(orgQ, { remote_id: '104' });
    const [tx] = await statement(orgQ, 'USD', [{ amount: '80.00' }]);
    const fault = await failUpdates(stack, { table: 'integrations.payment_postings', when: `NEW.status = 'posted'`, name: 'fail_posting_record' });
    try {
      const payment = await approveAndWait(orgQ, tx!, [{ invoice_id: inv104, amount_paid: '80.00' }], 'posted');
      const postingId = (await stack.sql(`SELECT id FROM integrations.payment_postings WHERE payment_id = $1`, [payment.id]))[0].id as string;
      // the retry found the Payment by its reference instead of sending the create again; QuickBooks holds exactly one Payment
      expect(creates(postingId)).toHaveLength(1);
      expect(payment.erp_posting_adopted).toBe(false); // the posting's own Payment, not an earlier attempt's
      expect(qbo.payments.filter((p) => p.Line.some((l) => l.LinkedTxn[0]!.TxnId === '104'))).toHaveLength(1);
      expect(payment.erp_payment_id).toBe(qbo.payments.find((p) => p.Line.some((l) => l.LinkedTxn[0]!.TxnId === '104'))!.Id);
    } finally {
      await fault.restore();
    }
  });

  /**
   * QuickBooks stored the Payment but its answer was lost (503, then 401 on the retry; or 401 at
   * once): the posting fails, and POST …/post later finds the Payment by the reference the posting
   * wrote into it (PaymentRefNum) and adopts it instead of creating a second one. One payment pays
   * an invoice (a second Payment would overpay it), the other is a deposit on account (nothing in
   * QuickBooks would stop a second Payment).
   */
  for (const variant of [
    { name: 'stored, then 503 and 401 on the retry', invoice: 106, failNext: [{ status: 503 as const, saved: true }, { status: 401 as const }] },
    { name: 'stored, then 401', invoice: null, failNext: [{ status: 401 as const, saved: true }] },
  ]) {
    it(`a repost after QuickBooks ${variant.name} adopts the stored Payment instead of creating a second one`, async () => {
      const [tx] = await statement(orgQ, 'USD', [{ amount: '70.00' }]);
      const existing = (await stack.request('GET', `/v2/payments?bank_transaction_id=${tx}`, { token: orgQ.token })).body.data[0];
      let body: Record<string, unknown>;
      if (variant.invoice) {
        qboBase.records.Invoice.push(qboInvoice(variant.invoice, 2, new Date().toISOString(), [{ qty: 1, unitPrice: 70, amount: 70 }], { TotalAmt: 70, Balance: 70 }));
        await sync();
        body = { allocations: [{ invoice_id: await documentId(orgQ, { remote_id: String(variant.invoice) }), amount_paid: '70.00' }] };
      } else {
        const partner = (await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND remote_id = '2'`, [orgQ.organizationId]))[0].id as string;
        body = { allocations: [], partner_id: partner };
      }
      const p = existing
        ? await stack.request('PATCH', `/v2/payments/${existing.id}`, { token: orgQ.token, body })
        : await stack.request('POST', '/v2/payments', { token: orgQ.token, body: { bank_transaction_id: tx, ...body } });
      expect(p.status, JSON.stringify(p.body)).toBe(200);
      const ofPayment = () => qbo.payments.filter((x) => x.PrivateNote?.includes(p.body.id));

      qbo.failNext = [...variant.failNext];
      const approved = await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgQ.token, body: { on_account: !variant.invoice } });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      const failed = await paymentWhen(orgQ, p.body.id, 'failed');
      expect(failed.posting_error).toContain('Authenticate the connection again');
      expect(qbo.failNext).toEqual([]);
      expect(ofPayment()).toHaveLength(1); // QuickBooks holds the Payment the posting does not know about

      const retry = await stack.request('POST', `/v2/payments/${p.body.id}/post`, { token: orgQ.token });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      const posted = await paymentWhen(orgQ, p.body.id, 'posted');
      expect(ofPayment()).toHaveLength(1);
      const held = ofPayment()[0]!;
      expect(posted).toMatchObject({ erp_payment_id: held.Id, erp_posting_adopted: true, erp_document_number: held.PaymentRefNum, posting_error: null });
      expect(held.PaymentRefNum).toMatch(/^RP[0-9A-V]{19}$/);
      const postings = await stack.sql(`SELECT status, erp_payment_id, erp_adopted FROM integrations.payment_postings WHERE payment_id = $1 ORDER BY created_at`, [p.body.id]);
      expect(postings).toEqual([
        { status: 'failed', erp_payment_id: null, erp_adopted: false },
        { status: 'posted', erp_payment_id: held.Id, erp_adopted: true },
      ]);
    });
  }

  it('a failed write of the outcome into cash-app is retried without calling QuickBooks again', async () => {
    qboBase.records.Invoice.push(qboInvoice(105, 2, new Date().toISOString(), [{ qty: 1, unitPrice: 45, amount: 45 }], { TotalAmt: 45, Balance: 45 }));
    await sync();
    const inv105 = await documentId(orgQ, { remote_id: '105' });
    const [tx] = await statement(orgQ, 'USD', [{ amount: '45.00' }]);
    const fault = await failUpdates(stack, { table: 'cash_app.payments', when: `OLD.posting_status = 'pending' AND NEW.posting_status = 'posted'`, name: 'fail_payment_record' });
    try {
      const payment = await approveAndWait(orgQ, tx!, [{ invoice_id: inv105, amount_paid: '45.00' }], 'posted');
      const postingId = (await stack.sql(`SELECT id FROM integrations.payment_postings WHERE payment_id = $1`, [payment.id]))[0].id as string;
      expect(creates(postingId)).toHaveLength(1);
      expect(qbo.payments.filter((p) => p.Line.some((l) => l.LinkedTxn[0]!.TxnId === '105'))).toHaveLength(1);
    } finally {
      await fault.restore();
    }
  });
  it('a payment applying a credit memo posts it as a Line linked with TxnType CreditMemo; QuickBooks takes the credit off the cash', async () => {
    const now = new Date().toISOString();
    qboBase.records.Invoice.push(qboInvoice(120, 2, now, [{ qty: 1, unitPrice: 100, amount: 100 }], { TotalAmt: 100, Balance: 100 }));
    qboBase.records.CreditMemo.push({
      Id: '301',
      SyncToken: '0',
      DocNumber: 'CM-301',
      TxnDate: '2026-03-20',
      TotalAmt: 30,
      Balance: 30,
      CurrencyRef: { value: 'USD', name: 'United States Dollar' },
      CustomerRef: { value: '2' },
      Line: [{ Id: '1', LineNum: 1, Description: 'Returned goods', Amount: 30, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { Qty: 1, UnitPrice: 30 } }],
      MetaData: { CreateTime: now, LastUpdatedTime: now },
    });
    await sync();
    const [inv120, memo301] = [await documentId(orgQ, { remote_id: '120' }), await documentId(orgQ, { remote_id: '301' })];
    const [tx] = await statement(orgQ, 'USD', [{ amount: '70.00' }]);
    const p = await allocate(orgQ, tx!, [
      { invoice_id: inv120, amount_paid: '100.00' },
      { invoice_id: memo301, amount_paid: '30.00' },
    ]);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect((await stack.request('POST', `/v2/payments/${p.body.id}/approve`, { token: orgQ.token })).status).toBe(200);
    const payment = await waitFor('posting finished', async () => {
      const res = await getPayment(orgQ, p.body.id);
      return ['posted', 'failed'].includes(res.body.posting_status) ? res.body : null;
    });
    expect(payment, JSON.stringify(payment)).toMatchObject({ posting_status: 'posted', allocated_amount: '70.00', unallocated_amount: '0.00', posting_error: null });
    expect(qbo.payments.find((p) => p.Id === payment.erp_payment_id)).toMatchObject({
      CustomerRef: { value: '2' },
      TotalAmt: 70,
      UnappliedAmt: 0,
      Line: [
        { Amount: 100, LinkedTxn: [{ TxnId: '120', TxnType: 'Invoice' }] },
        { Amount: 30, LinkedTxn: [{ TxnId: '301', TxnType: 'CreditMemo' }] },
      ],
    });
    expect(qboBase.records.CreditMemo.find((m) => m.Id === '301')!.Balance).toBe(0);
    expect(qboBase.records.Invoice.find((m) => m.Id === '120')!.Balance).toBe(0);
  });
});
