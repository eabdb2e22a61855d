/**
 * Provider secrets at rest: AES-256-GCM envelopes of the kernel's secrets scheme
 * (packages/platform/src/secrets.ts), one JSON object per connection.
 *
 * Envelope: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id is the first 8 hex
 * digits of SHA-256 of the key, so a rotated key (CONNECTION_SECRETS_KEY new, the old one in
 * CONNECTION_SECRETS_PREVIOUS_KEYS) still opens old envelopes while new writes use the new key.
 * The additional authenticated data binds an envelope to its connection and organization: a
 * ciphertext copied onto another row does not decrypt.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { openSecret, sealSecret, type SecretsKeyConfig } from '@rp/platform';

export { envelopeKeyId, SecretsUnreadableError } from '@rp/platform';

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

type KeyConfig = SecretsKeyConfig;

function aad(binding: { organizationId: string; connectionId: string }): string {
  return `connection:${binding.organizationId}:${binding.connectionId}`;
}

export function encryptSecrets(config: KeyConfig, binding: { organizationId: string; connectionId: string }, secrets: ConnectionSecrets): string {
  return sealSecret(config, aad(binding), JSON.stringify(secrets));
}

export function decryptSecrets(config: KeyConfig, binding: { organizationId: string; connectionId: string }, envelope: string | null): ConnectionSecrets {
  if (!envelope) return {};
  return JSON.parse(openSecret(config, aad(binding), envelope, 'secrets')) as ConnectionSecrets;
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
