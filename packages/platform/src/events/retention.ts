/**
 * Event retention (EVENT_RETENTION_DAYS, default 30): every service's worker registers the activity
 * `pruneOwnEvents` on its own task queue (runtime.ts), which deletes its own schema's events older
 * than the retention, in batches until none are left, heartbeating after each batch. A service may
 * prune other rows that only make sense with their events at the same cutoff (admin: the webhook
 * deliveries). The admin worker creates the daily Temporal Schedule that runs the `eventRetention`
 * workflow (workflows/src/admin/event-retention.ts), which calls the activity on every task queue.
 */
import { Context } from '@temporalio/activity';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Knex } from 'knex';
import { pruneOwnEvents } from './read.js';

/** Rows a service deletes with its events at the retention's cutoff. */
export interface RetainedRows {
  /** name in the activity's result */
  name: string;
  /** deletes at most `limit` rows older than `before`; returns how many */
  prune(db: Knex, before: Date, limit: number): Promise<number>;
}

/** Rows one statement deletes: small enough to hold locks briefly, large enough to drain a day quickly. */
export const RETENTION_BATCH = 5000;

/** What one run pruned, by table. */
export type PruneCounts = Record<string, number>;

/** Deletes in batches of `limit` until a batch comes back short, calling `progress` after each; returns the total. */
export async function pruneInBatches(prune: (limit: number) => Promise<number>, limit: number, progress: (total: number) => void): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await prune(limit);
    total += n;
    progress(total);
    if (n < limit) return total;
  }
}

/** The `pruneOwnEvents` activity of a service's worker (registered by startServiceWorker on its task queue). */
export function eventRetentionActivities(deps: { db: Knex; retentionDays: number; also?: RetainedRows[]; batch?: number }) {
  const tables: RetainedRows[] = [{ name: 'events', prune: pruneOwnEvents }, ...(deps.also ?? [])];
  return {
    async pruneOwnEvents(): Promise<PruneCounts> {
      const ctx = Context.current();
      // the cutoff of this attempt: a retry deletes what has aged since, which is what the schedule wants
      const before = new Date(Date.now() - deps.retentionDays * 86_400_000);
      const out: PruneCounts = {};
      for (const t of tables) {
        out[t.name] = await pruneInBatches((limit) => t.prune(deps.db, before, limit), deps.batch ?? RETENTION_BATCH, (total) => ctx.heartbeat({ table: t.name, total }));
      }
      return out;
    },
  };
}

export interface EventRetentionSchedule {
  scheduleId: string;
  workflowId: string;
  workflowType: string;
  taskQueue: string;
}

/**
 * Creates the daily Schedule of the retention workflow, or brings an existing one to this definition
 * (idempotent: every admin worker start calls it). Daily at 03:15 UTC; a run still going when the next
 * is due makes the next one skip.
 */
export async function ensureEventRetentionSchedule(client: Client, s: EventRetentionSchedule): Promise<void> {
  const spec = { calendars: [{ hour: 3, minute: 15, comment: 'daily 03:15 UTC' }], timezone: 'UTC' };
  const action = { type: 'startWorkflow' as const, workflowType: s.workflowType, workflowId: s.workflowId, taskQueue: s.taskQueue, args: [] as unknown[] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' };
  const options: ScheduleOptions = { scheduleId: s.scheduleId, spec, action, policies };
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(s.scheduleId).update((prev) => ({ ...prev, spec, action, policies }));
  }
}
