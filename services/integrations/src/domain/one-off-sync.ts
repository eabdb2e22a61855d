/**
 * A one-off sync of a connection (POST /v2/integrations/connections/{id}/sync) and the read of its
 * sync-run history: one `scheduled` run
 * per read-enabled model, then the durable workflow `connection-sync-<connection_id>-<batch_id>`.
 * Runs left behind without a workflow (the API stopped between writing them and the start) are
 * marked failed by the next sync's in-progress check (syncInProgress).
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { activityRetryWindowMinutes, ConflictError, inBusinessUnitScope, isUuid, newId, NotFoundError, OUTAGE_RETRY_AFTER_SECONDS, ServiceUnavailableError, withTemporalDeadline, type BusinessUnitScope } from '@rp/platform';
import { businessSearchAttributes, CONNECTION_SYNC_TASK_QUEUE, connectionSyncWorkflowId, type ConnectionSyncInput } from '@rp/workflows';
import type { IntegrationsDeps } from '../deps.js';
import { pullAdapterFor } from '../adapters/index.js';
import { createSyncRuns, getSyncConnection, listSyncRuns, readEnabledModels, type SyncRunStatus } from '../store/sync-runs.js';
import { failSyncRuns } from './sync-run-events.js';
import { syncInProgress } from './sync-schedule.js';

/** The organization's connection, or 404 (also for one of a business unit outside `scope`). */
export async function findSyncConnection(deps: Pick<IntegrationsDeps, 'db'>, organizationId: string, connectionId: string, scope: BusinessUnitScope = '*') {
  const connection = isUuid(connectionId) ? await getSyncConnection(deps.db, organizationId, connectionId) : undefined;
  if (!connection || !inBusinessUnitScope(scope, connection.business_unit_id)) throw new NotFoundError(`No connection ${connectionId}.`);
  return connection;
}

/** The connection's sync runs, newest first, optionally of one model (by name) or one status; 404 as findSyncConnection. */
export async function connectionSyncRuns(
  deps: Pick<IntegrationsDeps, 'db'>,
  request: { organizationId: string; connectionId: string; scope?: BusinessUnitScope; model?: string; status?: SyncRunStatus },
  page: { offset: number; pageSize: number },
) {
  const connection = await findSyncConnection(deps, request.organizationId, request.connectionId, request.scope);
  return listSyncRuns(deps.db, request.organizationId, connection.id, { model: request.model, status: request.status }, page.offset, page.pageSize);
}

/**
 * Start a one-off sync. 404 unknown connection; 409 no pull adapter, awaiting authentication, sync
 * disabled, no read-enabled model, or a sync in progress; 503 when the workflow cannot be started
 * (its runs are then marked failed).
 */
export async function startOneOffSync(deps: Pick<IntegrationsDeps, 'db' | 'temporal'>, request: { organizationId: string; connectionId: string; requestId?: string; scope?: BusinessUnitScope }) {
  const org = request.organizationId;
  const connection = await findSyncConnection(deps, org, request.connectionId, request.scope);
  const adapter = pullAdapterFor(connection.provider_name);
  if (!adapter) throw new ConflictError(`Provider ${connection.provider_name} has no pull adapter on this platform; its connections cannot sync.`);
  if (connection.is_authentication_pending) throw new ConflictError(`Connection ${connection.id} awaits authentication; authenticate it before syncing.`);
  if (connection.is_sync_disabled) throw new ConflictError(`Sync is disabled on connection ${connection.id} (is_sync_disabled); enable it first.`);
  const names = new Map(adapter.models.map((m, i) => [m.name, i]));
  const models = (await readEnabledModels(deps.db, org, connection.id)).filter((m) => names.has(m.name));
  if (!models.length) throw new ConflictError(`Connection ${connection.id} has no read-enabled model to sync.`);
  models.sort((a, b) => names.get(a.name)! - names.get(b.name)!);
  const busy = await syncInProgress(deps, org, connection.id);
  if (busy) throw new ConflictError(`A sync of connection ${connection.id} is already in progress (workflow ${busy}); wait for it to finish.`);

  const batchId = newId();
  const workflowId = connectionSyncWorkflowId(connection.id, batchId);
  const runs = await createSyncRuns(deps.db, { organizationId: org, connectionId: connection.id, batchId, isOneOff: true, workflowId, models });
  const input: ConnectionSyncInput = {
    organizationId: org,
    connectionId: connection.id,
    isOneOff: true,
    batchId,
    requestId: request.requestId,
    retryWindowMinutes: activityRetryWindowMinutes(),
  };
  try {
    await withTemporalDeadline(deps.temporal, () =>
      deps.temporal.workflow.start('connectionSync', {
        workflowId,
        taskQueue: CONNECTION_SYNC_TASK_QUEUE,
        args: [input],
        typedSearchAttributes: businessSearchAttributes(org, connection.id),
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      await failSyncRuns(deps.db, org, runs.map((r) => r.id), 'The sync could not be started because a service of the platform was unavailable. Start the sync again.');
      throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, 'The sync could not be started (workflow service unavailable); try again.');
    }
  }
  return { connectionId: connection.id, batchId, workflowId, runs };
}
