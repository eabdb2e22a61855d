import type { ServiceName } from './route-table.js';

/** What the gateway's /readyz reports per upstream: its /readyz answered 2xx, answered otherwise, refused or failed, or did not answer in time. */
export type UpstreamState = 'ok' | 'not-ready' | 'unreachable' | 'timeout';

export interface UpstreamReadinessOptions {
  targets: Record<ServiceName, URL>;
  /** how long one round of answers is reused (READYZ_CACHE_MS) */
  cacheMs: number;
  /** per upstream /readyz call (READYZ_UPSTREAM_TIMEOUT_MS) */
  timeoutMs: number;
}

/**
 * The upstreams' readiness for the gateway's /readyz: every service's /readyz, called at once with a
 * short timeout; one round is reused for cacheMs, and concurrent probes share the round in flight,
 * so a load balancer probing the gateway often does not multiply calls to the services.
 */
export class UpstreamReadiness {
  private cached: { at: number; states: Record<ServiceName, UpstreamState> } | null = null;
  private inFlight: Promise<Record<ServiceName, UpstreamState>> | null = null;

  constructor(private readonly opts: UpstreamReadinessOptions) {}

  async states(): Promise<Record<ServiceName, UpstreamState>> {
    if (this.cached && Date.now() - this.cached.at < this.opts.cacheMs) return this.cached.states;
    this.inFlight ??= this.round().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async round(): Promise<Record<ServiceName, UpstreamState>> {
    const names = Object.keys(this.opts.targets) as ServiceName[];
    const results = await Promise.all(names.map((name) => this.check(this.opts.targets[name])));
    const states = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<ServiceName, UpstreamState>;
    this.cached = { at: Date.now(), states };
    return states;
  }

  private async check(target: URL): Promise<UpstreamState> {
    try {
      const res = await fetch(new URL('/readyz', target), { signal: AbortSignal.timeout(this.opts.timeoutMs) });
      await res.body?.cancel().catch(() => {});
      return res.ok ? 'ok' : 'not-ready';
    } catch (err) {
      return (err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
    }
  }
}
