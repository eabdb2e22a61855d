/**
 * Access to a provider's API for a connection: the one function adapters call before API calls.
 *
 * `getProviderAccess` returns a usable access token (OAuth providers: refreshed with the
 * refresh_token grant when it expires within 5 minutes; API-key providers: the key), the
 * QuickBooks company (`realmId`) and the API base URL (PROVIDER_URL_OVERRIDES applied).
 * Concurrent refreshes of one connection are serialized with a per-connection advisory lock held on
 * its own database session with no transaction open: the second caller waits, then finds the fresh
 * token and does not refresh again (a rotated refresh token used twice would be refused).
 *
 * The provider invalidates the old refresh token the moment it answers (QuickBooks rotates them), so
 * the new pair is stored first and on its own: one autocommit statement right after the answer,
 * before anything else happens, never inside a transaction with other work whose failed commit
 * would lose it. Should that session have died meanwhile, the pair is stored from a new pooled
 * session (a few attempts). `getProviderAccess` therefore refuses to run inside a caller's
 * transaction (deps.db must be the pool).
 */
import type { Db, OutboundPolicy } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';
import type { Client } from '@temporalio/client';
import { getConnection, storeRefreshedSecrets, withTokenRefreshLock, type ConnectionRow } from '../store/connections.js';
import { updateConnectionHealth } from './connection-health.js';
import { health } from './health.js';
import { OAuthProviderError, OAuthRefusedError, requestTokens } from './oauth.js';
import { providerRuntime, providerUrls } from './provider-runtime.js';
import { ProviderUnreachableError } from '../adapters/provider-client.js';
import { decryptSecrets, encryptSecrets, SecretsUnreadableError, type ConnectionSecrets } from './secrets.js';

/** Refresh when the access token expires within this many milliseconds. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

export interface ProviderAccess {
  accessToken: string;
  realmId?: string;
  apiBaseUrl: string;
  /** What the adapter's requests may reach (OUTBOUND_ALLOWLIST): every call goes through the provider client (adapters/provider-client.ts). */
  outbound: OutboundPolicy;
}

/** The connection has no usable credentials (none stored, or the provider refused a refresh). Not retryable. */
export class ProviderAuthenticationRequiredError extends Error {
  readonly code = 'authentication_required';
  readonly nonRetryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'ProviderAuthenticationRequiredError';
  }
}

/** The connection cannot be used as configured (unknown connection, no API URL, no OAuth client). Not retryable. */
export class ProviderConfigurationError extends Error {
  readonly code = 'misconfigured';
  readonly nonRetryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'ProviderConfigurationError';
  }
}

/** The token endpoint could not be reached or failed (5xx): retryable. */
export class ProviderTemporaryError extends Error {
  readonly code = 'provider_unavailable';
  readonly nonRetryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'ProviderTemporaryError';
  }
}

/** `temporal`: for the connection view of a `connection.health_changed` (connection-health.ts). */
type Deps = { db: Db; config: IntegrationsConfig; temporal?: Client };

function binding(row: ConnectionRow) {
  return { organizationId: row.organization_id, connectionId: row.id };
}

export function connectionSecrets(config: IntegrationsConfig, row: ConnectionRow): ConnectionSecrets {
  return decryptSecrets(config, binding(row), row.secrets);
}

/** The secrets for an API call; unreadable ones (key removed, tampered) mean the connection must authenticate again. */
function usableSecrets(config: IntegrationsConfig, row: ConnectionRow): ConnectionSecrets {
  try {
    return connectionSecrets(config, row);
  } catch (e) {
    if (e instanceof SecretsUnreadableError) throw new ProviderAuthenticationRequiredError(`The stored credentials of connection ${row.id} cannot be read (${e.message}); authenticate again.`);
    throw e;
  }
}

export function sealSecrets(config: IntegrationsConfig, row: Pick<ConnectionRow, 'organization_id' | 'id'>, secrets: ConnectionSecrets): string {
  return encryptSecrets(config, { organizationId: row.organization_id, connectionId: row.id }, secrets);
}

function expiresSoon(secrets: ConnectionSecrets, now: number): boolean {
  return !secrets.expires_at || Date.parse(secrets.expires_at) - now <= REFRESH_MARGIN_MS;
}

function access(row: ConnectionRow, token: string, apiBaseUrl: string, outbound: OutboundPolicy): ProviderAccess {
  const realmId = typeof row.settings.realm_id === 'string' ? row.settings.realm_id : undefined;
  return realmId ? { accessToken: token, realmId, apiBaseUrl, outbound } : { accessToken: token, apiBaseUrl, outbound };
}

export async function getProviderAccess(deps: Deps, organizationId: string, connectionId: string): Promise<ProviderAccess> {
  const { db, config } = deps;
  const row = await getConnection(db, organizationId, connectionId);
  if (!row) throw new ProviderConfigurationError(`Connection ${connectionId} does not exist in organization ${organizationId}.`);
  const runtime = providerRuntime(row.provider_name);
  const apiBaseUrl = providerUrls(config, row.provider_name, row.settings).api_base_url ?? (typeof row.settings.base_url === 'string' ? row.settings.base_url : null);
  if (!runtime || !apiBaseUrl) throw new ProviderConfigurationError(`No API base URL is known for provider ${row.provider_name}.`);
  const display = runtime.descriptor.display_name;

  const secrets = usableSecrets(config, row);
  if (runtime.descriptor.auth_type !== 'oauth2') {
    const key = secrets.api_key ?? secrets.password;
    if (!key) throw new ProviderAuthenticationRequiredError(`Connection ${connectionId} to ${display} has no credentials; authenticate it first.`);
    return access(row, key, apiBaseUrl, config.OUTBOUND_ALLOWLIST);
  }
  if (!secrets.access_token) throw new ProviderAuthenticationRequiredError(`Connection ${connectionId} to ${display} is not authenticated; complete the OAuth authorization first.`);
  if (!expiresSoon(secrets, Date.now())) return access(row, secrets.access_token, apiBaseUrl, config.OUTBOUND_ALLOWLIST);

  let refused: OAuthRefusedError | null = null;
  let unsaved: { sealed: string; expected: string | null } | null = null;
  const result = await withTokenRefreshLock(db, connectionId, async (session) => {
    const locked = await session.read();
    if (!locked || locked.organization_id !== organizationId) throw new ProviderConfigurationError(`Connection ${connectionId} was deleted.`);
    const current = usableSecrets(config, locked);
    // Another caller may have refreshed while we waited for the lock.
    if (current.access_token && !expiresSoon(current, Date.now())) return access(locked, current.access_token, apiBaseUrl, config.OUTBOUND_ALLOWLIST);
    if (!current.refresh_token) {
      throw new ProviderAuthenticationRequiredError(`The access token of connection ${connectionId} to ${display} expired and there is no refresh token; authenticate again.`);
    }
    let fresh: ConnectionSecrets;
    try {
      fresh = await requestTokens(config, locked.provider_name, locked.settings, { grant_type: 'refresh_token', refresh_token: current.refresh_token }, current);
    } catch (e) {
      if (e instanceof OAuthRefusedError) {
        // Refreshed meanwhile by someone whose lock we did not see (their session died)? Then use theirs.
        const again = await session.read();
        const now = again ? usableSecrets(config, again) : null;
        if (again && now?.access_token && now.refresh_token !== current.refresh_token && !expiresSoon(now, Date.now())) return access(again, now.access_token, apiBaseUrl, config.OUTBOUND_ALLOWLIST);
        refused = e;
        return null;
      }
      if (e instanceof ProviderUnreachableError) throw new ProviderTemporaryError(`Refreshing the ${display} token failed: ${e.message}.`);
      if (e instanceof OAuthProviderError) {
        if (e.httpStatus === 0) throw new ProviderConfigurationError(`Refreshing the ${display} token is not possible: ${e.message}.`);
        throw new ProviderTemporaryError(`Refreshing the ${display} token failed: ${e.message}.`);
      }
      throw e;
    }
    // The old refresh token is spent: store the new pair now, on its own, before anything else.
    const sealed = sealSecrets(config, locked, { ...current, ...fresh });
    try {
      await session.storeSecrets(sealed, locked.secrets);
    } catch {
      unsaved = { sealed, expected: locked.secrets };
    }
    return access(locked, fresh.access_token!, apiBaseUrl, config.OUTBOUND_ALLOWLIST);
  });
  if (unsaved) await storeUnsaved(db, connectionId, unsaved, display);
  if (result) return result;
  const err = refused as unknown as OAuthRefusedError;
  await updateConnectionHealth(deps, organizationId, connectionId, {
    health: health(
      'authentication_required',
      `${display} refused to refresh the access token (${err.providerError}${err.description ? `: ${err.description}` : ''}).`,
      'Authenticate the connection again (POST /v2/integrations/connections/{connection_id}/authenticate).',
    ),
  });
  throw new ProviderAuthenticationRequiredError(`${display} refused to refresh the access token of connection ${connectionId} (${err.providerError}); authenticate again.`);
}

/** The lock's session failed while storing a refreshed pair: store it from the pool (the provider already rotated the old one). */
async function storeUnsaved(db: Db, connectionId: string, unsaved: { sealed: string; expected: string | null }, display: string): Promise<void> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await storeRefreshedSecrets(db, connectionId, unsaved.sealed, unsaved.expected);
      return;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
  throw new ProviderTemporaryError(`The refreshed ${display} tokens could not be stored: ${(last as Error)?.message ?? 'database unavailable'}.`);
}
