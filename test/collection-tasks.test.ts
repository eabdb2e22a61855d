/**
 * Follow-up tasks through the gateway (GET /v2/tasks, PATCH /v2/tasks/{task_id}): filters, newest first,
 * completing and reopening, notes, business-unit scope for members, tenant isolation.
 *
 * Reached through the API: customers, their invoices (middleware push), business units, assignees and
 * users; the tasks are made the only way they are made, by real collection runs (admin worker) of a
 * policy whose step is a `task`, one run per task so that "newest first" has a known order. No SQL.
 * The last test calls the engine's store function (insertTask, services/admin/src/store/collections/tasks.ts)
 * directly for a real task action, as a redelivered activity would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '@rp/platform';
import { insertTask } from '../services/admin/src/store/collections/tasks.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { actionsOf, policy, runCollections, todayIn } from './support/collections.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let db: Db;
let org: Org;
let other: Org;
let member: { id: string; token: string };
const P: Record<string, string> = {};
/** the customers' invoice ids */
const I: Record<string, string> = {};
const T: Record<string, string> = {};
/** the task actions, by task key */
const A: Record<string, string> = {};
let bu1: string;
let bu2: string;
/** the organizations' timezone (the onboarding default) */
const TZ = 'Europe/Berlin';

const req = (token: string, method: string, path: string, body?: unknown) => stack.request(method, path, { token, body });
async function ok(p: Promise<{ status: number; body: any }>, status = 200) {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** An overdue invoice of the customer, then a real run of its organization: answers the run's task and action. */
async function taskFor(o: Org, customerCode: string, documentNumber: string): Promise<{ task: string; action: string }> {
  const pushed = await pushInvoices(stack, o.apiKey, [
    invoiceRecord({ customer_code: customerCode, document_number: documentNumber, reference: `INV-${documentNumber}`, net_due_date: todayIn(TZ, -5) }),
  ]);
  expect(pushed.body.results[0]?.success, JSON.stringify(pushed.body)).toBe(true);
  I[documentNumber] = pushed.body.results[0]!.service_id!;
  const run = await runCollections(stack, o);
  expect(run).toMatchObject({ status: 'completed', planned: 1, sent: 1 });
  const [action, ...more] = await actionsOf(stack, o.token, `run_id=${run.id}`);
  expect(more).toEqual([]);
  expect(action).toMatchObject({ channel: 'task', status: 'sent', invoice_ids: [I[documentNumber]] });
  return { task: action.task_id, action: action.id };
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  db = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
  [org, other] = await Promise.all([stack.onboard('Tasks A'), stack.onboard('Tasks B')]);
  bu1 = (await ok(req(org.token, 'POST', '/v2/business-units', { name: 'North' }))).id;
  bu2 = (await ok(req(org.token, 'POST', '/v2/business-units', { name: 'South' }))).id;
  const pushed = await pushCustomers(stack, org.apiKey, ['C1', 'C2', 'C3'].map((code) => customerRecord({ customer_code: code, name1: `Customer ${code}` })));
  expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
  pushed.body.results.forEach((r, i) => (P[`C${i + 1}`] = r.service_id!));
  const theirs = await pushCustomers(stack, other.apiKey, [customerRecord({ customer_code: 'C1', name1: 'Theirs' })]);
  P.theirs = theirs.body.results[0]!.service_id!;

  const m = await ok(req(org.token, 'POST', '/v2/users', { email: 'member@tasks.example', name: 'Mia Member', role: 'member', business_unit_ids: [bu1], permissions: [] }));
  const { runCli } = await import('@rp/admin/cli');
  member = { id: m.id, token: ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', m.id], stack.env)) as { token: string }).token };
  await ok(req(org.token, 'PATCH', `/v2/partners/${P.C1}`, { business_unit_id: bu1 }));
  // C2's assignee is the member: the run's task goes to them (the sender); the others' to the default sender, the admin
  await ok(req(org.token, 'PATCH', `/v2/partners/${P.C2}`, { business_unit_id: bu2, assignee_id: member.id }));

  // a task on the due date
  await policy(stack, org, { steps: [{ offset_days: 0, channel: 'task' }] });
  await policy(stack, other, { steps: [{ offset_days: 0, channel: 'task' }] });
  // oldest first: T3 (no unit), T2 (South, the member's), T1 (North, the admin's)
  ({ task: T.T3, action: A.T3 } = await taskFor(org, 'C3', '7300003'));
  ({ task: T.T2, action: A.T2 } = await taskFor(org, 'C2', '7300002'));
  ({ task: T.T1, action: A.T1 } = await taskFor(org, 'C1', '7300001'));
  ({ task: T.theirs, action: A.theirs } = await taskFor(other, 'C1', '7300009'));
}, 180_000);
afterAll(async () => {
  await db?.destroy();
  await stack?.close();
});

const ids = (page: { data: { id: string }[] }) => page.data.map((t) => t.id);

describe('tasks', () => {
  it('lists the organization\'s tasks newest first, with filters, as the documented view', async () => {
    const all = await ok(req(org.token, 'GET', '/v2/tasks'));
    expect(ids(all)).toEqual([T.T1, T.T2, T.T3]);
    expect(all.total_records).toBe(3);
    expect(all.data[0]).toEqual({
      object: 'task',
      id: T.T1,
      partner_id: P.C1,
      action_id: A.T1,
      assignee_id: org.userId,
      title: 'Follow up on 1 invoice(s): 7300001',
      invoice_ids: [I['7300001']],
      status: 'open',
      note: null,
      due_date: todayIn(TZ),
      completed_at: null,
      completed_by: null,
      created_at: expect.stringMatching(/Z$/),
      modified_at: expect.stringMatching(/Z$/),
    });
    expect(ids(await ok(req(org.token, 'GET', `/v2/tasks?assignee_id=${member.id}`)))).toEqual([T.T2]);
    expect(ids(await ok(req(org.token, 'GET', `/v2/tasks?partner_id=${P.C3}`)))).toEqual([T.T3]);
    expect(ids(await ok(req(org.token, 'GET', '/v2/tasks?status=done')))).toEqual([]);
    expect(ids(await ok(req(org.token, 'GET', '/v2/tasks?page=1&page_size=2')))).toEqual([T.T3]);
    const bad = await req(org.token, 'GET', '/v2/tasks?status=closed&assignee_id=nope');
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { loc: unknown }) => e.loc).sort()).toEqual([['query', 'assignee_id'], ['query', 'status']]);
  });

  it('completes, reopens and annotates a task, recording who and when', async () => {
    const done = await ok(req(member.token, 'PATCH', `/v2/tasks/${T.T1}`, { status: 'done', note: 'Promised to pay Friday' }));
    expect(done).toMatchObject({ status: 'done', note: 'Promised to pay Friday', completed_by: member.id });
    expect(Date.parse(done.completed_at)).toBeGreaterThan(0);
    // done again (e.g. by someone else): who and when are kept
    const again = await ok(req(org.token, 'PATCH', `/v2/tasks/${T.T1}`, { status: 'done' }));
    expect(again).toMatchObject({ completed_by: member.id, completed_at: done.completed_at, note: 'Promised to pay Friday' });
    expect(ids(await ok(req(org.token, 'GET', '/v2/tasks?status=done')))).toEqual([T.T1]);
    const reopened = await ok(req(org.token, 'PATCH', `/v2/tasks/${T.T1}`, { status: 'open', note: null }));
    expect(reopened).toMatchObject({ status: 'open', note: null, completed_at: null, completed_by: null });
    // tasks are people's work: an API key may not call the task routes
    expect((await stack.request('PATCH', `/v2/tasks/${T.T3}`, { token: org.apiKey, body: { status: 'done' } })).status).toBe(403);
    expect((await stack.request('GET', '/v2/tasks', { token: org.apiKey })).status).toBe(403);
  });

  it('refuses bad input with 422 and changes nothing', async () => {
    for (const [body, loc] of [
      [{}, ['body']],
      [{ status: 'closed' }, ['body', 'status']],
      [{ note: 'x'.repeat(2001) }, ['body', 'note']],
      [{ note: 5 }, ['body', 'note']],
    ] as const) {
      const res = await req(org.token, 'PATCH', `/v2/tasks/${T.T2}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors.map((e: { loc: unknown }) => e.loc)).toEqual([loc]);
    }
    expect((await req(org.token, 'PATCH', '/v2/tasks/not-an-id', { status: 'done' })).body.errors[0].loc).toEqual(['path', 'task_id']);
    expect((await ok(req(org.token, 'GET', `/v2/tasks?partner_id=${P.C2}`))).data[0]).toMatchObject({ status: 'open', note: null });
  });

  it('shows a member only tasks of customers in their business units or in none', async () => {
    expect(ids(await ok(req(member.token, 'GET', '/v2/tasks')))).toEqual([T.T1, T.T3]);
    expect((await ok(req(member.token, 'GET', `/v2/tasks?assignee_id=${member.id}`))).total_records).toBe(0);
    const res = await req(member.token, 'PATCH', `/v2/tasks/${T.T2}`, { status: 'done' });
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('entity-not-found');
    expect((await ok(req(org.token, 'GET', `/v2/tasks?partner_id=${P.C2}`))).data[0].status).toBe('open');
  });

  it('keeps other organizations\' tasks out of sight', async () => {
    const res = await req(org.token, 'PATCH', `/v2/tasks/${T.theirs}`, { status: 'done' });
    expect(res.status).toBe(404);
    expect(ids(await ok(req(org.token, 'GET', `/v2/tasks?partner_id=${P.theirs}`)))).toEqual([]);
    expect((await ok(req(other.token, 'GET', '/v2/tasks'))).data).toMatchObject([{ id: T.theirs, status: 'open' }]);
  });

  it('insertTask makes one task per collection action, however often the engine calls it', async () => {
    // the run made T1 for its action; the engine's activity delivered again, twice at once, finds it
    const again = {
      organization_id: org.organizationId,
      partner_id: P.C1!,
      business_unit_id: bu1,
      action_id: A.T1!,
      assignee_id: org.userId,
      title: 'A retry',
      invoice_ids: [I['7300001']!],
      due_date: todayIn(TZ),
    };
    const [a, b] = await Promise.all([insertTask(db, again), insertTask(db, again)]);
    expect([a.id, b.id]).toEqual([T.T1, T.T1]);
    const listed = await ok(req(org.token, 'GET', `/v2/tasks?partner_id=${P.C1}`));
    expect(listed.data).toEqual([expect.objectContaining({ id: T.T1, action_id: A.T1, title: 'Follow up on 1 invoice(s): 7300001' })]);
  });
});
