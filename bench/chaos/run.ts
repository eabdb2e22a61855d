/**
 * `npm run chaos`: the fault-injection suite. Brings up the real stack with the
 * `npm start` launcher (scripts/start.ts) on free ports and a data directory of its own
 * (var/chaos/<run>), onboards an organization of its own, and per scenario injects a fault and
 * checks the invariants through the gateway, as an API client would:
 *
 *   cash-app worker kill -9 while a multi-thousand-line statement is stored and matched
 *   cash-app worker kill -9 while payment receipts are being emailed (exactly one email each, MailDev)
 *   integrations worker kill -9 while a QuickBooks connection syncs (fake QuickBooks on loopback)
 *   admin worker kill -9 while welcome emails are being sent (exactly one each)
 *   admin worker kill -9 while user invitations are emailed and a CNAM registration is submitted
 *     (one invitation each with a working token; the operator CLI's decision approves it once)
 *   integrations API kill -9 under invoice push load (only unacknowledged batches fail, with 502/503;
 *     a retry of every batch returns the same ids)
 *   PostgreSQL stopped, Temporal stopped during processing (503 meanwhile, never 500; every in-flight
 *     job completes afterwards without a manual step; an upload refused during the outage succeeds
 *     when retried)
 *
 * The process "comes back" is the launcher's supervision; a stopped PostgreSQL/Temporal that the
 * launcher does not restart within the outage is started again by the suite (same command line).
 * SQL is used only for read-only cross-checks no endpoint can answer (duplicate rows, ledger counts).
 *
 * CHAOS_PROFILE=ci (or --ci): the bounded form for CI: smaller statement and load, 12 s outages, one
 * stack (restart backoff = the outage throughout), without the sync, welcome-email, invitation and frozen-dependency
 * scenarios. CHAOS_SCENARIOS=key,key runs a subset (keys in SCENARIOS); its results are merged into the
 * profile's recorded entry (each marked `measured_separately`), not replacing the other scenarios.
 * Results: bench/results/chaos.json (per profile) and the exit code (1 when an invariant broke).
 */
import { execFile, execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectTemporal, createDb } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { cnamRegistrationWorkflowId } from '@rp/workflows';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks, type QboRecord } from '../../test/support/fake-quickbooks.js';
import { Api, chunk, type Body, customerRecord, invoiceRecord, sql, statementBody, type LedgerInvoice } from './api.js';
import { sleep, Stack, waitFor } from './stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CI = process.env.CHAOS_PROFILE === 'ci' || process.argv.includes('--ci');
const PROFILE = CI ? 'ci' : 'full';
const P = CI
  ? { statementLines: 1500, customers: 40, receipts: 5, welcomes: 5, invites: 5, pushBatches: 18, pushBatchSize: 50, pushConcurrency: 3, qboCustomers: 150, qboInvoices: 300, outageMs: 12_000, outageLines: 300, backMs: 90_000, jobMs: 150_000, only: (process.env.CHAOS_SCENARIOS ?? '').split(',').filter(Boolean) }
  : { statementLines: 5000, customers: 100, receipts: 20, welcomes: 20, invites: 20, pushBatches: 60, pushBatchSize: 100, pushConcurrency: 4, qboCustomers: 600, qboInvoices: 1500, outageMs: 30_000, outageLines: 1000, backMs: 120_000, jobMs: 360_000, only: (process.env.CHAOS_SCENARIOS ?? '').split(',').filter(Boolean) };

const started = Date.now();
const log = (m: string) => process.stdout.write(`[chaos ${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);

interface Check {
  name: string;
  pass: boolean;
  detail?: string;
}
interface ScenarioResult {
  name: string;
  fault: string;
  outcome: 'pass' | 'fail';
  checks: Check[];
  recovery_ms: Record<string, number | null>;
  facts: Record<string, unknown>;
  error?: string;
  duration_ms: number;
}

class Scenario {
  checks: Check[] = [];
  recovery: Record<string, number | null> = {};
  facts: Record<string, unknown> = {};
  check(name: string, pass: boolean, detail?: string) {
    this.checks.push({ name, pass, ...(detail ? { detail } : {}) });
    log(`  ${pass ? 'ok  ' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
  }
}

const runId = `${new Date().toISOString().slice(0, 10).replace(/-/g, '')}${randomBytes(3).toString('hex')}`;
const varDir = path.join(root, 'var', 'chaos', runId);
/** statement statuses while its workflow runs */
const RUNNING = ['uploaded', 'processing'];
const REDIRECT_URI = 'https://app.example.com/oauth/callback';

let stack: Stack;
let api: Api;
let fake: FakeQuickbooks;
let org: { id: string; token: string; apiKey: string };
let stackRestarts = 0;
let stackStartMs = 0;
let outageStackStartMs: number | null = null;
const customerName = (i: number) => `Chaos Customer ${i} GmbH`;
const customerEmail = (i: number) => `ap.${i}.${runId}@chaos.example`;
let invoices: LedgerInvoice[] = [];
/** Matching proposes each open invoice once, so every statement pays invoices of its own: slices of the pool. */
let poolNext = 0;
const takeInvoices = (n: number) => invoices.slice(poolNext, (poolNext += n));
const OUTAGE_SCENARIOS = 4;
const poolSize = () => P.statementLines + P.receipts + OUTAGE_SCENARIOS * (P.outageLines + 20);

async function ensureStack(): Promise<void> {
  if (stack.running() && (await stack.readyz()) === 200) return;
  log(`the stack is down (${stack.exitNote || 'gateway not ready'}): starting it again`);
  await stack.stop();
  stackRestarts++;
  await stack.start();
}

async function onboard(): Promise<void> {
  const env = stack.localEnv!;
  const t = await connectTemporal({ address: env.TEMPORAL_ADDRESS, namespace: env.TEMPORAL_NAMESPACE });
  const db = createDb({ url: env.DATABASE_URL, schema: 'admin', poolMax: 1 });
  try {
    const o = await onboardOrganization(
      { db, temporal: t.client },
      { name: `Chaos ${runId}`, base_currency: 'EUR', timezone: 'Europe/Berlin', admin: { email: `chaos.admin.${runId}@chaos.example`, name: 'Chaos Admin' } },
    );
    org = { id: o.organization.id, token: o.accessToken.token, apiKey: o.apiKey.token };
  } finally {
    await db.destroy();
    await t.close();
  }
}

async function pushAll(kind: 'customers' | 'invoices', records: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (const batch of chunk(records, 100)) {
    const res = await api.call('POST', `/v2/integrations/providers/middleware/${kind}`, { token: org.apiKey, body: batch });
    if (res.status !== 200 || !res.body.results.every((r: { success: boolean }) => r.success)) throw new Error(`set-up push of ${kind}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    ids.push(...res.body.results.map((r: { service_id: string }) => r.service_id));
  }
  return ids;
}

/** The org's ledger: `P.customers` customers with unique emails, `P.statementLines` open invoices. */
async function setUpLedger(): Promise<void> {
  await pushAll('customers', Array.from({ length: P.customers }, (_, i) => customerRecord(`CH-${i + 1}`, customerName(i + 1), customerEmail(i + 1))));
  invoices = Array.from({ length: poolSize() }, (_, i) => ({
    number: String(80_000_000 + i + 1),
    amount: (100 + ((i * 37) % 9000) + ((i * 13) % 100) / 100).toFixed(2),
    customer: (i % P.customers) + 1,
  }));
  await pushAll('invoices', invoices.map((inv) => invoiceRecord(inv.number, `CH-${inv.customer}`, inv.amount)));
}

async function uploadStatement(tag: string, lines: LedgerInvoice[], timeoutMs = 120_000) {
  return api.call('POST', '/v2/bank-statements', { token: org.token, body: statementBody(`${runId}-${tag}`, lines, customerName), timeoutMs });
}

async function statementOf(id: string) {
  return api.call('GET', `/v2/bank-statements/${id}?transactions=omit`, { token: org.token, timeoutMs: 10_000 });
}

/** Wait for a statement to end (ready or failed) and return it. */
async function statementEnd(id: string, timeoutMs: number) {
  return waitFor(`statement ${id} to be ready`, timeoutMs, async () => {
    const s = await statementOf(id);
    return s.status === 200 && ['ready', 'failed'].includes(s.body.status) ? s.body : null;
  }, 500);
}

/** The invariants of a processed statement: ready, every line stored once, one payment proposal per line. */
async function checkStatement(sc: Scenario, id: string, lines: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  let s: Body;
  try {
    s = await statementEnd(id, timeoutMs);
  } catch (err) {
    const last = await statementOf(id);
    sc.check('statement completes', false, `${(err as Error).message}; last seen ${JSON.stringify(last.body).slice(0, 300)}`);
    return Date.now();
  }
  const doneAt = Date.now();
  sc.check('statement completes (ready, not failed)', s.status === 'ready', `status ${s.status}${s.error ? `, error ${JSON.stringify(s.error)}` : ''} after ${((doneAt - t0) / 1000).toFixed(1)} s more`);
  sc.check(`transaction_count = ${lines}`, s.transaction_count === lines, `transaction_count ${s.transaction_count}`);
  const txs = await api.call('GET', `/v2/bank-statements/${id}/transactions?page_size=1`, { token: org.token });
  sc.check(`GET …/transactions lists ${lines}`, txs.body?.total_records === lines, `total_records ${txs.body?.total_records}`);
  const pays = await api.call('GET', `/v2/payments?statement_id=${id}&page_size=1`, { token: org.token });
  sc.check(`one proposed payment per line (${lines})`, pays.body?.total_records === lines, `total_records ${pays.body?.total_records}`);
  const [dup] = await sql(stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS rows, count(DISTINCT unique_import_id)::int AS distinct_lines,
      (SELECT count(*)::int FROM cash_app.payments p WHERE p.bank_transaction_id IN (SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1)) AS payments,
      (SELECT count(DISTINCT p.bank_transaction_id)::int FROM cash_app.payments p WHERE p.bank_transaction_id IN (SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1)) AS paid_lines
    FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
  sc.check('no row lost or duplicated (SQL cross-check)', dup.rows === lines && dup.distinct_lines === lines && dup.payments === dup.paid_lines && dup.payments === lines, JSON.stringify(dup));
  return doneAt;
}

// ------------------------------------------------------------------ scenarios

async function workerStatement(sc: Scenario) {
  const lines = takeInvoices(P.statementLines);
  const res = await uploadStatement('kill-cash', lines);
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const id = res.body.id as string;
  sc.facts.statement_lines = lines.length;
  const t0 = Date.now();
  // kill while the statement is being stored (the first lines are in, or at the latest 1.5 s after the upload)
  await waitFor('the statement to start processing', 60_000, async () => {
    const s = await statementOf(id);
    return !RUNNING.includes(s.body?.status) || s.body.transaction_count > 0 || Date.now() - t0 > 1500;
  }, 100);
  const before = (await statementOf(id)).body;
  sc.facts.at_first_kill = { status: before.status, transaction_count: before.transaction_count };
  sc.check('the kill hit a running workflow', RUNNING.includes(before.status), `status ${before.status}, ${before.transaction_count} lines stored at the kill`);
  const k = stack.kill9('cash-app-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  if (!CI) {
    // a second kill during matching (every line stored, proposals being made)
    const mid = await waitFor('the statement to reach the matching step', 120_000, async () => {
      const s = (await statementOf(id)).body;
      return !RUNNING.includes(s.status) || s.transaction_count === lines.length ? s : null;
    }, 200);
    if (RUNNING.includes(mid.status)) {
      sc.facts.at_second_kill = { status: mid.status, transaction_count: mid.transaction_count };
      const k2 = stack.kill9('cash-app-worker');
      sc.recovery.second_kill_to_worker_ready = await k2.ready(P.backMs);
    } else sc.facts.second_kill = `skipped: the statement was already ${mid.status}`;
  }
  const doneAt = await checkStatement(sc, id, lines.length, P.jobMs);
  sc.recovery.kill_to_workflow_complete = doneAt - k.at;
  sc.facts.statement_id = id;
}

async function workerReceipt(sc: Scenario) {
  // approved payments of distinct customers (so each receipt goes to its own address), from a statement of their own
  const lines = takeInvoices(P.receipts); // consecutive invoices: distinct customers (R <= customers)
  const up = await uploadStatement('receipts', lines);
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body).slice(0, 300)}`);
  const st = await statementEnd(up.body.id, P.jobMs);
  if (st.status !== 'ready') throw new Error(`the receipts' statement ended ${st.status}`);
  const pays = await api.call('GET', `/v2/payments?statement_id=${up.body.id}&page_size=100`, { token: org.token });
  const ids = (pays.body.data as { id: string }[]).map((p) => p.id);
  if (ids.length !== lines.length) throw new Error(`expected ${lines.length} proposed payments, got ${ids.length}`);
  for (const id of ids) {
    const a = await api.call('POST', `/v2/payments/${id}/approve`, { token: org.token });
    if (a.status !== 200) throw new Error(`approve ${id}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  }
  const addresses = lines.map((l) => customerEmail(l.customer));
  const requested = await Promise.all(ids.map((id) => api.call('POST', '/v2/cash-app/outreach/payment-receipt', { token: org.token, body: { payment_id: id } })));
  sc.check('every receipt request accepted (200)', requested.every((r) => r.status === 200), requested.map((r) => r.status).join(','));
  // kill when the first receipt is out (the rest are in flight), at the latest after 2 s
  const t0 = Date.now();
  await waitFor('the first receipt email', 30_000, async () => [...(await api.mailCounts(addresses)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.sent_before_kill = [...(await api.mailCounts(addresses)).values()].filter((n) => n > 0).length;
  const k = stack.kill9('cash-app-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`a receipt email at each of ${addresses.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(addresses)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every receipt sent', false, (err as Error).message);
  }
  await sleep(3000); // a late duplicate would show up here
  const counts = await api.mailCounts(addresses);
  const wrong = [...counts].filter(([, n]) => n !== 1);
  sc.check(`exactly one email per receipt (${addresses.length})`, wrong.length === 0, wrong.length ? JSON.stringify(wrong) : undefined);
  // the workflow ends by recording the receipt as sent (just after the SMTP server accepted it)
  const statusesNow = async () => (await Promise.all(requested.map((r) => api.call('GET', `/v2/cash-app/outreach/${r.body?.id}`, { token: org.token })))).map((r) => r.body?.status as string);
  let statuses: string[] = [];
  let sentAt: number | null = null;
  try {
    await waitFor('every outreach record to be sent', P.jobMs, async () => (statuses = await statusesNow()).every((s) => s === 'sent'), 500);
    sentAt = Date.now();
  } catch {
    // reported below
  }
  sc.check('every outreach record is sent', statuses.every((s) => s === 'sent'), statuses.join(','));
  sc.recovery.kill_to_emails_received = allAt ? allAt - k.at : null;
  sc.recovery.kill_to_workflow_complete = sentAt ? sentAt - k.at : null;
}

function seedFake() {
  const t = (i: number) => new Date(Date.UTC(2026, 0, 10, 8, 0, 0) + i * 1000).toISOString().replace('.000Z', 'Z');
  fake.records.Customer = Array.from({ length: P.qboCustomers }, (_, i) => qboCustomer(i + 1, t(i)));
  fake.records.Invoice = Array.from({ length: P.qboInvoices }, (_, i): QboRecord =>
    qboInvoice(10_000 + i, (i % P.qboCustomers) + 1, t(i), [{ qty: 1, unitPrice: 100, amount: 100 }], { TotalAmt: 100, Balance: 100 }),
  );
  fake.records.CreditMemo = [];
}

async function workerSync(sc: Scenario) {
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

async function workerWelcome(sc: Scenario) {
  const emails = Array.from({ length: P.welcomes }, (_, i) => `new.user.${i + 1}.${runId}@chaos.example`);
  const created = await Promise.all(emails.map((email, i) => api.call('POST', '/v2/users', { token: org.token, body: { email, name: `Chaos User ${i + 1}` } })));
  sc.check('every user created (200)', created.every((r) => r.status === 200), created.map((r) => r.status).join(','));
  const t0 = Date.now();
  await waitFor('the first welcome email', 30_000, async () => [...(await api.mailCounts(emails)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.sent_before_kill = [...(await api.mailCounts(emails)).values()].filter((n) => n > 0).length;
  const k = stack.kill9('admin-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`a welcome email at each of ${emails.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(emails)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every welcome email sent', false, (err as Error).message);
  }
  await sleep(3000);
  const counts = await api.mailCounts(emails);
  const wrong = [...counts].filter(([, n]) => n !== 1);
  sc.check(`exactly one welcome email per user (${emails.length})`, wrong.length === 0, wrong.length ? JSON.stringify(wrong) : undefined);
  sc.recovery.kill_to_workflow_complete = allAt ? allAt - k.at : null;
}

/** A complete US caller-ID registration (spec 2.18): the fields `submit: true` requires. */
const CNAM = {
  display_name: 'Chaos Collect',
  legal_business_name: 'Chaos Receivables, Inc.',
  street_address: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postal_code: '94105',
  country: 'US',
  business_type: 'corporation',
  business_industry: 'financial services',
  registration_id_type: 'EIN',
  registration_number: '12-3456789',
  regions_of_operation: ['US-CA'],
  website: 'https://chaos.example/about',
  contact_first_name: 'Ada',
  contact_last_name: 'Admin',
  contact_email: 'ada@chaos.example',
  contact_phone: '+12015550123',
  contact_title: 'Controller',
  phone_number: '+14155552671',
  submit: true,
};

/** The operator's CLI as a process (`npm run cli -- …`); with the suite's data directory it needs the stack's connection settings. */
async function operatorCli(args: string[]): Promise<{ code: number; out: Body; err: string }> {
  const env = stack.localEnv!;
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/bootstrap.mjs', 'cli', '--quiet-bootstrap', ...args], {
      cwd: root,
      timeout: 60_000,
      env: { ...process.env, DATABASE_URL: env.DATABASE_URL, TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE },
    }, (err, stdout, stderr) => {
      let out: Body = null;
      try {
        out = JSON.parse(stdout);
      } catch {
        // not JSON (a failure)
      }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out, err: stderr.trim().split('\n').pop() ?? '' });
    });
  });
}

async function workerInvites(sc: Scenario) {
  const emails = Array.from({ length: P.invites }, (_, i) => `invitee.${i + 1}.${runId}@chaos.example`);
  const created = await Promise.all(emails.map((email) => api.call('POST', '/v1/user-invites', { token: org.token, body: { email, role: 'member' } })));
  sc.check(`every invite created (200, ${emails.length})`, created.every((r) => r.status === 200 && r.body?.object === 'user_invite'), created.map((r) => r.status).join(','));
  const submitted = await api.call('PUT', '/v2/cnam-registration', { token: org.token, body: CNAM });
  sc.check('the CNAM registration is submitted (200, submitted)', submitted.status === 200 && submitted.body?.status === 'submitted', `${submitted.status} ${submitted.body?.status ?? JSON.stringify(submitted.body)}`);
  const t0 = Date.now();
  await waitFor('the first invitation email', 30_000, async () => [...(await api.mailCounts(emails)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.invitations_sent_before_kill = [...(await api.mailCounts(emails)).values()].filter((n) => n > 0).length;
  sc.facts.cnam_status_at_kill = (await api.call('GET', '/v2/cnam-registration', { token: org.token })).body?.status;
  const k = stack.kill9('admin-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`an invitation email at each of ${emails.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(emails)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every invitation email sent', false, (err as Error).message);
  }
  let inReviewAt: number | null = null;
  try {
    await waitFor('the CNAM registration in review', P.jobMs, async () => (await api.call('GET', '/v2/cnam-registration', { token: org.token })).body?.status === 'in_review', 500);
    inReviewAt = Date.now();
  } catch (err) {
    sc.check('the CNAM submission reaches in_review', false, (err as Error).message);
  }
  await sleep(3000);

  const mails = await api.mailsFor(emails);
  const counts = await api.mailCounts(emails);
  const wrong = [...counts].filter(([, n]) => n !== 1);
  sc.check(`exactly one invitation email per invite (${emails.length})`, wrong.length === 0 && mails.every((m) => m.to.length === 1), wrong.length ? JSON.stringify(wrong) : undefined);
  if (wrong.length) {
    // what a duplicate is: a resend of the same message (same Message-ID and token) or a second message
    sc.facts.duplicates = await Promise.all(wrong.map(async ([address]) => {
      const copies = await Promise.all(mails.filter((m) => m.to.includes(address)).map(async (m) => {
        const head = await api.mailHeaders(m.id);
        return { message_id: head['message-id'], date: head.date, token: /rpi_[A-Za-z0-9_-]{43}/.exec(m.text)?.[0]?.slice(0, 10) };
      }));
      const [row] = await sql(stack.localEnv!.DATABASE_URL, `SELECT e.status, e.attempts FROM admin.outbound_emails e JOIN admin.user_invites i ON e.idempotency_key = 'user-invite-' || i.id
          WHERE i.organization_id = $1 AND lower(i.email) = $2`, [org.id, address]);
      return { address, copies, outbound_email: row };
    }));
    log(`  duplicates: ${JSON.stringify(sc.facts.duplicates)}`);
  }
  sc.check('each is the invitation', mails.every((m) => m.subject === `You are invited to Chaos ${runId} on the Receivables Platform`), [...new Set(mails.map((m) => m.subject))].join(' | '));
  const tokens = new Map(mails.map((m) => [m.to[0], /rpi_[A-Za-z0-9_-]{43}/.exec(m.text)?.[0]]));
  const distinct = new Set([...tokens.values()].filter(Boolean));
  sc.check('each email carries a token of its own', distinct.size === emails.length, `${distinct.size} distinct tokens`);
  // the public accept route is rate-limited per client address: two accepts and one replay
  for (const email of [emails[0], emails[emails.length - 1]]) {
    const acc = await api.call('POST', '/v1/user-invites/accept', { body: { token: tokens.get(email), name: 'Chaos Invitee' } });
    sc.check(`the token mailed to ${email.split('@')[0]} is accepted (200, that user)`, acc.status === 200 && acc.body?.user?.email === email && /^rpu_/.test(acc.body?.access_token?.token ?? ''), `${acc.status} ${acc.body?.user?.email ?? JSON.stringify(acc.body)}`);
  }
  const replay = await api.call('POST', '/v1/user-invites/accept', { body: { token: tokens.get(emails[0]), name: 'Again' } });
  sc.check('a used token is refused (401)', replay.status === 401, String(replay.status));
  const [c] = await sql(stack.localEnv!.DATABASE_URL, `SELECT
      (SELECT count(*)::int FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2)) AS invites,
      (SELECT count(*)::int FROM admin.outbound_emails WHERE idempotency_key IN (SELECT 'user-invite-' || id FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2))) AS email_rows,
      (SELECT count(*)::int FROM admin.outbound_emails WHERE status = 'sent' AND idempotency_key IN (SELECT 'user-invite-' || id FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2))) AS sent_rows,
      (SELECT count(*)::int FROM admin.users WHERE organization_id = $1 AND lower(email) = ANY($2)) AS users`, [org.id, emails]);
  sc.check(`one invite row and one sent email row per invite, one user per accepted invite (SQL cross-check)`,
    c.invites === emails.length && c.email_rows === emails.length && c.sent_rows === emails.length && c.users === 2, JSON.stringify(c));

  const first = await operatorCli(['cnam', 'decide', '--org', org.id, '--approve', '--detail', 'Registered with the carrier']);
  sc.check('`npm run cli -- cnam decide --approve` approves it', first.code === 0 && first.out?.status === 'approved', first.code === 0 ? first.out?.status : `exit ${first.code}: ${first.err}`);
  const second = await operatorCli(['cnam', 'decide', '--org', org.id, '--approve']);
  sc.check('a second decision is refused (nothing in review)', second.code !== 0, second.code === 0 ? JSON.stringify(second.out) : second.err);
  const after = await api.call('GET', '/v2/cnam-registration', { token: org.token });
  sc.check('GET /v2/cnam-registration: approved, once', after.body?.status === 'approved' && after.body?.approved_at === first.out?.approved_at && after.body?.submission_id === submitted.body?.submission_id, `${after.body?.status} ${after.body?.approved_at}`);
  const t = await connectTemporal({ address: stack.localEnv!.TEMPORAL_ADDRESS, namespace: stack.localEnv!.TEMPORAL_NAMESPACE });
  try {
    const result = await t.client.workflow.getHandle(cnamRegistrationWorkflowId(submitted.body.submission_id)).result();
    sc.check('the cnam-registration workflow ends approved', (result as Body)?.status === 'approved', JSON.stringify(result));
  } finally {
    await t.close();
  }
  const [s] = await sql(stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS submissions, count(*) FILTER (WHERE status = 'approved')::int AS approved
      FROM admin.cnam_submissions WHERE organization_id = $1`, [org.id]);
  sc.check('one submission, approved once (SQL cross-check)', s.submissions === 1 && s.approved === 1, JSON.stringify(s));
  sc.recovery.kill_to_workflow_complete = allAt ? allAt - k.at : null;
  sc.recovery.kill_to_cnam_in_review = inReviewAt ? Math.max(0, inReviewAt - k.at) : null;
}

async function apiPush(sc: Scenario) {
  const batches = Array.from({ length: P.pushBatches }, (_, b) =>
    Array.from({ length: P.pushBatchSize }, (_, i) => invoiceRecord(`9${String(b).padStart(3, '0')}${String(i).padStart(4, '0')}`, `CH-${(i % P.customers) + 1}`, (10 + i + b / 100).toFixed(2))),
  );
  const first: { status: number; ids: string[] | null; error?: string }[] = new Array(batches.length);
  let next = 0;
  let done = 0;
  let killed: ReturnType<Stack['kill9']> | null = null;
  const killAfter = Math.floor(batches.length / 3);
  const workers = Array.from({ length: P.pushConcurrency }, async () => {
    for (;;) {
      const b = next++;
      if (b >= batches.length) return;
      const r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batches[b] });
      const ok = r.status === 200 && r.body.results.length === batches[b]!.length && r.body.results.every((x: { success: boolean }) => x.success);
      first[b] = { status: r.status, ids: ok ? r.body.results.map((x: { service_id: string }) => x.service_id) : null, error: r.error };
      if (++done === killAfter && !killed) killed = stack.kill9('integrations-api');
    }
  });
  await Promise.all(workers);
  if (!killed) throw new Error('the load ended before the kill');
  const k = killed as ReturnType<Stack['kill9']>;
  const statuses: Record<string, number> = {};
  for (const f of first) statuses[f.status] = (statuses[f.status] ?? 0) + 1;
  sc.facts.first_pass_statuses = statuses;
  sc.facts.batches = batches.length;
  sc.facts.records = batches.length * P.pushBatchSize;
  const acked = first.filter((f) => f.ids).length;
  sc.check('every batch answered 200 (acknowledged) or 502/503 (not acknowledged)', first.every((f) => f.status === 200 || f.status === 502 || f.status === 503), JSON.stringify(statuses));
  sc.check('failed batches carry no partial acknowledgement', first.every((f) => f.status !== 200 || f.ids), undefined);
  sc.check('some batches failed during the outage (the kill hit the load)', acked < batches.length, `${batches.length - acked} of ${batches.length} not acknowledged`);
  sc.recovery.kill_to_api_ready = await k.ready(P.backMs);
  // a client retries every batch (with backoff while it still sees 502/503)
  const retried: (string[] | null)[] = [];
  for (const [b, batch] of batches.entries()) {
    let r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batch });
    for (let i = 0; i < 20 && (r.status === 502 || r.status === 503 || r.status === 0); i++) {
      await sleep(Number(r.headers.get('retry-after') ?? 1) * 1000);
      r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batch });
    }
    retried[b] = r.status === 200 && r.body.results.every((x: { success: boolean }) => x.success) ? r.body.results.map((x: { service_id: string }) => x.service_id) : null;
  }
  sc.check('every batch succeeds when retried', retried.every(Boolean), `${retried.filter((x) => !x).length} failed`);
  const changed = first.filter((f, b) => f.ids && JSON.stringify(f.ids) !== JSON.stringify(retried[b])).length;
  sc.check('a retry of an acknowledged batch returns the same ids', changed === 0, `${changed} of ${acked} acknowledged batches answered other ids`);
  const [c] = await sql(stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS rows, count(DISTINCT document_number)::int AS numbers FROM integrations.documents
    WHERE organization_id = $1 AND origin = 'middleware' AND document_number LIKE '9%' AND length(document_number) = 8`, [org.id]);
  const total = batches.length * P.pushBatchSize;
  sc.check(`every record stored once (${total}; SQL cross-check)`, c.rows === total && c.numbers === total, JSON.stringify(c));
}

/** "503 with Retry-After within a few seconds when a dependency is down". */
const ANSWER_WITHIN_MS = 10_000;

/** Poll reads during an outage; every answer must be 200 or 503 with Retry-After, never 500. */
function pollDuring(until: () => boolean, paths: string[]) {
  const seen: Record<string, number> = {};
  const bad: string[] = [];
  const slow: string[] = [];
  const run = (async () => {
    while (!until()) {
      for (const p of paths) {
        const r = await api.call('GET', p, { token: org.token, timeoutMs: 30_000 });
        const key = `GET ${p.split('?')[0]!.replace(/[0-9a-f-]{36}/, '{id}')} ${r.status}`;
        seen[key] = (seen[key] ?? 0) + 1;
        if (r.ms > ANSWER_WITHIN_MS) slow.push(`${key} after ${(r.ms / 1000).toFixed(1)} s`);
        if (!(r.status === 200 || (r.status === 503 && r.headers.get('retry-after')))) bad.push(`${key}${r.status === 503 ? ' without Retry-After' : ''} ${JSON.stringify(r.body ?? r.error).slice(0, 200)}`);
      }
      await sleep(500);
    }
  })();
  return { seen, bad, slow, run };
}

async function outage(sc: Scenario, what: 'postgres' | 'temporal', mode: 'stop' | 'freeze') {
  const lines = takeInvoices(P.outageLines);
  const refusedLines = takeInvoices(20);
  const tag = `${what}-${mode}`;
  const up = await uploadStatement(`${tag}-a`, lines);
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body).slice(0, 300)}`);
  const email = `outage.${tag}.${runId}@chaos.example`;
  const user = await api.call('POST', '/v2/users', { token: org.token, body: { email, name: `Outage ${what}` } });
  if (user.status !== 200) throw new Error(`user: ${user.status}`);
  await sleep(300); // processing has started
  const before = (await statementOf(up.body.id)).body;
  sc.facts.at_stop = { status: before.status, transaction_count: before.transaction_count };
  let over = false;
  const poll = pollDuring(() => over, ['/v2/business-units', `/v2/bank-statements/${up.body.id}?transactions=omit`]);
  let refused: { status: number; ms: number; retryAfter: string | null; type?: string; detail?: string } | null = null;
  const o = await stack.outage(what, mode, P.outageMs, async () => {
    if (mode === 'freeze') await sleep(1000);
    // a request that starts a workflow, during the outage
    const r = await uploadStatement(`${tag}-b`, refusedLines, 60_000);
    refused = { status: r.status, ms: Math.round(r.ms), retryAfter: r.headers.get('retry-after'), type: r.body?.type, detail: r.body?.detail ?? r.error };
  });
  over = true;
  await poll.run;
  sc.facts.outage_ms = o.downMs;
  sc.facts.restarted_by = o.restartedBy;
  sc.facts.answers_during_outage = poll.seen;
  sc.facts.upload_during_outage = refused;
  sc.check('503 with Retry-After (or 200) meanwhile, never 500', poll.bad.length === 0, poll.bad.slice(0, 3).join(' | ') || JSON.stringify(poll.seen));
  sc.check(`every answer within ${ANSWER_WITHIN_MS / 1000} s meanwhile (no hanging request)`, poll.slow.length === 0, poll.slow.slice(0, 3).join(' | ') || undefined);
  const r = refused as { status: number; ms: number; retryAfter: string | null } | null;
  sc.check(`an upload during the outage answers 503 with Retry-After (or is accepted) within ${ANSWER_WITHIN_MS / 1000} s`, !!r && ((r.status === 503 && !!r.retryAfter) || r.status === 200) && r.ms <= ANSWER_WITHIN_MS, JSON.stringify(r));
  const end = o.backAt;
  // from the end of the outage until the gateway's /readyz is green again (watched while the jobs finish)
  const gatewayReady = waitFor('gateway /readyz 200 after the outage', P.backMs, async () => (await stack.readyz()) === 200, 250).then(() => Date.now() - end, () => null);
  // in-flight jobs complete without a manual step
  const doneA = await checkStatement(sc, up.body.id, lines.length, P.jobMs);
  let mailAt: number | null = null;
  try {
    await waitFor(`the welcome email of ${email}`, P.jobMs, async () => (await api.mailTo(email)).length >= 1, 500);
    mailAt = Date.now();
  } catch (err) {
    sc.check('the welcome email started before the outage is sent', false, (err as Error).message);
  }
  await sleep(1000);
  sc.check('exactly one welcome email', (await api.mailTo(email)).length === 1, `${(await api.mailTo(email)).length} emails`);
  // the refused upload succeeds when the client retries it (nothing left that blocks it)
  if (r && r.status !== 200) {
    let retry = await uploadStatement(`${tag}-b`, refusedLines);
    for (let i = 0; i < 30 && (retry.status === 503 || retry.status === 502); i++) {
      await sleep(Number(retry.headers.get('retry-after') ?? 1) * 1000);
      retry = await uploadStatement(`${tag}-b`, refusedLines);
    }
    sc.check('the refused upload succeeds when retried (200, not 409)', retry.status === 200, `${retry.status} ${retry.status !== 200 ? JSON.stringify(retry.body).slice(0, 200) : ''}`);
    if (retry.status === 200) await checkStatement(sc, retry.body.id, 20, P.jobMs);
  }
  sc.recovery.outage_end_to_jobs_complete = Math.max(doneA, mailAt ?? doneA) - end;
  sc.recovery.outage_end_to_gateway_ready = await gatewayReady;
}

/**
 * `stopStack`: run on the stack started again with SUPERVISE_BACKOFF_INITIAL_MS = the outage, so a
 * stopped PostgreSQL/Temporal stays down for the outage and is then restarted by the launcher itself.
 */
const SCENARIOS: { key: string; name: string; fault: string; run: (sc: Scenario) => Promise<void>; ci: boolean; stopStack?: boolean; ledger?: false }[] = [
  { key: 'statement', name: 'cash-app worker killed during statement storing + matching', fault: 'kill -9 cash-app-worker', run: workerStatement, ci: true },
  { key: 'receipt', name: 'cash-app worker killed while payment receipts are emailed', fault: 'kill -9 cash-app-worker', run: workerReceipt, ci: true },
  { key: 'sync', name: 'integrations worker killed during a QuickBooks connection sync', fault: 'kill -9 integrations-worker', run: workerSync, ci: false },
  { key: 'welcome', name: 'admin worker killed while welcome emails are sent', fault: 'kill -9 admin-worker', run: workerWelcome, ci: false, ledger: false },
  { key: 'invites', name: 'admin worker killed during invitations (and a CNAM submission)', fault: 'kill -9 admin-worker', run: workerInvites, ci: false, ledger: false },
  { key: 'push', name: 'integrations API killed under invoice push load', fault: 'kill -9 integrations-api', run: apiPush, ci: true },
  { key: 'postgres-outage', name: `PostgreSQL unreachable ${P.outageMs / 1000} s during processing (frozen)`, fault: `PostgreSQL frozen ${P.outageMs / 1000} s (SIGSTOP/SIGCONT)`, run: (sc) => outage(sc, 'postgres', 'freeze'), ci: false },
  { key: 'temporal-outage', name: `Temporal unreachable ${P.outageMs / 1000} s during processing (frozen)`, fault: `Temporal frozen ${P.outageMs / 1000} s (SIGSTOP/SIGCONT)`, run: (sc) => outage(sc, 'temporal', 'freeze'), ci: false },
  { key: 'postgres-stop', name: `PostgreSQL stopped ${P.outageMs / 1000} s during processing`, fault: `PostgreSQL clean stop (SIGINT to the postmaster), restarted by the launcher after ${P.outageMs / 1000} s`, run: (sc) => outage(sc, 'postgres', 'stop'), ci: true, stopStack: true },
  { key: 'temporal-stop', name: `Temporal stopped ${P.outageMs / 1000} s during processing`, fault: `Temporal dev server clean stop (SIGTERM), restarted by the launcher after ${P.outageMs / 1000} s`, run: (sc) => outage(sc, 'temporal', 'stop'), ci: true, stopStack: true },
];

async function main(): Promise<number> {
  log(`profile ${PROFILE}, run ${runId}, data in ${path.relative(root, varDir)}`);
  mkdirSync(varDir, { recursive: true });
  fake = await startFakeQuickbooks();
  stack = await Stack.create(root, varDir, {
    RATE_LIMIT_PER_SECOND: '0',
    OUTBOUND_ALLOWLIST: '127.0.0.0/8,::1',
    OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: { client_id: 'qbo-client', client_secret: 'qbo-secret' } }),
    OAUTH_REDIRECT_URI: REDIRECT_URI,
    // the bounded form runs on one stack: the restart backoff that holds a stopped component down for the outage from the start
    ...(CI ? { SUPERVISE_BACKOFF_INITIAL_MS: String(P.outageMs) } : {}),
    PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${fake.url}/oauth2/v1/tokens/bearer`, api_base_url: fake.url } }),
  }, log);
  api = new Api(stack.gatewayUrl, stack.mailUrl);
  const results: ScenarioResult[] = [];
  try {
    stackStartMs = await stack.start();
    log(`stack ready in ${(stackStartMs / 1000).toFixed(1)} s (gateway ${stack.gatewayUrl})`);
    await onboard();
    const selected = SCENARIOS.filter((s) => (!P.only.length || P.only.includes(s.key)) && (!CI || s.ci));
    // the ledger (customers + open invoices) only when a selected scenario uses it
    if (selected.some((s) => s.ledger !== false)) await setUpLedger();
    log(`organization ${org.id}: ${invoices.length ? `${P.customers} customers, ${invoices.length} open invoices` : 'no ledger (not used by the selected scenarios)'}`);
    for (const s of selected) {
      const sc = new Scenario();
      const t0 = Date.now();
      log(`scenario: ${s.name}`);
      let error: string | undefined;
      try {
        if (s.stopStack && !stack.extraEnv.SUPERVISE_BACKOFF_INITIAL_MS) {
          log(`starting the stack again with SUPERVISE_BACKOFF_INITIAL_MS=${P.outageMs} (a stopped component stays down for the outage)`);
          await stack.stop();
          stack.extraEnv = { ...stack.extraEnv, SUPERVISE_BACKOFF_INITIAL_MS: String(P.outageMs) };
          outageStackStartMs = await stack.start();
        }
        await ensureStack();
        await s.run(sc);
      } catch (err) {
        error = (err as Error).message;
        log(`  FAIL ${error}`);
      }
      const outcome = !error && sc.checks.length > 0 && sc.checks.every((c) => c.pass) ? 'pass' : 'fail';
      log(`  → ${outcome} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      results.push({ name: s.name, fault: s.fault, outcome, checks: sc.checks, recovery_ms: sc.recovery, facts: sc.facts, ...(error ? { error } : {}), duration_ms: Date.now() - t0 });
    }
  } catch (err) {
    log(`set-up failed: ${(err as Error).message}`);
    results.push({ name: 'set-up', fault: 'none', outcome: 'fail', checks: [], recovery_ms: {}, facts: {}, error: (err as Error).message, duration_ms: Date.now() - started });
  } finally {
    log('stopping the stack');
    await stack.stop();
    await fake.close();
  }
  const failed = results.filter((r) => r.outcome === 'fail');
  write(results);
  if (failed.length) log(`${failed.length} scenario(s) FAILED: ${failed.map((f) => f.name).join('; ')} (logs kept in ${varDir})`);
  else {
    log('every scenario passed');
    rmSync(varDir, { recursive: true, force: true });
  }
  return failed.length ? 1 : 0;
}

function write(results: ScenarioResult[]) {
  const file = path.join(root, 'bench', 'results', 'chaos.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  let commit = '';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  } catch {
    // not a git checkout
  }
  const previous = all[PROFILE] as { scenarios?: (ScenarioResult & { measured_separately?: unknown })[]; separately_measured?: unknown[] } | undefined;
  if (P.only.length && previous?.scenarios) {
    // a subset run (CHAOS_SCENARIOS) merges its scenarios into the profile's recorded run, each marked with when and where it was measured
    const measured = { generated_at: new Date().toISOString(), commit, stack_start_ms: stackStartMs, duration_ms: Date.now() - started, machine: { cpus: os.cpus().length, node: process.version } };
    const fresh = new Map(results.map((r) => [r.name, { ...r, measured_separately: measured }]));
    // a scenario measured separately before keeps its earlier runs (outcome and checks) under `earlier_runs`
    const replace = (r: ScenarioResult & { measured_separately?: unknown; earlier_runs?: unknown[] }) => {
      const now = fresh.get(r.name);
      if (!now) return r;
      const { earlier_runs: earlier = [], ...prev } = r;
      return prev.measured_separately ? { ...now, earlier_runs: [...earlier, prev] } : now;
    };
    const scenarios = [...previous.scenarios.map(replace), ...[...fresh.values()].filter((r) => !previous.scenarios!.some((p) => p.name === r.name))];
    all[PROFILE] = {
      ...previous,
      passed: scenarios.filter((r) => r.outcome === 'pass').length,
      failed: scenarios.filter((r) => r.outcome === 'fail').length,
      scenarios,
      separately_measured: [...(previous.separately_measured ?? []), { scenarios: results.map((r) => r.name), ...measured, parameters: { ...P, only: undefined } }],
    };
    writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
    log(`results: merged into ${path.relative(root, file)} (${PROFILE})`);
    return;
  }
  all[PROFILE] = {
    generated_at: new Date().toISOString(),
    commit,
    machine: { cpus: os.cpus().length, node: process.version },
    parameters: { ...P, only: undefined },
    stack_start_ms: stackStartMs,
    outage_stack_start_ms: outageStackStartMs,
    stack_restarts_by_suite: stackRestarts,
    duration_ms: Date.now() - started,
    passed: results.filter((r) => r.outcome === 'pass').length,
    failed: results.filter((r) => r.outcome === 'fail').length,
    scenarios: results,
  };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  log(`results: ${path.relative(root, file)} (${PROFILE})`);
}

let exiting = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (exiting) return;
    exiting = true;
    log(`${sig}: stopping the stack`);
    void (stack ? stack.stop() : Promise.resolve()).finally(() => process.exit(130));
  });
}
process.exit(await main());
