/** The webhook retry schedule (spec §3 Delivery): first retry within 10 s, second within 60 s of it, then backoff with jitter over at least 24 hours, about 8 attempts. */
import { describe, expect, it } from 'vitest';
import { nextRetry } from '../src/domain/webhooks/retry-schedule.js';
import { adminConfigSchema } from '../src/config.js';

const defaults = adminConfigSchema.shape.WEBHOOK_RETRY_DELAYS_SECONDS.parse(undefined);

describe('webhook retry schedule', () => {
  it('retries after 5 s and 30 s exactly, then spreads the later retries by ±20 %', () => {
    expect(nextRetry(defaults, 1, () => 0.99)).toEqual({ final: false, retryInMs: 5000 });
    expect(nextRetry(defaults, 2, () => 0)).toEqual({ final: false, retryInMs: 30_000 });
    expect(nextRetry(defaults, 3, () => 0).retryInMs).toBe(1800 * 1000 * 0.8);
    expect(nextRetry(defaults, 3, () => 0.5).retryInMs).toBe(1800 * 1000);
    expect(nextRetry(defaults, 4, () => 0.999999).retryInMs).toBeLessThanOrEqual(7200 * 1000 * 1.2);
  });

  it('makes 8 attempts over more than 24 hours, then gives up', () => {
    const attempts = defaults.length + 1;
    expect(attempts).toBe(8);
    const shortest = defaults.reduce((sum, _, i) => sum + nextRetry(defaults, i + 1, () => 0).retryInMs, 0);
    expect(shortest).toBeGreaterThan(24 * 3600 * 1000);
    expect(nextRetry(defaults, 8)).toEqual({ final: true, retryInMs: 0 });
  });

  it('refuses a schedule that is not a list of positive seconds', () => {
    expect(adminConfigSchema.shape.WEBHOOK_RETRY_DELAYS_SECONDS.safeParse('5,x').success).toBe(false);
    expect(adminConfigSchema.shape.WEBHOOK_RETRY_DELAYS_SECONDS.safeParse('0').success).toBe(false);
    expect(adminConfigSchema.shape.WEBHOOK_RETRY_DELAYS_SECONDS.parse('1,1')).toEqual([1, 1]);
  });
});
