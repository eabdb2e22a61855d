import type { CredentialResolver, Identity } from '@rp/platform';
import { looksLikeToken, UnauthorizedError } from '@rp/platform';

/** Authenticate the bearer token; every failure is a 401 that says which problem it was. */
export async function authenticate(header: string | undefined, resolver: CredentialResolver, requestId: string): Promise<Identity> {
  if (!header) throw new UnauthorizedError('Missing Authorization header; send "Authorization: Bearer <token>".');
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match) throw new UnauthorizedError('Malformed Authorization header; expected "Bearer <token>".');
  const token = match[1];
  if (!looksLikeToken(token)) throw new UnauthorizedError('The bearer token is not valid.');
  const result = await resolver.resolve(token);
  if (result.status === 'unknown') throw new UnauthorizedError('The bearer token is not valid or has been revoked.');
  if (result.status === 'expired') throw new UnauthorizedError('The bearer token has expired.');
  const c = result.credential;
  return {
    org: c.organizationId,
    sub: c.userId,
    role: c.role,
    kind: c.kind,
    cred: c.credentialId,
    bu: c.businessUnits,
    iat: Math.floor(Date.now() / 1000),
    rid: requestId,
  };
}
