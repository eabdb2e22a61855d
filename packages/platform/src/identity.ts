import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * The caller's identity as established by the gateway and forwarded to services in the
 * `x-rp-identity` header: `<base64url(JSON payload)>.<base64url(HMAC-SHA256(service key, "METHOD target\n" + payload))>`
 * (see IdentityBinding and deriveIdentityKey).
 */
export const IDENTITY_HEADER = 'x-rp-identity';
export const REQUEST_ID_HEADER = 'x-request-id';

export const identitySchema = z.object({
  /** organization id */
  org: z.string(),
  /** user id; null for organization API keys */
  sub: z.string().nullable(),
  role: z.enum(['admin', 'member']).nullable(),
  /**
   * credential kind; `anonymous` for the few public routes the gateway lets through without a bearer
   * token (route `auth.public`, e.g. accepting a user invite): then `org` is '' and `cred` 'anonymous'
   */
  kind: z.enum(['user', 'api_key', 'anonymous']),
  /** credential id */
  cred: z.string(),
  /** business units the caller may access: '*' for all */
  bu: z.union([z.literal('*'), z.array(z.string())]),
  /** permissions granted to a member (auth/permissions.ts); admins hold all implicitly, API keys none */
  perms: z.array(z.string()).optional(),
  /** issued at, seconds since epoch (the request id travels in its own header, x-request-id) */
  iat: z.number().int(),
});
export type Identity = z.infer<typeof identitySchema>;

/**
 * What a signature is bound to besides the payload: the HTTP method and the request target (path
 * and query, exactly as sent on the wire). The target service is bound by the key itself: each
 * service verifies with its own key (`deriveIdentityKey`), so an identity captured for one
 * request cannot be replayed with another method, on another path or against another service.
 */
export interface IdentityBinding {
  method: string;
  /** path and query as on the request line (`/v2/users/me?x=1`) */
  target: string;
}

/**
 * The key of one service: HKDF-SHA256 of the shared IDENTITY_SECRET with the service name as
 * `info`. Derive it once at start-up (the gateway keeps one per service), never per request.
 */
export function deriveIdentityKey(secret: string, service: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'rp-identity-v1', `service:${service}`, 32));
}

function mac(key: Buffer, payload: string, binding: IdentityBinding): string {
  return createHmac('sha256', key).update(`${binding.method.toUpperCase()} ${binding.target}\n`).update(payload).digest('base64url');
}

/** The payload half of the header (base64url JSON); the gateway caches it per credential and second. */
export function encodeIdentity(identity: Identity): string {
  return Buffer.from(JSON.stringify(identity)).toString('base64url');
}

/** Sign an encoded payload for one request to the service whose key is given. */
export function signEncodedIdentity(payload: string, key: Buffer, binding: IdentityBinding): string {
  return `${payload}.${mac(key, payload, binding)}`;
}

export function signIdentity(identity: Identity, key: Buffer, binding: IdentityBinding): string {
  return signEncodedIdentity(encodeIdentity(identity), key, binding);
}

export type IdentityCheck = { ok: true; identity: Identity } | { ok: false; reason: string };

export function verifyIdentity(
  header: string | undefined,
  key: Buffer,
  binding: IdentityBinding,
  maxAgeSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): IdentityCheck {
  if (!header) return { ok: false, reason: 'missing signed identity' };
  const dot = header.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'malformed signed identity' };
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1));
  const expected = Buffer.from(mac(key, payload, binding));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad identity signature (other key, method, path or service)' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed identity payload' };
  }
  const result = identitySchema.safeParse(parsed);
  if (!result.success) return { ok: false, reason: 'malformed identity payload' };
  if (Math.abs(nowSeconds - result.data.iat) > maxAgeSeconds) return { ok: false, reason: 'identity outside its time window' };
  return { ok: true, identity: result.data };
}

/** The identity the gateway signs for a public route (no bearer token): no organization, no user. */
export function anonymousIdentity(nowSeconds = Math.floor(Date.now() / 1000)): Identity {
  return { org: '', sub: null, role: null, kind: 'anonymous', cred: 'anonymous', bu: [], perms: [], iat: nowSeconds };
}

/** Whether the identity may see records of the given business unit (null = not tied to a unit). */
export function canAccessBusinessUnit(identity: Identity, businessUnitId: string | null): boolean {
  if (identity.bu === '*' || businessUnitId === null) return true;
  return identity.bu.includes(businessUnitId);
}
