/**
 * Collection runs end to end: started through the gateway, planned and done by the admin worker's
 * collection-run workflow, emails through a real SMTP sink (MailDev). SQL set-up stands for the one
 * state no endpoint produces: a real run of an earlier day (this test's runs are moved one day back;
 * a real run is always as of today).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { collectionRunWorkflowId, collectionsScheduleId } from '@rp/workflows';
import { replayHistory } from './support/histories.js';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { actionsOf, customer, emailTemplate, plusDays, policy, runCollections, todayIn } from './support/collections.js';

let stack: TestStack;
let temporal: TemporalHandle;
const TZ = 'Europe/Berlin';
const today = () => todayIn(TZ);

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

const req = (o: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: o.token, body });

describe('step timing and grouping', () => {
  it('a step is due from net_due_date + offset_days (dry runs as of dates around the boundaries); a reminder is not due once past due; one step per invoice per run', async () => {
    const o = await stack.onboard('Timing Org');
    const tpl = await emailTemplate(stack, o, 'Reminder {{ action.step.offset_days }}', 'Hello');
    await policy(stack, o, { steps: [{ offset_days: -3, channel: 'email', email_template_id: tpl }, { offset_days: 0, channel: 'email', email_template_id: tpl }, { offset_days: 10, channel: 'task' }] });
    const due = plusDays(today(), 20);
    const c = await customer(stack, o, { invoices: [{ due }] });
    const stepAt = async (asOf: string) => {
      const run = await runCollections(stack, o, { dry_run: true, as_of_date: asOf });
      expect(run).toMatchObject({ status: 'completed', dry_run: true, as_of_date: asOf, sent: 0 });
      const acts = await actionsOf(stack, o.token, `run_id=${run.id}`);
      expect(acts.every((a) => a.status === 'planned' && a.partner_id === c.partnerId)).toBe(true);
      return acts.map((a) => a.offset_days);
    };
    expect(await stepAt(plusDays(due, -4))).toEqual([]);
    expect(await stepAt(plusDays(due, -3))).toEqual([-3]);
    expect(await stepAt(due)).toEqual([-3]);
    // past due: the reminder is no longer due, the lowest due step is the 0 one (never the 10 as well)
    expect(await stepAt(plusDays(due, 1))).toEqual([0]);
    expect(await stepAt(plusDays(due, 10))).toEqual([0]);
    // dry runs took no marks: nothing is recorded as done
    const marks = await stack.sql('SELECT count(*)::int AS n FROM admin.collection_step_marks WHERE organization_id = $1', [o.organizationId]);
    expect(marks[0].n).toBe(0);
  });

  it('a real run sends ONE email per customer and step listing its due invoices, from the sender with the inbox as Reply-To, records the Message-ID; a re-run of the day does nothing again; a task step creates a task', async () => {
    const o = await stack.onboard('Grouping Org');
    const tpl = await emailTemplate(
      stack,
      o,
      'Overdue: {{ action.invoices.size }} invoices',
      'Dear {{ customer.name }},{% for i in action.invoices %} [{{ i.number }} {{ i.amount_open }} {{ i.currency }} {{ i.days_overdue }}d]{% endfor %} step {{ action.step.index }} from {{ sender.name }}',
    );
    await policy(stack, o, { steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }, { offset_days: 30, channel: 'task' }] });
    const c = await customer(stack, o, { name: 'Grouped GmbH', invoices: [{ number: '7100001', due: plusDays(today(), -5), amount: 100 }, { number: '7100002', due: plusDays(today(), -2), amount: 250.5 }] });
    const late = await customer(stack, o, { name: 'Late AG', invoices: [{ number: '7100003', due: plusDays(today(), -40) }] });
    // an invoice not yet due is not in the action
    await customer(stack, o, { invoices: [{ due: plusDays(today(), 2) }] });

    const run = await runCollections(stack, o);
    expect(run).toMatchObject({ status: 'completed', dry_run: false, as_of_date: today(), planned: 2, sent: 2, skipped: 0, failed: 0 });
    const runWorkflow = temporal.client.workflow.getHandle(collectionRunWorkflowId(run.id));
    await runWorkflow.result();
    await replayHistory(stack, runWorkflow.workflowId, await runWorkflow.fetchHistory(), 'collection-run.json');
    const acts = await actionsOf(stack, o.token, `run_id=${run.id}`);
    expect(acts).toHaveLength(2);
    const email = acts.find((a) => a.partner_id === c.partnerId)!;
    expect(email).toMatchObject({ object: 'collection_action', channel: 'email', status: 'sent', offset_days: 0, step_index: 0, sender_user_id: o.userId, sms_id: null, task_id: null });
    expect([...email.invoice_ids].sort()).toEqual([...c.invoiceIds].sort());
    expect(email.email_id).toEqual(expect.any(String));
    // Late AG is 40 days overdue but never chased: the lowest due step (0) first, the task follows on a later run
    expect(acts.find((a) => a.partner_id === late.partnerId)).toMatchObject({ channel: 'email', offset_days: 0, status: 'sent' });

    const mails = await waitForMail(c.email);
    expect(mails).toHaveLength(1);
    const m = mails[0];
    expect(m.subject).toBe('Overdue: 2 invoices');
    expect(m.text).toContain('[7100001 100.00 EUR 5d] [7100002 250.50 EUR 2d] step 0 from Ada Admin');
    expect(m.from[0]).toMatchObject({ name: 'Ada Admin', address: 'no-reply@receivables.local' });
    expect(m.headers['reply-to']).toBe(`ar@${o.organizationId}.inbound.receivables.local`);
    const [msg] = await stack.sql('SELECT message_id, status FROM admin.collection_messages WHERE id = $1', [email.email_id]);
    expect(msg).toEqual({ message_id: `<${email.email_id}@receivables.local>`, status: 'sent' });
    expect(`<${m.messageId}>`).toBe(msg.message_id);

    // the same day again: every invoice was acted on today, nothing is planned or sent (Late AG's
    // next step, the task at 30 days, waits for a run of a later day)
    const again = await runCollections(stack, o);
    expect(again).toMatchObject({ status: 'completed', planned: 0, sent: 0 });
    expect(await waitForMail(c.email, { timeoutMs: 1000 })).toHaveLength(1);

    // a later day (the marks of today's run moved one day back, as tomorrow sees them): the task step is due for Late AG
    await stack.sql('UPDATE admin.collection_runs SET as_of_date = as_of_date - 1 WHERE organization_id = $1', [o.organizationId]);
    const next = await runCollections(stack, o);
    const [task, ...none] = await actionsOf(stack, o.token, `run_id=${next.id}`);
    expect(none).toEqual([]);
    expect(task).toMatchObject({ partner_id: late.partnerId, channel: 'task', status: 'sent', offset_days: 30, email_id: null });
    const [row] = await stack.sql('SELECT assignee_id, status, invoice_ids, partner_id FROM admin.collection_tasks WHERE id = $1', [task.task_id]);
    expect(row).toEqual({ assignee_id: o.userId, status: 'open', invoice_ids: late.invoiceIds, partner_id: late.partnerId });

    // events of the sends
    const events = await req(o, 'GET', '/v2/events?type=collection_action.sent');
    expect(events.status, events.text).toBe(200);
    expect(events.body.data.map((e: any) => e.data.object.id).sort()).toEqual([...acts.map((a) => a.id), task.id].sort());
  });
});

describe('the daily Schedule', () => {
  it('an action of the organization\'s Schedule records a real run (trigger schedule) as of today and does it', async () => {
    const o = await stack.onboard('Scheduled Org');
    const tpl = await emailTemplate(stack, o, 'Scheduled reminder', 'Hello {{ customer.name }}');
    await policy(stack, o, { steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });
    const c = await customer(stack, o, { invoices: [{ due: plusDays(today(), -2) }] });
    // the Schedule is written after the policy's commit by the organization's reconcile workflow
    const schedule = temporal.client.schedule.getHandle(`${collectionsScheduleId(o.organizationId)}`);
    await expect.poll(async () => schedule.describe().then(() => true, () => false), { timeout: 30_000, interval: 200 }).toBe(true);
    await schedule.trigger();
    let runs: any[] = [];
    await expect
      .poll(async () => (runs = (await req(o, 'GET', '/v2/collections/runs')).body.data).filter((r: any) => r.status === 'completed').length, { timeout: 60_000, interval: 200 })
      .toBe(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', dry_run: false, as_of_date: today(), sent: 1 });
    expect(await waitForMail(c.email)).toHaveLength(1);
    const started = (await schedule.describe()).info.recentActions[0]!.action.workflow.workflowId;
    const handle = temporal.client.workflow.getHandle(started);
    await handle.result();
    await replayHistory(stack, started, await handle.fetchHistory(), 'scheduled-collection-run.json');
  });
});

describe('input', () => {
  it('a real run is as of today only (422 at as_of_date); a dry run within a year of today; unknown run 404', async () => {
    const o = await stack.onboard('Input Org');
    const bad = await req(o, 'POST', '/v2/collections/runs', { as_of_date: plusDays(today(), 1) });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect(bad.body.errors[0].loc).toEqual(['body', 'as_of_date']);
    const far = await req(o, 'POST', '/v2/collections/runs', { dry_run: true, as_of_date: plusDays(today(), 400) });
    expect(far.status).toBe(422);
    expect((await req(o, 'POST', '/v2/collections/runs', { dry_run: true, as_of_date: '2026-02-30' })).status).toBe(422);
    expect((await req(o, 'POST', '/v2/collections/runs', { dry_run: 'yes' })).status).toBe(422);
    expect((await req(o, 'GET', '/v2/collections/runs')).body.total_records).toBe(0);
    expect((await req(o, 'GET', '/v2/collections/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await req(o, 'GET', '/v2/collections/actions?status=done')).status).toBe(422);
  });
});
