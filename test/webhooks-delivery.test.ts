/**
 * Webhook delivery end to end (spec §3): events recorded in a service's outbox reach a real HTTP
 * receiver on loopback, signed per Standard Webhooks and verified there by the `standardwebhooks`
 * package unchanged; retries keep the webhook-id; per-resource order; the rotation window; one
 * dead endpoint never delays another endpoint or another organization.
 *
 * SQL set-up (no endpoint API on this branch yet): endpoint rows with sealed secrets
 * (test/support/webhooks.ts). Events are recorded with the kernel's recordEvents in the cash_app
 * schema, as a service records them with its change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { createEndpointRow, deliveriesOf, dispatcherReady, newSecret, paymentEvent, recordTestEvents, startReceiver, type Receiver } from './support/webhooks.js';

let stack: TestStack;
let org: Org;
let other: Org;
const receivers: Receiver[] = [];

async function receiver(secrets: () => string[], host?: string): Promise<Receiver> {
  const r = await startReceiver(secrets, host);
  receivers.push(r);
  return r;
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
    const secret = newSecret();
    const rx = await receiver(() => [secret]);
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret, events: ['payment.approved'] });
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

    const rows = await deliveriesOf(stack, endpointId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event_id: id, status: 'succeeded', attempts: 1, last_status_code: 200, last_error: null });
    expect(rx.received.map((r) => r.id)).toEqual([id]);
  });

  it('retries after a 500 and after a timeout with the same webhook-id and a fresh timestamp, each signed', async () => {
    const secret = newSecret();
    const rx = await receiver(() => [secret]);
    rx.answer = ({ nth }) => (nth === 1 ? 500 : nth === 2 ? 'hang' : 204);
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret });
    const [id] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-2', 'retried')]);

    // (events recorded by earlier tests may still arrive at this `*` endpoint: only this event's requests count)
    const got = (await rx.waitFor((r) => r.some((x) => x.id === id && x.ok))).filter((x) => x.id === id);
    expect(got).toHaveLength(3);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.raw)).size).toBe(1);
    // retries are at least a second apart (the test's schedule): each attempt signs its own timestamp
    expect(got[1].timestamp).toBeGreaterThan(got[0].timestamp);
    expect(got[2].timestamp).toBeGreaterThan(got[1].timestamp);
    expect(got[0].signature).not.toBe(got[1].signature);

    const delivery = async () => (await deliveriesOf(stack, endpointId)).find((d) => d.event_id === id);
    await expect.poll(async () => (await delivery())?.status, { timeout: 20_000 }).toBe('succeeded');
    const row = await delivery();
    expect(row).toMatchObject({ attempts: 3, last_status_code: 204, last_error: null, next_attempt_at: null });
    const [endpoint] = await stack.sql(`SELECT failing_since, is_enabled FROM admin.webhook_endpoints WHERE id = $1`, [endpointId]);
    expect(endpoint).toEqual({ failing_since: null, is_enabled: true });
  });

  it('records a failed attempt and gives up after the last one of the schedule', async () => {
    const secret = newSecret();
    const rx = await receiver(() => [secret]);
    rx.answer = () => 503;
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret });
    const [id] = await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-3', 'never')]);
    const delivery = async () => (await deliveriesOf(stack, endpointId)).find((d) => d.event_id === id);
    await expect.poll(async () => (await delivery())?.status, { timeout: 30_000 }).toBe('failed');
    const row = await delivery();
    // 1 + 4 retries (WEBHOOK_RETRY_DELAYS_SECONDS has four delays)
    expect(row).toMatchObject({ attempts: 5, last_status_code: 503, last_error: 'The endpoint answered 503 Service Unavailable.', next_attempt_at: null });
    expect(rx.received.filter((r) => r.id === id)).toHaveLength(5);
    const [endpoint] = await stack.sql(`SELECT failing_since, is_enabled FROM admin.webhook_endpoints WHERE id = $1`, [endpointId]);
    expect(endpoint.failing_since).toBeInstanceOf(Date);
    expect(endpoint.is_enabled).toBe(true);
  });

  it('delivers the events of one resource in the order recorded, without holding back other resources', async () => {
    const secret = newSecret();
    const rx = await receiver(() => [secret]);
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret });
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
    const mine = (await deliveriesOf(stack, endpointId)).filter((d) => [a1, a2, a3, b1].includes(d.event_id));
    expect(mine.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  });

  it('signs with both secrets during the rotation window, each signature verifying with its own secret', async () => {
    const [oldSecret, newer] = [newSecret(), newSecret()];
    const rx = await receiver(() => [oldSecret, newer]);
    await createEndpointRow(stack, org.organizationId, { url: rx.url, secret: newer, previousSecret: { secret: oldSecret, expiresAt: new Date(Date.now() + 86_400_000) } });
    const rxExpired = await receiver(() => [newer]);
    await createEndpointRow(stack, org.organizationId, { url: rxExpired.url, secret: newer, previousSecret: { secret: oldSecret, expiresAt: new Date(Date.now() - 1000) } });
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-R', 'rotated')]);

    const [got] = await rx.waitFor((r) => r.length >= 1);
    expect(got.verified).toBe(true);
    expect(got.signature.split(' ')).toHaveLength(2);
    const [expired] = await rxExpired.waitFor((r) => r.length >= 1);
    expect(expired.verified).toBe(true);
    expect(expired.signature.split(' ')).toHaveLength(1);
  });

  it('never lets a dead endpoint delay another endpoint of the organization or another organization', async () => {
    const secret = newSecret();
    const dead = await receiver(() => [secret]);
    dead.answer = () => 'hang';
    const alive = await receiver(() => [secret]);
    const theirs = await receiver(() => [secret]);
    const deadId = await createEndpointRow(stack, org.organizationId, { url: dead.url, secret, events: ['payment.approved'] });
    await createEndpointRow(stack, org.organizationId, { url: alive.url, secret, events: ['payment.approved'] });
    await createEndpointRow(stack, other.organizationId, { url: theirs.url, secret, events: ['payment.approved'] });
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-D', 'dead?')]);
    await dead.waitFor((r) => r.length >= 1);
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-E', 'alive'), paymentEvent(other.organizationId, 'pay-F', 'theirs')]);

    await alive.waitFor((r) => r.filter((x) => x.ok).length >= 2);
    await theirs.waitFor((r) => r.some((x) => x.ok));
    // both arrived while the dead endpoint's first request was still unanswered
    const deadRows = await deliveriesOf(stack, deadId);
    expect(deadRows.every((d) => d.attempts === 0)).toBe(true);
  });

  it('checks the URL again at delivery time: an address the allowlist does not name fails the attempt, unsent', async () => {
    const secret = newSecret();
    // A receiver that is reachable (127.0.0.2, loopback) but not named by this stack's allowlist (127.0.0.1 only).
    const rx = await receiver(() => [secret], '127.0.0.2');
    const endpointId = await createEndpointRow(stack, org.organizationId, { url: rx.url, secret });
    await recordTestEvents(stack, [paymentEvent(org.organizationId, 'pay-G', 'guarded')]);
    await expect.poll(async () => (await deliveriesOf(stack, endpointId))[0]?.attempts ?? 0, { timeout: 20_000 }).toBeGreaterThan(0);
    const [row] = await deliveriesOf(stack, endpointId);
    expect(row.status).not.toBe('succeeded');
    expect(row.last_error).toMatch(/127\.0\.0\.2, a loopback address \(not in OUTBOUND_ALLOWLIST\)/);
    expect(rx.received).toHaveLength(0);
  });
});
