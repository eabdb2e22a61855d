/**
 * The connection and connection-model API shapes (spec 2.2 "Connection"): derived fields from
 * domain/connections.ts, each model's latest run as `last_sync`, the provider's settings flattened.
 */
import { isoTime } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';
import type { ConnectionModelRow, ConnectionRow } from '../store/connections.js';
import type { SyncRunRow } from '../store/sync-runs.js';
import { missingSettings, neverCheckedHealth } from '../domain/connections.js';
import { authorizationUrl } from '../domain/oauth.js';
import type { ProviderRuntime } from '../domain/provider-runtime.js';
import { syncRunView } from './sync-runs.js';

export function modelView(model: ConnectionModelRow, lastSync: SyncRunRow | null, nextSyncAt: string | null) {
  return {
    object: 'connection_model' as const,
    id: model.id,
    name: model.name,
    display_name: model.display_name,
    connection_id: model.connection_id,
    is_read_enabled: model.is_read_enabled,
    is_write_enabled: model.is_write_enabled,
    is_custom_object: model.is_custom_object,
    is_file_upload_enabled: model.is_file_upload_enabled,
    is_webhooks_setup: model.is_webhooks_setup,
    is_read_supported: model.is_read_supported,
    is_write_supported: model.is_write_supported,
    is_sync_supported: model.is_sync_supported,
    next_sync_at: model.is_sync_supported && model.is_read_enabled ? nextSyncAt : null,
    last_sync: lastSync ? syncRunView(lastSync) : null,
    created_at: isoTime(model.created_at)!,
    modified_at: isoTime(model.modified_at)!,
  };
}

function modelRank(runtime: ProviderRuntime, name: string): number {
  const i = runtime.models.findIndex((m) => m.name === name);
  return i < 0 ? runtime.models.length : i;
}

export function connectionView(
  config: IntegrationsConfig,
  runtime: ProviderRuntime,
  row: ConnectionRow,
  models: { model: ConnectionModelRow; lastSync: SyncRunRow | null }[],
  nextSyncAt: string | null,
) {
  const missing = missingSettings(runtime, row.settings);
  const h = row.health ?? neverCheckedHealth();
  const flattened: Record<string, unknown> = {};
  for (const key of Object.keys(runtime.settings)) flattened[key] = row.settings[key] ?? null;
  return {
    object: 'connection' as const,
    id: row.id,
    provider_name: row.provider_name,
    provider: runtime.descriptor,
    name: row.name,
    owner_id: row.owner_id,
    business_unit_id: row.business_unit_id,
    is_authentication_pending: row.is_authentication_pending,
    is_running_setup: row.is_running_setup,
    is_sync_disabled: row.is_sync_disabled,
    requires_setup: missing.length > 0 || row.is_authentication_pending,
    is_configured: missing.length === 0,
    missing_settings: missing,
    health: h,
    is_healthy: h.healthy,
    // In the provider's model order (customers before the documents that reference them).
    models: [...models]
      .sort((a, b) => modelRank(runtime, a.model.name) - modelRank(runtime, b.model.name))
      .map((m) => modelView(m.model, m.lastSync, nextSyncAt)),
    next_sync_at: nextSyncAt,
    linked_integration_id: row.linked_integration_id,
    authorization_url: runtime.oauth ? authorizationUrl(config, row) : null,
    ...flattened,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

export type ConnectionView = ReturnType<typeof connectionView>;
