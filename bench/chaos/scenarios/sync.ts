/** The integrations worker killed (kill -9) while a QuickBooks connection syncs against the fake QuickBooks on loopback. */
import { qboCustomer, qboInvoice, type QboRecord } from '../../../test/support/fake-quickbooks.js';
import { type Body, sql } from '../api.js';
import { P, REDIRECT_URI, runId, type Scenario, suite } from '../context.js';
import { sleep, waitFor } from '../wait.js';

function seedFake() {
  const { fake } = suite;
  const t = (i: number) => new Date(Date.UTC(2026, 0, 10, 8, 0, 0) + i * 1000).toISOString().replace('.000Z', 'Z');
  fake.records.Customer = Array.from({ length: P.qboCustomers }, (_, i) => qboCustomer(i + 1, t(i)));
  fake.records.Invoice = Array.from({ length: P.qboInvoices }, (_, i): QboRecord =>
    qboInvoice(10_000 + i, (i % P.qboCustomers) + 1, t(i), [{ qty: 1, unitPrice: 100, amount: 100 }], { TotalAmt: 100, Balance: 100 }),
  );
  fake.records.CreditMemo = [];
}

export async function workerSync(sc: Scenario) {
  const { stack, api, org, fake } = suite;
  seedFake();
  const created = await api.call('POST', '/v2/integrations/connections', { token: org.token, body: { provider_name: 'quickbooks_online', name: `QBO ${runId}` } });
  if (created.status !== 200) throw new Error(`connection: ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
  const connectionId = created.body.id as string;
  const state = new URL(created.body.authorization_url).searchParams.get('state');
  const auth = await api.call('POST', `/v2/integrations/connections/${connectionId}/authenticate`, {
    token: org.token,
    body: { provider_name: 'quickbooks_online', authorization_code: fake.authorizationCode, redirect_uri: REDIRECT_URI, state, extra_data: { realmId: fake.realmId } },
  });
  if (auth.status !== 200) throw new Error(`authenticate: ${auth.status} ${JSON.stringify(auth.body).slice(0, 300)}`);
  // hold the second page of invoices: the sync is then surely mid-way when the worker dies
  let invoiceQueries = 0;
  const block = fake.block('Invoice', () => ++invoiceQueries === 2);
  const sync = await api.call('POST', `/v2/integrations/connections/${connectionId}/sync`, { token: org.token });
  if (sync.status !== 200) throw new Error(`sync: ${sync.status} ${JSON.stringify(sync.body).slice(0, 300)}`);
  await Promise.race([block.reached, sleep(60_000).then(() => Promise.reject(new Error('the sync never reached the second invoice page')))]);
  const k = stack.kill9('integrations-worker');
  block.release();
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let runs: Body[] = [];
  let doneAt: number | null = null;
  try {
    runs = await waitFor('every sync run of the batch to complete', P.jobMs, async () => {
      const r = await api.call('GET', `/v2/integrations/connections/${connectionId}/sync-runs?page_size=50`, { token: org.token });
      const mine = (r.body?.data ?? []).filter((x: Body) => x.batch_id === sync.body.batch_id);
      return mine.length && mine.every((x: Body) => !['scheduled', 'running'].includes(x.status)) ? mine : null;
    }, 500);
    doneAt = Date.now();
  } catch (err) {
    sc.check('the sync completes', false, (err as Error).message);
  }
  sc.check('every sync run completed', runs.length === 3 && runs.every((r) => r.status === 'completed'), runs.map((r) => `${r.model_name}:${r.status}:${r.records_synced}${r.error ? `:${r.error}` : ''}`).join(', '));
  const [c] = await sql(stack.localEnv!.DATABASE_URL, `SELECT
      (SELECT count(*)::int FROM integrations.partners WHERE organization_id = $1 AND origin = $2) AS customers,
      (SELECT count(DISTINCT remote_id)::int FROM integrations.partners WHERE organization_id = $1 AND origin = $2) AS distinct_customers,
      (SELECT count(*)::int FROM integrations.documents WHERE organization_id = $1 AND origin = $2 AND kind = 'invoice') AS invoices,
      (SELECT count(DISTINCT remote_id)::int FROM integrations.documents WHERE organization_id = $1 AND origin = $2 AND kind = 'invoice') AS distinct_invoices`, [org.id, `connection:${connectionId}`]);
  sc.check(`ledger holds ${P.qboCustomers} customers and ${P.qboInvoices} invoices, none twice (SQL cross-check)`,
    c.customers === P.qboCustomers && c.distinct_customers === P.qboCustomers && c.invoices === P.qboInvoices && c.distinct_invoices === P.qboInvoices, JSON.stringify(c));
  sc.recovery.kill_to_workflow_complete = doneAt ? doneAt - k.at : null;
}
