/**
 * Token bucket per key (a credential; a client address for failed authentications), in this gateway process: `ratePerSecond` sustained, `burst` at once.
 * Buckets of idle credentials are dropped so memory stays bounded.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
  ) {}

  /** 0 when allowed; otherwise the whole seconds to wait before a token is available. */
  take(key: string, now = Date.now()): number {
    if (this.ratePerSecond <= 0) return 0;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 100_000) this.sweep(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerSecond);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerSecond));
  }

  /** Gives back a token taken for a request that turned out not to count (never beyond the burst). */
  refund(key: string): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.burst, b.tokens + 1);
  }

  /** Like `take`, without taking: 0 while a token is left, else the whole seconds to wait. */
  wait(key: string, now = Date.now()): number {
    if (this.ratePerSecond <= 0) return 0;
    const b = this.buckets.get(key);
    if (!b) return 0;
    const tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerSecond);
    if (tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - tokens) / this.ratePerSecond));
  }

  private sweep(now: number): void {
    const idleMs = (this.burst / this.ratePerSecond) * 1000;
    for (const [k, b] of this.buckets) if (now - b.at > idleMs) this.buckets.delete(k);
  }
}
