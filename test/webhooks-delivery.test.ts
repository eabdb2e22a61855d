/**
 * Webhook delivery end to end (spec §3): events recorded in a service's outbox reach a real HTTP
 * receiver on loopback, signed per Standard Webhooks and verified there by the `standardwebhooks`
 * package unchanged; retries keep the webhook-id; per-resource order; the rotation window; one
 * dead endpoint never delays another endpoint or another organization.
 *
 * Endpoints are made, rotated and read through the webhook-endpoint API as the org's admin
 * (test/support/webhooks.ts); the receivers verify with the secrets the API answered. Deliveries are
 * read with GET …/deliveries, endpoints with GET …/{id}. Where any event will do, the event is the
 * endpoint's test event (POST …/test); events of a chosen type, resource and organization are
 * recorded with the kernel's recordEvents in the cash_app schema, as a service records them with its
 * change (no API call of this admin-only stack emits them).
 * SQL, for what no endpoint can produce or show: a rotation window that has already ended
 * (`previous_secret_expires_at` an hour back; the API keeps it 24 hours), a URL stored while the
 * allowlist named its address (the API checks the URL against this stack's allowlist, which does
 * not), and reads of `failing_since`, which the API does not show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { createEndpoint, deliveriesOf, dispatcherReady, getEndpoint, paymentEvent, recordTestEvents, rotateSecret, sendTestEvent, startReceiver, type Receiver } from './support/webhooks.js';

let stack: TestStack;
let org: Org;
let other: Org;
const receivers: Receiver[] = [];

async function receiver(secrets: () => string[], host?: string): Promise<Receiver> {
  const r = await startReceiver(secrets, host);
  receivers.push(r);
  return r;
}

/** A receiver and an endpoint of `o` made for it through the API; the receiver verifies with the secret the API answered. */
async function endpointWithReceiver(o: Org, events?: string[]) {
  const secrets: string[] = [];
  const rx = await receiver(() => secrets);
  const endpoint = await createEndpoint(stack, o, { url: rx.url, events });
  secrets.push(endpoint.secret);
  return { rx, endpointId: endpoint.id, secrets };
}

/** What the API does not show: whether the endpoint is failing (SQL read, see the header). */
async function failingSince(endpointId: string): Promise<Date | null> {
  const [row] = await stack.sql(`SELECT failing_since FROM admin.webhook_endpoints WHERE id = $1`, [endpointId]);
  return row.failing_since;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '3000', OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  [org, other] = [await stack.onboard('Hooks Org'), await stack.onboard('Other Hooks Org')];
  await dispatcherReady(stack);
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await stack?.close();
});

describe('webhook delivery', () => {
  it('delivers each event as the event log shows it, signed so that standardwebhooks verifies it unchanged', async () => {
    const { rx, endpointId } = await endpointWithReceiver(org, ['payment.approved']);
    const [id] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-1', 'first')]);
    // another type and another organization's event: not for this endpoint
    await recordTestEvents(stack, [{ ...paymentEvent(org.organizationId, 'pay-1', 'x'), type: 'payment.posted' }, paymentEvent(other.organizationId, 'pay-9', 'theirs')]);

    const [got] = await rx.waitFor((r) => r.length >= 1);
    expect(got.verified).toBe(true);
    expect(got.id).toBe(id);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/ReceivablesPlatform/);
    expect(got.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const logged = await stack.request('GET', `/v2/events/${id}`, { token: org.token });
    expect(logged.status).toBe(200);
    expect(got.body).toEqual(logged.body);
    expect(got.body).toMatchObject({ id, object: 'event', type: 'payment.approved', data: { object: { id: 'pay-1', note: 'first' } } });

    await expect.poll(async () => (await deliveriesOf(stack, org, endpointId))[0]?.status, { timeout: 20_000 }).toBe('succeeded');
    const rows = await deliveriesOf(stack, org, endpointId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event_id: id, event_type: 'payment.approved', status: 'succeeded', attempts: 1, last_status_code: 200, last_error: null });
    expect(rx.received.map((r) => r.id)).toEqual([id]);
  });

  it('retries after a 500 and after a timeout with the same webhook-id and a fresh timestamp, each signed', async () => {
    const { rx, endpointId } = await endpointWithReceiver(org);
    rx.answer = ({ nth }) => (nth === 1 ? 500 : nth === 2 ? 'hang' : 204);
    const { id: deliveryId, event_id: id } = await sendTestEvent(stack, org, endpointId);

    // (events recorded by earlier tests may still arrive at this `*` endpoint: only this event's requests count)
    const got = (await rx.waitFor((r) => r.some((x) => x.id === id && x.ok))).filter((x) => x.id === id);
    expect(got).toHaveLength(3);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.raw)).size).toBe(1);
    expect(got[0].body).toMatchObject({ id, type: 'webhook.test' });
    // retries are at least a second apart (the test's schedule): each attempt signs its own timestamp
    expect(got[1].timestamp).toBeGreaterThan(got[0].timestamp);
    expect(got[2].timestamp).toBeGreaterThan(got[1].timestamp);
    expect(got[0].signature).not.toBe(got[1].signature);

    const delivery = async () => (await deliveriesOf(stack, org, endpointId)).find((d) => d.id === deliveryId);
    await expect.poll(async () => (await delivery())?.status, { timeout: 20_000 }).toBe('succeeded');
    const row = await delivery();
    expect(row).toMatchObject({ event_id: id, attempts: 3, last_status_code: 204, last_error: null, next_attempt_at: null });
    expect((await getEndpoint(stack, org, endpointId)).is_enabled).toBe(true);
    expect(await failingSince(endpointId)).toBeNull();
  });

  it('records a failed attempt and gives up after the last one of the schedule', async () => {
    const { rx, endpointId } = await endpointWithReceiver(org);
    rx.answer = () => 503;
    const { id: deliveryId, event_id: id } = await sendTestEvent(stack, org, endpointId);
    const delivery = async () => (await deliveriesOf(stack, org, endpointId)).find((d) => d.id === deliveryId);
    await expect.poll(async () => (await delivery())?.status, { timeout: 30_000 }).toBe('failed');
    const row = await delivery();
    // 1 + 4 retries (WEBHOOK_RETRY_DELAYS_SECONDS has four delays)
    expect(row).toMatchObject({ attempts: 5, last_status_code: 503, last_error: 'The endpoint answered 503 Service Unavailable.', next_attempt_at: null });
    const failed = await stack.request('GET', `/v2/webhook-endpoints/${endpointId}/deliveries?status=failed`, { token: org.token });
    expect(failed.body.data.map((d: any) => d.id)).toContain(deliveryId);
    expect(rx.received.filter((r) => r.id === id)).toHaveLength(5);
    expect(await failingSince(endpointId)).toBeInstanceOf(Date);
    expect((await getEndpoint(stack, org, endpointId)).is_enabled).toBe(true);
  });

  it('delivers the events of one resource in the order recorded, without holding back other resources', async () => {
    const { rx, endpointId } = await endpointWithReceiver(org);
    const [a1, a2, a3, b1] = await recordTestEvents(stack, [
      paymentEvent(org.organizationId, 'pay-A', 'A1'),
      paymentEvent(org.organizationId, 'pay-A', 'A2'),
      paymentEvent(org.organizationId, 'pay-A', 'A3'),
      paymentEvent(org.organizationId, 'pay-B', 'B1'),
    ]);
    rx.answer = ({ id, nth }) => (id === a1 && nth <= 2 ? 500 : 200);
    const got = await rx.waitFor((r) => [a1, a2, a3, b1].every((id) => r.some((x) => x.id === id && x.ok)));
    const firstOk = (id: string) => got.findIndex((x) => x.id === id && x.ok);
    const first = (id: string) => got.findIndex((x) => x.id === id);
    // A2 is never sent before A1 succeeded, A3 never before A2
    expect(first(a2)).toBeGreaterThan(firstOk(a1));
    expect(first(a3)).toBeGreaterThan(firstOk(a2));
    // B1 went out while A1 was still failing
    expect(firstOk(b1)).toBeLessThan(firstOk(a1));
    expect(got.filter((x) => x.id === a1)).toHaveLength(3);
    const mine = async () => (await deliveriesOf(stack, org, endpointId)).filter((d) => [a1, a2, a3, b1].includes(d.event_id));
    await expect.poll(async () => (await mine()).map((d) => d.status), { timeout: 20_000 }).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  });

  it('signs with both secrets during the rotation window, each signature verifying with its own secret', async () => {
    // rotated through the API: the previous secret signs 24 hours more
    const inWindow = await endpointWithReceiver(org, ['payment.posted']);
    const rotated = await rotateSecret(stack, org, inWindow.endpointId);
    expect(new Date(rotated.previous_secret_expires_at!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    inWindow.secrets.push(rotated.secret);
    // rotated, and the window over (SQL, see the header): the new secret alone signs
    const expired = await endpointWithReceiver(org, ['payment.posted']);
    const newer = (await rotateSecret(stack, org, expired.endpointId)).secret;
    await stack.sql(`UPDATE admin.webhook_endpoints SET previous_secret_expires_at = now() - interval '1 hour' WHERE id = $1`, [expired.endpointId]);
    expired.secrets.splice(0, expired.secrets.length, newer);
    await sendTestEvent(stack, org, inWindow.endpointId);
    await sendTestEvent(stack, org, expired.endpointId);

    const [got] = await inWindow.rx.waitFor((r) => r.length >= 1);
    expect(inWindow.secrets).toHaveLength(2);
    expect(got.verified).toBe(true);
    expect(got.signature.split(' ')).toHaveLength(2);
    const [single] = await expired.rx.waitFor((r) => r.length >= 1);
    expect(single.verified).toBe(true);
    expect(single.signature.split(' ')).toHaveLength(1);
  });

  it('never lets a dead endpoint delay another endpoint of the organization or another organization', async () => {
    const dead = await endpointWithReceiver(org, ['payment.approved']);
    dead.rx.answer = () => 'hang';
    const alive = await endpointWithReceiver(org, ['payment.approved']);
    const theirs = await endpointWithReceiver(other, ['payment.approved']);
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-D', 'dead?')]);
    await dead.rx.waitFor((r) => r.length >= 1);
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-E', 'alive'), paymentEvent(other.organizationId, 'pay-F', 'theirs')]);

    await alive.rx.waitFor((r) => r.filter((x) => x.ok).length >= 2);
    await theirs.rx.waitFor((r) => r.some((x) => x.ok));
    // both arrived while the dead endpoint's first request was still unanswered
    const deadRows = await deliveriesOf(stack, org, dead.endpointId);
    expect(deadRows.length).toBeGreaterThan(0);
    expect(deadRows.every((d) => d.attempts === 0)).toBe(true);
  });

  it('checks the URL again at delivery time: an address the allowlist does not name fails the attempt, unsent', async () => {
    const secrets: string[] = [];
    // A receiver that is reachable (127.0.0.2, loopback) but not named by this stack's allowlist (127.0.0.1 only).
    const rx = await receiver(() => secrets, '127.0.0.2');
    // The API refuses that URL (this stack's allowlist); the endpoint is made at 127.0.0.1 and its URL
    // set as one stored while the allowlist named 127.0.0.2 would be (SQL, see the header).
    const refused = await stack.request('POST', '/v2/webhook-endpoints', { token: org.token, body: { url: rx.url, events: ['*'] } });
    expect(refused.status).toBe(422);
    const { id: endpointId, secret } = await createEndpoint(stack, org, { url: rx.url.replace('127.0.0.2', '127.0.0.1'), events: ['*'] });
    secrets.push(secret);
    await stack.sql(`UPDATE admin.webhook_endpoints SET url = $2 WHERE id = $1`, [endpointId, rx.url]);
    expect((await getEndpoint(stack, org, endpointId)).url).toBe(rx.url);
    const { id: deliveryId } = await sendTestEvent(stack, org, endpointId);
    const delivery = async () => (await deliveriesOf(stack, org, endpointId)).find((d) => d.id === deliveryId);
    await expect.poll(async () => (await delivery())?.attempts ?? 0, { timeout: 20_000 }).toBeGreaterThan(0);
    const row = await delivery();
    expect(row.status).not.toBe('succeeded');
    expect(row.last_error).toMatch(/127\.0\.0\.2, a loopback address \(not in OUTBOUND_ALLOWLIST\)/);
    expect(rx.received).toHaveLength(0);
  });
});
