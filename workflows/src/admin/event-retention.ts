/**
 * Event retention: once a day (Temporal Schedule `event-retention`, created by the admin worker at
 * start), every service prunes its own schema's events older than EVENT_RETENTION_DAYS through the
 * activity `pruneOwnEvents` its worker registers on its own task queue (the kernel's
 * events/retention.ts); no service deletes from another's schema. The services prune in parallel.
 */
import { proxyActivities } from '@temporalio/workflow';
import { activityOptions } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export const EVENT_RETENTION_TASK_QUEUE = TASK_QUEUES.admin;
export const EVENT_RETENTION_SCHEDULE = {
  scheduleId: 'event-retention',
  /** the Schedule's actions get this id with the scheduled time appended */
  workflowId: 'event-retention',
  workflowType: 'eventRetention',
  taskQueue: EVENT_RETENTION_TASK_QUEUE,
} as const;

/** Activity contract, implemented by every service's worker (the kernel's eventRetentionActivities). */
export interface EventRetentionActivities {
  /** Deletes the service's events (and rows tied to them) older than its retention; returns how many, by table. */
  pruneOwnEvents(): Promise<Record<string, number>>;
}

/** Prunes every service's events; returns what each task queue's service pruned, by table. */
export async function eventRetention(): Promise<Record<string, Record<string, number>>> {
  const queues = Object.values(TASK_QUEUES);
  const counts = await Promise.all(
    queues.map((taskQueue) =>
      proxyActivities<EventRetentionActivities>(activityOptions({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '2 minutes', taskQueue })).pruneOwnEvents(),
    ),
  );
  return Object.fromEntries(queues.map((q, i) => [q, counts[i]!]));
}
