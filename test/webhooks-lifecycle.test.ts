/**
 * Webhook delivery when endpoints go away or keep failing (spec §3): 410 Gone disables the endpoint
 * at once and pauses its deliveries, which resume when it is re-enabled; an endpoint failing for
 * longer than WEBHOOK_DISABLE_AFTER_HOURS is disabled; the organization's admins get one email per
 * disabling; deleting an endpoint ends its delivery. The workflows' histories replay.
 *
 * Endpoints are made, re-enabled (PATCH is_enabled) and deleted through the webhook-endpoint API as
 * the org's admin (test/support/webhooks.ts); their state (`is_enabled`, `disabled_reason`) is read
 * with GET …/{id} and their deliveries with GET …/deliveries. The events are the endpoint's test
 * event (POST …/test) where any event will do; the event recorded while the endpoint is disabled is
 * recorded with the kernel's recordEvents (the test call refuses a disabled endpoint, and no API
 * call of this admin-only stack emits an event the endpoint subscribes to).
 * SQL, for what no endpoint can produce or show: `failing_since` three days back (no request can
 * make an endpoint fail for three days within a test); reads of `disabled_at`, which the API does
 * not show, and of the dispatcher's cursor (it has gone past an event); after a delete, that no
 * delivery row is left (the API answers 404 for the endpoint and its deliveries).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { WEBHOOK_DISPATCHER_WORKFLOW_ID, webhookEndpointWorkflowId } from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { createEndpoint, deleteEndpoint, deliveriesOf, dispatcherReady, getEndpoint, paymentEvent, recordTestEvents, sendTestEvent, setEnabled, startReceiver, type Receiver } from './support/webhooks.js';

let stack: TestStack;
let org: Org;
let adminEmail: string;
let temporal: TemporalHandle;
const receivers: Receiver[] = [];

/** A receiver and an endpoint of the organization made for it through the API (verifying with the secret the API answered). */
async function endpointWithReceiver(events: string[]) {
  const secrets: string[] = [];
  const rx = await startReceiver(() => secrets);
  receivers.push(rx);
  const endpoint = await createEndpoint(stack, org, { url: rx.url, events });
  secrets.push(endpoint.secret);
  return { rx, endpointId: endpoint.id };
}

/** The disabling notices the admin received about the endpoint at `url` (the welcome email aside). */
async function notices(url: string) {
  return (await waitForMail(adminEmail, { count: Number.MAX_SAFE_INTEGER, timeoutMs: 0 })).filter((m) => m.subject === `Webhook endpoint disabled: ${url}`);
}

const endpoint = (id: string) => getEndpoint(stack, org, id);

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1', WEBHOOK_TIMEOUT_MS: '3000' } });
  org = await stack.onboard('Lifecycle Hooks Org');
  const me = await stack.request('GET', `/v2/users/${org.userId}`, { token: org.token });
  expect(me.status).toBe(200);
  adminEmail = me.body.email;
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  await dispatcherReady(stack);
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await temporal?.close();
  await stack?.close();
});

describe('webhook endpoints disabled, re-enabled and deleted', () => {
  it('disables the endpoint on 410 Gone, pauses its deliveries, emails the admins once, and resumes when re-enabled', async () => {
    const { rx, endpointId } = await endpointWithReceiver(['payment.approved']);
    rx.answer = ({ nth }) => (nth === 1 ? 410 : 200);
    const { event_id: gone } = await sendTestEvent(stack, org, endpointId);

    await expect.poll(async () => (await endpoint(endpointId)).is_enabled, { timeout: 30_000 }).toBe(false);
    expect((await endpoint(endpointId)).disabled_reason).toMatch(/^The endpoint answered 410 Gone at \d{4}-\d\d-\d\dT/);
    const [{ disabled_at: disabledAt }] = await stack.sql(`SELECT disabled_at FROM admin.webhook_endpoints WHERE id = $1`, [endpointId]);
    expect(disabledAt).toBeInstanceOf(Date);
    const [paused] = await deliveriesOf(stack, org, endpointId);
    expect(paused).toMatchObject({ event_id: gone, status: 'pending', attempts: 1, last_status_code: 410 });

    await expect.poll(async () => (await notices(rx.url)).length, { timeout: 30_000 }).toBe(1);
    const [mail] = await notices(rx.url);
    expect(mail.text).toContain('410 Gone');

    // Events recorded while the endpoint is disabled are not queued for it (the event log has them).
    const [meanwhile] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-411', 'meanwhile')]);
    await expect.poll(async () => (await stack.sql(`SELECT count(*)::int AS n FROM admin.webhook_dispatch_cursors c JOIN cash_app.events e ON e.id = $1 WHERE c.source = 'cash_app' AND (c.txid, c.seq) >= (e.txid, e.seq)`, [meanwhile]))[0].n, { timeout: 20_000 }).toBe(1);
    expect((await deliveriesOf(stack, org, endpointId)).map((d) => d.event_id)).toEqual([gone]);
    expect(rx.received).toHaveLength(1);

    // Re-enabled through the API: the reason is cleared and the paused delivery goes out.
    const enabled = await setEnabled(stack, org, endpointId, true);
    expect(enabled).toMatchObject({ is_enabled: true, disabled_reason: null });
    const got = await rx.waitFor((r) => r.some((x) => x.ok));
    expect(got.map((r) => r.id)).toEqual([gone, gone]);
    expect(got[1].verified).toBe(true);
    await expect.poll(async () => (await deliveriesOf(stack, org, endpointId))[0].status, { timeout: 20_000 }).toBe('succeeded');
    expect(await notices(rx.url)).toHaveLength(1);

    const handle = temporal.client.workflow.getHandle(webhookEndpointWorkflowId(endpointId));
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-endpoint-delivery-disabled.json');
  });

  it('disables an endpoint that has failed every attempt for longer than the limit, and emails the admins', async () => {
    const { rx, endpointId } = await endpointWithReceiver(['payment.posted']);
    rx.answer = () => 500;
    // failing for three days already (SQL, see the header)
    await stack.sql(`UPDATE admin.webhook_endpoints SET failing_since = now() - interval '73 hours' WHERE id = $1`, [endpointId]);
    await sendTestEvent(stack, org, endpointId);

    await expect.poll(async () => (await endpoint(endpointId)).is_enabled, { timeout: 30_000 }).toBe(false);
    expect((await endpoint(endpointId)).disabled_reason).toMatch(/^Every delivery attempt since .* failed \(more than 72 hours\)\.$/);
    expect(rx.received).toHaveLength(1);
    await expect.poll(async () => (await notices(rx.url)).length, { timeout: 30_000 }).toBe(1);
    expect((await notices(rx.url))[0].text).toContain('more than 72 hours');
  });

  it('keeps an endpoint that has been failing for less than the limit enabled', async () => {
    const { rx, endpointId } = await endpointWithReceiver(['remittance.created']);
    rx.answer = () => 500;
    await sendTestEvent(stack, org, endpointId);
    await expect.poll(async () => (await deliveriesOf(stack, org, endpointId))[0]?.status, { timeout: 30_000 }).toBe('failed');
    expect(rx.received).toHaveLength(4);
    expect(await endpoint(endpointId)).toMatchObject({ is_enabled: true, disabled_reason: null });
  });

  it('ends delivery when the endpoint is deleted', async () => {
    const { rx, endpointId } = await endpointWithReceiver(['payment.proposed']);
    rx.answer = () => 500;
    await sendTestEvent(stack, org, endpointId);
    await rx.waitFor((r) => r.length >= 1);
    await deleteEndpoint(stack, org, endpointId);

    const handle = temporal.client.workflow.getHandle(webhookEndpointWorkflowId(endpointId));
    await handle.result().catch(() => undefined);
    // the delete cancels the workflow; one that found its endpoint gone first has completed
    expect(['CANCELLED', 'COMPLETED']).toContain((await handle.describe()).status.name);
    expect((await stack.request('GET', `/v2/webhook-endpoints/${endpointId}`, { token: org.token })).status).toBe(404);
    expect((await stack.request('GET', `/v2/webhook-endpoints/${endpointId}/deliveries`, { token: org.token })).status).toBe(404);
    expect(await stack.sql(`SELECT id FROM admin.webhook_deliveries WHERE endpoint_id = $1`, [endpointId])).toEqual([]);
    const sent = rx.received.length;
    expect(sent).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 2500));
    expect(rx.received).toHaveLength(sent);
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-endpoint-delivery-gone.json');
  });

  it('keeps one dispatcher running, whose history replays', async () => {
    const handle = temporal.client.workflow.getHandle(WEBHOOK_DISPATCHER_WORKFLOW_ID);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-dispatcher.json');
  });
});
