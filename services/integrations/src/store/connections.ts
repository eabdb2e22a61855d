/** SQL of connections and their models (tables of migrations/002_connections.ts). */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { Health } from '../domain/health.js';

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

export interface SyncRunRow {
  id: string;
  organization_id: string;
  connection_id: string;
  model_id: string;
  entity_id: string | null;
  file_id: string | null;
  status: string;
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

export async function listConnections(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: ConnectionRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db<ConnectionRow>('connections').where({ organization_id: organizationId }).orderBy('created_at').orderBy('id').offset(offset).limit(limit),
    db('connections').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ConnectionRow[], total: Number(count) };
}

export async function getConnection(db: Q, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
  return db<ConnectionRow>('connections').where({ organization_id: organizationId, id }).first();
}

/** The row locked for the rest of the transaction (serializes token refreshes and authentication). */
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
          `(SELECT DISTINCT ON (model_id) * FROM sync_runs WHERE organization_id = ? AND connection_id = ANY(?::uuid[]) ORDER BY model_id, created_at DESC, id DESC) AS r`,
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
