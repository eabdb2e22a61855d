/**
 * Durable connection syncs end to end: a QuickBooks Online connection authenticated through the
 * gateway against a fake QuickBooks (OAuth token endpoint + Accounting API query endpoint on
 * loopback), synced by the connectionSync workflow on a real Temporal dev server into the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, createDb, type TemporalHandle } from '@rp/platform';
import { cancelRunningSyncs } from '../services/integrations/src/domain/sync-schedule.js';
import { connectionSyncScheduleId, ENTITY_ID, ORGANIZATION_ID, TASK_QUEUES } from '@rp/workflows';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks, type QboRecord } from './support/fake-quickbooks.js';
import { replayHistory } from './support/histories.js';

const REDIRECT_URI = 'https://app.example.com/oauth/callback';
const OLD = '2026-01-10T08:00:00Z';

let stack: TestStack;
let fake: FakeQuickbooks;
let temporal: TemporalHandle;
let orgA: Org;
let orgB: Org;

function creditMemo(id: number, customerId: number, lastUpdated: string, total: number, balance: number): QboRecord {
  return {
    Id: String(id),
    DocNumber: `CM-${id}`,
    TxnDate: '2025-12-30',
    TotalAmt: total,
    Balance: balance,
    CurrencyRef: { value: 'USD', name: 'United States Dollar' },
    CustomerRef: { value: String(customerId) },
    Line: [{ Id: '1', LineNum: 1, Description: 'Returned goods', Amount: total, DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { Qty: 1, UnitPrice: total } }],
    MetaData: { CreateTime: lastUpdated, LastUpdatedTime: lastUpdated },
  };
}

function seed() {
  fake.records.Customer = Array.from({ length: 250 }, (_, i) => qboCustomer(i + 1, OLD));
  const invoices: QboRecord[] = [];
  for (let i = 1; i <= 230; i++) invoices.push(qboInvoice(1000 + i, ((i - 1) % 250) + 1, OLD, [{ qty: 1, unitPrice: 100, amount: 100 }], { TotalAmt: 100, Balance: 100 }));
  // Amounts that floats get wrong: 3 × 19.99 + 0.5 × 1234.565 (UnitPrice with 3 decimals).
  invoices[0] = qboInvoice(1001, 1, OLD, [{ qty: 3, unitPrice: 19.99, amount: 59.97 }, { qty: 0.5, unitPrice: 1234.565, amount: 617.28 }], { TotalAmt: 677.25, Balance: 677.25 });
  invoices[1] = qboInvoice(1002, 2, OLD, [{ qty: 1, unitPrice: 0.1, amount: 0.1 }, { qty: 1, unitPrice: 0.2, amount: 0.2 }], { TotalAmt: 0.3, Balance: 0, DocNumber: undefined });
  invoices[2] = qboInvoice(1003, 3, OLD, [{ qty: 1, unitPrice: 1234567.89, amount: 1234567.89 }], { TotalAmt: 1234567.89, Balance: 1000.01, CurrencyRef: { value: 'CAD' }, TxnDate: '2025-11-30' });
  fake.records.Invoice = invoices;
  fake.records.CreditMemo = Array.from({ length: 12 }, (_, i) => creditMemo(5001 + i, i + 1, OLD, 25.5 + i, i % 2 ? 0 : 25.5 + i));
}

async function authenticatedQbo(org: Org, name: string): Promise<string> {
  const created = await stack.request('POST', '/v2/integrations/connections', { token: org.token, body: { provider_name: 'quickbooks_online', name } });
  expect(created.status).toBe(200);
  const state = new URL(created.body.authorization_url).searchParams.get('state');
  const auth = await stack.request('POST', `/v2/integrations/connections/${created.body.id}/authenticate`, {
    token: org.token,
    body: { provider_name: 'quickbooks_online', authorization_code: fake.authorizationCode, redirect_uri: REDIRECT_URI, state, extra_data: { realmId: fake.realmId } },
  });
  expect(auth.status, JSON.stringify(auth.body)).toBe(200);
  expect(auth.body.is_authentication_pending).toBe(false);
  return created.body.id as string;
}

async function startSync(org: Org, connectionId: string) {
  const res = await stack.request('POST', `/v2/integrations/connections/${connectionId}/sync`, { token: org.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { batch_id: string; workflow_id: string; sync_runs: any[] };
}

async function runsOf(org: Org, connectionId: string, query = '') {
  const res = await stack.request('GET', `/v2/integrations/connections/${connectionId}/sync-runs${query}`, { token: org.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: any[]; total_records: number; current_page: number; next_page: number | null };
}

/** The organization's events of `type` (newest first) and how many there are. */
async function eventsOf(org: Org, type: string) {
  const res = await stack.request('GET', `/v2/events?type=${type}&page_size=200`, { token: org.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: { type: string; data: { object: any }; previous_attributes?: Record<string, any> }[]; total_records: number };
}

async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  fake = await startFakeQuickbooks();
  seed();
  stack = await startStack({
    workers: ['integrations'],
    env: {
      OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: { client_id: 'qbo-client', client_secret: 'qbo-secret' } }),
      OAUTH_REDIRECT_URI: REDIRECT_URI,
      PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${fake.url}/oauth2/v1/tokens/bearer`, api_base_url: fake.url } }),
    },
  });
  [orgA, orgB] = [await stack.onboard('Sync Org A'), await stack.onboard('Sync Org B')];
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 120_000);

afterAll(async () => {
  await temporal?.close();
  await stack?.close();
  await fake?.close();
});

describe('QuickBooks Online sync', () => {
  let connectionId: string;
  let firstEnd: string;

  it('runs an initial sync of customers, invoices and credit memos into the ledger, exactly', async () => {
    connectionId = await authenticatedQbo(orgA, 'QBO main');
    const started = await startSync(orgA, connectionId);
    expect(started.workflow_id).toBe(`connection-sync-${connectionId}-${started.batch_id}`);
    expect(started.sync_runs.map((r) => r.model_name)).toEqual(['customers', 'invoices', 'credit_memos']);
    for (const r of started.sync_runs) {
      expect(r).toMatchObject({ object: 'sync_run', status: 'scheduled', attempt: 0, batch_id: started.batch_id, is_initial_sync: true, is_one_off: true, timerange_start: null });
    }

    const handle = temporal.client.workflow.getHandle(started.workflow_id);
    const result = await handle.result();
    expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const description = await handle.describe();
    expect(description.taskQueue).toBe(TASK_QUEUES.integrations);
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgA.organizationId);
    expect(description.typedSearchAttributes.get(ENTITY_ID)).toBe(connectionId);

    const runs = await runsOf(orgA, connectionId);
    expect(runs.total_records).toBe(3);
    const byModel = Object.fromEntries(runs.data.map((r) => [r.model_name, r]));
    expect(byModel.customers).toMatchObject({ status: 'completed', attempt: 1, records_synced: 250, is_initial_sync: true, pagination_state: { done: true } });
    expect(byModel.invoices).toMatchObject({ status: 'completed', attempt: 1, records_synced: 230 });
    expect(byModel.credit_memos).toMatchObject({ status: 'completed', attempt: 1, records_synced: 12, error: null });
    for (const r of runs.data) {
      expect(r.batch_id).toBe(started.batch_id);
      expect(r.started_at).toMatch(/Z$/);
      expect(Date.parse(r.completed_at)).toBeGreaterThanOrEqual(Date.parse(r.started_at));
      expect(r.timerange_end).toBe(started.sync_runs[0].timerange_end);
    }
    firstEnd = byModel.customers.timerange_end;

    // The documented query shapes: keyset paging in (LastUpdatedTime, Id) order, no lower bound on an initial
    // sync. Every seeded record has the same LastUpdatedTime: each page asks for 100 more than it has read at that time.
    const customerQueries = fake.queriesFor('Customer');
    expect(customerQueries.map((q) => [q.since, q.maxResults])).toEqual([[null, 100], [OLD, 200], [OLD, 300]]);
    expect(customerQueries.every((q) => q.startPosition === 1 && q.minorversion === '75' && q.orderBy.join() === 'MetaData.LastUpdatedTime,Id')).toBe(true);
    expect(customerQueries[0]!.statement).toBe('SELECT * FROM Customer ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS 100');
    expect(customerQueries[1]!.statement).toBe(`SELECT * FROM Customer WHERE MetaData.LastUpdatedTime >= '${OLD}' ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS 200`);
    expect(fake.queriesFor('Invoice').map((q) => q.maxResults)).toEqual([100, 200, 300]);
    expect(fake.queriesFor('CreditMemo').map((q) => q.maxResults)).toEqual([100]);
    // An initial sync reads everything: no change data capture.
    expect(fake.cdcRequests).toEqual([]);
    expect(customerQueries[0]!.authorization).toMatch(/^Bearer qbo-access-token-/);

    const origin = `connection:${connectionId}`;
    const [counts] = await stack.sql(
      `SELECT (SELECT count(*) FROM integrations.partners WHERE organization_id = $1 AND origin = $2)::int AS partners,
              (SELECT count(*) FROM integrations.documents WHERE organization_id = $1 AND origin = $2 AND kind = 'invoice')::int AS invoices,
              (SELECT count(*) FROM integrations.documents WHERE organization_id = $1 AND origin = $2 AND kind = 'credit_memo')::int AS credit_memos,
              (SELECT count(*) FROM integrations.documents WHERE organization_id = $1 AND origin = $2 AND partner_id IS NULL)::int AS unlinked`,
      [orgA.organizationId, origin],
    );
    expect(counts).toEqual({ partners: 250, invoices: 230, credit_memos: 12, unlinked: 0 });

    // Events, each committed with its page or run: one per record created, one per model's completed run.
    expect((await eventsOf(orgA, 'partner.created')).total_records).toBe(250);
    expect((await eventsOf(orgA, 'invoice.created')).total_records).toBe(242);
    expect((await eventsOf(orgA, 'invoice.updated')).total_records).toBe(0);
    const completed = await eventsOf(orgA, 'connection.sync_completed');
    expect(completed.data.map((e) => e.data.object).sort((a, b) => a.id.localeCompare(b.id))).toEqual([...runs.data].sort((a, b) => a.id.localeCompare(b.id)));
    // Authentication made the connection healthy: one health change, from authentication_required.
    const health = await eventsOf(orgA, 'connection.health_changed');
    expect(health.total_records).toBe(1);
    expect(health.data[0]!.data.object).toMatchObject({ object: 'connection', id: connectionId, is_healthy: true, health: { status_code: 'healthy' } });
    expect(health.data[0]!.previous_attributes).toMatchObject({ is_healthy: false, health: { status_code: 'authentication_required' } });
    expect((await eventsOf(orgB, 'invoice.created')).total_records).toBe(0);

    const [partner] = await stack.sql(`SELECT * FROM integrations.partners WHERE organization_id = $1 AND remote_id = '7'`, [orgA.organizationId]);
    expect(partner).toMatchObject({
      name: 'Customer 7',
      legal_name: 'Customer 7 LLC',
      email: 'billing7@customer.example',
      phone: '(555) 010-0007',
      currency: 'USD',
      address: { line1: '7 Main Street', city: 'Mountain View', region: 'CA', postal_code: '94043', country: 'USA' },
    });

    const docs = await stack.sql(
      `SELECT d.*, p.remote_id AS partner_remote_id FROM integrations.documents d LEFT JOIN integrations.partners p ON p.id = d.partner_id
        WHERE d.organization_id = $1 AND d.remote_id IN ('1001', '1002', '1003', '5001', '5002') ORDER BY d.remote_id`,
      [orgA.organizationId],
    );
    expect(docs.map((d) => [d.remote_id, d.kind, d.document_number, d.company_code, d.fiscal_year, d.amount_in_document_currency, d.amount_open, d.status_open, d.currency, d.partner_remote_id])).toEqual([
      ['1001', 'invoice', 'INV-1001', fake.realmId, '2026', '677.2500', '677.2500', true, 'USD', '1'],
      ['1002', 'invoice', '1002', fake.realmId, '2026', '0.3000', '0.0000', false, 'USD', '2'],
      ['1003', 'invoice', 'INV-1003', fake.realmId, '2025', '1234567.8900', '1000.0100', true, 'CAD', '3'],
      ['5001', 'credit_memo', 'CM-5001', `${fake.realmId}:credit_memo`, '2025', '25.5000', '25.5000', true, 'USD', '1'],
      ['5002', 'credit_memo', 'CM-5002', `${fake.realmId}:credit_memo`, '2025', '26.5000', '0.0000', false, 'USD', '2'],
    ]);
    expect(docs[0]).toMatchObject({ document_date: '2026-03-15', net_due_date: '2026-04-14', text: 'Invoice 1001' });
    const lines = await stack.sql(`SELECT line_number, quantity, unit_amount, total_amount FROM integrations.line_items WHERE document_id = $1 ORDER BY line_number`, [docs[0].id]);
    expect(lines).toEqual([
      { line_number: 1, quantity: '3.000000', unit_amount: '19.990000', total_amount: '59.9700' },
      { line_number: 2, quantity: '0.500000', unit_amount: '1234.565000', total_amount: '617.2800' },
    ]);

    // The model cursors moved to the end of the window; the connection shows each model's last sync.
    const conn = await stack.request('GET', `/v2/integrations/connections/${connectionId}`, { token: orgA.token });
    expect(conn.status).toBe(200);
    const lastSyncs = conn.body.models.map((m: any) => [m.name, m.last_sync?.status, m.last_sync?.id]);
    expect(lastSyncs).toEqual(expect.arrayContaining([['customers', 'completed', byModel.customers.id], ['invoices', 'completed', byModel.invoices.id]]));

    // The recorded history replays against today's workflow code.
    const history = await handle.fetchHistory();
    await replayHistory(stack, description.workflowId, history, 'connection-sync.json');
  }, 90_000);

  it('syncs incrementally: only records changed since the last sync are fetched', async () => {
    // QuickBooks time literals have whole seconds: change the records one second into the new window
    // and start the sync once that second is over.
    const nowMs = Math.floor(Date.parse(firstEnd) / 1000) * 1000 + 1000;
    const now = new Date(nowMs).toISOString();
    while (Date.now() < nowMs + 1100) await new Promise((r) => setTimeout(r, 100));
    const c5 = fake.records.Customer[4]!;
    c5.DisplayName = 'Customer Five Renamed';
    c5.MetaData = { ...c5.MetaData, LastUpdatedTime: now };
    const c9 = fake.records.Customer[8]!;
    c9.PrimaryEmailAddr = { Address: 'new9@customer.example' };
    c9.MetaData = { ...c9.MetaData, LastUpdatedTime: now };
    const inv = fake.records.Invoice[0]!;
    inv.Balance = 0;
    inv.MetaData = { ...inv.MetaData, LastUpdatedTime: now };
    fake.records.CreditMemo.push(creditMemo(5100, 9, now, 10.05, 10.05));
    const before = fake.queries.length;

    const started = await startSync(orgA, connectionId);
    for (const r of started.sync_runs) expect(r).toMatchObject({ is_initial_sync: false, timerange_start: firstEnd });
    await temporal.client.workflow.getHandle(started.workflow_id).result();

    const runs = await runsOf(orgA, connectionId, `?status=completed&page_size=3`);
    expect(runs.total_records).toBe(6);
    expect(runs.next_page).toBe(1);
    const latest = Object.fromEntries(runs.data.map((r) => [r.model_name, r]));
    expect(runs.data.every((r) => r.batch_id === started.batch_id)).toBe(true);
    expect(latest.customers).toMatchObject({ records_synced: 2, is_initial_sync: false, timerange_start: firstEnd });
    expect(latest.invoices).toMatchObject({ records_synced: 1 });
    expect(latest.credit_memos).toMatchObject({ records_synced: 1 });

    const queries = fake.queries.slice(before);
    expect(queries).toHaveLength(3);
    // From the end of the last window, minus the 5 minutes of overlap for Intuit's clock.
    const since = new Date(Date.parse(firstEnd) - 5 * 60 * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    expect(queries.map((q) => q.since)).toEqual([since, since, since]);
    // Invoices and credit memos first ask change data capture for deletions since then (customers are never deleted).
    expect(fake.cdcRequests.map((c) => [c.entities.join(), c.changedSince])).toEqual([['Invoice', since], ['CreditMemo', since]]);

    const [counts] = await stack.sql(
      `SELECT (SELECT count(*) FROM integrations.partners WHERE organization_id = $1)::int AS partners,
              (SELECT count(*) FROM integrations.documents WHERE organization_id = $1)::int AS documents`,
      [orgA.organizationId],
    );
    expect(counts).toEqual({ partners: 250, documents: 243 });
    const changed = await stack.sql(`SELECT remote_id, name, email FROM integrations.partners WHERE organization_id = $1 AND remote_id IN ('5', '9') ORDER BY remote_id`, [orgA.organizationId]);
    expect(changed).toEqual([
      { remote_id: '5', name: 'Customer Five Renamed', email: 'billing5@customer.example' },
      { remote_id: '9', name: 'Customer 9', email: 'new9@customer.example' },
    ]);
    const [paid] = await stack.sql(`SELECT amount_open, status_open FROM integrations.documents WHERE organization_id = $1 AND remote_id = '1001'`, [orgA.organizationId]);
    expect(paid).toEqual({ amount_open: '0.0000', status_open: false });

    // Events of what changed only: two partners updated, the paid invoice closed, the new credit memo created.
    const updated = await eventsOf(orgA, 'partner.updated');
    expect(updated.data.map((e) => [e.data.object.remote_id, e.previous_attributes]).sort()).toEqual([
      ['5', { name: 'Customer 5' }],
      ['9', { email: 'billing9@customer.example' }],
    ]);
    const closed = await eventsOf(orgA, 'invoice.closed');
    expect(closed.total_records).toBe(1);
    expect(closed.data[0]!.data.object).toMatchObject({ remote_id: '1001', status_open: false, amount_open: '0.00' });
    expect(closed.data[0]!.previous_attributes).toEqual({ status_open: true, amount_open: '677.25' });
    expect((await eventsOf(orgA, 'invoice.created')).total_records).toBe(243);
    expect((await eventsOf(orgA, 'invoice.updated')).total_records).toBe(0);
    expect((await eventsOf(orgA, 'connection.sync_completed')).total_records).toBe(6);

    // Filters: one model's runs, newest first.
    const invoiceRuns = await runsOf(orgA, connectionId, '?model=invoices');
    expect(invoiceRuns.total_records).toBe(2);
    expect(invoiceRuns.data[0].batch_id).toBe(started.batch_id);
    expect(Date.parse(invoiceRuns.data[0].created_at)).toBeGreaterThan(Date.parse(invoiceRuns.data[1].created_at));
  }, 60_000);

  it('fails a run clearly when QuickBooks refuses the token (401), and marks the connection authentication_required', async () => {
    fake.forceStatus = 401;
    try {
      const started = await startSync(orgA, connectionId);
      const result = await temporal.client.workflow.getHandle(started.workflow_id).result();
      expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed', 'failed']);
      const runs = await runsOf(orgA, connectionId, '?status=failed');
      expect(runs.total_records).toBe(3);
      for (const r of runs.data) {
        expect(r.attempt).toBe(1); // not retried: a refused token does not heal by itself
        expect(r.error).toMatch(/^AuthenticationRequired: QuickBooks Online refused the access token \(401\)/);
        expect(r.completed_at).not.toBeNull();
      }
      const conn = await stack.request('GET', `/v2/integrations/connections/${connectionId}`, { token: orgA.token });
      expect(conn.body.health).toMatchObject({ healthy: false, authentication_required: true, status_code: 'authentication_required' });
      // One connection.sync_failed per failed run, carrying the run as listed; one health change.
      const failed = await eventsOf(orgA, 'connection.sync_failed');
      expect(failed.data.map((e) => e.data.object).sort((a, b) => a.id.localeCompare(b.id))).toEqual([...runs.data].sort((a, b) => a.id.localeCompare(b.id)));
      const health = await eventsOf(orgA, 'connection.health_changed');
      expect(health.total_records).toBe(2);
      expect(health.data[0]!.data.object.health).toMatchObject({ healthy: false, status_code: 'authentication_required', message: conn.body.health.message });
      expect(health.data[0]!.previous_attributes).toMatchObject({ is_healthy: true, health: { status_code: 'healthy' } });
      // The cursors did not move: the next sync reads from the last completed one.
      const [cursor] = await stack.sql(`SELECT count(DISTINCT sync_cursor)::int AS n FROM integrations.connection_models WHERE connection_id = $1`, [connectionId]);
      expect(cursor.n).toBe(1);
    } finally {
      fake.forceStatus = null;
    }
  }, 60_000);

  it('retries a rate-limited page (429) with backoff and completes once QuickBooks answers again', async () => {
    fake.forceStatus = 429;
    let started: Awaited<ReturnType<typeof startSync>>;
    try {
      started = await startSync(orgA, connectionId);
      await waitFor(async () => (await runsOf(orgA, connectionId, '?model=customers')).data[0]?.attempt >= 2);
    } finally {
      fake.forceStatus = null;
    }
    const result = await temporal.client.workflow.getHandle(started.workflow_id).result();
    expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const customers = (await runsOf(orgA, connectionId, '?model=customers')).data[0];
    expect(customers).toMatchObject({ batch_id: started.batch_id, status: 'completed', error: null });
    expect(customers.attempt).toBeGreaterThanOrEqual(2);
    // The sync reached QuickBooks with the stored token again: the connection is healthy again.
    const conn = await stack.request('GET', `/v2/integrations/connections/${connectionId}`, { token: orgA.token });
    expect(conn.body.health).toMatchObject({ healthy: true, status_code: 'healthy', authentication_required: false });
  }, 60_000);

  it('keeps organizations apart: another organization cannot sync or list the runs (404)', async () => {
    expect((await stack.request('POST', `/v2/integrations/connections/${connectionId}/sync`, { token: orgB.token })).status).toBe(404);
    const list = await stack.request('GET', `/v2/integrations/connections/${connectionId}/sync-runs`, { token: orgB.token });
    expect(list.status).toBe(404);
    expect(list.body).toMatchObject({ type: 'entity-not-found' });
    expect((await stack.request('GET', '/v2/integrations/connections/not-a-uuid/sync-runs', { token: orgA.token })).status).toBe(422); // ids are validated as ids
    const bad = await stack.request('GET', `/v2/integrations/connections/${connectionId}/sync-runs?status=finished`, { token: orgA.token });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['query', 'status']);
    // An organization API key reads the runs too.
    const byKey = await stack.request('GET', `/v2/integrations/connections/${connectionId}/sync-runs?page_size=1`, { token: orgA.apiKey });
    expect(byKey.status).toBe(200);
    expect(byKey.body.data).toHaveLength(1);
    const [n] = await stack.sql(`SELECT count(*)::int AS n FROM integrations.sync_runs WHERE organization_id = $1`, [orgB.organizationId]);
    expect(n.n).toBe(0);
  });

  it('refuses to sync what cannot sync (409): pending authentication, disabled sync, a provider without adapter', async () => {
    const pending = await stack.request('POST', '/v2/integrations/connections', { token: orgB.token, body: { provider_name: 'quickbooks_online', name: 'pending' } });
    const r1 = await stack.request('POST', `/v2/integrations/connections/${pending.body.id}/sync`, { token: orgB.token });
    expect(r1.status).toBe(409);
    expect(r1.body.detail).toMatch(/awaits authentication/);

    const xero = await stack.request('POST', '/v2/integrations/connections', { token: orgB.token, body: { provider_name: 'xero', name: 'xero' } });
    const r2 = await stack.request('POST', `/v2/integrations/connections/${xero.body.id}/sync`, { token: orgB.token });
    expect(r2.status).toBe(409);
    expect(r2.body.detail).toMatch(/no pull adapter/);

    const disabled = await authenticatedQbo(orgB, 'disabled');
    expect((await stack.request('PATCH', `/v2/integrations/connections/${disabled}`, { token: orgB.token, body: { is_sync_disabled: true } })).status).toBe(200);
    const r3 = await stack.request('POST', `/v2/integrations/connections/${disabled}/sync`, { token: orgB.token });
    expect(r3.status).toBe(409);
    expect(r3.body.detail).toMatch(/disabled/);
  }, 60_000);

  it('keeps a Temporal Schedule per connection: active once authenticated, paused while disabled, deleted with the connection', async () => {
    const id = await authenticatedQbo(orgB, 'scheduled');
    const schedule = temporal.client.schedule.getHandle(connectionSyncScheduleId(id));
    let d = await schedule.describe();
    expect(d.state.paused).toBe(false);
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'connectionSync', taskQueue: TASK_QUEUES.integrations, workflowId: `connection-sync-${id}` });
    expect(d.action.type === 'startWorkflow' && d.action.args).toEqual([{ organizationId: orgB.organizationId, connectionId: id, isOneOff: false, retryWindowMinutes: 30 }]);
    expect(d.spec.intervals?.[0]?.every).toBe(60 * 60 * 1000);
    let conn = await stack.request('GET', `/v2/integrations/connections/${id}`, { token: orgB.token });
    expect(conn.body.next_sync_at).toBe(d.info.nextActionTimes[0]!.toISOString());

    await stack.request('PATCH', `/v2/integrations/connections/${id}`, { token: orgB.token, body: { is_sync_disabled: true } });
    d = await schedule.describe();
    expect(d.state.paused).toBe(true);
    conn = await stack.request('GET', `/v2/integrations/connections/${id}`, { token: orgB.token });
    expect(conn.body.next_sync_at).toBeNull();

    await stack.request('PATCH', `/v2/integrations/connections/${id}`, { token: orgB.token, body: { is_sync_disabled: false } });
    expect((await schedule.describe()).state.paused).toBe(false);

    // The Schedule's action runs the same workflow: a scheduled (not one-off) initial sync.
    await schedule.trigger();
    const scheduled = await waitFor(async () => {
      const r = (await runsOf(orgB, id)).data;
      return r.length === 3 && r.every((x) => x.status === 'completed') ? r : null;
    });
    expect(scheduled.every((r) => r.is_one_off === false && r.is_initial_sync === true && r.attempt === 1)).toBe(true);
    expect(new Set(scheduled.map((r) => r.batch_id)).size).toBe(1);
    const recent = (await schedule.describe()).info.recentActions[0]!;
    expect(recent.action.workflow.workflowId.startsWith(`connection-sync-${id}-`)).toBe(true);

    expect((await stack.request('DELETE', `/v2/integrations/connections/${id}`, { token: orgB.token })).status).toBe(204);
    await expect(schedule.describe()).rejects.toThrow(/not found/i);
  }, 60_000);
});

describe('a sync interrupted mid-way', () => {
  let org: Org;
  let connectionId: string;

  it('resumes on a new worker from the last committed page: nothing lost, nothing duplicated', async () => {
    org = await stack.onboard('Sync Org Crash');
    connectionId = await authenticatedQbo(org, 'QBO crash');
    const before = fake.queries.length;
    const block = fake.block('Invoice', (q) => q.since !== null);
    const started = await startSync(org, connectionId);
    await block.reached;

    // The invoices run is on its second page: its first page is committed with its state (where the next page starts).
    const running = (await runsOf(org, connectionId, '?model=invoices')).data[0];
    expect(running).toMatchObject({ status: 'running', attempt: 1, records_synced: 100, pagination_state: { mode: 'full', phase: 'query', since: OLD, max_results: 100 } });
    expect(running.pagination_state.seen).toHaveLength(100);

    // The worker dies while the page request hangs; a new worker takes the retried activity.
    await stack.workers.integrations!.close();
    block.release();
    await stack.startWorker('integrations');
    const result = await temporal.client.workflow.getHandle(started.workflow_id).result();
    expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    // The retried activity recorded each record's event once: as many created events as rows, no updates.
    const [rows] = await stack.sql(
      `SELECT (SELECT count(*) FROM integrations.documents WHERE organization_id = $1)::int AS documents, (SELECT count(*) FROM integrations.partners WHERE organization_id = $1)::int AS partners`,
      [org.organizationId],
    );
    expect((await eventsOf(org, 'invoice.created')).total_records).toBe(rows.documents);
    expect((await eventsOf(org, 'partner.created')).total_records).toBe(rows.partners);
    expect((await eventsOf(org, 'invoice.updated')).total_records).toBe(0);

    const runs = Object.fromEntries((await runsOf(org, connectionId)).data.map((r) => [r.model_name, r]));
    expect(runs.invoices).toMatchObject({ status: 'completed', attempt: 2, records_synced: 230 });
    expect(runs.customers).toMatchObject({ status: 'completed', attempt: 1, records_synced: 250 });
    expect(runs.credit_memos).toMatchObject({ status: 'completed', records_synced: 13 });

    // Page 1 was not fetched again; the interrupted page was fetched twice.
    const invoicePages = fake.queries.slice(before).filter((q) => q.entity === 'Invoice').map((q) => [q.since, q.maxResults]);
    expect(invoicePages).toEqual([[null, 100], [OLD, 200], [OLD, 200], [OLD, 300]]);

    const [counts] = await stack.sql(
      `SELECT count(*)::int AS documents, count(DISTINCT remote_id)::int AS distinct_remote,
              (SELECT count(*) FROM integrations.line_items l WHERE l.organization_id = $1)::int AS lines
         FROM integrations.documents WHERE organization_id = $1 AND kind = 'invoice'`,
      [org.organizationId],
    );
    expect(counts).toEqual({ documents: 230, distinct_remote: 230, lines: 227 + 2 + 2 + 1 + 13 });
  }, 120_000);

  it('marks the runs cancelled when the sync workflow is cancelled', async () => {
    fake.records.Customer[0]!.MetaData = { ...fake.records.Customer[0]!.MetaData, LastUpdatedTime: new Date().toISOString() };
    const block = fake.block('Customer', 1);
    const started = await startSync(org, connectionId);
    await block.reached;
    // A second sync while this one runs is refused; a scheduled one skips.
    expect((await stack.request('POST', `/v2/integrations/connections/${connectionId}/sync`, { token: org.token })).status).toBe(409);
    const schedule = temporal.client.schedule.getHandle(connectionSyncScheduleId(connectionId));
    await schedule.trigger();
    const action = await waitFor(async () => (await schedule.describe()).info.recentActions[0]);
    const skipped = await temporal.client.workflow.getHandle(action.action.workflow.workflowId).result();
    expect(skipped).toMatchObject({ batchId: null, skipped: expect.stringContaining('another sync of the connection is in progress') });
    // What a connection delete does first: cancel the running sync and wait for its workflow to close.
    const handle = temporal.client.workflow.getHandle(started.workflow_id);
    const db = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 1 });
    try {
      await cancelRunningSyncs({ db, temporal: temporal.client }, org.organizationId, connectionId);
    } finally {
      await db.destroy();
    }
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    await expect(handle.result()).rejects.toThrow();
    block.release();
    const runs = await waitFor(async () => {
      const r = (await runsOf(org, connectionId)).data.filter((x) => x.batch_id === started.batch_id);
      return r.every((x) => x.status === 'cancelled') ? r : null;
    });
    expect(runs).toHaveLength(3);
    expect(runs.every((r) => r.completed_at !== null)).toBe(true);
  }, 60_000);
});

/**
 * QuickBooks' own identity, changes while a sync pages, deletions and voids. Runs last: it edits,
 * deletes and inserts records of the shared fake company. Ledger state is read with SQL (no endpoint
 * lists the ledger's documents); the one SQL set-up is the 40-day-old sync cursor (no endpoint can
 * move a cursor back in time).
 */
describe('QuickBooks Online identity, changes during a sync, deletions', () => {
  let org: Org;
  let connectionId: string;
  const nowStamp = () => new Date().toISOString();
  const touch = (r: QboRecord, changes: Record<string, unknown>) => Object.assign(r, changes, { MetaData: { ...r.MetaData, LastUpdatedTime: nowStamp() } });
  const invoice = (id: string) => fake.records.Invoice.find((r) => r.Id === id)!;
  const docs = (remoteIds: string[], kind = 'invoice') =>
    stack.sql(
      `SELECT id, remote_id, document_number, fiscal_year, document_date::text, amount_in_document_currency, amount_open, status_open,
              to_jsonb(d) ->> 'remote_deleted_at' AS remote_deleted_at
         FROM integrations.documents AS d WHERE organization_id = $1 AND kind = $2 AND remote_id = ANY($3::text[]) ORDER BY remote_id, created_at`,
      [org.organizationId, kind, remoteIds],
    );
  async function syncAndWait() {
    const started = await startSync(org, connectionId);
    const result = await temporal.client.workflow.getHandle(started.workflow_id).result();
    expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    return Object.fromEntries((await runsOf(org, connectionId)).data.filter((r) => r.batch_id === started.batch_id).map((r) => [r.model_name, r]));
  }

  beforeAll(async () => {
    org = await stack.onboard('Sync Org Identity');
    connectionId = await authenticatedQbo(org, 'QBO identity');
    await syncAndWait();
  }, 90_000);

  it('updates the same document when QuickBooks edits its DocNumber or TxnDate (no second open document)', async () => {
    const [before5, before8] = await docs(['1005', '1008']);
    expect([before5.document_number, before8.fiscal_year]).toEqual(['INV-1005', '2026']);
    touch(invoice('1005'), { DocNumber: 'INV-1005-R' });
    touch(invoice('1008'), { TxnDate: '2025-12-20', Balance: 60 });

    const runs = await syncAndWait();
    const after = await docs(['1005', '1008']);
    expect(after.map((d) => [d.id, d.remote_id, d.document_number, d.fiscal_year, d.document_date, d.amount_open, d.status_open])).toEqual([
      [before5.id, '1005', 'INV-1005-R', '2026', '2026-03-15', '100.0000', true],
      [before8.id, '1008', 'INV-1008', '2025', '2025-12-20', '60.0000', true],
    ]);
    const [stale] = await stack.sql(
      `SELECT count(*)::int AS n FROM integrations.documents WHERE organization_id = $1 AND status_open AND (document_number = 'INV-1005' OR (document_number = 'INV-1008' AND fiscal_year = '2026'))`,
      [org.organizationId],
    );
    expect(stale.n).toBe(0);
    expect(runs.invoices).toMatchObject({ is_initial_sync: false, pagination_state: { mode: 'incremental', done: true } });
  }, 60_000);

  it('closes a deleted invoice, a deleted credit memo and a voided invoice at the next sync', async () => {
    const [open6, open7] = await docs(['1006', '1007']);
    expect([open6.status_open, open7.status_open]).toEqual([true, true]);
    const [memo] = await docs(['5003'], 'credit_memo');
    expect(memo).toMatchObject({ amount_open: '27.5000', status_open: true });
    fake.remove('Invoice', '1006');
    fake.remove('CreditMemo', '5003');
    // QuickBooks keeps a voided invoice with zero amounts and the note "Voided".
    touch(invoice('1007'), { TotalAmt: 0, Balance: 0, PrivateNote: 'Voided', Line: [{ Amount: 0, DetailType: 'SubTotalLineDetail', SubTotalLineDetail: {} }] });
    const cdcBefore = fake.cdcRequests.length;

    const runs = await syncAndWait();
    const [deleted, voided] = await docs(['1006', '1007']);
    expect(deleted).toMatchObject({ id: open6.id, amount_in_document_currency: '100.0000', amount_open: '0.0000', status_open: false });
    expect(deleted.remote_deleted_at).not.toBeNull();
    expect(voided).toMatchObject({ id: open7.id, amount_in_document_currency: '0.0000', amount_open: '0.0000', status_open: false, remote_deleted_at: null });
    expect((await docs(['5003'], 'credit_memo'))[0]).toMatchObject({ id: memo.id, amount_open: '0.0000', status_open: false });
    // Each became closed with its own invoice.closed; the deleted one says so in remote_deleted_at.
    const closed = (await eventsOf(org, 'invoice.closed')).data;
    expect(closed.map((e) => e.data.object.id).sort()).toEqual([open6.id, open7.id, memo.id].sort());
    const gone = closed.find((e) => e.data.object.id === open6.id)!;
    expect(gone.data.object.remote_deleted_at).toEqual(expect.any(String));
    expect(gone.previous_attributes).toEqual({ status_open: true, amount_open: '100.00', remote_deleted_at: null });
    // Nothing of them is open AR any more.
    const [open] = await stack.sql(
      `SELECT count(*)::int AS n FROM integrations.documents WHERE organization_id = $1 AND status_open AND remote_id IN ('1006', '1007', '5003')`,
      [org.organizationId],
    );
    expect(open.n).toBe(0);
    expect(fake.cdcRequests.slice(cdcBefore).map((c) => c.entities.join())).toEqual(['Invoice', 'CreditMemo']);
    // The deletions count as synced records (overlapping re-reads of earlier changes may add more).
    expect(runs.invoices.records_synced).toBeGreaterThanOrEqual(2);
    expect(runs.credit_memos.records_synced).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('skips nothing when records are inserted, updated and deleted while a sync pages, and closes the deleted one at the next sync', async () => {
    const other = await stack.onboard('Sync Org Paging');
    const otherConnection = await authenticatedQbo(other, 'QBO paging');
    let invoicePages = 0;
    const block = fake.block('Invoice', () => ++invoicePages === 2);
    const started = await startSync(other, otherConnection);
    await block.reached;
    // Page 1 (the 100 oldest changes) is in the ledger. Now a QuickBooks user deletes and edits records
    // already read, edits one not read yet and adds one.
    const [readFirst, readSecond] = [...fake.records.Invoice].sort((a, b) => Date.parse(a.MetaData.LastUpdatedTime) - Date.parse(b.MetaData.LastUpdatedTime) || Number(a.Id) - Number(b.Id));
    fake.remove('Invoice', readFirst!.Id);
    touch(readSecond!, { Balance: 12.34, DocNumber: `${String(readSecond!.DocNumber)}-EDITED` });
    touch(invoice('1200'), { Balance: 55.55 });
    fake.records.Invoice.push(qboInvoice(2000, 7, nowStamp(), [{ qty: 2, unitPrice: 10, amount: 20 }], { TotalAmt: 20, Balance: 20 }));
    block.release();
    const result = await temporal.client.workflow.getHandle(started.workflow_id).result();
    expect(result.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);

    // Every invoice QuickBooks has now is in the ledger once, with its current balance.
    const ledger = await stack.sql(
      `SELECT remote_id, document_number, amount_open, count(*) OVER (PARTITION BY remote_id)::int AS copies FROM integrations.documents WHERE organization_id = $1 AND kind = 'invoice'`,
      [other.organizationId],
    );
    const byId = new Map(ledger.map((d) => [d.remote_id as string, d]));
    const missing = fake.records.Invoice.filter((r) => !byId.has(r.Id)).map((r) => r.Id);
    expect(missing).toEqual([]);
    expect(ledger.every((d) => d.copies === 1)).toBe(true);
    expect([byId.get(readSecond!.Id)?.amount_open, byId.get('1200')?.amount_open, byId.get('2000')?.amount_open]).toEqual(['12.3400', '55.5500', '20.0000']);
    // The invoice renumbered after it was read is one document, with its new number.
    expect(byId.get(readSecond!.Id)?.document_number).toBe(`${String(readSecond!.DocNumber)}`);
    expect(ledger.filter((d) => String(d.document_number).startsWith(String(readSecond!.DocNumber).replace(/-EDITED$/, '')))).toHaveLength(1);

    // The one deleted after it was read: CDC reports it at the next sync.
    const next = await startSync(other, otherConnection);
    await temporal.client.workflow.getHandle(next.workflow_id).result();
    const [gone] = await stack.sql(`SELECT amount_open, status_open, to_jsonb(d) ->> 'remote_deleted_at' AS remote_deleted_at FROM integrations.documents AS d WHERE organization_id = $1 AND kind = 'invoice' AND remote_id = $2`, [
      other.organizationId,
      readFirst!.Id,
    ]);
    expect(gone).toMatchObject({ amount_open: '0.0000', status_open: false });
    expect(gone.remote_deleted_at).not.toBeNull();
  }, 90_000);

  it('reads in full when the last sync is older than CDC looks back (30 days), closing what QuickBooks no longer has', async () => {
    // A deletion 40 days ago: CDC could no longer report it.
    const [live] = await docs(['1009']);
    expect(live.status_open).toBe(true);
    fake.remove('Invoice', '1009', new Date(Date.now() - 40 * 24 * 3600 * 1000).toISOString());
    await stack.sql(`UPDATE integrations.connection_models SET sync_cursor = now() - interval '40 days' WHERE connection_id = $1`, [connectionId]);
    const cdcBefore = fake.cdcRequests.length;
    const queriesBefore = fake.queries.length;

    const runs = await syncAndWait();
    const [gone] = await docs(['1009']);
    expect(gone).toMatchObject({ id: live.id, amount_open: '0.0000', status_open: false });
    // What QuickBooks still has stays as it is.
    const [kept] = await docs(['1005']);
    expect(kept).toMatchObject({ document_number: 'INV-1005-R', status_open: true, remote_deleted_at: null });
    expect(fake.cdcRequests.length).toBe(cdcBefore);
    expect(fake.queries.slice(queriesBefore).filter((q) => q.entity === 'Invoice')[0]).toMatchObject({ since: null, maxResults: 100 });
    expect(runs.invoices.pagination_state).toMatchObject({ mode: 'full', done: true });
  }, 60_000);
});
