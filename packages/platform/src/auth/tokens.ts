import { createHash, randomBytes } from 'node:crypto';

export type CredentialKind = 'user' | 'api_key';

const PREFIX: Record<CredentialKind, string> = { user: 'rpu_', api_key: 'rpk_' };

/** A new bearer token: a kind prefix and 32 random bytes (base64url). Shown once, stored only as its hash. */
export function generateToken(kind: CredentialKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** SHA-256 of the token: tokens carry 256 bits of entropy, so a fast hash is the right tool. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The first characters of a token, safe to show so a user can tell their credentials apart. */
export function tokenHint(token: string): string {
  return token.slice(0, 10);
}

const TOKEN_RE = /^rp[uk]_[A-Za-z0-9_-]{43}$/;

export function looksLikeToken(token: string): boolean {
  return TOKEN_RE.test(token);
}
