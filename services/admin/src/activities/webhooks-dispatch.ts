/**
 * The dispatcher's activity: reads every source's new events after its cursor (kernel
 * readEventsAfter: only committed transactions, in commit-safe order), queues deliveries and moves
 * the cursor in one transaction (store/webhooks/queue.ts), then wakes each endpoint that got
 * deliveries. A commit that recorded events notifies `rp_events`; the activity listens on its own
 * connection and also polls every second, so a lost notification (or a listener reconnecting) delays
 * delivery by at most a second and never loses an event.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { Logger } from 'pino';
import { EVENTS_CHANNEL, eventSources, type Db } from '@rp/platform';
import type { WebhookDispatchActivities } from '@rp/workflows';
import { dispatchNextEvents, endpointsWithOverdueDeliveries, type EndpointRef } from '../store/webhooks/queue.js';
import { wakeWebhookEndpoint } from '../domain/webhooks/wake.js';

export interface WebhookDispatchDeps {
  db: Db;
  log: Logger;
  temporal: Client;
  databaseUrl: string;
}

const BATCH = 1000;
const POLL_MS = 1000;
/** An enabled endpoint whose delivery is this overdue has no workflow taking it: woken again. */
const OVERDUE_GRACE_SECONDS = 60;

/** Resolves on the next notification, after `ms`, or when the activity is cancelled, whichever is first. */
class Waker {
  private wake: (() => void) | null = null;
  notify(): void {
    this.wake?.();
  }
  wait(ms: number, cancelled: Promise<unknown>): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      this.wake = done;
      cancelled.then(done, done);
      function done() {
        clearTimeout(t);
        resolve();
      }
    });
  }
}

async function listen(deps: WebhookDispatchDeps, waker: Waker): Promise<pg.Client | null> {
  const client = new pg.Client({ connectionString: deps.databaseUrl, application_name: 'admin-webhook-dispatcher' });
  client.on('error', (err) => deps.log.warn({ err }, 'webhook dispatcher: LISTEN connection lost; polling'));
  client.on('notification', () => waker.notify());
  try {
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    return client;
  } catch (err) {
    deps.log.warn({ err }, 'webhook dispatcher: cannot LISTEN; polling');
    await client.end().catch(() => {});
    return null;
  }
}

async function wakeAll(deps: WebhookDispatchDeps, endpoints: Iterable<EndpointRef>): Promise<void> {
  const list = [...endpoints];
  for (let i = 0; i < list.length; i += 20) {
    await Promise.all(list.slice(i, i + 20).map((e) => wakeWebhookEndpoint(deps.temporal, e)));
  }
}

export function createWebhookDispatchActivities(deps: WebhookDispatchDeps): WebhookDispatchActivities {
  return {
    async dispatchWebhookEvents({ runForMs }) {
      const ctx = Context.current();
      const waker = new Waker();
      const listener = await listen(deps, waker);
      const until = Date.now() + runForMs;
      let total = 0;
      try {
        await wakeAll(deps, await endpointsWithOverdueDeliveries(deps.db, OVERDUE_GRACE_SECONDS));
        while (Date.now() < until) {
          ctx.heartbeat({ events: total });
          if (ctx.cancellationSignal.aborted) break;
          const woken = new Map<string, EndpointRef>();
          let full = false;
          for (const source of await eventSources(deps.db)) {
            const done = await dispatchNextEvents(deps.db, source, BATCH);
            total += done.events;
            full ||= done.events === BATCH;
            for (const e of done.endpoints) woken.set(e.endpointId, e);
          }
          // Committed: the deliveries exist whether or not a wake reaches its workflow (the overdue sweep catches a lost one).
          await wakeAll(deps, woken.values());
          if (!full) await waker.wait(POLL_MS, ctx.cancelled);
        }
      } finally {
        await listener?.end().catch(() => {});
      }
      return { events: total };
    },
  };
}
