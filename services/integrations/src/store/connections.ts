/** SQL of connections and their models (tables of migrations/002_connections.ts). */
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { Health } from '../types.js';
import type { SyncRunRow } from './sync-runs.js';

type Q = Db | Knex.Transaction;

export interface ConnectionRow {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  provider_name: string;
  name: string;
  owner_id: string | null;
  settings: Record<string, unknown>;
  secrets: string | null;
  oauth_state_nonce: string | null;
  is_authentication_pending: boolean;
  is_running_setup: boolean;
  is_sync_disabled: boolean;
  health: Health | null;
  linked_integration_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface ConnectionModelRow {
  id: string;
  organization_id: string;
  connection_id: string;
  name: string;
  display_name: string;
  is_read_enabled: boolean;
  is_write_enabled: boolean;
  is_custom_object: boolean;
  is_file_upload_enabled: boolean;
  is_webhooks_setup: boolean;
  is_read_supported: boolean;
  is_write_supported: boolean;
  is_sync_supported: boolean;
  sync_cursor: Date | null;
  created_at: Date;
  modified_at: Date;
}

export interface NewConnection {
  organization_id: string;
  business_unit_id: string | null;
  provider_name: string;
  name: string;
  owner_id: string | null;
  settings: Record<string, unknown>;
  is_authentication_pending: boolean;
  oauth_state_nonce: string | null;
  health: Health | null;
}

export async function insertConnection(
  db: Db,
  input: NewConnection,
  models: { name: string; display_name: string; is_read_supported: boolean; is_sync_supported: boolean }[],
): Promise<ConnectionRow> {
  return db.transaction(async (trx) => {
    const [row] = await trx<ConnectionRow>('connections')
      .insert({ id: newId(), ...input, settings: JSON.stringify(input.settings) as never, health: (input.health ? JSON.stringify(input.health) : null) as never })
      .returning('*');
    if (models.length) {
      await trx('connection_models').insert(
        models.map((m) => ({
          id: newId(),
          organization_id: input.organization_id,
          connection_id: row.id,
          name: m.name,
          display_name: m.display_name,
          is_read_supported: m.is_read_supported,
          is_sync_supported: m.is_sync_supported,
          is_read_enabled: m.is_read_supported,
        })),
      );
    }
    return row;
  });
}

/** The organization's connections within `scope` (business units; connections of no unit are in every scope). */
export async function listConnections(db: Db, organizationId: string, offset: number, limit: number, scope: BusinessUnitScope = '*'): Promise<{ rows: ConnectionRow[]; total: number }> {
  const scoped = () => {
    const q = db('connections').where({ organization_id: organizationId });
    if (scope !== '*') q.andWhere((w) => void w.whereNull('business_unit_id').orWhereIn('business_unit_id', [...scope]));
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    scoped().select('*').orderBy('created_at').orderBy('id').offset(offset).limit(limit),
    scoped().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ConnectionRow[], total: Number(count) };
}

export async function getConnection(db: Q, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
  return db<ConnectionRow>('connections').where({ organization_id: organizationId, id }).first();
}

interface PgSession {
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** set by knex's pg dialect when the connection failed; the pool then destroys it instead of reusing it */
  __knex__disposed?: unknown;
}

/** What a token refresh may do while it holds the connection's refresh lock (on the lock's own session). */
export interface RefreshSession {
  /** The connection as stored now (autocommit read). */
  read(): Promise<ConnectionRow | undefined>;
  /**
   * Store the sealed secrets in one autocommit statement (durable when it returns), unless the stored
   * secrets are no longer `expected` (the connection was authenticated again or deleted meanwhile:
   * that newer state wins). Whether it stored them.
   */
  storeSecrets(secrets: string, expected: string | null): Promise<boolean>;
}

/**
 * Run `fn` holding the connection's token-refresh lock: a session-level advisory lock on one pooled
 * database connection with NO transaction open. Refreshes of one connection are serialized, and
 * whatever `fn` stores through the session is committed statement by statement, so a refreshed
 * token pair never waits for (or dies with) a later commit; a provider call inside `fn` holds no
 * row lock. If the session dies, Postgres releases the lock with it. `db` must be the pool, not a
 * transaction.
 */
export async function withTokenRefreshLock<T>(db: Db, connectionId: string, fn: (session: RefreshSession) => Promise<T>): Promise<T> {
  if ((db as Knex.Transaction).isTransaction) throw new Error('a token refresh must not run inside a transaction: the refreshed tokens are stored on their own');
  const client = db.client as { acquireConnection(): Promise<PgSession>; releaseConnection(c: PgSession): Promise<unknown> };
  const conn = await client.acquireConnection();
  const key = `integrations:token-refresh:${connectionId}`;
  try {
    await conn.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    try {
      return await fn({
        read: async () => (await db<ConnectionRow>('connections').connection(conn).where({ id: connectionId }).first()) as ConnectionRow | undefined,
        storeSecrets: async (secrets, expected) => (await storeRefreshedSecrets(db, connectionId, secrets, expected, conn)) > 0,
      });
    } finally {
      // A session that cannot unlock must not go back to the pool holding the lock.
      await conn.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch((e: unknown) => {
        conn.__knex__disposed ??= e;
      });
    }
  } finally {
    await client.releaseConnection(conn);
  }
}

/** The refreshed secrets, if the stored ones are still `expected` (one statement; on `session` when given, else from the pool). */
export async function storeRefreshedSecrets(db: Db, connectionId: string, secrets: string, expected: string | null, session?: unknown): Promise<number> {
  const q = db('connections').where({ id: connectionId }).andWhere((w) => {
    if (expected === null) void w.whereNull('secrets');
    else void w.where('secrets', expected);
  });
  if (session) q.connection(session);
  return q.update({ secrets, modified_at: db.fn.now() });
}

/** The row locked for the rest of the transaction (serializes authentication). */
export async function lockConnection(trx: Knex.Transaction, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
  return trx<ConnectionRow>('connections').where({ organization_id: organizationId, id }).forUpdate().first();
}

export interface ConnectionPatch {
  name?: string;
  settings?: Record<string, unknown>;
  is_sync_disabled?: boolean;
  is_authentication_pending?: boolean;
  secrets?: string | null;
  oauth_state_nonce?: string | null;
  health?: Health | null;
}

export async function updateConnection(db: Q, organizationId: string, id: string, patch: ConnectionPatch): Promise<ConnectionRow | undefined> {
  const values: Record<string, unknown> = { ...patch, modified_at: db.fn.now() };
  if (patch.settings !== undefined) values.settings = JSON.stringify(patch.settings);
  if (patch.health !== undefined) values.health = patch.health ? JSON.stringify(patch.health) : null;
  const [row] = await db<ConnectionRow>('connections').where({ organization_id: organizationId, id }).update(values).returning('*');
  return row as ConnectionRow | undefined;
}

export async function deleteConnection(db: Q, organizationId: string, id: string): Promise<boolean> {
  return (await db('connections').where({ organization_id: organizationId, id }).delete()) > 0;
}

/** Models of the connections, with the latest sync run of each model (null when none ran). */
export async function modelsWithLastSync(db: Q, organizationId: string, connectionIds: string[]): Promise<Map<string, { model: ConnectionModelRow; lastSync: SyncRunRow | null }[]>> {
  const out = new Map<string, { model: ConnectionModelRow; lastSync: SyncRunRow | null }[]>();
  if (!connectionIds.length) return out;
  const [models, runs] = await Promise.all([
    db<ConnectionModelRow>('connection_models').where({ organization_id: organizationId }).whereIn('connection_id', connectionIds).orderBy('created_at').orderBy('name'),
    db
      .select('*')
      .from(
        db.raw(
          `(SELECT DISTINCT ON (r.model_id) r.*, m.name AS model_name
              FROM sync_runs r JOIN connection_models m ON m.id = r.model_id
             WHERE r.organization_id = ? AND r.connection_id = ANY(?::uuid[])
             ORDER BY r.model_id, r.created_at DESC, r.id DESC) AS r`,
          [organizationId, connectionIds],
        ),
      ) as Promise<SyncRunRow[]>,
  ]);
  const byModel = new Map(runs.map((r) => [r.model_id, r]));
  for (const m of models as ConnectionModelRow[]) {
    const list = out.get(m.connection_id) ?? [];
    list.push({ model: m, lastSync: byModel.get(m.id) ?? null });
    out.set(m.connection_id, list);
  }
  return out;
}

/** The business unit of each of the connections (the organization's; absent when unknown). */
export async function connectionBusinessUnits(db: Q, organizationId: string, ids: readonly string[]): Promise<Map<string, string | null>> {
  if (!ids.length) return new Map();
  const rows = (await db('connections').where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]).select('id', 'business_unit_id')) as { id: string; business_unit_id: string | null }[];
  return new Map(rows.map((r) => [r.id, r.business_unit_id]));
}
