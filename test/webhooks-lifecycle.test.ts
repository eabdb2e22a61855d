/**
 * Webhook delivery when endpoints go away or keep failing (spec §3): 410 Gone disables the endpoint
 * at once and pauses its deliveries, which resume when it is re-enabled; an endpoint failing for
 * longer than WEBHOOK_DISABLE_AFTER_HOURS is disabled; the organization's admins get one email per
 * disabling; deleting an endpoint ends its delivery. The workflows' histories replay.
 *
 * SQL set-up (no endpoint API on this branch yet): endpoint rows (test/support/webhooks.ts);
 * re-enabling and deleting are SQL followed by the wake the endpoint API sends; `failing_since`
 * three days back is SQL (no request can make an endpoint fail for three days within a test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { WEBHOOK_DISPATCHER_WORKFLOW_ID, webhookEndpointWorkflowId } from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { createEndpointRow, deliveriesOf, dispatcherReady, newSecret, paymentEvent, recordTestEvents, startReceiver, wakeEndpoint, type Receiver } from './support/webhooks.js';

let stack: TestStack;
let org: Org;
let adminEmail: string;
let temporal: TemporalHandle;
const receivers: Receiver[] = [];

async function receiver(secret: string): Promise<Receiver> {
  const r = await startReceiver(() => [secret]);
  receivers.push(r);
  return r;
}

/** The disabling notices the admin received about the endpoint at `url` (the welcome email aside). */
async function notices(url: string) {
  return (await waitForMail(adminEmail, { count: Number.MAX_SAFE_INTEGER, timeoutMs: 0 })).filter((m) => m.subject === `Webhook endpoint disabled: ${url}`);
}

async function endpoint(id: string) {
  const [row] = await stack.sql(`SELECT * FROM admin.webhook_endpoints WHERE id = $1`, [id]);
  return row;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1', WEBHOOK_TIMEOUT_MS: '3000' } });
  org = await stack.onboard('Lifecycle Hooks Org');
  [{ email: adminEmail }] = await stack.sql(`SELECT email FROM admin.users WHERE id = $1`, [org.userId]);
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
    const secret = newSecret();
    const rx = await receiver(secret);
    rx.answer = ({ nth }) => (nth === 1 ? 410 : 200);
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret, events: ['payment.approved'] });
    const [gone] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-410', 'gone')]);

    await expect.poll(async () => (await endpoint(endpointId)).is_enabled, { timeout: 30_000 }).toBe(false);
    const disabled = await endpoint(endpointId);
    expect(disabled.disabled_reason).toMatch(/^The endpoint answered 410 Gone at \d{4}-\d\d-\d\dT/);
    expect(disabled.disabled_at).toBeInstanceOf(Date);
    const [paused] = await deliveriesOf(stack, endpointId);
    expect(paused).toMatchObject({ event_id: gone, status: 'pending', attempts: 1, last_status_code: 410 });

    await expect.poll(async () => (await notices(rx.url)).length, { timeout: 30_000 }).toBe(1);
    const [mail] = await notices(rx.url);
    expect(mail.text).toContain('410 Gone');

    // Events recorded while the endpoint is disabled are not queued for it (the event log has them).
    const [meanwhile] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-411', 'meanwhile')]);
    await expect.poll(async () => (await stack.sql(`SELECT count(*)::int AS n FROM admin.webhook_dispatch_cursors c JOIN cash_app.events e ON e.id = $1 WHERE c.source = 'cash_app' AND (c.txid, c.seq) >= (e.txid, e.seq)`, [meanwhile]))[0].n, { timeout: 20_000 }).toBe(1);
    expect((await deliveriesOf(stack, endpointId)).map((d) => d.event_id)).toEqual([gone]);
    expect(rx.received).toHaveLength(1);

    // Re-enabled (as PATCH is_enabled: true does): the paused delivery goes out.
    await stack.sql(`UPDATE admin.webhook_endpoints SET is_enabled = true, disabled_reason = NULL, disabled_at = NULL WHERE id = $1`, [endpointId]);
    await wakeEndpoint(stack, org.organizationId, endpointId);
    const got = await rx.waitFor((r) => r.some((x) => x.ok));
    expect(got.map((r) => r.id)).toEqual([gone, gone]);
    expect(got[1].verified).toBe(true);
    await expect.poll(async () => (await deliveriesOf(stack, endpointId))[0].status, { timeout: 20_000 }).toBe('succeeded');
    expect(await notices(rx.url)).toHaveLength(1);

    const handle = temporal.client.workflow.getHandle(webhookEndpointWorkflowId(endpointId));
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-endpoint-delivery-disabled.json');
  });

  it('disables an endpoint that has failed every attempt for longer than the limit, and emails the admins', async () => {
    const secret = newSecret();
    const rx = await receiver(secret);
    rx.answer = () => 500;
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret, events: ['payment.posted'] });
    await stack.sql(`UPDATE admin.webhook_endpoints SET failing_since = now() - interval '73 hours' WHERE id = $1`, [endpointId]);
    await recordTestEvents(stack, [{ ...paymentEvent(org.organizationId, 'pay-72', 'failing'), type: 'payment.posted' }]);

    await expect.poll(async () => (await endpoint(endpointId)).is_enabled, { timeout: 30_000 }).toBe(false);
    expect((await endpoint(endpointId)).disabled_reason).toMatch(/^Every delivery attempt since .* failed \(more than 72 hours\)\.$/);
    expect(rx.received).toHaveLength(1);
    await expect.poll(async () => (await notices(rx.url)).length, { timeout: 30_000 }).toBe(1);
    expect((await notices(rx.url))[0].text).toContain('more than 72 hours');
  });

  it('keeps an endpoint that has been failing for less than the limit enabled', async () => {
    const secret = newSecret();
    const rx = await receiver(secret);
    rx.answer = () => 500;
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret, events: ['remittance.created'] });
    await recordTestEvents(stack, [{ ...paymentEvent(org.organizationId, 'rem-1', 'x'), type: 'remittance.created' }]);
    await expect.poll(async () => (await deliveriesOf(stack, endpointId))[0]?.status, { timeout: 30_000 }).toBe('failed');
    expect((await endpoint(endpointId)).is_enabled).toBe(true);
  });

  it('ends delivery when the endpoint is deleted', async () => {
    const secret = newSecret();
    const rx = await receiver(secret);
    rx.answer = () => 500;
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret, events: ['payment.proposed'] });
    await recordTestEvents(stack, [{ ...paymentEvent(org.organizationId, 'pay-del', 'deleted'), type: 'payment.proposed' }]);
    await rx.waitFor((r) => r.length >= 1);
    await stack.sql(`DELETE FROM admin.webhook_endpoints WHERE id = $1`, [endpointId]);
    await wakeEndpoint(stack, org.organizationId, endpointId);

    const handle = temporal.client.workflow.getHandle(webhookEndpointWorkflowId(endpointId));
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await deliveriesOf(stack, endpointId)).toEqual([]);
    const sent = rx.received.length;
    expect(sent).toBeGreaterThanOrEqual(1);
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-endpoint-delivery-gone.json');
  });

  it('keeps one dispatcher running, whose history replays', async () => {
    const handle = temporal.client.workflow.getHandle(WEBHOOK_DISPATCHER_WORKFLOW_ID);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'webhook-dispatcher.json');
  });
});
