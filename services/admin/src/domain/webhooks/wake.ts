/**
 * Waking an endpoint's delivery workflow (`webhook-endpoint-<id>`): signal-with-start, so it starts
 * when it is not running and is told to look again when it is. Called after the change that made
 * work for it has committed (new deliveries, a manual retry, a test event, re-enabling).
 */
import type { Client } from '@temporalio/client';
import { withTemporalDeadline } from '@rp/platform';
import { businessSearchAttributes, WEBHOOK_ENDPOINT_WORKFLOW, WEBHOOK_TASK_QUEUE, webhookEndpointWorkflowId, webhookWake, type WebhookEndpointDeliveryInput } from '@rp/workflows';

export async function wakeWebhookEndpoint(temporal: Client, input: WebhookEndpointDeliveryInput): Promise<void> {
  await withTemporalDeadline(temporal, () =>
    temporal.workflow.signalWithStart(WEBHOOK_ENDPOINT_WORKFLOW, {
      workflowId: webhookEndpointWorkflowId(input.endpointId),
      taskQueue: WEBHOOK_TASK_QUEUE,
      args: [input],
      signal: webhookWake,
      typedSearchAttributes: businessSearchAttributes(input.organizationId, input.endpointId),
    }),
  );
}
