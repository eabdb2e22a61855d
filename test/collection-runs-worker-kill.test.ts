/**
 * A collection run survives a killed worker (exactly once, DESIGN §4 and §10): the admin worker runs
 * as a child process, is killed with SIGKILL while the run's emails go out, and another takes over;
 * the run completes, every customer's (invoice, step) is in exactly one sent action, and every
 * customer receives one email. A kill between the SMTP server's acceptance and the "sent" write a few
 * milliseconds later makes the retry send a copy with the same Message-ID (plain SMTP's documented
 * limit, packages/platform/src/recorded-email.ts): such copies are allowed, a second Message-ID is not.
 * Everything through the API; the ledger is pushed like the middleware does. No SQL set-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { actionsOf, emailTemplate, plusDays, policy, todayIn, waitForRun } from './support/collections.js';

let stack: TestStack;
let org: Org;
const children: ChildProcess[] = [];
const CUSTOMERS = 300;

function startWorkerProcess(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/admin/src/worker.ts'], {
    // small batches, two sends at a time: the run takes long enough to be killed in the middle
    env: { ...process.env, ...stack.env, WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'), NODE_OPTIONS: '', COLLECTIONS_ACT_BATCH_SIZE: '10', COLLECTIONS_ACT_CONCURRENCY: '2' },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

async function mailsFor(addresses: Set<string>): Promise<Map<string, string[]>> {
  const all = (await (await fetch(`${inject('mailApiUrl')}/email`)).json()) as { messageId: string; to: { address: string }[] }[];
  const out = new Map<string, string[]>();
  for (const m of all) {
    const to = m.to?.[0]?.address.toLowerCase();
    if (to && addresses.has(to)) out.set(to, [...(out.get(to) ?? []), m.messageId]);
  }
  return out;
}

beforeAll(async () => {
  stack = await startStack({ workers: [], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  org = await stack.onboard('Killed Worker Collections Org');
}, 180_000);
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.close();
});

it('sends every email of a run once although the worker is killed mid-run', { timeout: 240_000 }, async () => {
  const tag = randomBytes(3).toString('hex');
  const today = todayIn('Europe/Berlin');
  const codes = Array.from({ length: CUSTOMERS }, (_, i) => `K${tag}${i}`);
  const emails = codes.map((c) => `ap.${c.toLowerCase()}@killed.example`);
  // invoices are pushed 100 at a time (the push endpoint's batch limit): 50 customers with two each
  for (let i = 0; i < CUSTOMERS; i += 50) {
    const c = await pushCustomers(stack, org.apiKey, codes.slice(i, i + 50).map((code, j) => customerRecord({ customer_code: code, name1: `Killed ${code}`, smtp_addr: emails[i + j]! })));
    expect(c.body.results?.every((r) => r.success), c.text).toBe(true);
    const inv = await pushInvoices(
      stack,
      org.apiKey,
      codes.slice(i, i + 50).flatMap((code, j) => [0, 1].map((k) => invoiceRecord({ customer_code: code, document_number: `9${String(i + j).padStart(5, '0')}${k}`, reference: `R${k}`, net_due_date: plusDays(today, -3 - k) }))),
    );
    expect(inv.body.results.every((r) => r.success), JSON.stringify(inv.body.results.find((r) => !r.success))).toBe(true);
  }
  const tpl = await emailTemplate(stack, org, 'Overdue {{ action.invoices.size }}', 'Dear {{ customer.name }}');
  await policy(stack, org, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });

  const first = startWorkerProcess();
  const started = await stack.request('POST', '/v2/collections/runs', { token: org.token, body: {} });
  expect(started.status).toBe(202);
  const wanted = new Set(emails);
  await expect.poll(async () => (await mailsFor(wanted)).size, { timeout: 120_000, interval: 50 }).toBeGreaterThanOrEqual(20);
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const atKill = (await mailsFor(wanted)).size;
  expect(atKill).toBeLessThan(CUSTOMERS);

  startWorkerProcess();
  const run = await waitForRun(stack, org, started.body.id, 200_000);
  expect(run).toMatchObject({ status: 'completed', planned: CUSTOMERS, sent: CUSTOMERS, failed: 0, skipped: 0 });
  const acts = await actionsOf(stack, org.token, `run_id=${run.id}`);
  expect(acts).toHaveLength(CUSTOMERS);
  const invoices = acts.flatMap((a) => a.invoice_ids);
  expect(new Set(invoices).size).toBe(CUSTOMERS * 2);
  expect(invoices).toHaveLength(CUSTOMERS * 2);

  const mails = await mailsFor(wanted);
  expect(mails.size).toBe(CUSTOMERS);
  const twoIds = [...mails].filter(([, ids]) => new Set(ids).size !== 1);
  expect(twoIds).toEqual([]);
});
