/**
 * POST /v2/integrations/connections/{id}/authenticate (spec 4.3.1): four body variants chosen by
 * `provider_name`:
 * - `quickbooks_online` (OAuth 2.0): authorization_code, redirect_uri (required), state (optional, nullable), extra_data
 *   (QuickBooks returns `realmId` on the redirect: pass it as extra_data.realm_id or extra_data.realmId);
 * - `xero` (OAuth 2.0): authorization_code, redirect_uri (optional: OAUTH_REDIRECT_URI), state (optional, nullable);
 *   without a state, PKCE binds the code to the authorization request (oauth.ts);
 * - `stripe` (API key): api_key (a restricted or secret key);
 * - `jira_service_management` (username/password): username (Atlassian account e-mail), password (API token).
 */
import { z } from 'zod';
import { AppError, ConflictError, emailSchema, UpstreamError, ValidationError } from '@rp/platform';

export const AUTHENTICATE_PROVIDERS = ['quickbooks_online', 'xero', 'stripe', 'jira_service_management'] as const;

const code = z.string().min(1).max(4096).describe('The `code` the provider put on the redirect.');
const state = z
  .string()
  .min(1)
  .max(4096)
  .nullable()
  .optional()
  .describe(
    'Optional, may be null (spec 4.3.1). When sent, it must be the `state` the provider echoed on the redirect (from the connection\'s current ' +
      '`authorization_url`): it binds the code to this connection and this authorization request (CSRF, RFC 6749 §10.12); another or a spent one → 422. ' +
      'Without it the code is bound by PKCE (RFC 7636, S256): the `authorization_url` carries a `code_challenge` and the code exchange sends its secret ' +
      'verifier, so a provider that implements PKCE (Xero, Microsoft) refuses a code issued for any other authorization request (422 authentication-refused). ' +
      'QuickBooks Online does not document PKCE: there, a client that omits `state` must protect its redirect endpoint against CSRF itself (RFC 9700 §4.7.1); sending it is recommended.',
  );

export const authenticateBodySchema = z.discriminatedUnion('provider_name', [
  z.strictObject({
    provider_name: z.literal('quickbooks_online'),
    authorization_code: code,
    redirect_uri: z.string().max(2048).url().describe('The redirect URI of the authorization request (must equal OAUTH_REDIRECT_URI when that is configured); at most 2048 characters.'),
    state,
    extra_data: z
      .record(z.string().max(100), z.unknown())
      .nullable()
      .optional()
      .describe('Other redirect parameters (names of at most 100 characters); QuickBooks sends `realmId` (the company), required here as `realm_id` or `realmId`.'),
  }),
  z.strictObject({
    provider_name: z.literal('xero'),
    authorization_code: code,
    redirect_uri: z.string().max(2048).url().optional().describe('Defaults to the platform\'s OAUTH_REDIRECT_URI; at most 2048 characters.'),
    state,
  }),
  z.strictObject({
    provider_name: z.literal('stripe'),
    api_key: z.string().min(8).max(500).describe('A Stripe restricted (rk_…) or secret (sk_…) key.'),
  }),
  z.strictObject({
    provider_name: z.literal('jira_service_management'),
    username: emailSchema().describe('E-mail of the Atlassian account.'),
    password: z.string().min(1).max(500).describe('An Atlassian API token of that account.'),
  }),
]);
export type AuthenticateBody = z.infer<typeof authenticateBodySchema>;

/** The provider refused the credentials or the authorization code: 422, the connection stays pending. */
export class AuthenticationRefusedError extends AppError {
  constructor(detail: string) {
    super({ status: 422, type: 'authentication-refused', title: 'The provider refused the authentication', detail });
  }
}

export function bodyIssue(field: string, msg: string, type = 'value_error'): ValidationError {
  return new ValidationError([{ loc: ['body', field], msg, type }], msg);
}

export { ConflictError, UpstreamError };

export function realmIdFrom(extra: Record<string, unknown> | null | undefined): string | null {
  const v = extra?.realm_id ?? extra?.realmId;
  return typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : null;
}
