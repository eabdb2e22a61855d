/**
 * Secrets at rest: AES-256-GCM envelopes, the kernel's one scheme for every service that stores a
 * secret it must read back (integrations: provider credentials; admin: the mailbox's domain-send
 * API key). Secrets that are only ever compared (access tokens, invite tokens) are hashed instead.
 *
 * Envelope: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id is the first 8 hex
 * digits of SHA-256 of the key, so a rotated key (CONNECTION_SECRETS_KEY new, the old one in
 * CONNECTION_SECRETS_PREVIOUS_KEYS) still opens old envelopes while new writes use the new key.
 * The additional authenticated data (`aad`) binds an envelope to the record it belongs to, and each
 * caller prefixes it with its own kind (`connection:…`, `mailbox-settings:…`): a ciphertext copied
 * onto another row, or into another kind of record, does not decrypt.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/** The key settings, as parsed by {@link secretsKeyConfigShape}. */
export interface SecretsKeyConfig {
  CONNECTION_SECRETS_KEY: string;
  CONNECTION_SECRETS_PREVIOUS_KEYS?: string[];
}

/** 32 bytes in standard or URL-safe base64 (AES-256 key). */
export const aesKeySchema = () =>
  z
    .string()
    .refine((v) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded in base64');

/**
 * Environment of a service that stores secrets. The variable keeps its historical name (it first
 * encrypted connection secrets); every service that stores secrets reads the same key.
 */
export const secretsKeyConfigShape = {
  /**
   * AES-256-GCM key for secrets at rest (32 bytes, base64). Its key id (first 8 hex digits of its
   * SHA-256) prefixes every envelope, so the key can be rotated: put the old key in
   * CONNECTION_SECRETS_PREVIOUS_KEYS and new writes use the new one.
   */
  CONNECTION_SECRETS_KEY: aesKeySchema(),
  /** Comma-separated earlier keys (base64), still accepted for decryption. */
  CONNECTION_SECRETS_PREVIOUS_KEYS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(aesKeySchema())),
};

interface Keyring {
  current: { id: string; key: Buffer };
  byId: Map<string, Buffer>;
}

const keyrings = new WeakMap<object, Keyring>();

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function keyring(config: SecretsKeyConfig): Keyring {
  let ring = keyrings.get(config);
  if (!ring) {
    const current = Buffer.from(config.CONNECTION_SECRETS_KEY, 'base64');
    const byId = new Map<string, Buffer>();
    for (const k of [current, ...(config.CONNECTION_SECRETS_PREVIOUS_KEYS ?? []).map((p) => Buffer.from(p, 'base64'))]) byId.set(keyId(k), k);
    ring = { current: { id: keyId(current), key: current }, byId };
    keyrings.set(config, ring);
  }
  return ring;
}

/** Thrown when an envelope cannot be opened; its message names no secret. */
export class SecretsUnreadableError extends Error {}

/** Encrypts `plaintext` for the record named by `aad`. */
export function sealSecret(config: SecretsKeyConfig, aad: string, plaintext: string): string {
  const { id, key } = keyring(config).current;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', id, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
}

/** Opens an envelope of {@link sealSecret} bound to the same `aad`; throws SecretsUnreadableError otherwise. */
export function openSecret(config: SecretsKeyConfig, aad: string, envelope: string, what = 'secrets'): string {
  const parts = envelope.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1') throw new SecretsUnreadableError(`The stored ${what} envelope is malformed.`);
  const key = keyring(config).byId.get(parts[1]);
  if (!key) throw new SecretsUnreadableError(`The stored ${what} were encrypted with key ${parts[1]}, which is not configured (CONNECTION_SECRETS_KEY / CONNECTION_SECRETS_PREVIOUS_KEYS).`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[2], 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(parts[4], 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretsUnreadableError(`The stored ${what} do not decrypt with the configured key (tampered, or bound to another record).`);
  }
}

/** Key id of an envelope, for re-encryption after rotation. */
export function envelopeKeyId(envelope: string | null): string | null {
  return envelope?.split('.')[1] ?? null;
}
