/**
 * Organization API keys: credentials of kind `api_key` that authenticate integration middleware.
 * The key is answered once, at creation; only its SHA-256 hash is stored (store/credentials.ts).
 */
import { NotFoundError, ValidationError, type Db, type Identity } from '@rp/platform';
import { issueCredential, listCredentials, revokeCredential, type CredentialRow } from '../store/credentials.js';

/** A page of the organization's API keys, oldest first. */
export async function apiKeysOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listCredentials(db, organizationId, 'api_key', page.offset, page.pageSize);
}

/** Issues a key for the organization; an expiry not in the future is 422 at `expires_at`. */
export async function createApiKey(
  { db }: { db: Db },
  identity: Pick<Identity, 'org' | 'sub'>,
  input: { name: string; expires_at?: string | null },
): Promise<{ row: CredentialRow; token: string }> {
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw new ValidationError([{ loc: ['body', 'expires_at'], msg: 'must be in the future', type: 'value_error' }]);
  }
  return issueCredential(db, { organizationId: identity.org, kind: 'api_key', name: input.name, expiresAt, createdBy: identity.sub });
}

/** Revokes the key (again: harmless, the first revocation time is kept); 404 when it is not a key of the organization. */
export async function revokeApiKey({ db }: { db: Db }, organizationId: string, id: string): Promise<CredentialRow> {
  const row = await revokeCredential(db, organizationId, id, 'api_key');
  if (!row) throw new NotFoundError(`No API key ${id}.`);
  return row;
}
