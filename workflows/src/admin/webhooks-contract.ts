/**
 * Outbound webhooks on the admin task queue: the workflow ids, names and signals both the API (which
 * wakes delivery) and the worker (which runs it) use. Two workflows:
 * - `webhook-dispatcher` (one per namespace): turns newly recorded events (every service's outbox,
 *   read through the kernel's events module) into deliveries of the endpoints subscribed to them,
 *   then wakes those endpoints' workflows. It does no HTTP, so no endpoint can slow it down.
 * - `webhook-endpoint-<endpointId>` (one per endpoint): delivers that endpoint's due deliveries, in
 *   order per resource, and sleeps until the next retry is due or it is woken. A slow or dead
 *   endpoint only ever delays itself.
 */
import { defineSignal } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const WEBHOOK_TASK_QUEUE = TASK_QUEUES.admin;

export const WEBHOOK_DISPATCHER_WORKFLOW_ID = 'webhook-dispatcher';
/** Workflow type names (the functions exported by the workflow bundle). */
export const WEBHOOK_DISPATCHER_WORKFLOW = 'webhookDispatcher';
export const WEBHOOK_ENDPOINT_WORKFLOW = 'webhookEndpointDelivery';

export function webhookEndpointWorkflowId(endpointId: string): string {
  return `webhook-endpoint-${endpointId}`;
}

export interface WebhookEndpointDeliveryInput {
  organizationId: string;
  endpointId: string;
}

/** Something changed for the endpoint (new deliveries, a manual retry, re-enabled): look again now. */
export const webhookWake = defineSignal('webhookWake');
