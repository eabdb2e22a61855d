/**
 * POST /v2/integrations/connections/{id}/authenticate (spec 4.3.1): four body variants chosen by
 * `provider_name`:
 * - `quickbooks_online` (OAuth 2.0): authorization_code, redirect_uri (required), state, extra_data
 *   (QuickBooks returns `realmId` on the redirect: pass it as extra_data.realm_id or extra_data.realmId);
 * - `xero` (OAuth 2.0): authorization_code, redirect_uri (optional: OAUTH_REDIRECT_URI), state;
 * - `stripe` (API key): api_key (a restricted or secret key);
 * - `jira_service_management` (username/password): username (Atlassian account e-mail), password (API token).
 */
import { z } from 'zod';
import { AppError, ConflictError, emailSchema, UpstreamError, ValidationError } from '@rp/platform';

export const AUTHENTICATE_PROVIDERS = ['quickbooks_online', 'xero', 'stripe', 'jira_service_management'] as const;

const code = z.string().min(1).max(4096).describe('The `code` the provider put on the redirect.');
const state = z.string().max(4096).nullable().optional().describe('The `state` the provider echoed on the redirect; verified when given.');

export const authenticateBodySchema = z.discriminatedUnion('provider_name', [
  z.strictObject({
    provider_name: z.literal('quickbooks_online'),
    authorization_code: code,
    redirect_uri: z.string().url().describe('The redirect URI of the authorization request (must equal OAUTH_REDIRECT_URI when that is configured).'),
    state,
    extra_data: z.record(z.string(), z.unknown()).nullable().optional().describe('Other redirect parameters; QuickBooks sends `realmId` (the company), required here as `realm_id` or `realmId`.'),
  }),
  z.strictObject({
    provider_name: z.literal('xero'),
    authorization_code: code,
    redirect_uri: z.string().url().optional().describe('Defaults to the platform\'s OAUTH_REDIRECT_URI.'),
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
