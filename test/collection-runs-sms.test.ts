/**
 * Collection runs' SMS steps end to end: texts through the Twilio-compatible SMS sink the tests run
 * (scripts/local/sms-sink.ts), quiet hours in the organization's timezone. The organization's
 * timezone is chosen through the API (PATCH /v2/organization) so that "now" falls inside or outside
 * quiet hours there; the waiting run is observed on its workflow's history in Temporal (a timer
 * started), never by elapsed time. No SQL set-up.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { collectionRunWorkflowId } from '@rp/workflows';
import { startStack, waitForMail, waitForSms, type Org, type TestStack } from './support/stack.js';
import { actionsOf, customer, emailTemplate, plusDays, policy, runCollections, todayIn, zoneWithHour } from './support/collections.js';

let stack: TestStack;
let temporal: TemporalHandle;

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

async function orgIn(name: string, timezone: string): Promise<Org> {
  const o = await stack.onboard(name);
  const res = await stack.request('PATCH', '/v2/organization', { token: o.token, body: { timezone } });
  expect(res.status, res.text).toBe(200);
  return o;
}

async function smsTemplate(o: Org, body: string): Promise<string> {
  const res = await stack.request('POST', '/v2/sms-templates', { token: o.token, body: { name: `Text ${randomInt(1e6)}`, body } });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

const phone = () => `+4930${randomInt(1_000_000, 9_999_999)}`;

describe('SMS steps', () => {
  it('outside quiet hours a text goes to the customer\'s number in E.164, rendered with the action; its provider id and segments are recorded', async () => {
    const zone = zoneWithHour(9, 18);
    const o = await orgIn('SMS Day Org', zone);
    const today = todayIn(zone);
    const tpl = await smsTemplate(o, 'Hi {{ customer.name }}: {{ action.invoices.size }} invoice(s) overdue, first {{ action.invoices[0].number }}.');
    await policy(stack, o, { steps: [{ offset_days: 0, channel: 'sms', sms_template_id: tpl }] });
    const number = phone();
    const c = await customer(stack, o, { name: 'Texted GmbH', phone: number.replace('+49', '+49 ').replace(/(\d{2})(\d+)$/, '$1 $2'), invoices: [{ number: '8100001', due: plusDays(today, -1) }] });
    const run = await runCollections(stack, o);
    expect(run).toMatchObject({ status: 'completed', sent: 1, failed: 0 });
    const [action] = await actionsOf(stack, o.token, `run_id=${run.id}`);
    expect(action).toMatchObject({ partner_id: c.partnerId, channel: 'sms', status: 'sent', email_id: null, task_id: null });
    const texts = await waitForSms(number);
    expect(texts).toHaveLength(1);
    expect(texts[0].body).toBe('Hi Texted GmbH: 1 invoice(s) overdue, first 8100001.');
    const [msg] = await stack.sql('SELECT to_address, provider_message_id, segments, status FROM admin.collection_messages WHERE id = $1', [action.sms_id]);
    expect(msg).toMatchObject({ to_address: number, status: 'sent', segments: 1 });
    expect(msg.provider_message_id).toBe(texts[0].sid);
  });

  it('in quiet hours a text waits on a workflow timer until 08:00 local (not skipped); the run\'s emails go out meanwhile', async () => {
    const zone = zoneWithHour(21, 6);
    const o = await orgIn('SMS Night Org', zone);
    const today = todayIn(zone);
    const tpl = await smsTemplate(o, 'Hi {{ customer.name }}');
    const mailTpl = await emailTemplate(stack, o, 'Night mail', 'Hello');
    const texting = await stack.request('POST', '/v2/customer-segments', { token: o.token, body: { name: 'Texting', priority: 1, conditions: { field: 'name', op: 'contains', value: 'texted' } } });
    expect(texting.status, texting.text).toBe(200);
    await policy(stack, o, { segmentId: texting.body.id, steps: [{ offset_days: 0, channel: 'sms', sms_template_id: tpl }] });
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: mailTpl }] });
    const number = phone();
    await customer(stack, o, { name: 'Texted At Night', phone: number, invoices: [{ due: plusDays(today, -1) }] });
    const mailed = await customer(stack, o, { name: 'Mailed At Night', invoices: [{ due: plusDays(today, -1) }] });
    const started = await stack.request('POST', '/v2/collections/runs', { token: o.token, body: {} });
    expect(started.status).toBe(202);
    expect(await waitForMail(mailed.email)).toHaveLength(1);
    // the workflow sleeps on a timer until the end of quiet hours
    const handle = temporal.client.workflow.getHandle(collectionRunWorkflowId(started.body.id));
    let timer: { startToFireTimeout?: { seconds?: unknown } | null } | undefined;
    for (let i = 0; i < 200 && !timer; i++) {
      const history = await handle.fetchHistory();
      timer = history.events?.find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes ?? undefined;
      if (!timer) await new Promise((r) => setTimeout(r, 100));
    }
    expect(timer).toBeDefined();
    const seconds = Number(timer!.startToFireTimeout?.seconds);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(12 * 3600);
    const run = (await stack.request('GET', `/v2/collections/runs/${started.body.id}`, { token: o.token })).body;
    expect(run).toMatchObject({ status: 'running', sent: 1, skipped: 0 });
    const sms = await actionsOf(stack, o.token, `run_id=${started.body.id}&channel=sms`);
    expect(sms).toHaveLength(1);
    expect(sms[0]).toMatchObject({ status: 'planned', sms_id: null });
    expect(await waitForSms(number, { timeoutMs: 500 })).toEqual([]);
    await handle.terminate('test over');
  });
});
