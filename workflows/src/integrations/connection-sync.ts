import { ActivityCancellationType, CancellationScope, isCancellation, log, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
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

export interface ConnectionSyncInput extends RetryWindowInput {
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

/**
 * Attempts of a model's sync that the provider failed (unreachable, 5xx, rate limited): its deliberate
 * policy, enforced by the activity (capExternalFailure) so a database outage never uses them up.
 */
export const SYNC_PROVIDER_ATTEMPTS = 6;

/** Failure types whose messages are written for users (the provider's answer). */
const PROVIDER_FAILURES = ['AuthenticationRequired', 'NoAdapter', 'SyncRunNotFound', 'SyncRunFinished', 'ProviderRequestRejected', 'ProviderMisconfigured', 'ProviderUnavailable', 'RateLimited'];

/** Stored on a run that failed for another reason than the provider (an outage that outlasted the retry window, a defect). */
export const SYNC_RUN_FAILED = 'The sync stopped because a service of the platform was unavailable for too long. Start the sync again; the pages already stored are kept.';

function activities(input: ConnectionSyncInput) {
  return {
    quick: proxyActivities<ConnectionSyncActivities>(activityOptions({ startToCloseTimeout: '1 minute', retryWindowMinutes: input.retryWindowMinutes })),
    sync: proxyActivities<ConnectionSyncActivities>(
      activityOptions({
        // A model's sync can be long; liveness comes from the heartbeats, not from this bound.
        startToCloseTimeout: '2 hours',
        heartbeatTimeout: '10 seconds',
        // A cancelled sync waits for the page activity to stop before its runs are marked cancelled.
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        maximumInterval: '1 minute',
        retryWindowMinutes: input.retryWindowMinutes,
        nonRetryableErrorTypes: ['AuthenticationRequired', 'NoAdapter', 'SyncRunNotFound', 'ProviderRequestRejected'],
      }),
    ),
  };
}

/** The run's stored error: the provider's answer as `<type>: <message>`, else SYNC_RUN_FAILED. */
function failureMessage(err: unknown): string {
  const cause = (err as { cause?: { type?: string } }).cause;
  const message = userFacingFailure(err, SYNC_RUN_FAILED, PROVIDER_FAILURES);
  if (message === SYNC_RUN_FAILED) {
    log.warn('sync run failed', { failure: String(cause ?? err) });
    return message;
  }
  return cause?.type ? `${cause.type}: ${message}` : message;
}

/**
 * Syncs a connection's read-enabled models one after the other (partners before the documents
 * that reference them). A model whose activity gives up is marked failed and the next model
 * still runs; cancelling the workflow marks the unfinished runs `cancelled`.
 */
export async function connectionSync(input: ConnectionSyncInput): Promise<ConnectionSyncResult> {
  const { quick, sync } = activities(input);
  const prepared = await quick.prepareSyncRuns(input);
  if (prepared.status === 'skipped') return { batchId: null, skipped: prepared.reason, runs: [] };
  const result: ConnectionSyncResult = { batchId: prepared.batchId, runs: [] };
  try {
    for (const run of prepared.runs) {
      try {
        const synced = await sync.syncModel({ organizationId: input.organizationId, connectionId: input.connectionId, runId: run.runId, requestId: input.requestId });
        result.runs.push({ runId: run.runId, modelName: run.modelName, status: 'completed', recordsSynced: synced.recordsSynced });
      } catch (err) {
        if (isCancellation(err)) throw err;
        const error = failureMessage(err);
        await quick.failSyncRun({ organizationId: input.organizationId, runId: run.runId, error });
        result.runs.push({ runId: run.runId, modelName: run.modelName, status: 'failed', error });
      }
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => quick.cancelSyncRuns({ organizationId: input.organizationId, batchId: prepared.batchId }));
    }
    throw err;
  }
  return result;
}
