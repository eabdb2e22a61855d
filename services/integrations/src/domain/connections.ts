/**
 * Connection rules: per-provider settings (types, required ones) and the derived fields of spec 2.2
 * (views/connections.ts shapes them into the connection).
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
import { isCurrentCurrency, type ValidationIssue } from '@rp/platform';
import { health, type Health } from './health.js';
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
