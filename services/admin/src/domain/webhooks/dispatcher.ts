/**
 * The webhook dispatcher (`webhook-dispatcher`, one per namespace) must always run, or no event is
 * queued: the admin worker ensures it when it starts, and creating or re-enabling an endpoint
 * ensures it too. Starting it while it runs is a no-op (id conflict policy USE_EXISTING).
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { withTemporalDeadline } from '@rp/platform';
import { WEBHOOK_DISPATCHER_WORKFLOW, WEBHOOK_DISPATCHER_WORKFLOW_ID, WEBHOOK_TASK_QUEUE, type WebhookDispatcherInput } from '@rp/workflows';

export async function ensureWebhookDispatcher(temporal: Client, input: WebhookDispatcherInput = {}): Promise<void> {
  await withTemporalDeadline(temporal, () =>
    temporal.workflow.start(WEBHOOK_DISPATCHER_WORKFLOW, {
      workflowId: WEBHOOK_DISPATCHER_WORKFLOW_ID,
      taskQueue: WEBHOOK_TASK_QUEUE,
      args: [input],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    }),
  );
}
