/**
 * A sync run's end with its event, in one transaction: `connection.sync_completed` when a run
 * completes, `connection.sync_failed` when one fails (its activity gave up, its workflow ended
 * before it finished, or the sync could not be started). `data.object` is the sync run as
 * GET /v2/integrations/connections/{connection_id}/sync-runs lists it (model, records synced, error):
 * one event per model's run, the connection being the event's resource (its events are delivered
 * in order), the connection's business unit the event's. A run that had already ended changes
 * nothing and records nothing (a retried activity records once).
 */
import { recordEvents, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import { completeRun, failRuns, syncRunsByIds } from '../store/sync-runs.js';
import { connectionBusinessUnits } from '../store/connections.js';
import { syncRunView } from '../views/sync-runs.js';

async function recordRunEvents(trx: Knex.Transaction, organizationId: string, runIds: readonly string[], type: 'connection.sync_completed' | 'connection.sync_failed'): Promise<void> {
  const runs = await syncRunsByIds(trx, organizationId, runIds);
  if (!runs.length) return;
  const units = await connectionBusinessUnits(trx, organizationId, runs.map((r) => r.connection_id));
  await recordEvents(
    trx,
    runs.map((r) => ({ organizationId, type, resourceId: r.connection_id, object: syncRunView(r), businessUnitId: units.get(r.connection_id) ?? null })),
  );
}

/** The run is `completed` (and its model's cursor moves on), with `connection.sync_completed`. */
export async function completeSyncRun(db: Db, organizationId: string, runId: string): Promise<void> {
  await db.transaction(async (trx) => {
    if (await completeRun(trx, organizationId, runId)) await recordRunEvents(trx, organizationId, [runId], 'connection.sync_completed');
  });
}

/** The unfinished ones of the runs are `failed` with `error`, each with `connection.sync_failed`. */
export async function failSyncRuns(db: Db, organizationId: string, runIds: readonly string[], error: string): Promise<void> {
  if (!runIds.length) return;
  await db.transaction(async (trx) => {
    const failed = await failRuns(trx, organizationId, runIds, error);
    await recordRunEvents(trx, organizationId, failed, 'connection.sync_failed');
  });
}
