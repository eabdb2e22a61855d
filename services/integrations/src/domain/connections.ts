/**
 * Connection rules: per-provider settings (types, required ones), the derived fields of 2.2 and
 * the connection view.
 *
 * Derived fields:
 * - `missing_settings`: the provider's `required_settings` that are absent (null, empty string or
 *   empty array count as absent), in descriptor order.
 * - `is_configured`: no required setting is missing.
 * - `requires_setup`: something is left for the user: a missing setting, or authentication pending.
 * - `is_healthy`: `health.healthy`.
 * - the provider's settings are also returned flattened as top-level fields (`base_url`, `tenant`,
 *   … for Acumatica), null when unset.
 */
import { z } from 'zod';
import { isCurrentCurrency, isoTime, type ValidationIssue } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';
import type { ConnectionModelRow, ConnectionRow } from '../store/connections.js';
import { syncRunView, type SyncRunRow } from '../store/sync-runs.js';
import { health, type Health } from './health.js';
import { authorizationUrl } from './oauth.js';
import type { ProviderRuntime, SettingKind } from './provider-runtime.js';

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function settingSchema(kind: SettingKind): z.ZodType {
  switch (kind) {
    case 'string':
      return z.string().trim().min(1).max(1000);
    case 'url':
      return z.string().max(2000).refine(isHttpUrl, 'must be an absolute http(s) URL');
    case 'string_array':
      return z.array(z.string().trim().min(1).max(200)).max(500);
    case 'currency':
      return z.string().refine((v) => /^[A-Z]{3}$/.test(v) && isCurrentCurrency(v), 'must be a current ISO 4217 currency code (e.g. USD)');
  }
}

const schemas = new Map<string, z.ZodType>();

/** The strict settings object of a provider: known keys only, each typed, each optional (null clears). */
export function settingsSchema(runtime: ProviderRuntime): z.ZodType<Record<string, unknown>> {
  let s = schemas.get(runtime.descriptor.name);
  if (!s) {
    s = z.strictObject(Object.fromEntries(Object.entries(runtime.settings).map(([k, kind]) => [k, settingSchema(kind).nullable().optional()])));
    schemas.set(runtime.descriptor.name, s);
  }
  return s as z.ZodType<Record<string, unknown>>;
}

/** Validate `settings` for the provider; issues are located under ['body', 'settings', …]. */
export function parseSettings(runtime: ProviderRuntime, settings: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; issues: ValidationIssue[] } {
  const r = settingsSchema(runtime).safeParse(settings);
  if (r.success) return { ok: true, value: r.data };
  return {
    ok: false,
    issues: r.error.issues.map((i) => {
      const keys = i.code === 'unrecognized_keys' ? (i as { keys: string[] }).keys : [];
      return {
        loc: ['body', 'settings', ...(keys.length ? [keys[0]] : i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)))],
        msg: keys.length ? `${keys.join(', ')}: not a setting of provider ${runtime.descriptor.name} (settings: ${Object.keys(runtime.settings).join(', ') || 'none'})` : i.message,
        type: i.code,
      };
    }),
  };
}

/** Merge a settings patch: keys present replace, null removes. */
export function mergeSettings(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

function present(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

export function missingSettings(runtime: ProviderRuntime, settings: Record<string, unknown>): string[] {
  return runtime.descriptor.required_settings.filter((k) => !present(settings[k]));
}

/** Connections to the push-based middleware need no authentication (the pushes use organization API keys). */
export function needsAuthentication(runtime: ProviderRuntime): boolean {
  return runtime.adapter !== 'push';
}

export function neverCheckedHealth(): Health {
  return health('authentication_required', 'No health check has run yet.', 'Run POST /v2/integrations/connections/{connection_id}/health-check.');
}

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
