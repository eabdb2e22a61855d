/**
 * The webhook dispatcher (`webhook-dispatcher`): one long activity that turns newly committed events
 * of every service's outbox into deliveries and wakes the endpoints that got some, then a fresh run
 * (continue-as-new), so its history stays short. It does no HTTP, so no endpoint can slow it down.
 * Its activity never gives up on an outage (no schedule-to-close bound): the dispatcher must not stop.
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

/**
 * The task queue of the webhook activities (dispatch and delivery), served by the admin worker
 * process beside its own queue: these activities run for minutes and must never take the slots of
 * admin's other activities (emails, reports), nor wait for them.
 */
export const WEBHOOK_ACTIVITY_TASK_QUEUE = `${TASK_QUEUES.admin}-webhooks`;

export interface WebhookDispatcherInput {
  /** How long one activity run dispatches before the workflow continues as new (default 3 minutes). */
  runForMs?: number;
}

export interface WebhookDispatchActivities {
  /** Dispatches for `runForMs` (listening for commits, polling as a fallback), heartbeating; returns the number of events read. */
  dispatchWebhookEvents(input: { runForMs: number }): Promise<{ events: number }>;
}

const DEFAULT_RUN_MS = 180_000;

export async function webhookDispatcher(input: WebhookDispatcherInput = {}): Promise<void> {
  const runForMs = input.runForMs ?? DEFAULT_RUN_MS;
  const { dispatchWebhookEvents } = proxyActivities<WebhookDispatchActivities>({
    taskQueue: WEBHOOK_ACTIVITY_TASK_QUEUE,
    startToCloseTimeout: runForMs + 120_000,
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  await dispatchWebhookEvents({ runForMs });
  await continueAsNew<typeof webhookDispatcher>(input);
}
