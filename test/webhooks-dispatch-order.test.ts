/**
 * The dispatcher queues an event's deliveries in the order the events were recorded (txid, seq),
 * not in the order of their ids: events of one resource recorded by different processes (the API
 * approves a payment, a worker posts it a moment later) carry UUIDv7 ids from different clocks, and
 * the later event's id may sort first. Per-resource delivery order follows the queue order (`seq`).
 *
 * SQL set-up, for a state no endpoint can produce at will: two events of one payment inserted in
 * recording order with ids in the opposite order (the second process's clock a millisecond behind).
 * The endpoint is created through the API; no worker runs, so the test calls the fan-out itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, newId, type Db } from '@rp/platform';
import { dispatchNextEvents } from '../services/admin/src/store/webhooks/queue.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let admin: Db;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard('Dispatch Order Org');
  admin = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
});
afterAll(async () => {
  await admin?.destroy();
  await stack?.close();
});

describe('webhook fan-out order', () => {
  it('queues the deliveries of one resource in recording order, whatever their ids', async () => {
    const created = await stack.request('POST', '/v2/webhook-endpoints', { token: org.token, body: { url: 'https://hooks.example.com/rp', events: ['*'] } });
    expect(created.status).toBe(200);
    await dispatchNextEvents(admin, 'cash_app', 100); // the cursor starts here

    const payment = newId();
    const [laterId, earlierId] = [newId(), newId()].sort(); // earlierId sorts after laterId
    for (const [id, type] of [[earlierId, 'payment.approved'], [laterId, 'payment.posted']] as const) {
      await stack.sql(
        `INSERT INTO cash_app.events (id, organization_id, type, resource_type, resource_id, data) VALUES ($1, $2, $3, 'payment', $4, '{"object":"payment"}')`,
        [id, org.organizationId, type, payment],
      );
    }
    // An event is dispatched once every transaction older than it has ended (the snapshot's xmin): a
    // transaction of another test running at the same time may hold the second one back for a moment.
    let dispatched = 0;
    for (const deadline = Date.now() + 15_000; dispatched < 2 && Date.now() < deadline; ) {
      dispatched += (await dispatchNextEvents(admin, 'cash_app', 100)).events;
      if (dispatched < 2) await new Promise((r) => setTimeout(r, 50));
    }
    expect(dispatched).toBe(2);

    const queued = await stack.sql(`SELECT event_type FROM admin.webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq`, [created.body.id]);
    expect(queued.map((r) => r.event_type)).toEqual(['payment.approved', 'payment.posted']);
  });
});
