/**
 * The connection-sync activities (spec 2.2 "Sync run"): prepare a sync's runs, page one model's
 * records from its pull adapter into the ledger with the run's cursor, fail or cancel runs, and
 * record the connection's health as the sync finds it.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, type Db, type TemporalHandle } from '@rp/platform';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import {
  SYNC_PROVIDER_ATTEMPTS,
  type ConnectionSyncActivities,
  type ConnectionSyncInput,
  type PrepareSyncRunsResult,
  type SyncHeartbeat,
  type SyncModelInput,
  type SyncModelResult,
} from '@rp/workflows';
import { ProviderApiError, pullAdapterFor, type PaginationState, type ProviderAccess, type PullAdapter } from '../adapters/index.js';
import { databaseNow } from '../store/ledger.js';
import { completeSyncRun, failSyncRuns } from '../domain/sync-run-events.js';
import { closeDeletedDocumentsRecordingEvents, writeDocumentsRecordingEvents, writePartnersRecordingEvents } from '../domain/ledger-events.js';
import { getConnection } from '../store/connections.js';
import { updateConnectionHealth } from '../domain/connection-health.js';
import { getProviderAccess } from '../domain/connection-auth.js';
import { health } from '../domain/health.js';
import { syncInProgress } from '../domain/sync-schedule.js';
import { providerRuntime } from '../domain/provider-runtime.js';
import type { IntegrationsConfig } from '../config.js';
import {
  cancelBatch,
  createSyncRuns,
  getSyncConnection,
  getSyncRun,
  markRunRunning,
  readEnabledModels,
  recordPage,
  runsOfBatch,
  type SyncRunRow,
} from '../store/sync-runs.js';

export interface ConnectionSyncDeps {
  db: Db;
  log: Logger;
  /** to see whether another sync of the connection is running */
  temporal: Client;
  /** A usable token, realm and API base URL for the connection (connection-auth's getProviderAccess). */
  getAccess(organizationId: string, connectionId: string): Promise<ProviderAccess>;
  /** Record the connection's health after a provider refused the credentials (best effort). */
  reportAuthenticationRequired?(organizationId: string, connectionId: string, message: string): Promise<void>;
  /** Record that the provider answered (a run completed): an unhealthy connection becomes healthy (best effort). */
  reportHealthy?(organizationId: string, connectionId: string): Promise<void>;
  /** While a page is being fetched, heartbeat this often (ms) so a slow page does not time out. */
  heartbeatEveryMs?: number;
}

/** Ledger origin of the records a connection syncs. */
export function syncOrigin(connectionId: string): string {
  return `connection:${connectionId}`;
}

function orderByAdapter(adapter: PullAdapter, runs: SyncRunRow[]): SyncRunRow[] {
  const order = new Map(adapter.models.map((m, i) => [m.name, i]));
  return [...runs].sort((a, b) => (order.get(a.model_name) ?? 99) - (order.get(b.model_name) ?? 99));
}

/** Errors of connection-auth (they carry `code` and `nonRetryable`) and of the adapters, as Temporal failures. */
function toFailure(err: unknown): unknown {
  if (err instanceof ProviderApiError) {
    if (err.kind === 'authentication_required') return ApplicationFailure.create({ type: 'AuthenticationRequired', message: err.message, nonRetryable: true });
    if (err.kind === 'rejected') return ApplicationFailure.create({ type: 'ProviderRequestRejected', message: err.message, nonRetryable: true });
    if (err.kind === 'misconfigured') return ApplicationFailure.create({ type: 'ProviderMisconfigured', message: err.message, nonRetryable: true });
    return ApplicationFailure.create({
      type: err.kind === 'rate_limited' ? 'RateLimited' : 'ProviderUnavailable',
      message: err.message,
      nextRetryDelay: err.retryAfterSeconds !== null ? `${Math.max(1, err.retryAfterSeconds)} seconds` : undefined,
    });
  }
  const e = err as { code?: string; nonRetryable?: boolean; message?: string };
  if (err instanceof Error && typeof e.code === 'string' && typeof e.nonRetryable === 'boolean') {
    const type = e.code === 'authentication_required' ? 'AuthenticationRequired' : e.code === 'misconfigured' ? 'ProviderMisconfigured' : 'ProviderUnavailable';
    return ApplicationFailure.create({ type, message: err.message, nonRetryable: e.nonRetryable });
  }
  return err;
}

/**
 * The sync activities. Each page is written in ONE transaction together with the run's new
 * pagination_state and record count, so the stored state always says exactly which pages are in
 * the ledger: a retried activity resumes after the last committed page, and a page fetched twice
 * (crash between commit and heartbeat) is an idempotent upsert of the same keys.
 */
export function createConnectionSyncActivities(deps: ConnectionSyncDeps): ConnectionSyncActivities {
  const { db } = deps;
  return {
    async prepareSyncRuns(input: ConnectionSyncInput): Promise<PrepareSyncRunsResult> {
      const info = Context.current().info;
      const connection = await getSyncConnection(db, input.organizationId, input.connectionId);
      if (!connection) return { status: 'skipped', reason: 'the connection no longer exists' };
      const adapter = pullAdapterFor(connection.provider_name);
      if (!adapter) return { status: 'skipped', reason: `provider ${connection.provider_name} has no pull adapter` };
      // A retried prepare (or a one-off whose runs the API created) finds its runs again: scheduled
      // syncs use the workflow run id as their batch id.
      const batchId = input.batchId ?? info.workflowExecution!.runId;
      const existing = await runsOfBatch(db, input.organizationId, batchId);
      if (existing.length) {
        return { status: 'prepared', batchId, runs: orderByAdapter(adapter, existing).map((r) => ({ runId: r.id, modelId: r.model_id, modelName: r.model_name })) };
      }
      if (connection.is_sync_disabled) return { status: 'skipped', reason: 'sync is disabled on the connection' };
      if (connection.is_authentication_pending) return { status: 'skipped', reason: 'the connection awaits authentication' };
      // The Schedule skips overlapping scheduled syncs itself; a one-off sync may still be running.
      const busy = await syncInProgress({ db, temporal: deps.temporal }, input.organizationId, input.connectionId, info.workflowExecution!.workflowId);
      if (busy) return { status: 'skipped', reason: `another sync of the connection is in progress (${busy})` };
      const names = new Set(adapter.models.map((m) => m.name));
      const models = (await readEnabledModels(db, input.organizationId, input.connectionId)).filter((m) => names.has(m.name));
      if (!models.length) return { status: 'skipped', reason: 'the connection has no read-enabled model' };
      const order = new Map(adapter.models.map((m, i) => [m.name, i]));
      models.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
      const runs = await createSyncRuns(db, {
        organizationId: input.organizationId,
        connectionId: input.connectionId,
        batchId,
        isOneOff: input.isOneOff,
        workflowId: info.workflowExecution!.workflowId,
        models,
      });
      deps.log.info({ request_id: input.requestId, organization_id: input.organizationId, connection_id: input.connectionId, batch_id: batchId, runs: runs.length }, 'sync runs prepared');
      return { status: 'prepared', batchId, runs: orderByAdapter(adapter, runs).map((r) => ({ runId: r.id, modelId: r.model_id, modelName: r.model_name })) };
    },

    async syncModel(input: SyncModelInput): Promise<SyncModelResult> {
      const ctx = Context.current();
      const { attempt } = ctx.info;
      const log = deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, connection_id: input.connectionId, sync_run_id: input.runId, attempt });
      const found = await getSyncRun(db, input.organizationId, input.runId);
      if (!found) throw ApplicationFailure.create({ type: 'SyncRunNotFound', message: `Sync run ${input.runId} does not exist.`, nonRetryable: true });
      if (found.status === 'completed') return { runId: found.id, recordsSynced: found.records_synced, pages: 0 };
      if (found.status !== 'scheduled' && found.status !== 'running') {
        throw ApplicationFailure.create({ type: 'SyncRunFinished', message: `Sync run ${input.runId} is already ${found.status}.`, nonRetryable: true });
      }
      const connection = await getSyncConnection(db, input.organizationId, input.connectionId);
      if (!connection) throw ApplicationFailure.create({ type: 'SyncRunNotFound', message: `Connection ${input.connectionId} no longer exists.`, nonRetryable: true });
      const adapter = pullAdapterFor(connection.provider_name);
      if (!adapter) throw ApplicationFailure.create({ type: 'NoAdapter', message: `Provider ${connection.provider_name} has no pull adapter.`, nonRetryable: true });

      const run = (await markRunRunning(db, input.organizationId, input.runId, attempt))!;
      // The stored state is committed with the pages it covers, so it is never behind the last
      // heartbeat; the heartbeat is the fallback should the row have lost it.
      const beat = ctx.info.heartbeatDetails as SyncHeartbeat | undefined;
      const fromBeat = !run.pagination_state && beat?.runId === run.id && beat.pagination_state ? beat : null;
      let state: PaginationState | null = run.pagination_state ?? fromBeat?.pagination_state ?? adapter.initialState();
      let records = fromBeat ? fromBeat.records_synced : run.records_synced;
      if (state && state.done === true) state = null;
      if (attempt > 1) log.info({ pagination_state: state, records_synced: records }, 'sync run resumes');

      const window = { start: run.timerange_start ? run.timerange_start.toISOString() : null, end: run.timerange_end!.toISOString() };
      const origin = syncOrigin(input.connectionId);
      const heartbeat = () => ctx.heartbeat({ runId: run.id, pagination_state: state, records_synced: records } satisfies SyncHeartbeat);
      heartbeat();
      const timer = setInterval(heartbeat, deps.heartbeatEveryMs ?? 2_000);
      let pages = 0;
      try {
        while (state) {
          if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
          const access = await deps.getAccess(input.organizationId, input.connectionId);
          const readAt = await databaseNow(db); // the ERP's figures are at least this recent (open-amount rule, see payment posting)
          const page = await adapter.fetchPage(access, run.model_name, window, state, { signal: ctx.cancellationSignal });
          const stored: PaginationState = page.next ?? { ...state, done: true };
          const written = await db.transaction(async (trx) => {
            let n = page.records.rows.length;
            // The page's records and their events (invoice.* / partner.*) commit with the page's cursor.
            if (page.records.type === 'partners') await writePartnersRecordingEvents(trx, input.organizationId, origin, page.records.rows);
            else await writeDocumentsRecordingEvents(trx, input.organizationId, origin, page.records.rows, { reportedAt: readAt });
            if (page.deletions?.remoteIds.length) {
              const closed = await closeDeletedDocumentsRecordingEvents(trx, input.organizationId, origin, page.deletions.kind, { remoteIds: page.deletions.remoteIds });
              if (closed) log.info({ kind: page.deletions.kind, closed }, 'documents deleted at the source closed');
              n += closed;
            }
            // A read that returned every live record: what the run did not write (since it started) is gone at the source.
            if (page.sweep) {
              const closed = await closeDeletedDocumentsRecordingEvents(trx, input.organizationId, origin, page.sweep.kind, { notSeenSince: run.started_at! });
              if (closed) log.info({ kind: page.sweep.kind, closed }, 'documents no longer at the source closed');
              n += closed;
            }
            await recordPage(trx, input.organizationId, run.id, stored, records + n);
            return n;
          });
          pages += 1;
          records += written;
          state = page.next;
          heartbeat();
        }
        await completeSyncRun(db, input.organizationId, run.id);
        if (pages > 0 && deps.reportHealthy) {
          await deps.reportHealthy(input.organizationId, input.connectionId).catch((e) => log.warn({ err: e }, 'could not record the connection health'));
        }
        log.info({ records_synced: records, pages }, 'sync run completed');
        return { runId: run.id, recordsSynced: records, pages };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          log.info({ reason: String(ctx.cancellationSignal.reason) }, 'sync run interrupted');
          throw err;
        }
        const failure = toFailure(err);
        if (failure instanceof ApplicationFailure && failure.type === 'AuthenticationRequired' && deps.reportAuthenticationRequired) {
          await deps.reportAuthenticationRequired(input.organizationId, input.connectionId, failure.message).catch((e) => log.warn({ err: e }, 'could not record the connection health'));
        }
        log.warn({ err }, 'sync run page failed');
        // The provider's deliberate attempt cap; outages of our database never count against it alone.
        throw capExternalFailure(failure, attempt, SYNC_PROVIDER_ATTEMPTS);
      } finally {
        clearInterval(timer);
      }
    },

    async failSyncRun(input: { organizationId: string; runId: string; error: string }): Promise<void> {
      await failSyncRuns(db, input.organizationId, [input.runId], input.error);
    },

    async cancelSyncRuns(input: { organizationId: string; batchId: string }): Promise<void> {
      const n = await cancelBatch(db, input.organizationId, input.batchId);
      deps.log.info({ organization_id: input.organizationId, batch_id: input.batchId, cancelled: n }, 'sync runs cancelled');
    },
  };
}

/** The activities wired to the real provider access (token refresh) and connection health. */
export function connectionSyncActivities(base: { db: Db; config: IntegrationsConfig; log: Logger; temporal: TemporalHandle }): ConnectionSyncActivities {
  const { db, config, log } = base;
  const healthDeps = { db, config, temporal: base.temporal.client };
  return createConnectionSyncActivities({
    db,
    log,
    temporal: base.temporal.client,
    getAccess: (organizationId, connectionId) => getProviderAccess(healthDeps, organizationId, connectionId),
    reportHealthy: async (organizationId, connectionId) => {
      const current = await getConnection(db, organizationId, connectionId);
      if (!current || current.health?.status_code === 'healthy') return;
      const display = providerRuntime(current.provider_name)?.descriptor.display_name ?? current.provider_name;
      await updateConnectionHealth(healthDeps, organizationId, connectionId, { health: health('healthy', `${display} answered the authenticated requests of a sync.`) });
    },
    reportAuthenticationRequired: async (organizationId, connectionId, message) => {
      await updateConnectionHealth(healthDeps, organizationId, connectionId, {
        health: health('authentication_required', message, 'Authenticate the connection again (POST /v2/integrations/connections/{connection_id}/authenticate).'),
      });
    },
  });
}
