/**
 * The per-organization inbound secret of the provider endpoint POST /v2/inbound/email/{organization_id}.
 * Issued (and re-issued) by an admin, shown once, stored as its SHA-256 hash: a rotation replaces the
 * old secret at once. A provider presents it as the password of HTTP Basic (any user name; SendGrid's
 * Inbound Parse takes it in the destination URL `https://inbound:<secret>@host/...`) or in the
 * `X-Inbound-Secret` header; never in the query string, where it would be logged.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { NotFoundError, type Db } from '@rp/platform';
import { getInboundSecretHash, setInboundSecretHash } from '../store/inbound.js';

/** Prefix of inbound secrets (`rpin_` and 43 base64url characters: 256 random bits). */
export const INBOUND_SECRET_PREFIX = 'rpin_';
export const INBOUND_SECRET_HEADER = 'x-inbound-secret';

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Issues a new secret for the organization, replacing any earlier one; the secret itself is returned once and never stored. */
export async function rotateInboundSecret(deps: { db: Db }, organizationId: string): Promise<{ secret: string; rotated_at: Date }> {
  const secret = INBOUND_SECRET_PREFIX + randomBytes(32).toString('base64url');
  const row = await setInboundSecretHash(deps.db, organizationId, hashSecret(secret));
  if (!row) throw new NotFoundError('Organization');
  return { secret, rotated_at: row.inbound_secret_rotated_at };
}

/** The secret a request presents: the HTTP Basic password, else the X-Inbound-Secret header; null when neither. */
export function presentedSecret(headers: { authorization?: string; [INBOUND_SECRET_HEADER]?: string | string[] }): string | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]{1,2048})\s*$/i.exec(headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0 && decoded.length > colon + 1) return decoded.slice(colon + 1);
  }
  const header = headers[INBOUND_SECRET_HEADER];
  const value = Array.isArray(header) ? header[0] : header;
  return value && value.length <= 1024 ? value.trim() : null;
}

/** Whether `presented` is the organization's current secret (false when it has none, or does not exist). */
export async function verifyInboundSecret(deps: { db: Db }, organizationId: string, presented: string | null): Promise<boolean> {
  if (!presented) return false;
  const stored = await getInboundSecretHash(deps.db, organizationId);
  if (!stored) return false;
  return timingSafeEqual(stored, hashSecret(presented));
}
