/**
 * OAuth 2.0 authorization-code flow (RFC 6749) as QuickBooks Online and Xero document it:
 * the authorize URL with a signed `state`, and the code exchange and the refresh_token grant at the
 * provider's registered token endpoint (the HTTP call itself is adapters/oauth-tokens.ts).
 *
 * `state` = `<base64url(JSON {c: connection id, o: organization id, e: expiry (s), n: nonce})>.<base64url(HMAC-SHA256)>`.
 * The nonce is the connection's `oauth_state_nonce`; a successful authentication replaces it, so a
 * state is good for one successful exchange.
 *
 * PKCE (RFC 7636, S256) on every authorization request: the authorize URL carries
 * `code_challenge` = BASE64URL(SHA-256(verifier)) and the code exchange sends the verifier, which
 * is HMAC-SHA256(state signing key, "pkce:" + connection id + nonce): secret, bound to the
 * connection's current authorization request, spent with the nonce. A provider that implements PKCE
 * (Xero, the Microsoft identity platform, …) then refuses a code issued for any other authorization
 * request, which is what makes `state` optional on authenticate (spec 4.3.1; RFC 9700 §2.1: PKCE
 * protects the code exchange against CSRF and code injection). A provider without PKCE ignores both
 * parameters (RFC 6749 §3.1: unrecognized parameters are ignored).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IntegrationsConfig, OAuthClient } from '../config.js';
import { oauthScopes, providerUrls, registeredTokenUrl } from './provider-runtime.js';
import { OAuthProviderError, postTokenGrant, type TokenGrant } from '../adapters/oauth-tokens.js';
import { safeEqual, stateSigningKey, type ConnectionSecrets } from './secrets.js';

export { OAuthProviderError, OAuthRefusedError } from '../adapters/oauth-tokens.js';

type OAuthConfig = Pick<
  IntegrationsConfig,
  | 'CONNECTION_SECRETS_KEY'
  | 'CONNECTION_SECRETS_PREVIOUS_KEYS'
  | 'OAUTH_CLIENTS'
  | 'OAUTH_REDIRECT_URI'
  | 'OAUTH_STATE_TTL_SECONDS'
  | 'PROVIDER_URL_OVERRIDES'
  | 'PROVIDER_HTTP_TIMEOUT_MS'
  | 'OUTBOUND_ALLOWLIST'
>;

export function newStateNonce(): string {
  return randomBytes(16).toString('base64url');
}

export function oauthClient(config: Pick<IntegrationsConfig, 'OAUTH_CLIENTS'>, providerName: string): OAuthClient | null {
  return config.OAUTH_CLIENTS[providerName] ?? null;
}

export function signState(config: OAuthConfig, s: { connectionId: string; organizationId: string; nonce: string; expiresAt: number }): string {
  const payload = Buffer.from(JSON.stringify({ c: s.connectionId, o: s.organizationId, e: s.expiresAt, n: s.nonce })).toString('base64url');
  const mac = createHmac('sha256', stateSigningKey(config)).update(payload).digest('base64url');
  return `${payload}.${mac}`;
}

/** The PKCE code_verifier of the connection's current authorization request (43 base64url characters). */
export function pkceVerifier(config: OAuthConfig, c: { connectionId: string; nonce: string }): string {
  return createHmac('sha256', stateSigningKey(config)).update(`pkce:${c.connectionId}:${c.nonce}`).digest('base64url');
}

/** S256 code_challenge of a verifier. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export type StateCheck = { ok: true } | { ok: false; reason: string };

export function verifyState(
  config: OAuthConfig,
  state: string,
  expected: { connectionId: string; organizationId: string; nonce: string | null },
  nowSeconds = Math.floor(Date.now() / 1000),
): StateCheck {
  const dot = state.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'the state is malformed' };
  const payload = state.slice(0, dot);
  const mac = createHmac('sha256', stateSigningKey(config)).update(payload).digest('base64url');
  if (!safeEqual(mac, state.slice(dot + 1))) return { ok: false, reason: 'the state signature is not valid' };
  let parsed: { c?: unknown; o?: unknown; e?: unknown; n?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'the state is malformed' };
  }
  if (parsed.c !== expected.connectionId || parsed.o !== expected.organizationId) return { ok: false, reason: 'the state was issued for another connection' };
  if (typeof parsed.e !== 'number' || parsed.e < nowSeconds) return { ok: false, reason: 'the state has expired; start the authorization again' };
  if (!expected.nonce || parsed.n !== expected.nonce) return { ok: false, reason: 'the state has already been used or was superseded; start the authorization again' };
  return { ok: true };
}

/**
 * The provider's authorize URL for the connection, or null when the provider is not OAuth, no
 * OAuth client or redirect URI is configured, or an instance setting its URL needs is missing.
 */
export function authorizationUrl(
  config: OAuthConfig,
  c: { id: string; organization_id: string; provider_name: string; settings: Record<string, unknown>; oauth_state_nonce: string | null },
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  const client = oauthClient(config, c.provider_name);
  const urls = providerUrls(config, c.provider_name, c.settings);
  if (!client || !config.OAUTH_REDIRECT_URI || !urls.authorize_url || !c.oauth_state_nonce) return null;
  const url = new URL(urls.authorize_url);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', config.OAUTH_REDIRECT_URI);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', oauthScopes(c.provider_name, c.settings));
  url.searchParams.set(
    'state',
    signState(config, { connectionId: c.id, organizationId: c.organization_id, nonce: c.oauth_state_nonce, expiresAt: nowSeconds + config.OAUTH_STATE_TTL_SECONDS }),
  );
  url.searchParams.set('code_challenge', pkceChallenge(pkceVerifier(config, { connectionId: c.id, nonce: c.oauth_state_nonce })));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/**
 * The grant at the provider's registered token endpoint (registeredTokenUrl: configured, never a
 * tenant's host) with the platform's client credentials (adapters/oauth-tokens.ts makes the call);
 * the new secrets (tokens with absolute expiry).
 */
export async function requestTokens(
  config: OAuthConfig,
  providerName: string,
  settings: Record<string, unknown>,
  grant: TokenGrant,
  previous: ConnectionSecrets = {},
  now = Date.now(),
): Promise<ConnectionSecrets> {
  const client = oauthClient(config, providerName);
  if (!client) throw new OAuthProviderError(`no OAuth client is configured for ${providerName} (OAUTH_CLIENTS)`, 0);
  const registered = registeredTokenUrl(config, providerName, settings);
  if ('reason' in registered) throw new OAuthProviderError(registered.reason, 0);
  const t = await postTokenGrant(config, client, registered.url, grant);
  return {
    access_token: t.access_token,
    token_type: t.token_type ?? 'bearer',
    expires_at: new Date(now + t.expires_in * 1000).toISOString(),
    // Providers that rotate refresh tokens return a new one; keep the old one otherwise.
    refresh_token: t.refresh_token ?? previous.refresh_token,
    refresh_expires_at: t.x_refresh_token_expires_in ? new Date(now + t.x_refresh_token_expires_in * 1000).toISOString() : (previous.refresh_expires_at ?? null),
    scope: t.scope ?? previous.scope ?? null,
  };
}
