/**
 * A connection's periodic sync as a Temporal Schedule (`connection-sync-<connectionId>`).
 *
 * Used by the connection handlers (create / update / authenticate / delete) and by the connection
 * view (`next_sync_at`). Signatures are a contract with those handlers; keep them stable.
 *
 * - Only providers with a pull adapter (see SYNC_INTERVALS) get a Schedule: a sync of a provider
 *   without an adapter could only fail, so it has none and `next_sync_at` is null.
 * - The Schedule is paused while the connection's sync is disabled or its authentication is
 *   pending; `next_sync_at` is then null.
 * - Each action starts `connectionSync` on the integrations task queue with the OrganizationId /
 *   EntityId search attributes; overlapping actions are skipped (one sync of a connection at a time).
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction } from '@temporalio/client';
import {
  businessSearchAttributes,
  CONNECTION_SYNC_TASK_QUEUE,
  connectionSyncScheduleId,
  type ConnectionSyncInput,
} from '@rp/workflows';
import type { IntegrationsConfig } from '../config.js';

/** Interval between scheduled syncs per provider with a pull adapter. */
export const SYNC_INTERVALS: Readonly<Record<string, string>> = {
  quickbooks_online: '1 hour',
};

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

export function syncIntervalFor(providerName: string): string | null {
  return SYNC_INTERVALS[providerName] ?? null;
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
  const input: ConnectionSyncInput = { organizationId: connection.organization_id, connectionId: connection.id, isOneOff: false };
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
