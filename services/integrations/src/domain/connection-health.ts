/**
 * Writing a connection's health with its `connection.health_changed` event, in one transaction:
 * the row is locked, updated, and when its health `status_code` is not what it was (healthy →
 * authentication_required, unreachable → healthy, …) the event records the connection as
 * GET /v2/integrations/connections/{id} returns it, with `previous_attributes` holding the fields
 * that changed (`health`, `is_healthy`, and whatever else the same write changed, e.g.
 * `is_authentication_pending`). A check that finds the same status again (only its timestamp or
 * message differ) records nothing.
 */
import { recordEvent, previousAttributes, type Db } from '@rp/platform';
import type { Client } from '@temporalio/client';
import type { IntegrationsConfig } from '../config.js';
import { lockConnection, modelsWithLastSync, updateConnection, type ConnectionPatch, type ConnectionRow } from '../store/connections.js';
import { connectionView } from '../views/connections.js';
import { neverCheckedHealth } from './connections.js';
import { providerRuntime } from './provider-runtime.js';
import { describeNextSyncAt } from './sync-schedule.js';

export interface ConnectionHealthDeps {
  db: Db;
  config: IntegrationsConfig;
  /**
   * For the view's `next_sync_at` (the connection's Temporal Schedule). Every caller in the service
   * passes it; a caller without one (a test of token refresh alone) records `next_sync_at: null`.
   */
  temporal?: Client;
}

const statusOf = (row: Pick<ConnectionRow, 'health'>) => (row.health ?? neverCheckedHealth()).status_code;

/** Update the connection (a patch that carries `health`) and record `connection.health_changed` when its status changed. */
export async function updateConnectionHealth(deps: ConnectionHealthDeps, organizationId: string, id: string, patch: ConnectionPatch & { health: ConnectionPatch['health'] }): Promise<ConnectionRow | undefined> {
  const current = await deps.db('connections').where({ organization_id: organizationId, id }).first('provider_name');
  const runtime = current ? providerRuntime((current as { provider_name: string }).provider_name) : undefined;
  // Read before the transaction: a Temporal call never holds the row lock.
  const nextSyncAt = runtime?.adapter === 'pull' && deps.temporal ? await describeNextSyncAt({ temporal: deps.temporal }, id) : null;
  return deps.db.transaction(async (trx) => {
    const before = await lockConnection(trx, organizationId, id);
    if (!before) return undefined;
    const after = await updateConnection(trx, organizationId, id, patch);
    if (!after || statusOf(before) === statusOf(after) || !runtime) return after;
    const models = (await modelsWithLastSync(trx, organizationId, [id])).get(id) ?? [];
    const was = connectionView(deps.config, runtime, before, models, nextSyncAt);
    const now = connectionView(deps.config, runtime, after, models, nextSyncAt);
    await recordEvent(trx, {
      organizationId,
      type: 'connection.health_changed',
      resourceId: id,
      object: now,
      businessUnitId: after.business_unit_id,
      previousAttributes: previousAttributes(was, now),
    });
    return after;
  });
}
