import { ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const CONNECTION_SYNC_TASK_QUEUE = TASK_QUEUES.integrations;

/** Schedule id of a connection's periodic sync (one per connection). */
export function connectionSyncScheduleId(connectionId: string): string {
  return `connection-sync-${connectionId}`;
}

/**
 * Workflow id of one sync of a connection. One-off syncs use the batch id of their runs as `runId`;
 * the Schedule starts its workflows with the schedule id as the base and Temporal appends the
 * scheduled time (`connection-sync-<connectionId>-<ISO time>`).
 */
export function connectionSyncWorkflowId(connectionId: string, runId: string): string {
  return `connection-sync-${connectionId}-${runId}`;
}

export interface ConnectionSyncInput {
  organizationId: string;
  connectionId: string;
  /** true for a sync requested through POST .../sync, false for the Schedule's runs */
  isOneOff: boolean;
  /** Runs already created by the API for a one-off sync (their batch id); absent for scheduled syncs. */
  batchId?: string;
  /** id of the API request that asked for the sync, for the activities' logs */
  requestId?: string;
}

export interface PreparedSyncRun {
  runId: string;
  modelId: string;
  modelName: string;
}

export type PrepareSyncRunsResult =
  | { status: 'prepared'; batchId: string; runs: PreparedSyncRun[] }
  | { status: 'skipped'; reason: string };

export interface SyncModelInput {
  organizationId: string;
  connectionId: string;
  runId: string;
  requestId?: string;
}

export interface SyncModelResult {
  runId: string;
  recordsSynced: number;
  pages: number;
}

/** What `syncModel` heartbeats after each committed page (and resumes from on a retry). */
export interface SyncHeartbeat {
  runId: string;
  pagination_state: Record<string, unknown> | null;
  records_synced: number;
}

export interface ConnectionSyncResult {
  batchId: string | null;
  skipped?: string;
  runs: { runId: string; modelName: string; status: 'completed' | 'failed' | 'cancelled'; recordsSynced?: number; error?: string }[];
}

/** Activity contract, implemented by services/integrations (createConnectionSyncActivities). */
export interface ConnectionSyncActivities {
  /** One `scheduled` sync run per read-enabled model (reuses the runs of `batchId` when given). */
  prepareSyncRuns(input: ConnectionSyncInput): Promise<PrepareSyncRunsResult>;
  /** Pages one model's records from the provider into the ledger; heartbeats its pagination state. */
  syncModel(input: SyncModelInput): Promise<SyncModelResult>;
  /** Marks a run `failed` with its error once its activity has given up. */
  failSyncRun(input: { organizationId: string; runId: string; error: string }): Promise<void>;
  /** Marks every unfinished run of the batch `cancelled` (workflow cancelled). */
  cancelSyncRuns(input: { organizationId: string; batchId: string }): Promise<void>;
}

const { prepareSyncRuns, failSyncRun, cancelSyncRuns } = proxyActivities<ConnectionSyncActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

const { syncModel } = proxyActivities<ConnectionSyncActivities>({
  // A model's sync can be long; liveness comes from the heartbeats, not from this bound.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  // A cancelled sync waits for the page activity to stop before its runs are marked cancelled.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: ['AuthenticationRequired', 'NoAdapter', 'SyncRunNotFound', 'ProviderRequestRejected'],
  },
});

function failureMessage(err: unknown): string {
  let cause: unknown = err;
  if (err instanceof ActivityFailure && err.cause) cause = err.cause;
  if (cause instanceof ApplicationFailure) return cause.type ? `${cause.type}: ${cause.message}` : cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * Syncs a connection's read-enabled models one after the other (partners before the documents
 * that reference them). A model whose activity gives up is marked failed and the next model
 * still runs; cancelling the workflow marks the unfinished runs `cancelled`.
 */
export async function connectionSync(input: ConnectionSyncInput): Promise<ConnectionSyncResult> {
  const prepared = await prepareSyncRuns(input);
  if (prepared.status === 'skipped') return { batchId: null, skipped: prepared.reason, runs: [] };
  const result: ConnectionSyncResult = { batchId: prepared.batchId, runs: [] };
  try {
    for (const run of prepared.runs) {
      try {
        const synced = await syncModel({ organizationId: input.organizationId, connectionId: input.connectionId, runId: run.runId, requestId: input.requestId });
        result.runs.push({ runId: run.runId, modelName: run.modelName, status: 'completed', recordsSynced: synced.recordsSynced });
      } catch (err) {
        if (isCancellation(err)) throw err;
        const error = failureMessage(err);
        await failSyncRun({ organizationId: input.organizationId, runId: run.runId, error });
        result.runs.push({ runId: run.runId, modelName: run.modelName, status: 'failed', error });
      }
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => cancelSyncRuns({ organizationId: input.organizationId, batchId: prepared.batchId }));
    }
    throw err;
  }
  return result;
}
