/**
 * The OAuth 2.0 token endpoint call (RFC 6749 §4.1.3 and §6): the grant POSTed form-encoded with
 * HTTP Basic client authentication, and the answer read as a token response or a refusal (§5.2).
 * Redirects are not followed: the credentials and the grant go to the registered URL or nowhere.
 */
import { z } from 'zod';
import type { IntegrationsConfig, OAuthClient } from '../config.js';
import { basicAuth, providerFetch } from './provider-client.js';

export type TokenGrant =
  | { grant_type: 'authorization_code'; code: string; redirect_uri: string; code_verifier?: string }
  | { grant_type: 'refresh_token'; refresh_token: string };

/** The token endpoint refused the grant (RFC 6749 §5.2: invalid_grant, invalid_client, …). */
export class OAuthRefusedError extends Error {
  constructor(
    readonly providerError: string,
    readonly description: string | null,
    readonly httpStatus: number,
  ) {
    super(`the token endpoint refused the grant: ${providerError}${description ? ` (${description})` : ''}`);
    this.name = 'OAuthRefusedError';
  }
}

/** The token endpoint answered, but not with a usable token response (5xx, HTML, missing fields). */
export class OAuthProviderError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
  ) {
    super(message);
    this.name = 'OAuthProviderError';
  }
}

const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive(),
  refresh_token: z.string().min(1).optional(),
  x_refresh_token_expires_in: z.coerce.number().positive().optional(),
  scope: z.string().optional(),
});

const tokenErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

export type TokenResponse = z.infer<typeof tokenResponseSchema>;

/** POST the grant to `tokenUrl`; the token response, or OAuthRefusedError (4xx) / OAuthProviderError (anything else unusable). */
export async function postTokenGrant(
  config: Pick<IntegrationsConfig, 'PROVIDER_HTTP_TIMEOUT_MS' | 'OUTBOUND_ALLOWLIST'>,
  client: OAuthClient,
  tokenUrl: string,
  grant: TokenGrant,
): Promise<TokenResponse> {
  const res = await providerFetch(tokenUrl, {
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client_id, client.client_secret),
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams(grant as Record<string, string>).toString(),
    timeoutMs: config.PROVIDER_HTTP_TIMEOUT_MS,
    policy: config.OUTBOUND_ALLOWLIST,
    maxRedirects: 0,
  });
  if (res.status >= 400 && res.status < 500) {
    const err = tokenErrorSchema.safeParse(res.json);
    if (err.success) throw new OAuthRefusedError(err.data.error, err.data.error_description ?? null, res.status);
    throw new OAuthRefusedError(`http_${res.status}`, null, res.status);
  }
  if (res.status !== 200) throw new OAuthProviderError(`the token endpoint answered HTTP ${res.status}`, res.status);
  const parsed = tokenResponseSchema.safeParse(res.json);
  if (!parsed.success) throw new OAuthProviderError('the token endpoint answered without a usable token response', res.status);
  return parsed.data;
}
