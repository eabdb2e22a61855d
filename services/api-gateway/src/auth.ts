import type { CredentialResolver, Identity, IdentityBinding, Resolution } from '@rp/platform';
import { deriveIdentityKey, encodeIdentity, looksLikeToken, signEncodedIdentity, UnauthorizedError } from '@rp/platform';

/** The bearer token of an Authorization header; every problem is a 401 that says which it was. */
function bearerToken(header: string | undefined): string {
  if (!header) throw new UnauthorizedError('Missing Authorization header; send "Authorization: Bearer <token>".');
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match) throw new UnauthorizedError('Malformed Authorization header; expected "Bearer <token>".');
  const token = match[1];
  if (!looksLikeToken(token)) throw new UnauthorizedError('The bearer token is not valid.');
  return token;
}

function identityOf(result: Resolution): Identity {
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

/** Authenticate the bearer token (a credential look-up unless cached); every failure is a 401 that says which problem it was. */
export async function authenticate(header: string | undefined, resolver: CredentialResolver): Promise<Identity> {
  return identityOf(await resolver.resolve(bearerToken(header)));
}

/**
 * The identity of a bearer token the gateway already knows to be valid (credential cache), without
 * any look-up; null otherwise. Used for client addresses over their failed-authentication budget.
 */
export function authenticateCached(header: string | undefined, resolver: CredentialResolver): Identity | null {
  let token: string;
  try {
    token = bearerToken(header);
  } catch {
    return null;
  }
  const cached = resolver.cached(token);
  return cached?.status === 'ok' ? identityOf(cached) : null;
}

/**
 * Signs identities for the services. Each service has its own key, derived from IDENTITY_SECRET
 * once here (HKDF with the service name); each signature also covers the request's method and
 * path with query. The payload of a credential's identity only changes with `iat` (whole
 * seconds), so its encoding is cached per credential per second; the HMAC is per request.
 */
export class IdentitySigner {
  private readonly cache = new Map<string, { identity: Identity; payload: string }>();
  private readonly keys: Map<string, Buffer>;

  constructor(secret: string, services: readonly string[]) {
    this.keys = new Map(services.map((s) => [s, deriveIdentityKey(secret, s)]));
  }

  sign(identity: Identity, service: string, binding: IdentityBinding): string {
    const key = this.keys.get(service);
    if (!key) throw new Error(`no identity key for service ${service}`);
    const hit = this.cache.get(identity.cred);
    let payload: string;
    if (hit && sameIdentity(hit.identity, identity)) payload = hit.payload;
    else {
      payload = encodeIdentity(identity);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(identity.cred, { identity, payload });
    }
    return signEncodedIdentity(payload, key, binding);
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
