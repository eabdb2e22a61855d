/**
 * Running a connection's health check: settings and OAuth client first (no call), then one real,
 * authenticated call to the provider's documented API (see CredentialCheck) through the provider
 * client, its answer mapped onto the status codes of health.ts.
 */
import type { Db } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';
import type { ConnectionRow } from '../store/connections.js';
import {
  connectionSecrets,
  getProviderAccess,
  ProviderAuthenticationRequiredError,
  ProviderConfigurationError,
  ProviderTemporaryError,
} from './connection-auth.js';
import { missingSettings } from './connections.js';
import { health, healthFromStatus, unreachable, type Health } from './health.js';
import { oauthClient } from './oauth.js';
import { basicAuth, probeProvider } from '../adapters/provider-client.js';
import { requireProviderRuntime, providerUrls, type ProviderRuntime } from './provider-runtime.js';
import { SecretsUnreadableError } from './secrets.js';

type Deps = { db: Db; config: IntegrationsConfig };

const REAUTH = 'Authenticate the connection (POST /v2/integrations/connections/{connection_id}/authenticate).';

export interface HealthCheckResult {
  health: Health;
  /** The provider accepted the stored credentials (true also for `unsupported_provider` after a successful call). */
  credentialsVerified: boolean;
}

/** Health a connection has without calling anyone: what settings, client and credentials say. */
export function staticHealth(config: IntegrationsConfig, row: Pick<ConnectionRow, 'provider_name' | 'settings' | 'secrets'>): Health | null {
  const runtime = requireProviderRuntime(row.provider_name);
  const display = runtime.descriptor.display_name;
  if (runtime.adapter === 'push') {
    return health('healthy', `${display} is push-based: records arrive on the middleware push endpoints, authenticated with organization API keys; nothing has to be called.`);
  }
  const missing = missingSettings(runtime, row.settings);
  if (missing.length) {
    return health('misconfigured', `Required settings are missing: ${missing.join(', ')}.`, 'Set them with PATCH /v2/integrations/connections/{connection_id}.');
  }
  if (runtime.descriptor.auth_type === 'oauth2' && !oauthClient(config, row.provider_name)) {
    return health(
      'misconfigured',
      `No OAuth client for ${display} is configured on this platform.`,
      'An operator must add the client to OAUTH_CLIENTS (and OAUTH_REDIRECT_URI) of the integrations service.',
    );
  }
  if (!runtime.credential_check) {
    return health(
      'unsupported_provider',
      `This platform has no adapter for ${display}: the connection is stored, but its credentials cannot be verified and nothing syncs.`,
      'Use a provider with a working adapter (is_enabled: true), or the middleware push endpoints.',
    );
  }
  if (!row.secrets) return health('authentication_required', `The connection to ${display} has not been authenticated yet.`, REAUTH);
  return null;
}

function fromAccessError(display: string, e: unknown): Health {
  if (e instanceof ProviderAuthenticationRequiredError) return health('authentication_required', e.message, REAUTH);
  if (e instanceof ProviderConfigurationError) return health('misconfigured', e.message, 'Check the connection settings and the platform configuration.');
  if (e instanceof ProviderTemporaryError) return health('unreachable', e.message, `Try again when ${display} is reachable.`);
  if (e instanceof SecretsUnreadableError) return health('authentication_required', `The stored credentials cannot be read (${e.message}).`, REAUTH);
  throw e;
}

/** One authenticated call to the provider (adapters/provider-client.ts), its answer as health. */
async function call(config: IntegrationsConfig, display: string, url: string, authorization: string): Promise<Health> {
  const answer = await probeProvider(config, url, authorization);
  return 'status' in answer ? healthFromStatus(display, answer.status) : unreachable(display, url, answer.unreachable);
}

async function credentialCall(deps: Deps, runtime: ProviderRuntime, row: ConnectionRow): Promise<Health> {
  const display = runtime.descriptor.display_name;
  const api = providerUrls(deps.config, row.provider_name, row.settings).api_base_url;
  switch (runtime.credential_check) {
    case 'quickbooks_companyinfo':
    case 'xero_connections': {
      let access;
      try {
        access = await getProviderAccess(deps, row.organization_id, row.id);
      } catch (e) {
        return fromAccessError(display, e);
      }
      if (runtime.credential_check === 'xero_connections') return call(deps.config, display, `${access.apiBaseUrl}/connections`, `Bearer ${access.accessToken}`);
      if (!access.realmId) return health('authentication_required', 'The QuickBooks company (realmId) of the connection is not known.', REAUTH);
      const realm = encodeURIComponent(access.realmId);
      return call(deps.config, display, `${access.apiBaseUrl}/v3/company/${realm}/companyinfo/${realm}`, `Bearer ${access.accessToken}`);
    }
    case 'stripe_balance': {
      const secrets = readSecrets(deps.config, row);
      if ('health' in secrets) return secrets.health;
      if (!secrets.api_key || !api) return health('authentication_required', `No API key is stored for ${display}.`, REAUTH);
      return call(deps.config, display, `${api}/v1/balance`, `Bearer ${secrets.api_key}`);
    }
    case 'jira_myself': {
      const secrets = readSecrets(deps.config, row);
      if ('health' in secrets) return secrets.health;
      const site = (typeof row.settings.site_url === 'string' ? row.settings.site_url : '').replace(/\/+$/, '');
      if (!secrets.username || !secrets.password) return health('authentication_required', `No credentials are stored for ${display}.`, REAUTH);
      return call(deps.config, display, `${site}/rest/api/3/myself`, basicAuth(secrets.username, secrets.password));
    }
    default:
      throw new Error(`no credential check for ${row.provider_name}`);
  }
}

function readSecrets(config: IntegrationsConfig, row: ConnectionRow) {
  try {
    return connectionSecrets(config, row);
  } catch (e) {
    return { health: fromAccessError('', e) };
  }
}

/** One health check of the connection as stored (it may refresh OAuth tokens). */
export async function runHealthCheck(deps: Deps, row: ConnectionRow): Promise<HealthCheckResult> {
  const fixed = staticHealth(deps.config, row);
  if (fixed) return { health: fixed, credentialsVerified: false };
  const runtime = requireProviderRuntime(row.provider_name);
  const result = await credentialCall(deps, runtime, row);
  if (result.healthy && !runtime.adapter) {
    return {
      health: health(
        'unsupported_provider',
        `${runtime.descriptor.display_name} accepted the credentials, but this platform has no adapter for it: nothing syncs.`,
        'Use a provider with a working adapter (is_enabled: true), or the middleware push endpoints.',
      ),
      credentialsVerified: true,
    };
  }
  return { health: result, credentialsVerified: result.healthy };
}
