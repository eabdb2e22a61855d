/**
 * One endpoint's delivery (`webhook-endpoint-<endpointId>`): a heartbeating activity delivers every
 * due delivery (in order per resource) and answers what is next; the workflow then sleeps until the
 * next retry is due or it is woken (`webhookWake`: new deliveries, a manual retry, re-enabling).
 * When delivery itself disabled the endpoint (410 Gone, or failing for days), the organization's
 * admins get one email per disabling (the recorded email, kind `webhook-disabled`). A slow or dead
 * endpoint only ever delays its own workflow.
 *
 * At-least-once: the activity has a heartbeat timeout, so the attempt of a killed worker is retried
 * on another; a request sent but not yet recorded is sent again with the same `webhook-id`.
 */
import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { activityOptions } from '../activity-options.js';
import { recordedEmail } from '../recorded-email.js';
import { webhookWake, type WebhookEndpointDeliveryInput } from './webhooks-contract.js';
import { WEBHOOK_ACTIVITY_TASK_QUEUE } from './webhook-dispatcher.js';

export type DeliverDueWebhooksResult =
  | { status: 'gone' }
  /** `noticeKey`: the recorded email telling the admins (null when a user disabled it) */
  | { status: 'disabled'; noticeKey: string | null }
  /** `nextDueInMs`: when the next pending delivery is due (null: none pending) */
  | { status: 'idle'; nextDueInMs: number | null };

export interface WebhookDeliveryActivities {
  deliverDueWebhooks(input: WebhookEndpointDeliveryInput): Promise<DeliverDueWebhooksResult>;
}

/** Input of the recorded email of kind `webhook-disabled`: the intent recorded when delivery disabled the endpoint. */
export interface WebhookDisabledEmailInput {
  organizationId: string;
  endpointId: string;
  emailKey: string;
}

/** SMTP attempts of the disabling notice (capped by the activity; first retry after 2 s, backoff up to 5 minutes). */
export const WEBHOOK_DISABLED_SMTP_ATTEMPTS = 20;

const LOOPS_PER_RUN = 500;

export async function webhookEndpointDelivery(input: WebhookEndpointDeliveryInput): Promise<void> {
  let woken = false;
  setHandler(webhookWake, () => {
    woken = true;
  });
  const { deliverDueWebhooks } = proxyActivities<WebhookDeliveryActivities>({
    taskQueue: WEBHOOK_ACTIVITY_TASK_QUEUE,
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const db = activityOptions({ startToCloseTimeout: '30 seconds' });
  const smtp = activityOptions({ startToCloseTimeout: '1 minute', initialInterval: '2 seconds', maximumInterval: '5 minutes', extraWindowMinutes: 90, nonRetryableErrorTypes: ['EmailNotFound'] });
  for (let loop = 0; loop < LOOPS_PER_RUN && !workflowInfo().continueAsNewSuggested; loop++) {
    woken = false;
    const next = await deliverDueWebhooks(input);
    if (next.status === 'gone') return;
    if (next.status === 'disabled') {
      if (next.noticeKey) {
        const notice: WebhookDisabledEmailInput = { organizationId: input.organizationId, endpointId: input.endpointId, emailKey: next.noticeKey };
        await recordedEmail('webhook-disabled', notice, { prepare: db, deliver: smtp, record: db });
      }
      await condition(() => woken);
    } else if (next.nextDueInMs === null) {
      await condition(() => woken);
    } else if (next.nextDueInMs > 0) {
      await condition(() => woken, next.nextDueInMs);
    }
  }
  await continueAsNew<typeof webhookEndpointDelivery>(input);
}
