import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envelopeKeyId, openSecret, sealSecret, secretsKeyConfigShape, SecretsUnreadableError } from '../src/secrets.js';

const keyA = Buffer.alloc(32, 11).toString('base64');
const keyB = Buffer.alloc(32, 12).toString('base64');
const config = (current: string, previous = '') => z.object(secretsKeyConfigShape).parse({ CONNECTION_SECRETS_KEY: current, CONNECTION_SECRETS_PREVIOUS_KEYS: previous });

describe('kernel secrets (AES-256-GCM envelopes)', () => {
  it('seals with a fresh IV, opens only for the same record, never shows the plaintext', () => {
    const c = config(keyA);
    const a = sealSecret(c, 'mailbox-settings:org-1:key', 'sk-plain-text-123');
    const b = sealSecret(c, 'mailbox-settings:org-1:key', 'sk-plain-text-123');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain('plain-text');
    expect(openSecret(c, 'mailbox-settings:org-1:key', a)).toBe('sk-plain-text-123');
    expect(() => openSecret(c, 'mailbox-settings:org-2:key', a)).toThrow(SecretsUnreadableError);
    expect(() => openSecret(c, 'connection:org-1:key', a)).toThrow(SecretsUnreadableError);
    expect(() => openSecret(c, 'mailbox-settings:org-1:key', 'v2.x.y.z.w')).toThrow(/malformed/);
  });

  it('rotates: previous keys still open old envelopes; new ones use the current key', () => {
    const old = sealSecret(config(keyA), 'r', 'secret');
    const rotated = config(keyB, keyA);
    expect(openSecret(rotated, 'r', old)).toBe('secret');
    expect(envelopeKeyId(sealSecret(rotated, 'r', 'secret'))).not.toBe(envelopeKeyId(old));
    expect(() => openSecret(config(keyB), 'r', old)).toThrow(new RegExp(envelopeKeyId(old)!));
  });

  it('requires a 32-byte base64 key', () => {
    expect(() => config(Buffer.alloc(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => config(keyA, 'short')).toThrow(/32 bytes/);
  });
});
