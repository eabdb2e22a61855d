import type { CredentialResolver, Identity } from '@rp/platform';
import { looksLikeToken, signIdentity, UnauthorizedError } from '@rp/platform';

/** Authenticate the bearer token; every failure is a 401 that says which problem it was. */
export async function authenticate(header: string | undefined, resolver: CredentialResolver): Promise<Identity> {
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
    perms: c.permissions,
    iat: Math.floor(Date.now() / 1000),
  };
}

/**
 * Signs identities for the services. The signature of a credential's identity only changes with
 * `iat` (whole seconds), so it is computed once per credential per second, not per request.
 */
export class IdentitySigner {
  private readonly cache = new Map<string, { identity: Identity; signed: string }>();

  constructor(private readonly secret: string) {}

  sign(identity: Identity): string {
    const hit = this.cache.get(identity.cred);
    if (hit && sameIdentity(hit.identity, identity)) return hit.signed;
    const signed = signIdentity(identity, this.secret);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(identity.cred, { identity, signed });
    return signed;
  }
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return (
    a.iat === b.iat &&
    a.org === b.org &&
    a.sub === b.sub &&
    a.role === b.role &&
    a.kind === b.kind &&
    (a.perms ?? []).join(' ') === (b.perms ?? []).join(' ') &&
    (a.bu === b.bu || (Array.isArray(a.bu) && Array.isArray(b.bu) && a.bu.length === b.bu.length && a.bu.every((v, i) => v === (b.bu as string[])[i])))
  );
}
