import { describe, expect, it } from 'vitest';
import { ConfigError, commonConfigSchema, loadConfig, pruneInBatches } from '@rp/platform';

describe('event retention', () => {
  const good = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', IDENTITY_SECRET: 'x'.repeat(32) };

  it('keeps events 30 days unless EVENT_RETENTION_DAYS says otherwise (1..36500)', () => {
    expect(loadConfig(commonConfigSchema, good).EVENT_RETENTION_DAYS).toBe(30);
    expect(loadConfig(commonConfigSchema, { ...good, EVENT_RETENTION_DAYS: '7' }).EVENT_RETENTION_DAYS).toBe(7);
    for (const bad of ['0', '36501', '1.5', 'month']) {
      expect(() => loadConfig(commonConfigSchema, { ...good, EVENT_RETENTION_DAYS: bad }), bad).toThrow(ConfigError);
    }
  });

  it('deletes batch after batch until one comes back short, reporting the running total', async () => {
    let left = 7;
    const totals: number[] = [];
    const total = await pruneInBatches(async (limit) => {
      const n = Math.min(limit, left);
      left -= n;
      return n;
    }, 3, (t) => totals.push(t));
    expect(total).toBe(7);
    expect(totals).toEqual([3, 6, 7]);
    expect(left).toBe(0);
  });
});
