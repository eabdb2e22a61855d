/**
 * Connection use cases behind the routes: create, view, update, delete, authenticate, health check.
 * Sync schedules (sync-schedule.ts) follow the connection: created with it (paused while
 * authentication is pending), paused/unpaused with `is_sync_disabled`, removed with it.
 */
import {
  businessUnitIdsOf,
  ConflictError,
  inBusinessUnitScope,
  NotFoundError,
  UpstreamError,
  ValidationError,
  isUuid,
  type BusinessUnitScope,
  type Identity,
  type ValidationIssue,
} from '@rp/platform';
import type { IntegrationsDeps } from '../deps.js';
import {
  deleteConnection as deleteRow,
  getConnection,
  insertConnection,
  listConnections,
  lockConnection,
  modelsWithLastSync,
  updateConnection,
  type ConnectionRow,
} from '../store/connections.js';
import { AuthenticationRefusedError, bodyIssue, realmIdFrom, type AuthenticateBody } from './authenticate.js';
import { connectionSecrets, sealSecrets } from './connection-auth.js';
import { mergeSettings, needsAuthentication, parseSettings } from './connections.js';
import { connectionView, type ConnectionView } from '../views/connections.js';
import { runHealthCheck, staticHealth } from './health-check.js';
import { updateConnectionHealth } from './connection-health.js';
import { newStateNonce, OAuthProviderError, OAuthRefusedError, oauthClient, pkceVerifier, requestTokens, verifyState } from './oauth.js';
import { ProviderUnreachableError } from '../adapters/provider-client.js';
import { requireProviderRuntime, type ProviderRuntime } from './provider-runtime.js';
import { cancelRunningSyncs, deleteSyncSchedule, describeNextSyncAt, upsertSyncSchedule } from './sync-schedule.js';
import type { ConnectionSecrets } from './secrets.js';

type Deps = IntegrationsDeps;

async function views(deps: Deps, organizationId: string, rows: ConnectionRow[]): Promise<ConnectionView[]> {
  const models = await modelsWithLastSync(deps.db, organizationId, rows.map((r) => r.id));
  return Promise.all(
    rows.map(async (row) => {
      const runtime = requireProviderRuntime(row.provider_name);
      const next = runtime.adapter === 'pull' ? await describeNextSyncAt(deps, row.id) : null;
      return connectionView(deps.config, runtime, row, models.get(row.id) ?? [], next);
    }),
  );
}

export async function connectionViewOf(deps: Deps, row: ConnectionRow): Promise<ConnectionView> {
  return (await views(deps, row.organization_id, [row]))[0];
}

/** The organization's connection; 404 when unknown, another organization's or of a business unit outside `scope`. */
export async function findConnection(deps: Deps, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<ConnectionRow> {
  const row = isUuid(id) ? await getConnection(deps.db, organizationId, id) : undefined;
  if (!row || !inBusinessUnitScope(scope, row.business_unit_id)) throw new NotFoundError(`No connection ${id}.`);
  return row;
}

export async function listConnectionViews(deps: Deps, organizationId: string, offset: number, limit: number, scope: BusinessUnitScope = '*') {
  const { rows, total } = await listConnections(deps.db, organizationId, offset, limit, scope);
  return { data: await views(deps, organizationId, rows), total };
}

async function syncSchedule(deps: Deps, row: ConnectionRow): Promise<void> {
  if (requireProviderRuntime(row.provider_name).adapter !== 'pull') return;
  await upsertSyncSchedule(deps, row);
}

/**
 * Settings as the provider types them; URL settings (`base_url`, `site_url`) must also be http(s)
 * and must not name a blocked address literally (loopback, private, link-local, metadata in any
 * spelling) unless OUTBOUND_ALLOWLIST allows it. Host names are checked again after DNS, on every call.
 */
function validSettings(config: Deps['config'], runtime: ProviderRuntime, settings: Record<string, unknown>): Record<string, unknown> {
  const parsed = parseSettings(runtime, settings);
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(parsed.value)) {
    if (runtime.settings[key] !== 'url' || typeof value !== 'string') continue;
    const why = config.OUTBOUND_ALLOWLIST.urlRefusal(value);
    if (why) issues.push({ loc: ['body', 'settings', key], msg: why, type: 'url_not_allowed' });
  }
  if (issues.length) throw new ValidationError(issues);
  return parsed.value;
}

export async function createConnection(
  deps: Deps,
  identity: Identity,
  input: { provider_name: string; name: string; settings?: Record<string, unknown>; business_unit_id?: string | null },
): Promise<ConnectionView> {
  const runtime = requireProviderRuntime(input.provider_name);
  const settings = mergeSettings({}, validSettings(deps.config, runtime, input.settings ?? {}));
  // The unit must be one of the organization's (checked for every caller, admins included) and,
  // for a member, one of theirs: anything else is as unknown as a random id.
  if (
    input.business_unit_id &&
    (!inBusinessUnitScope(identity.bu, input.business_unit_id) || !(await businessUnitIdsOf(deps.db, identity.org, [input.business_unit_id])).has(input.business_unit_id))
  ) {
    throw new ValidationError([{ loc: ['body', 'business_unit_id'], msg: 'is not a business unit of this organization', type: 'value_error.not_found' }]);
  }
  const h = staticHealth(deps.config, { provider_name: runtime.descriptor.name, settings, secrets: null })!;
  const row = await insertConnection(
    deps.db,
    {
      organization_id: identity.org,
      business_unit_id: input.business_unit_id ?? null,
      provider_name: runtime.descriptor.name,
      name: input.name,
      owner_id: identity.sub,
      settings,
      is_authentication_pending: needsAuthentication(runtime),
      oauth_state_nonce: runtime.oauth ? newStateNonce() : null,
      health: h,
    },
    runtime.models,
  );
  try {
    await syncSchedule(deps, row);
  } catch (e) {
    // No half-made connection: without its Schedule it would never sync.
    await deleteRow(deps.db, identity.org, row.id);
    throw e;
  }
  return connectionViewOf(deps, row);
}

export async function patchConnection(
  deps: Deps,
  organizationId: string,
  id: string,
  patch: { name?: string; settings?: Record<string, unknown>; is_sync_disabled?: boolean },
): Promise<ConnectionView> {
  const current = await findConnection(deps, organizationId, id);
  const runtime = requireProviderRuntime(current.provider_name);
  const settings = patch.settings === undefined ? undefined : mergeSettings(current.settings, validSettings(deps.config, runtime, patch.settings));
  let row = (await updateConnection(deps.db, organizationId, id, { name: patch.name, settings, is_sync_disabled: patch.is_sync_disabled }))!;
  if (!row) throw new NotFoundError(`No connection ${id}.`);
  if (settings !== undefined) {
    // New settings can fix (or break) the connection: check it again.
    const result = await runHealthCheck(deps, row);
    row = (await updateConnectionHealth(deps, organizationId, id, { health: result.health })) ?? row;
  }
  if (patch.is_sync_disabled !== undefined) await syncSchedule(deps, row);
  return connectionViewOf(deps, row);
}

export async function removeConnection(deps: Deps, organizationId: string, id: string): Promise<void> {
  const row = await findConnection(deps, organizationId, id);
  // The schedule first (no new syncs start; if that fails the connection is still there and the
  // delete can be retried), then a sync in flight is cancelled and has closed before rows go.
  await deleteSyncSchedule(deps, row.id);
  await cancelRunningSyncs(deps, organizationId, row.id);
  if (!(await deleteRow(deps.db, organizationId, id))) throw new NotFoundError(`No connection ${id}.`);
}

/** Health check on demand; a check that verifies the credentials also clears a pending authentication. */
export async function checkHealth(deps: Deps, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<ConnectionView> {
  const row = await findConnection(deps, organizationId, id, scope);
  const result = await runHealthCheck(deps, row);
  const clearPending = result.credentialsVerified && row.is_authentication_pending;
  const updated = (await updateConnectionHealth(deps, organizationId, id, { health: result.health, ...(clearPending ? { is_authentication_pending: false } : {}) })) ?? row;
  if (clearPending) await syncSchedule(deps, updated);
  return connectionViewOf(deps, updated);
}

function describeRefusal(display: string, e: OAuthRefusedError): string {
  return `${display}'s token endpoint refused the authorization code: ${e.providerError}${e.description ? ` (${e.description})` : ''} [HTTP ${e.httpStatus}]. The connection is still pending; start the authorization again.`;
}

async function authenticateOAuth(deps: Deps, row: ConnectionRow, runtime: ProviderRuntime, body: Extract<AuthenticateBody, { authorization_code: string }>): Promise<ConnectionRow> {
  const display = runtime.descriptor.display_name;
  if (!oauthClient(deps.config, row.provider_name)) {
    throw new ConflictError(`No OAuth client for ${display} is configured on this platform (OAUTH_CLIENTS); the connection cannot be authenticated.`);
  }
  const configured = deps.config.OAUTH_REDIRECT_URI;
  const redirectUri = body.redirect_uri ?? configured;
  if (!redirectUri) throw bodyIssue('redirect_uri', 'is required: no OAUTH_REDIRECT_URI is configured', 'missing');
  if (configured && redirectUri !== configured) throw bodyIssue('redirect_uri', `must be the redirect URI of the authorization request (${configured})`);
  // A state that is sent must be this connection's (CSRF, RFC 6749 §10.12); without one (spec 4.3.1
  // allows absent or null) PKCE binds the code to the connection's current authorization request.
  if (!row.oauth_state_nonce) throw bodyIssue('state', 'no authorization of this connection is in progress; start it from the connection\'s authorization_url');
  if (body.state !== undefined && body.state !== null) {
    const check = verifyState(deps.config, body.state, { connectionId: row.id, organizationId: row.organization_id, nonce: row.oauth_state_nonce });
    if (!check.ok) throw bodyIssue('state', `is not valid for this connection: ${check.reason}`);
  }
  const codeVerifier = pkceVerifier(deps.config, { connectionId: row.id, nonce: row.oauth_state_nonce });
  let settings = row.settings;
  if (body.provider_name === 'quickbooks_online') {
    const realmId = realmIdFrom(body.extra_data);
    if (!realmId) throw new ValidationError([{ loc: ['body', 'extra_data', 'realm_id'], msg: 'QuickBooks sends realmId (the company) on the redirect; pass it as extra_data.realm_id', type: 'missing' }]);
    settings = { ...settings, realm_id: realmId };
  }
  let tokens: ConnectionSecrets;
  try {
    tokens = await requestTokens(deps.config, row.provider_name, settings, { grant_type: 'authorization_code', code: body.authorization_code, redirect_uri: redirectUri, code_verifier: codeVerifier });
  } catch (e) {
    if (e instanceof OAuthRefusedError) throw new AuthenticationRefusedError(describeRefusal(display, e));
    if (e instanceof ProviderUnreachableError) throw new UpstreamError(502, `${display}'s token endpoint could not be reached: ${e.causeText}.`);
    if (e instanceof OAuthProviderError) {
      if (e.httpStatus === 0) throw new ConflictError(`${display} cannot be authenticated: ${e.message}.`);
      throw new UpstreamError(502, `${display}'s token endpoint failed: ${e.message}.`);
    }
    throw e;
  }
  return deps.db.transaction(async (trx) => {
    const locked = await lockConnection(trx, row.organization_id, row.id);
    if (!locked) throw new NotFoundError(`No connection ${row.id}.`);
    return (await updateConnection(trx, row.organization_id, row.id, {
      settings,
      secrets: sealSecrets(deps.config, locked, tokens),
      is_authentication_pending: false,
      // The state's nonce is spent: the same authorization_url cannot authenticate again.
      oauth_state_nonce: newStateNonce(),
    }))!;
  });
}

export async function authenticateConnection(deps: Deps, organizationId: string, id: string, body: AuthenticateBody): Promise<ConnectionView> {
  const row = await findConnection(deps, organizationId, id);
  if (body.provider_name !== row.provider_name) {
    throw bodyIssue('provider_name', `is ${body.provider_name}, but connection ${id} is a ${row.provider_name} connection`);
  }
  const runtime = requireProviderRuntime(row.provider_name);
  const display = runtime.descriptor.display_name;

  if ('authorization_code' in body) {
    const authenticated = await authenticateOAuth(deps, row, runtime, body);
    const result = await runHealthCheck(deps, authenticated);
    const updated = (await updateConnectionHealth(deps, organizationId, id, { health: result.health })) ?? authenticated;
    await syncSchedule(deps, updated);
    return connectionViewOf(deps, updated);
  }

  // API key / username and password: check the candidate credentials with a real call first.
  let previous: ConnectionSecrets = {};
  try {
    previous = connectionSecrets(deps.config, row);
  } catch {
    previous = {};
  }
  const secrets: ConnectionSecrets =
    body.provider_name === 'stripe' ? { ...previous, api_key: body.api_key } : { ...previous, username: body.username, password: body.password };
  const sealed = sealSecrets(deps.config, row, secrets);
  const result = await runHealthCheck(deps, { ...row, secrets: sealed });
  if (result.health.authentication_required) {
    throw new AuthenticationRefusedError(`${display} refused the credentials: ${result.health.message} The connection is unchanged.`);
  }
  const updated = (await updateConnectionHealth(deps, organizationId, id, {
    secrets: sealed,
    health: result.health,
    ...(result.credentialsVerified ? { is_authentication_pending: false } : {}),
  }))!;
  await syncSchedule(deps, updated);
  return connectionViewOf(deps, updated);
}
