/**
 * Provider secrets at rest: AES-256-GCM envelopes.
 *
 * Envelope: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id is the first 8 hex
 * digits of SHA-256 of the key, so a rotated key (CONNECTION_SECRETS_KEY new, the old one in
 * CONNECTION_SECRETS_PREVIOUS_KEYS) still opens old envelopes while new writes use the new key.
 * The additional authenticated data binds an envelope to its connection and organization: a
 * ciphertext copied onto another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IntegrationsConfig } from '../config.js';

/** What a connection may hold as secrets; every field optional, per auth type. */
export interface ConnectionSecrets {
  access_token?: string;
  refresh_token?: string;
  /** ISO time the access token expires */
  expires_at?: string;
  /** ISO time the refresh token expires (QuickBooks: x_refresh_token_expires_in) */
  refresh_expires_at?: string | null;
  token_type?: string;
  scope?: string | null;
  api_key?: string;
  username?: string;
  password?: string;
}

interface Keyring {
  current: { id: string; key: Buffer };
  byId: Map<string, Buffer>;
}

const keyrings = new WeakMap<object, Keyring>();

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function keyring(config: Pick<IntegrationsConfig, 'CONNECTION_SECRETS_KEY' | 'CONNECTION_SECRETS_PREVIOUS_KEYS'>): Keyring {
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

function aad(binding: { organizationId: string; connectionId: string }): Buffer {
  return Buffer.from(`connection:${binding.organizationId}:${binding.connectionId}`);
}

type KeyConfig = Pick<IntegrationsConfig, 'CONNECTION_SECRETS_KEY' | 'CONNECTION_SECRETS_PREVIOUS_KEYS'>;

export function encryptSecrets(config: KeyConfig, binding: { organizationId: string; connectionId: string }, secrets: ConnectionSecrets): string {
  const { id, key } = keyring(config).current;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(binding));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', id, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
}

export class SecretsUnreadableError extends Error {}

export function decryptSecrets(config: KeyConfig, binding: { organizationId: string; connectionId: string }, envelope: string | null): ConnectionSecrets {
  if (!envelope) return {};
  const parts = envelope.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1') throw new SecretsUnreadableError('The stored secrets envelope is malformed.');
  const key = keyring(config).byId.get(parts[1]);
  if (!key) throw new SecretsUnreadableError(`The stored secrets were encrypted with key ${parts[1]}, which is not configured (CONNECTION_SECRETS_KEY / CONNECTION_SECRETS_PREVIOUS_KEYS).`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[2], 'base64url'));
    decipher.setAAD(aad(binding));
    decipher.setAuthTag(Buffer.from(parts[4], 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as ConnectionSecrets;
  } catch {
    throw new SecretsUnreadableError('The stored secrets do not decrypt with the configured key (tampered, or bound to another connection).');
  }
}

/** Key id of the envelope, for re-encryption after rotation. */
export function envelopeKeyId(envelope: string | null): string | null {
  return envelope?.split('.')[1] ?? null;
}

/**
 * A separate HMAC key for OAuth `state`, derived from the secrets key (so no second key has to be
 * configured, and a state never doubles as anything encrypted).
 */
export function stateSigningKey(config: KeyConfig): Buffer {
  return createHmac('sha256', Buffer.from(config.CONNECTION_SECRETS_KEY, 'base64')).update('oauth-state-v1').digest();
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
