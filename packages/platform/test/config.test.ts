import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, commonConfigSchema, loadConfig, formatMoney, parseMoney, sumMoney } from '@rp/platform';

describe('configuration from the environment', () => {
  const good = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', IDENTITY_SECRET: 'x'.repeat(32) };

  it('applies defaults', () => {
    const c = loadConfig(commonConfigSchema, good);
    expect(c).toMatchObject({ TEMPORAL_ADDRESS: '127.0.0.1:7233', TEMPORAL_NAMESPACE: 'default', BODY_LIMIT_BYTES: 1048576, TEMPORAL_TLS: false });
  });

  it('stops with a message naming each bad variable, without echoing secrets', () => {
    let err: unknown;
    try {
      loadConfig(commonConfigSchema, { ...good, DATABASE_URL: 'mysql://x', IDENTITY_SECRET: 'short-secret', TEMPORAL_ADDRESS: 'nope' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(/DATABASE_URL: must be a postgres:\/\/ URL \(got "mysql:\/\/x"\)/);
    expect(message).toMatch(/IDENTITY_SECRET: must be at least 32 characters \(got "\*\*\*"\)/);
    expect(message).toMatch(/TEMPORAL_ADDRESS/);
    expect(message).not.toContain('short-secret');
  });

  it('names a missing required variable', () => {
    expect(() => loadConfig(z.object({ NEEDED: z.string() }), {})).toThrow(/NEEDED: .*not set/);
  });
});

describe('money', () => {
  it('adds exactly to the cent', () => {
    expect(sumMoney(['0.10', '0.20', '0.30']).toFixed(2)).toBe('0.60');
    expect(formatMoney(sumMoney(Array(1000).fill('0.01')))).toBe('10.00');
    expect(formatMoney('2.005')).toBe('2.01');
  });
  it('parses decimal strings strictly', () => {
    expect(parseMoney('1234.56').toString()).toBe('1234.56');
    for (const bad of ['1e3', ' 1', '1,00', '', 'abc', '1.']) expect(() => parseMoney(bad)).toThrow();
  });
});
