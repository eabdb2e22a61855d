/**
 * A connection's periodic sync as a Temporal Schedule (`connection-sync-<connectionId>`).
 *
 * Used by the connection handlers (create / update / authenticate / delete) and by the connection
 * view (`next_sync_at`). Signatures are a contract with those handlers; keep them stable.
 *
 * - Only providers with a pull adapter (adapters/index.ts) get a Schedule: a sync of a provider
 *   without an adapter could only fail, so it has none and `next_sync_at` is null. The interval is
 *   the provider runtime's `sync_interval_minutes` (default 60).
 * - Deleting a connection: call `cancelRunningSyncs(deps, organizationId, connectionId)` first, so
 *   a sync in flight is cancelled (its runs end `cancelled`) and has closed before rows are removed.
 * - The Schedule is paused while the connection's sync is disabled or its authentication is
 *   pending; `next_sync_at` is then null.
 * - Each action starts `connectionSync` on the integrations task queue with the OrganizationId /
 *   EntityId search attributes; overlapping actions are skipped (one sync of a connection at a time).
 */
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowNotFoundError,
  type Client,
  type ScheduleOptionsAction,
} from '@temporalio/client';
import { activityRetryWindowMinutes, type Db } from '@rp/platform';
import {
  businessSearchAttributes,
  CONNECTION_SYNC_TASK_QUEUE,
  connectionSyncScheduleId,
  type ConnectionSyncInput,
} from '@rp/workflows';
import type { IntegrationsConfig } from '../config.js';
import { unfinishedRuns } from '../store/sync-runs.js';
import { failSyncRuns } from './sync-run-events.js';
import { pullAdapterFor } from '../adapters/index.js';
import { providerRuntime } from './provider-runtime.js';

export const DEFAULT_SYNC_INTERVAL_MINUTES = 60;

export interface SyncScheduleDeps {
  temporal: Client;
  config?: IntegrationsConfig | Record<string, unknown>;
}

export interface SyncScheduleConnection {
  id: string;
  organization_id: string;
  provider_name: string;
  is_sync_disabled: boolean;
  is_authentication_pending: boolean;
}

/** Interval between scheduled syncs of the provider's connections; null when it has no pull adapter. */
export function syncIntervalFor(providerName: string): string | null {
  if (!pullAdapterFor(providerName)) return null;
  return `${providerRuntime(providerName)?.sync_interval_minutes ?? DEFAULT_SYNC_INTERVAL_MINUTES} minutes`;
}

function pauseNote(connection: SyncScheduleConnection): string | null {
  if (connection.is_sync_disabled) return 'Sync is disabled on the connection (is_sync_disabled).';
  if (connection.is_authentication_pending) return 'The connection awaits authentication.';
  return null;
}

/** Create or update the connection's Schedule (idempotent); removes it for providers without an adapter. */
export async function upsertSyncSchedule(deps: SyncScheduleDeps, connection: SyncScheduleConnection): Promise<void> {
  const interval = syncIntervalFor(connection.provider_name);
  if (!interval) {
    await deleteSyncSchedule(deps, connection.id);
    return;
  }
  const scheduleId = connectionSyncScheduleId(connection.id);
  const input: ConnectionSyncInput = { organizationId: connection.organization_id, connectionId: connection.id, isOneOff: false, retryWindowMinutes: activityRetryWindowMinutes() };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: 'connectionSync',
    // Temporal appends the scheduled time to this id for each run.
    workflowId: scheduleId,
    taskQueue: CONNECTION_SYNC_TASK_QUEUE,
    args: [input],
    typedSearchAttributes: businessSearchAttributes(connection.organization_id, connection.id),
  };
  const note = pauseNote(connection);
  const spec = { intervals: [{ every: interval }] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' };
  const state = { paused: note !== null, note: note ?? 'Syncing on schedule.' };
  const searchAttrs = businessSearchAttributes(connection.organization_id, connection.id);
  try {
    await deps.temporal.schedule.create({ scheduleId, spec, action, policies, state, typedSearchAttributes: searchAttrs });
    return;
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = deps.temporal.schedule.getHandle(scheduleId);
  await handle.update((prev) => ({ ...prev, spec, action, policies, state }));
  // The update replaces the state, but make the pause explicit so a racing update cannot leave it wrong.
  const described = await handle.describe();
  if (described.state.paused !== state.paused) {
    if (state.paused) await handle.pause(state.note);
    else await handle.unpause(state.note);
  }
}

/** Remove the connection's Schedule; no error when there is none. */
export async function deleteSyncSchedule(deps: SyncScheduleDeps, connectionId: string): Promise<void> {
  try {
    await deps.temporal.schedule.getHandle(connectionSyncScheduleId(connectionId)).delete();
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** ISO time of the Schedule's next action; null when it is paused or absent. */
export async function describeNextSyncAt(deps: SyncScheduleDeps, connectionId: string): Promise<string | null> {
  try {
    const described = await deps.temporal.schedule.getHandle(connectionSyncScheduleId(connectionId)).describe();
    if (described.state.paused) return null;
    const next = described.info.nextActionTimes[0];
    return next ? next.toISOString() : null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof ScheduleNotFoundError || /not ?found/i.test(String((err as Error)?.message ?? ''));
}

export interface SyncGuardDeps {
  db: Db;
  temporal: Client;
}

/**
 * The workflow id of a sync of the connection that is still running (other than `exceptWorkflowId`),
 * or null. Unfinished runs whose workflow has closed (terminated, timed out, deleted) are marked
 * failed on the way, so they never block later syncs.
 */
export async function syncInProgress(deps: SyncGuardDeps, organizationId: string, connectionId: string, exceptWorkflowId?: string): Promise<string | null> {
  const open = await unfinishedRuns(deps.db, organizationId, connectionId);
  const byWorkflow = new Map<string, string[]>();
  for (const r of open) {
    if (exceptWorkflowId && r.workflow_id === exceptWorkflowId) continue;
    byWorkflow.set(r.workflow_id ?? '', [...(byWorkflow.get(r.workflow_id ?? '') ?? []), r.id]);
  }
  for (const [workflowId, runIds] of byWorkflow) {
    if (workflowId && (await workflowRunning(deps.temporal, workflowId))) return workflowId;
    await failSyncRuns(deps.db, organizationId, runIds, 'The sync workflow ended before this run finished.');
  }
  return null;
}

async function workflowRunning(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    return (await temporal.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Cancel the connection's running syncs and wait (up to `timeoutMs`) for their workflows to close,
 * e.g. before the connection is deleted; their unfinished runs end `cancelled`.
 */
export async function cancelRunningSyncs(deps: SyncGuardDeps, organizationId: string, connectionId: string, timeoutMs = 30_000): Promise<void> {
  const open = await unfinishedRuns(deps.db, organizationId, connectionId);
  const workflowIds = [...new Set(open.map((r) => r.workflow_id).filter((w): w is string => !!w))];
  await Promise.all(
    workflowIds.map(async (workflowId) => {
      if (!(await workflowRunning(deps.temporal, workflowId))) return;
      const handle = deps.temporal.workflow.getHandle(workflowId);
      await handle.cancel().catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
      await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, timeoutMs))]);
    }),
  );
}
