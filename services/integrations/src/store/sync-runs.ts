/**
 * Sync runs (spec 2.2 "Sync run") and the models' sync cursors: the only SQL of the sync machinery.
 *
 * `latestRunsByModel` gives each model's most recent run (a Map keyed by model id), which the
 * connection view shows as the model's `last_sync` (views/sync-runs.ts shapes a run).
 *
 * Status: `scheduled` (created, waiting for its turn) → `running` (its activity is paging) →
 * `completed` | `failed` (with `error`) | `cancelled` (the sync was cancelled). `attempt` is the
 * Temporal activity attempt that last ran it (0 while scheduled).
 */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import { SYNC_RUN_STATUSES, type SyncRunStatus } from '../types.js';

type Conn = Db | Knex.Transaction;

export { SYNC_RUN_STATUSES, type SyncRunStatus };

export interface SyncRunRow {
  id: string;
  organization_id: string;
  connection_id: string;
  model_id: string;
  entity_id: string | null;
  file_id: string | null;
  status: SyncRunStatus;
  attempt: number;
  batch_id: string;
  is_initial_sync: boolean;
  is_one_off: boolean;
  pagination_state: Record<string, unknown> | null;
  timerange_start: Date | null;
  timerange_end: Date | null;
  started_at: Date | null;
  completed_at: Date | null;
  error: string | null;
  records_synced: number;
  workflow_id: string | null;
  created_at: Date;
  modified_at: Date;
  /** joined from connection_models */
  model_name: string;
}

const RUN_COLUMNS = 'r.*, m.name AS model_name';

function runs(db: Conn, organizationId: string) {
  return db('sync_runs as r').join('connection_models as m', 'm.id', 'r.model_id').where('r.organization_id', organizationId).select(db.raw(RUN_COLUMNS));
}

export async function listSyncRuns(
  db: Db,
  organizationId: string,
  connectionId: string,
  filters: { model?: string; status?: SyncRunStatus },
  offset: number,
  limit: number,
): Promise<{ rows: SyncRunRow[]; total: number }> {
  const filtered = () => {
    const q = db('sync_runs as r').join('connection_models as m', 'm.id', 'r.model_id').where({ 'r.organization_id': organizationId, 'r.connection_id': connectionId });
    if (filters.model) q.andWhere('m.name', filters.model);
    if (filters.status) q.andWhere('r.status', filters.status);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    filtered().select(db.raw(RUN_COLUMNS)).orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').offset(offset).limit(limit),
    filtered().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as SyncRunRow[], total: Number(count) };
}

/** Each model's most recent run of a connection, keyed by model id. */
export async function latestRunsByModel(db: Conn, organizationId: string, connectionId: string): Promise<Map<string, SyncRunRow>> {
  const rows = (await db.raw(
    `SELECT DISTINCT ON (r.model_id) ${RUN_COLUMNS}
       FROM sync_runs r JOIN connection_models m ON m.id = r.model_id
      WHERE r.organization_id = ? AND r.connection_id = ?
      ORDER BY r.model_id, r.created_at DESC, r.id DESC`,
    [organizationId, connectionId],
  )) as { rows: SyncRunRow[] };
  return new Map(rows.rows.map((r) => [r.model_id, r]));
}

export async function getSyncRun(db: Conn, organizationId: string, runId: string): Promise<SyncRunRow | undefined> {
  return (await runs(db, organizationId).andWhere('r.id', runId).first()) as SyncRunRow | undefined;
}

export async function runsOfBatch(db: Conn, organizationId: string, batchId: string): Promise<SyncRunRow[]> {
  return (await runs(db, organizationId).andWhere('r.batch_id', batchId).orderBy('r.created_at').orderBy('r.id')) as SyncRunRow[];
}

/** Runs of the connection that are not finished (scheduled or running). */
export async function unfinishedRuns(db: Conn, organizationId: string, connectionId: string): Promise<SyncRunRow[]> {
  return (await runs(db, organizationId).andWhere('r.connection_id', connectionId).whereIn('r.status', ['scheduled', 'running'])) as SyncRunRow[];
}

export interface SyncModelRow {
  id: string;
  name: string;
  sync_cursor: Date | null;
}

/** Models of the connection that a sync reads. */
export async function readEnabledModels(db: Conn, organizationId: string, connectionId: string): Promise<SyncModelRow[]> {
  return (await db('connection_models')
    .where({ organization_id: organizationId, connection_id: connectionId, is_read_enabled: true, is_read_supported: true, is_sync_supported: true })
    .select('id', 'name', 'sync_cursor')
    .orderBy('created_at')
    .orderBy('id')) as SyncModelRow[];
}

/**
 * One `scheduled` run per given model, sharing `batchId`; timerange_start is the model's
 * sync_cursor (null: initial sync), timerange_end the database's current time (the sync's start),
 * the same for every run of the batch. Returns the runs in the models' order.
 */
export async function createSyncRuns(
  db: Conn,
  input: { organizationId: string; connectionId: string; batchId: string; isOneOff: boolean; workflowId: string | null; models: SyncModelRow[] },
): Promise<SyncRunRow[]> {
  if (!input.models.length) return [];
  const payload = input.models.map((m, i) => ({ id: newId(), model_id: m.id, ord: i }));
  await db.raw(
    `INSERT INTO sync_runs (id, organization_id, connection_id, model_id, entity_id, status, attempt, batch_id, is_initial_sync,
       is_one_off, timerange_start, timerange_end, workflow_id, created_at, modified_at)
     SELECT r.id, ?, ?, r.model_id, ?, 'scheduled', 0, ?, m.sync_cursor IS NULL, ?, m.sync_cursor, now(), ?,
       now() + make_interval(secs => r.ord / 1000000.0), now()
       FROM json_to_recordset(?::json) AS r(id uuid, model_id uuid, ord integer)
       JOIN connection_models m ON m.id = r.model_id AND m.organization_id = ?`,
    [input.organizationId, input.connectionId, input.connectionId, input.batchId, input.isOneOff, input.workflowId, JSON.stringify(payload), input.organizationId],
  );
  const created = await runsOfBatch(db, input.organizationId, input.batchId);
  const order = new Map(payload.map((p) => [p.model_id, p.ord]));
  return created.sort((a, b) => (order.get(a.model_id) ?? 0) - (order.get(b.model_id) ?? 0));
}

export async function setRunsWorkflowId(db: Conn, organizationId: string, batchId: string, workflowId: string): Promise<void> {
  await db('sync_runs').where({ organization_id: organizationId, batch_id: batchId }).update({ workflow_id: workflowId, modified_at: db.fn.now() });
}

/** The run's activity attempt starts (or resumes): `running`, attempt recorded, started_at kept from the first attempt. */
export async function markRunRunning(db: Conn, organizationId: string, runId: string, attempt: number): Promise<SyncRunRow | undefined> {
  await db('sync_runs')
    .where({ organization_id: organizationId, id: runId })
    .whereIn('status', ['scheduled', 'running'])
    .update({ status: 'running', attempt, started_at: db.raw('coalesce(started_at, now())'), error: null, modified_at: db.fn.now() });
  return getSyncRun(db, organizationId, runId);
}

/** Inside the page's transaction: where the next page starts and how many records this run has written in all. */
export async function recordPage(trx: Conn, organizationId: string, runId: string, paginationState: Record<string, unknown>, recordsSynced: number): Promise<void> {
  await trx('sync_runs')
    .where({ organization_id: organizationId, id: runId })
    .update({
      pagination_state: JSON.stringify(paginationState),
      records_synced: recordsSynced,
      modified_at: trx.fn.now(),
    });
}

/**
 * `completed`, and the model's cursor moves to the run's timerange_end (never backwards); in the
 * caller's transaction. False when the run was not scheduled or running (nothing changed).
 */
export async function completeRun(trx: Conn, organizationId: string, runId: string): Promise<boolean> {
  const [run] = (await trx('sync_runs')
    .where({ organization_id: organizationId, id: runId })
    .whereIn('status', ['scheduled', 'running'])
    .update({ status: 'completed', completed_at: trx.fn.now(), error: null, modified_at: trx.fn.now() })
    .returning(['model_id', 'timerange_end'])) as { model_id: string; timerange_end: Date }[];
  if (!run) return false;
  await trx('connection_models')
    .where({ organization_id: organizationId, id: run.model_id })
    .update({
      sync_cursor: trx.raw('greatest(sync_cursor, ?::timestamptz)', [run.timerange_end]),
      modified_at: trx.fn.now(),
    });
  return true;
}

/** Unfinished runs (of `runIds`) become `failed` with `error`; returns the ids of those that changed. */
export async function failRuns(db: Conn, organizationId: string, runIds: readonly string[], error: string): Promise<string[]> {
  if (!runIds.length) return [];
  const rows = (await db('sync_runs')
    .where({ organization_id: organizationId })
    .whereIn('id', [...runIds])
    .whereIn('status', ['scheduled', 'running'])
    .update({ status: 'failed', error: error.slice(0, 2000), completed_at: db.fn.now(), modified_at: db.fn.now() })
    .returning('id')) as { id: string }[];
  return rows.map((r) => r.id);
}

/** Runs by id (the organization's), in created order. */
export async function syncRunsByIds(db: Conn, organizationId: string, runIds: readonly string[]): Promise<SyncRunRow[]> {
  if (!runIds.length) return [];
  return (await runs(db, organizationId).whereIn('r.id', [...runIds]).orderBy('r.created_at').orderBy('r.id')) as SyncRunRow[];
}

export async function cancelBatch(db: Conn, organizationId: string, batchId: string): Promise<number> {
  return db('sync_runs')
    .where({ organization_id: organizationId, batch_id: batchId })
    .whereIn('status', ['scheduled', 'running'])
    .update({ status: 'cancelled', completed_at: db.fn.now(), modified_at: db.fn.now() });
}

export interface SyncConnectionRow {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  provider_name: string;
  is_sync_disabled: boolean;
  is_authentication_pending: boolean;
}

/** The connection fields a sync decides on (null when it is not the organization's). */
export async function getSyncConnection(db: Conn, organizationId: string, connectionId: string): Promise<SyncConnectionRow | undefined> {
  return (await db('connections')
    .where({ organization_id: organizationId, id: connectionId })
    .select('id', 'organization_id', 'business_unit_id', 'provider_name', 'is_sync_disabled', 'is_authentication_pending')
    .first()) as SyncConnectionRow | undefined;
}
