import { describe, expect, it } from 'vitest';
import { decryptSecrets, encryptSecrets, SecretsUnreadableError } from '../src/domain/secrets.js';
import { signState, verifyState } from '../src/domain/oauth.js';
import { loadIntegrationsConfig } from '../src/config.js';

const keyA = Buffer.alloc(32, 1).toString('base64');
const keyB = Buffer.alloc(32, 2).toString('base64');
const base = { DATABASE_URL: 'postgres://u:p@localhost/db', IDENTITY_SECRET: 'x'.repeat(32) };
const configA = loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyA });
const binding = { organizationId: '0190a000-0000-7000-8000-000000000001', connectionId: '0190a000-0000-7000-8000-000000000002' };
const secrets = { access_token: 'at-very-secret', refresh_token: 'rt-very-secret', expires_at: '2030-01-01T00:00:00.000Z' };

describe('connection secrets (AES-256-GCM envelopes)', () => {
  it('round-trips, with a fresh IV each time and no plaintext in the envelope', () => {
    const e1 = encryptSecrets(configA, binding, secrets);
    const e2 = encryptSecrets(configA, binding, secrets);
    expect(e1).not.toBe(e2);
    expect(e1).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(e1).not.toContain('very-secret');
    expect(decryptSecrets(configA, binding, e1)).toEqual(secrets);
    expect(decryptSecrets(configA, binding, null)).toEqual({});
  });

  it('refuses a tampered envelope and one copied onto another connection', () => {
    const e = encryptSecrets(configA, binding, secrets);
    const parts = e.split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    expect(() => decryptSecrets(configA, binding, [...parts.slice(0, 3), flipped.toString('base64url'), parts[4]].join('.'))).toThrow(SecretsUnreadableError);
    expect(() => decryptSecrets(configA, { ...binding, connectionId: '0190a000-0000-7000-8000-000000000003' }, e)).toThrow(SecretsUnreadableError);
    expect(() => decryptSecrets(configA, binding, 'garbage')).toThrow(SecretsUnreadableError);
  });

  it('rotates: a new key still opens envelopes of a previous key, and a removed key is named', () => {
    const old = encryptSecrets(configA, binding, secrets);
    const rotated = loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyB, CONNECTION_SECRETS_PREVIOUS_KEYS: keyA });
    expect(decryptSecrets(rotated, binding, old)).toEqual(secrets);
    const fresh = encryptSecrets(rotated, binding, secrets);
    expect(fresh.split('.')[1]).not.toBe(old.split('.')[1]);
    const withoutA = loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyB });
    expect(() => decryptSecrets(withoutA, binding, old)).toThrow(new RegExp(old.split('.')[1]));
  });

  it('requires a 32-byte base64 key', () => {
    expect(() => loadIntegrationsConfig(base)).toThrow(/CONNECTION_SECRETS_KEY/);
    expect(() => loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
    expect(() => loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyA, OAUTH_CLIENTS: '{not json' })).toThrow(/OAUTH_CLIENTS/);
    expect(() => loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyA, OAUTH_CLIENTS: '{"quickbooks_online":{"client_id":"x"}}' })).toThrow(/OAUTH_CLIENTS/);
    // A bad value is never echoed: it holds client secrets.
    let message = '';
    try {
      loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: 'short', OAUTH_CLIENTS: '{"quickbooks_online":{"client_secret":"hush-hush"}}' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/OAUTH_CLIENTS/);
    expect(message).not.toContain('hush-hush');
    expect(message).not.toContain('short');
  });
});

describe('OAuth state', () => {
  const expected = { connectionId: binding.connectionId, organizationId: binding.organizationId, nonce: 'n1' };
  const now = 1_800_000_000;
  const state = signState(configA, { ...expected, expiresAt: now + 60 });

  it('verifies for its connection, organization and nonce until it expires', () => {
    expect(verifyState(configA, state, expected, now)).toEqual({ ok: true });
    expect(verifyState(configA, state, expected, now + 61)).toMatchObject({ ok: false, reason: expect.stringMatching(/expired/) });
    expect(verifyState(configA, state, { ...expected, nonce: 'n2' }, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/used|superseded/) });
    expect(verifyState(configA, state, { ...expected, organizationId: 'other' }, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/another connection/) });
  });

  it('is refused when signed with another key or altered', () => {
    const configB = loadIntegrationsConfig({ ...base, CONNECTION_SECRETS_KEY: keyB });
    expect(verifyState(configB, state, expected, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/signature/) });
    const [payload, mac] = state.split('.');
    const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), e: now + 99999 })).toString('base64url');
    expect(verifyState(configA, `${altered}.${mac}`, expected, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/signature/) });
    expect(verifyState(configA, 'nodot', expected, now).ok).toBe(false);
  });
});
