/**
 * Gateway overhead, in one run: autocannon against one authenticated GET (/v2/users/me)
 *   (a) straight to the admin service with a valid signed identity,
 *   (b) through a bare reverse proxy with no logic in front of the same service,
 *   (c) through the gateway (bearer token → cached credential → signed identity → proxy),
 * at concurrency 1 and 50. Targets: (c) keeps ≥ 85% of (b)'s throughput at c=50 and adds ≤ 1 ms
 * mean latency over (a) at c=1. Results: bench/results/gateway.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { connectTemporal, createDb, deriveIdentityKey, signIdentity, type Identity } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { startBenchEnvironment } from './support/environment.js';
import { serveInChild } from './support/process.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const PATH = '/v2/users/me';

interface Measured {
  requests_per_s: number;
  latency_mean_ms: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
}

async function measure(url: string, connections: number, headers: () => Record<string, string>): Promise<Measured> {
  const opts = {
    url,
    connections,
    duration: DURATION_S,
    pipelining: 1,
    requests: [{ method: 'GET' as const, path: PATH, setupRequest: (req: autocannon.Request) => ({ ...req, headers: headers() }) }],
  };
  await autocannon({ ...opts, duration: 2 }); // warm-up: connections, JIT, caches
  const r = await autocannon(opts);
  return {
    requests_per_s: Math.round(r.requests.average),
    latency_mean_ms: Number(r.latency.average.toFixed(3)),
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors,
  };
}

export async function run(): Promise<void> {
  const env = await startBenchEnvironment('gateway');
  const stops: Array<() => Promise<void>> = [env.stop];
  try {
    const admin = await serveInChild('admin-api', env.env);
    stops.unshift(admin.stop);
    const proxy = await serveInChild('bare-proxy', { ...env.env, UPSTREAM_PORT: String(admin.port) });
    stops.unshift(proxy.stop);
    const gateway = await serveInChild('gateway', {
      ...env.env,
      ADMIN_URL: `http://127.0.0.1:${admin.port}`,
      RATE_LIMIT_PER_SECOND: '0',
    });
    stops.unshift(gateway.stop);

    const temporal = await connectTemporal({ address: env.env.TEMPORAL_ADDRESS, namespace: env.env.TEMPORAL_NAMESPACE });
    const db = createDb({ url: env.env.DATABASE_URL, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db, temporal: temporal.client },
      { name: 'Bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'bench@example.com', name: 'Bench' } },
    );
    await db.destroy();
    await temporal.close();

    const identity = (): Identity => ({
      org: org.organization.id,
      sub: org.user.id,
      role: 'admin',
      kind: 'user',
      cred: org.accessToken.row.id,
      bu: '*',
      iat: Math.floor(Date.now() / 1000),
    });
    // Signed as the gateway does: the admin service's key, bound to GET /v2/users/me.
    const adminKey = deriveIdentityKey(env.env.IDENTITY_SECRET, 'admin');
    const sign = () => signIdentity(identity(), adminKey, { method: 'GET', target: PATH });
    let signed = sign();
    const refresher = setInterval(() => (signed = sign()), 1000);
    const signedHeaders = () => ({ 'x-rp-identity': signed });
    const bearer = { authorization: `Bearer ${org.accessToken.token}` };

    const results: Record<string, Record<string, Measured>> = {};
    for (const c of [1, 50]) {
      results[`c${c}`] = {
        direct: await measure(`http://127.0.0.1:${admin.port}`, c, signedHeaders),
        bare_proxy: await measure(`http://127.0.0.1:${proxy.port}`, c, signedHeaders),
        gateway: await measure(`http://127.0.0.1:${gateway.port}`, c, () => bearer),
      };
      process.stdout.write(`c=${c}: ${JSON.stringify(results[`c${c}`])}\n`);
    }
    clearInterval(refresher);

    const c1 = results.c1;
    const c50 = results.c50;
    const throughputRatio = c50.gateway.requests_per_s / c50.bare_proxy.requests_per_s;
    // autocannon's histogram keeps whole milliseconds, too coarse for sub-millisecond means; with one
    // connection requests are strictly serial, so the mean round trip is exactly 1000 / (req/s).
    const cycle = (m: Measured) => 1000 / m.requests_per_s;
    const addedMeanMs = cycle(c1.gateway) - cycle(c1.direct);
    const report = {
      benchmark: 'gateway',
      endpoint: `GET ${PATH}`,
      duration_s: DURATION_S,
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      results,
      ratios: {
        gateway_vs_bare_proxy_throughput_c50: Number(throughputRatio.toFixed(3)),
        gateway_vs_direct_throughput_c50: Number((c50.gateway.requests_per_s / c50.direct.requests_per_s).toFixed(3)),
        mean_round_trip_ms_c1: {
          direct: Number(cycle(c1.direct).toFixed(3)),
          bare_proxy: Number(cycle(c1.bare_proxy).toFixed(3)),
          gateway: Number(cycle(c1.gateway).toFixed(3)),
        },
        gateway_added_mean_latency_ms_c1: Number(addedMeanMs.toFixed(3)),
        bare_proxy_added_mean_latency_ms_c1: Number((cycle(c1.bare_proxy) - cycle(c1.direct)).toFixed(3)),
      },
      targets: {
        throughput_ratio_min: 0.85,
        added_mean_latency_ms_max: 1,
        throughput_met: throughputRatio >= 0.85,
        latency_met: addedMeanMs <= 1,
      },
      errors: Object.values(results).flatMap((r) => Object.values(r)).reduce((n, m) => n + m.errors + m.non_2xx, 0),
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/gateway.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report.ratios)}\n${JSON.stringify(report.targets)}\nwritten bench/results/gateway.json\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
}
