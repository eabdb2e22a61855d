import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * The caller's identity as established by the gateway and forwarded to services in the
 * `x-rp-identity` header: `<base64url(JSON payload)>.<base64url(HMAC-SHA256(secret, payload))>`.
 */
export const IDENTITY_HEADER = 'x-rp-identity';
export const REQUEST_ID_HEADER = 'x-request-id';

export const identitySchema = z.object({
  /** organization id */
  org: z.string(),
  /** user id; null for organization API keys */
  sub: z.string().nullable(),
  role: z.enum(['admin', 'member']).nullable(),
  /** credential kind */
  kind: z.enum(['user', 'api_key']),
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

function mac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function signIdentity(identity: Identity, secret: string): string {
  const payload = Buffer.from(JSON.stringify(identity)).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

export type IdentityCheck = { ok: true; identity: Identity } | { ok: false; reason: string };

export function verifyIdentity(
  header: string | undefined,
  secret: string,
  maxAgeSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): IdentityCheck {
  if (!header) return { ok: false, reason: 'missing signed identity' };
  const dot = header.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'malformed signed identity' };
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1));
  const expected = Buffer.from(mac(secret, payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad identity signature' };
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

/** Whether the identity may see records of the given business unit (null = not tied to a unit). */
export function canAccessBusinessUnit(identity: Identity, businessUnitId: string | null): boolean {
  if (identity.bu === '*' || businessUnitId === null) return true;
  return identity.bu.includes(businessUnitId);
}
