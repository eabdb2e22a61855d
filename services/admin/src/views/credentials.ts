/** A credential (API key or user access token) as the API shows it: the token only in the answer that issues it, never its hash. */
import { isoTime } from '@rp/platform';
import type { CredentialRow } from '../store/credentials.js';

export function credentialView(row: CredentialRow, token?: string) {
  return {
    object: row.kind === 'api_key' ? ('api_key' as const) : ('access_token' as const),
    id: row.id,
    name: row.name,
    ...(row.kind === 'user' ? { user_id: row.user_id } : {}),
    token_hint: row.token_hint,
    ...(token ? { token } : {}),
    expires_at: isoTime(row.expires_at),
    revoked_at: isoTime(row.revoked_at),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
