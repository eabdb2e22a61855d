/**
 * Access to a provider's API for a connection: the one function adapters call before API calls.
 *
 * `getProviderAccess` returns a usable access token (OAuth providers: refreshed with the
 * refresh_token grant when it expires within 5 minutes; API-key providers: the key), the
 * QuickBooks company (`realmId`) and the API base URL (PROVIDER_URL_OVERRIDES applied).
 * Concurrent refreshes of one connection are serialized with `SELECT … FOR UPDATE`: the second
 * caller waits, then finds the fresh token and does not refresh again (a rotated refresh token
 * used twice would be refused).
 */
import type { Db } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';
import { getConnection, lockConnection, updateConnection, type ConnectionRow } from '../store/connections.js';
import { health } from './health.js';
import { OAuthProviderError, OAuthRefusedError, requestTokens } from './oauth.js';
import { providerRuntime, providerUrls } from './provider-runtime.js';
import { ProviderUnreachableError } from './provider-http.js';
import { decryptSecrets, encryptSecrets, type ConnectionSecrets } from './secrets.js';

/** Refresh when the access token expires within this many milliseconds. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

export interface ProviderAccess {
  accessToken: string;
  realmId?: string;
  apiBaseUrl: string;
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

type Deps = { db: Db; config: IntegrationsConfig };

function binding(row: ConnectionRow) {
  return { organizationId: row.organization_id, connectionId: row.id };
}

export function connectionSecrets(config: IntegrationsConfig, row: ConnectionRow): ConnectionSecrets {
  return decryptSecrets(config, binding(row), row.secrets);
}

export function sealSecrets(config: IntegrationsConfig, row: Pick<ConnectionRow, 'organization_id' | 'id'>, secrets: ConnectionSecrets): string {
  return encryptSecrets(config, { organizationId: row.organization_id, connectionId: row.id }, secrets);
}

function expiresSoon(secrets: ConnectionSecrets, now: number): boolean {
  return !secrets.expires_at || Date.parse(secrets.expires_at) - now <= REFRESH_MARGIN_MS;
}

function access(row: ConnectionRow, token: string, apiBaseUrl: string): ProviderAccess {
  const realmId = typeof row.settings.realm_id === 'string' ? row.settings.realm_id : undefined;
  return realmId ? { accessToken: token, realmId, apiBaseUrl } : { accessToken: token, apiBaseUrl };
}

export async function getProviderAccess(deps: Deps, organizationId: string, connectionId: string): Promise<ProviderAccess> {
  const { db, config } = deps;
  const row = await getConnection(db, organizationId, connectionId);
  if (!row) throw new ProviderConfigurationError(`Connection ${connectionId} does not exist in organization ${organizationId}.`);
  const runtime = providerRuntime(row.provider_name);
  const apiBaseUrl = providerUrls(config, row.provider_name, row.settings).api_base_url ?? (typeof row.settings.base_url === 'string' ? row.settings.base_url : null);
  if (!runtime || !apiBaseUrl) throw new ProviderConfigurationError(`No API base URL is known for provider ${row.provider_name}.`);
  const display = runtime.descriptor.display_name;

  const secrets = connectionSecrets(config, row);
  if (runtime.descriptor.auth_type !== 'oauth2') {
    const key = secrets.api_key ?? secrets.password;
    if (!key) throw new ProviderAuthenticationRequiredError(`Connection ${connectionId} to ${display} has no credentials; authenticate it first.`);
    return access(row, key, apiBaseUrl);
  }
  if (!secrets.access_token) throw new ProviderAuthenticationRequiredError(`Connection ${connectionId} to ${display} is not authenticated; complete the OAuth authorization first.`);
  if (!expiresSoon(secrets, Date.now())) return access(row, secrets.access_token, apiBaseUrl);

  let refused: OAuthRefusedError | null = null;
  const result = await db.transaction(async (trx) => {
    const locked = await lockConnection(trx, organizationId, connectionId);
    if (!locked) throw new ProviderConfigurationError(`Connection ${connectionId} was deleted.`);
    const current = connectionSecrets(config, locked);
    // Another caller may have refreshed while we waited for the lock.
    if (current.access_token && !expiresSoon(current, Date.now())) return access(locked, current.access_token, apiBaseUrl);
    if (!current.refresh_token) {
      throw new ProviderAuthenticationRequiredError(`The access token of connection ${connectionId} to ${display} expired and there is no refresh token; authenticate again.`);
    }
    try {
      const fresh = await requestTokens(config, locked.provider_name, locked.settings, { grant_type: 'refresh_token', refresh_token: current.refresh_token }, current);
      await updateConnection(trx, organizationId, connectionId, { secrets: sealSecrets(config, locked, { ...current, ...fresh }) });
      return access(locked, fresh.access_token!, apiBaseUrl);
    } catch (e) {
      if (e instanceof OAuthRefusedError) {
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
  });
  if (result) return result;
  const err = refused as unknown as OAuthRefusedError;
  await updateConnection(db, organizationId, connectionId, {
    health: health(
      'authentication_required',
      `${display} refused to refresh the access token (${err.providerError}${err.description ? `: ${err.description}` : ''}).`,
      'Authenticate the connection again (POST /v2/integrations/connections/{connection_id}/authenticate).',
    ),
  });
  throw new ProviderAuthenticationRequiredError(`${display} refused to refresh the access token of connection ${connectionId} (${err.providerError}); authenticate again.`);
}
