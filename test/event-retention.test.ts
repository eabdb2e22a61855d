/**
 * Event retention: each service's worker prunes its own schema's events older than
 * EVENT_RETENTION_DAYS (here 10) with the kernel activity `pruneOwnEvents`, and admin's webhook
 * deliveries with them; the daily Schedule `event-retention`, created by the admin worker at start,
 * runs the `eventRetention` workflow, which prunes every service on its own task queue. Real workers
 * of all four services, real Postgres and Temporal; the workflow's history is replayed.
 *
 * SQL set-up, for states no endpoint can produce: events and webhook deliveries recorded days ago
 * (rows inserted with an old `created_at`), and the webhook endpoint those deliveries belong to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { connectTemporal, createDb, EVENT_SOURCES, eventRetentionActivities, newId, type TemporalHandle } from '@rp/platform';
import { EVENT_RETENTION_SCHEDULE } from '@rp/workflows';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';

let stack: TestStack;
let org: Org;
let temporal: TemporalHandle;

/** A type each source records (the catalogue's owner of it). */
const TYPE_OF = { admin: 'report.sent', integrations: 'invoice.created', cash_app: 'payment.posted', knowledge: 'proposal.created' } as const;

/** Inserts an event of `source` recorded `daysAgo` days ago; returns its id. */
async function eventAged(source: (typeof EVENT_SOURCES)[number], daysAgo: number, organizationId = org.organizationId): Promise<string> {
  const id = newId();
  await stack.sql(
    `INSERT INTO ${source}.events (id, organization_id, type, resource_type, resource_id, data, created_at)
     VALUES ($1, $2, $3, split_part($3, '.', 1), $4, $5::json, now() - make_interval(days => $6))`,
    [id, organizationId, TYPE_OF[source], newId(), JSON.stringify({ id, aged: daysAgo }), daysAgo],
  );
  return id;
}

async function ids(source: string): Promise<string[]> {
  return (await stack.sql(`SELECT id FROM ${source}.events ORDER BY id`)).map((r) => r.id);
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'integrations', 'cash-app', 'knowledge'], env: { EVENT_RETENTION_DAYS: '10' } });
  org = await stack.onboard('Retention Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('event retention', () => {
  it('the activity deletes only its own schema\'s events older than the retention, batch after batch', async () => {
    const old = await Promise.all(Array.from({ length: 5 }, () => eventAged('knowledge', 31)));
    const young = await eventAged('knowledge', 29);
    const otherSchema = await eventAged('cash_app', 31);
    const db = createDb({ url: stack.databaseUrl, schema: 'knowledge', poolMax: 1 });
    try {
      const activities = eventRetentionActivities({ db, retentionDays: 30, batch: 2 });
      const heartbeats: unknown[] = [];
      const env = new MockActivityEnvironment();
      env.on('heartbeat', (d: unknown) => heartbeats.push(d));
      expect(await env.run(activities.pruneOwnEvents)).toEqual({ events: 5 });
      expect(heartbeats).toHaveLength(3); // batches of 2, 2 and 1
    } finally {
      await db.destroy();
    }
    const left = await ids('knowledge');
    for (const id of old) expect(left).not.toContain(id);
    expect(left).toContain(young);
    expect(await ids('cash_app')).toContain(otherSchema);
    await stack.sql(`DELETE FROM knowledge.events; DELETE FROM cash_app.events`);
  });

  it('the admin worker creates the daily Schedule; its workflow prunes every service\'s events and old webhook deliveries', async () => {
    const schedule = temporal.client.schedule.getHandle(EVENT_RETENTION_SCHEDULE.scheduleId);
    const described = await schedule.describe();
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'eventRetention', taskQueue: 'admin' });
    expect(described.spec.calendars).toHaveLength(1);

    const aged: Record<string, { old: string; young: string }> = {};
    for (const source of EVENT_SOURCES) aged[source] = { old: await eventAged(source, 11), young: await eventAged(source, 9) };
    const endpoint = newId();
    // Disabled, so the running webhook dispatcher queues none of this test's events for it: the only deliveries are the three below.
    await stack.sql(`INSERT INTO admin.webhook_endpoints (id, organization_id, url, events, secret_enc, is_enabled) VALUES ($1, $2, 'https://example.com/hook', '{*}', 'sealed', false)`, [endpoint, org.organizationId]);
    const delivery = (daysAgo: number, status: string) =>
      stack.sql(
        `INSERT INTO admin.webhook_deliveries (id, organization_id, endpoint_id, event_id, event_source, event_type, resource_key, status, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, 'admin', 'report.sent', 'report:x', $5, now(), now() - make_interval(days => $6)) RETURNING id`,
        [newId(), org.organizationId, endpoint, newId(), status, daysAgo],
      );
    const [oldPending] = await delivery(11, 'pending');
    const [oldDone] = await delivery(12, 'succeeded');
    const [youngDelivery] = await delivery(9, 'pending');

    // the log shows both before the run
    const before = await stack.request('GET', '/v2/events?page_size=200', { token: org.token });
    expect(before.body.data.map((e: any) => e.id)).toEqual(expect.arrayContaining(Object.values(aged).flatMap((a) => [a.old, a.young])));

    await schedule.trigger();
    let workflowId = '';
    for (let i = 0; i < 200 && !workflowId; i++) {
      workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId ?? '';
      if (!workflowId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(workflowId).toMatch(/^event-retention/);
    const handle = temporal.client.workflow.getHandle(workflowId);
    expect(await handle.result()).toEqual({
      integrations: { events: 1 },
      'cash-app': { events: 1 },
      knowledge: { events: 1 },
      admin: { events: 1, webhook_deliveries: 2 },
    });
    for (const source of EVENT_SOURCES) {
      const left = await ids(source);
      expect(left, source).not.toContain(aged[source]!.old);
      expect(left, source).toContain(aged[source]!.young);
    }
    const deliveries = (await stack.sql(`SELECT id FROM admin.webhook_deliveries`)).map((r) => r.id);
    expect(deliveries).toEqual([youngDelivery.id]);
    expect(deliveries).not.toContain(oldPending.id);
    expect(deliveries).not.toContain(oldDone.id);

    const after = await stack.request('GET', '/v2/events?page_size=200', { token: org.token });
    const shown = after.body.data.map((e: any) => e.id);
    for (const a of Object.values(aged)) {
      expect(shown).toContain(a.young);
      expect(shown).not.toContain(a.old);
    }
    await replayHistory(stack, workflowId, await handle.fetchHistory(), 'event-retention.json');
  }, 120_000);

  it('creating the Schedule again (another admin worker start) finds it and keeps its definition', async () => {
    const before = await temporal.client.schedule.getHandle(EVENT_RETENTION_SCHEDULE.scheduleId).describe();
    await stack.workers.admin!.close();
    await stack.startWorker('admin');
    const after = await temporal.client.schedule.getHandle(EVENT_RETENTION_SCHEDULE.scheduleId).describe();
    expect(after.spec).toEqual(before.spec);
    expect(after.action).toEqual(before.action);
  });
});
