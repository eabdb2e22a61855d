/**
 * The per-request floor, in one run: autocannon against two authenticated GETs, `GET /v2/users/me`
 * (admin) and `GET /v2/partners/{id}` (integrations; a customer with open invoices, an assignee and a
 * rule tag, pushed and set up through the gateway), each
 *   (a) from a bare Koa app answering the same JSON body the service answers (captured once), no
 *       database, no middleware: the framework's floor on this machine,
 *   (b) straight to the service with a valid signed identity,
 *   (c) through a bare reverse proxy with no logic in front of the same service,
 *   (d) through the gateway (bearer token → cached credential → signed identity → proxy),
 * at concurrency 1 and 50, interleaved in rounds (measureAll), with the CPU time each process (service,
 * gateway, proxy, bare app, Postgres, the load generator) spent per request. Targets at c=50: (b) ≥ 15 % of (a)'s throughput, (d) ≥ 85 % of
 * (c)'s; at c=1 the gateway adds ≤ 1 ms mean latency over (b). Results: bench/results/gateway.json.
 * The partner answer is kept per integrations process (its read cache, invalidated by the database's
 * announcements), so (b)–(d) repeat a cached answer; `partner_uncached` measures (b) again with the
 * cache off, every request reading the database: the cost of a miss, reported without a target.
 * `BENCH_PROFILE=admin-api,integrations-api,gateway,…` also writes text summaries of each profiled
 * server's CPU profile to bench/results/profiles/<role>-<endpoint>.txt.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { connectTemporal, createDb, deriveIdentityKey, signIdentity, type Identity } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { startBenchEnvironment } from './support/environment.js';
import { cpuMsOf, serveInChild } from './support/process.js';
import { summarizeProfileFile } from './support/profile-summary.js';
import { customerRecord, invoiceRecord } from '../test/support/ledger.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Measured {
  requests_per_s: number;
  latency_mean_ms: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
  /** CPU time (user + system) per answered request of each process taking part, ms */
  cpu_ms_per_request: Record<string, number>;
  /** each round's throughput (the figure above is their median) */
  rounds_requests_per_s: number[];
}

type Processes = Record<string, () => number | null>;

interface Target {
  url: string;
  target: string;
  headers: () => Record<string, string>;
  processes: Processes;
}

interface Round {
  requests_per_s: number;
  answered: number;
  latency_mean_ms: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
  cpu: Record<string, number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function cannon(t: Target, connections: number, duration: number) {
  return autocannon({
    url: t.url,
    connections,
    duration,
    pipelining: 1,
    requests: [{ method: 'GET' as const, path: t.target, setupRequest: (req: autocannon.Request) => ({ ...req, headers: t.headers() }) }],
  });
}

async function round(t: Target, connections: number, duration: number): Promise<Round> {
  const before = Object.fromEntries(Object.entries(t.processes).map(([k, f]) => [k, f()]));
  const r = await cannon(t, connections, duration);
  const after = Object.fromEntries(Object.entries(t.processes).map(([k, f]) => [k, f()]));
  const cpu: Record<string, number> = {};
  for (const k of Object.keys(t.processes)) {
    const a = before[k];
    const b = after[k];
    if (a !== null && a !== undefined && b !== null && b !== undefined) cpu[k] = b - a;
  }
  return {
    requests_per_s: r.requests.average,
    answered: r.requests.total,
    latency_mean_ms: r.latency.average,
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors,
    cpu,
  };
}

/**
 * Every target of one comparison at one concurrency, interleaved: a warm-up each, then ROUNDS rounds
 * in which each target runs DURATION_S / ROUNDS seconds in turn. On a shared machine the load drifts
 * during a run; interleaving exposes every target to the same drift, and the median round resists a
 * burst. Throughput and latency percentiles: median of the rounds; CPU per request: over all rounds.
 */
async function measureAll(targets: Record<string, Target>, connections: number): Promise<Record<string, Measured>> {
  for (const t of Object.values(targets)) await cannon(t, connections, WARMUP_S); // connections, JIT, caches
  const rounds: Record<string, Round[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (let i = 0; i < ROUNDS; i++) for (const [k, t] of Object.entries(targets)) rounds[k]!.push(await round(t, connections, Math.max(1, Math.round(DURATION_S / ROUNDS))));
  return Object.fromEntries(
    Object.entries(rounds).map(([k, rs]) => {
      const answered = Math.max(1, rs.reduce((n, r) => n + r.answered, 0));
      const cpu: Record<string, number> = {};
      for (const name of Object.keys(rs[0]!.cpu)) cpu[name] = Number((rs.reduce((n, r) => n + (r.cpu[name] ?? 0), 0) / answered).toFixed(4));
      return [
        k,
        {
          requests_per_s: Math.round(median(rs.map((r) => r.requests_per_s))),
          latency_mean_ms: Number((rs.reduce((n, r) => n + r.latency_mean_ms * r.answered, 0) / answered).toFixed(3)),
          latency_p50_ms: median(rs.map((r) => r.latency_p50_ms)),
          latency_p99_ms: median(rs.map((r) => r.latency_p99_ms)),
          non_2xx: rs.reduce((n, r) => n + r.non_2xx, 0),
          errors: rs.reduce((n, r) => n + r.errors, 0),
          cpu_ms_per_request: cpu,
          rounds_requests_per_s: rs.map((r) => Math.round(r.requests_per_s)),
        },
      ];
    }),
  );
}

/** CPU ms of Postgres so far: the postmaster, its exited backends (reaped) and its live backends (Linux /proc). */
function postgresCpuMs(postmasterPid: number | null): number | null {
  if (postmasterPid === null || !existsSync('/proc')) return null;
  const stat = (pid: number) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(fields[1]), cpu: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100, reaped: ((Number(fields[13]) + Number(fields[14])) * 1000) / 100 };
    } catch {
      return null;
    }
  };
  const master = stat(postmasterPid);
  if (!master) return null;
  let total = master.cpu + master.reaped;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = stat(Number(entry));
    if (p && p.ppid === postmasterPid) total += p.cpu;
  }
  return total;
}

function request(port: number, method: string, target: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function ok(p: Promise<{ status: number; text: string }>, what: string): Promise<unknown> {
  const r = await p;
  if (r.status < 200 || r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.text ? JSON.parse(r.text) : null;
}

const ratio = (a: number, b: number) => Number((a / b).toFixed(3));

export async function run(): Promise<void> {
  const env = await startBenchEnvironment('gateway');
  const profileDir = path.resolve('var', 'bench', 'profiles', `gateway-${process.pid}`);
  const stops: Array<() => Promise<void>> = [env.stop];
  const loadBefore = os.loadavg();
  try {
    const started = async (role: string, extra: Record<string, string>, endpoint?: string) => {
      const name = endpoint ? `${role}-${endpoint}` : role;
      const s = await serveInChild(role, { ...env.env, ...extra }, { profileDir: path.join(profileDir, name) });
      stops.unshift(s.stop);
      return s;
    };
    const admin = await started('admin-api', {}, 'users-me'); // migrates the admin schema (organizations, credentials)
    const integrations = await started('integrations-api', {}, 'partner');
    // The same service with its partner read cache off: every request reads the database (the cost of
    // a miss), reported beside the cached figures for what a cold key costs.
    const integrationsUncached = await started('integrations-api', { PARTNER_READ_CACHE_TTL_MS: '0' }, 'partner-uncached');
    const upstreams = { ADMIN_URL: `http://127.0.0.1:${admin.port}`, INTEGRATIONS_URL: `http://127.0.0.1:${integrations.port}`, RATE_LIMIT_PER_SECOND: '0' };
    // One gateway and one bare proxy per endpoint, so that each CPU profile is one endpoint's.
    const gateways = { 'users-me': await started('gateway', upstreams, 'users-me'), partner: await started('gateway', upstreams, 'partner') };
    const proxies = {
      'users-me': await started('bare-proxy', { UPSTREAM_PORT: String(admin.port) }, 'users-me'),
      partner: await started('bare-proxy', { UPSTREAM_PORT: String(integrations.port) }, 'partner'),
    };

    const temporal = await connectTemporal({ address: env.env.TEMPORAL_ADDRESS, namespace: env.env.TEMPORAL_NAMESPACE });
    const db = createDb({ url: env.env.DATABASE_URL, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db, temporal: temporal.client },
      { name: 'Bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'bench@example.com', name: 'Bench' } },
    );
    await db.destroy();
    await temporal.close();

    // The partner, through the API: pushed by the middleware (API key), three open invoices, assigned
    // to the admin, and a rule tag it carries (the answer's figures, effective assignee and tags are real work).
    const gw = gateways['users-me'].port;
    const key = { authorization: `Bearer ${org.apiKey.token}` };
    const bearer = { authorization: `Bearer ${org.accessToken.token}` };
    await ok(request(gw, 'POST', '/v2/integrations/providers/middleware/customers', key, [customerRecord({ customer_code: 'C-1' })]), 'customer push');
    await ok(
      request(
        gw,
        'POST',
        '/v2/integrations/providers/middleware/invoices',
        key,
        [1, 2, 3].map((i) => invoiceRecord({ document_number: `900000${i}`, reference: `INV-${i}`, customer_code: 'C-1' })),
      ),
      'invoice push',
    );
    await ok(request(gw, 'POST', '/v1/tags', bearer, { name: 'Open items', color: '#336699', rule_condition: { field: 'open_invoice_count', op: 'gt', value: 0 } }), 'tag');
    const listed = (await ok(request(gw, 'GET', '/v2/partners', bearer), 'partner list')) as { data: { id: string }[] };
    const partnerId = listed.data[0]!.id;
    await ok(request(gw, 'PATCH', `/v2/partners/${partnerId}`, bearer, { assignee_id: org.user.id }), 'partner assignment');

    const identity = (): Identity => ({
      org: org.organization.id,
      sub: org.user.id,
      role: 'admin',
      kind: 'user',
      cred: org.accessToken.row.id,
      bu: '*',
      iat: Math.floor(Date.now() / 1000),
    });
    const endpoints = [
      { name: 'users_me', label: 'users-me' as const, service: 'admin', server: admin, target: '/v2/users/me' },
      { name: 'partner', label: 'partner' as const, service: 'integrations', server: integrations, target: `/v2/partners/${partnerId}` },
    ];
    // Signed as the gateway does: the service's key, bound to the method and target.
    const signers = endpoints.map((e) => {
      const k = deriveIdentityKey(env.env.IDENTITY_SECRET, e.service);
      const sign = () => signIdentity(identity(), k, { method: 'GET', target: e.target });
      const s = { value: sign(), sign };
      return s;
    });
    const refresher = setInterval(() => signers.forEach((s) => (s.value = s.sign())), 1000);

    // The bodies the services answer, captured once: what the bare Koa app answers.
    const bodies: Record<string, unknown> = {};
    for (const [i, e] of endpoints.entries()) bodies[e.target] = await ok(request(e.server.port, 'GET', e.target, { 'x-rp-identity': signers[i]!.value }), `${e.name} capture`);
    const bare = await started('bare-koa', { BARE_BODIES: JSON.stringify(bodies) });
    for (const e of endpoints) {
      const again = await ok(request(bare.port, 'GET', e.target, {}), `${e.name} bare`);
      if (JSON.stringify(again) !== JSON.stringify(bodies[e.target])) throw new Error(`bare-koa answers another body for ${e.target}`);
    }

    const pidFile = path.join(path.resolve('var', 'bench', `gateway-${process.pid}`), 'pg', 'postmaster.pid');
    const postmasterPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : null;
    const pg = () => postgresCpuMs(postmasterPid);
    const client = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const cpuOf = (s: { child: { pid?: number } }) => () => cpuMsOf(s.child.pid);

    const results: Record<string, Record<string, Record<string, Measured>>> = {};
    for (const [i, e] of endpoints.entries()) {
      const signed = () => ({ 'x-rp-identity': signers[i]!.value });
      const service = cpuOf(e.server);
      results[e.name] = {};
      for (const c of [1, 50]) {
        const m = await measureAll(
          {
            bare_koa: { url: `http://127.0.0.1:${bare.port}`, target: e.target, headers: () => ({}), processes: { bare_koa: cpuOf(bare), postgres: pg, load_generator: client } },
            direct: { url: `http://127.0.0.1:${e.server.port}`, target: e.target, headers: signed, processes: { service, postgres: pg, load_generator: client } },
            bare_proxy: {
              url: `http://127.0.0.1:${proxies[e.label].port}`,
              target: e.target,
              headers: signed,
              processes: { proxy: cpuOf(proxies[e.label]), service, postgres: pg, load_generator: client },
            },
            gateway: {
              url: `http://127.0.0.1:${gateways[e.label].port}`,
              target: e.target,
              headers: () => bearer,
              processes: { gateway: cpuOf(gateways[e.label]), service, postgres: pg, load_generator: client },
            },
          },
          c,
        );
        results[e.name]![`c${c}`] = m;
        process.stdout.write(`${e.name} c=${c}: ${JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { rps: v.requests_per_s, cpu: v.cpu_ms_per_request }])))}\n`);
      }
    }
    {
      const partner = endpoints.findIndex((e) => e.name === 'partner');
      const signed = () => ({ 'x-rp-identity': signers[partner]!.value });
      const target = endpoints[partner]!.target;
      const m = await measureAll(
        {
          bare_koa: { url: `http://127.0.0.1:${bare.port}`, target, headers: () => ({}), processes: { bare_koa: cpuOf(bare), postgres: pg, load_generator: client } },
          direct: { url: `http://127.0.0.1:${integrationsUncached.port}`, target, headers: signed, processes: { service: cpuOf(integrationsUncached), postgres: pg, load_generator: client } },
        },
        50,
      );
      results.partner_uncached = { c50: m };
      process.stdout.write(`partner_uncached c=50: ${JSON.stringify(m)}\n`);
    }
    clearInterval(refresher);

    // autocannon's histogram keeps whole milliseconds, too coarse for sub-millisecond means; with one
    // connection requests are strictly serial, so the mean round trip is exactly 1000 / (req/s).
    const cycle = (m: Measured) => 1000 / m.requests_per_s;
    const ratios: Record<string, unknown> = {};
    const targets: Record<string, unknown> = { direct_vs_bare_koa_min: 0.15, gateway_vs_bare_proxy_min: 0.85, added_mean_latency_ms_max: 1 };
    for (const e of endpoints) {
      const { c1, c50 } = results[e.name] as { c1: Record<string, Measured>; c50: Record<string, Measured> };
      const direct = ratio(c50.direct!.requests_per_s, c50.bare_koa!.requests_per_s);
      const gateway = ratio(c50.gateway!.requests_per_s, c50.bare_proxy!.requests_per_s);
      const added = cycle(c1.gateway!) - cycle(c1.direct!);
      // What each request costs the servers (every process but the load generator): on a machine this loaded the
      // throughput of one target swings with the neighbours' load between rounds; CPU time per request does not.
      const serverCpu = (m: Measured) => Object.entries(m.cpu_ms_per_request).reduce((n, [k, v]) => (k === 'load_generator' ? n : n + v), 0);
      ratios[e.name] = {
        direct_vs_bare_koa_server_cpu_c50: ratio(serverCpu(c50.bare_koa!), serverCpu(c50.direct!)),
        gateway_vs_bare_proxy_server_cpu_c50: ratio(serverCpu(c50.bare_proxy!), serverCpu(c50.gateway!)),
        direct_vs_bare_koa_throughput_c50: direct,
        direct_vs_bare_koa_throughput_c1: ratio(c1.direct!.requests_per_s, c1.bare_koa!.requests_per_s),
        gateway_vs_bare_proxy_throughput_c50: gateway,
        gateway_vs_direct_throughput_c50: ratio(c50.gateway!.requests_per_s, c50.direct!.requests_per_s),
        mean_round_trip_ms_c1: Object.fromEntries(Object.entries(c1).map(([k, v]) => [k, Number(cycle(v).toFixed(3))])),
        gateway_added_mean_latency_ms_c1: Number(added.toFixed(3)),
        bare_proxy_added_mean_latency_ms_c1: Number((cycle(c1.bare_proxy!) - cycle(c1.direct!)).toFixed(3)),
      };
      targets[e.name] = { direct_met: direct >= 0.15, gateway_met: gateway >= 0.85, latency_met: added <= 1 };
    }
    // no target: what GET /v2/partners/{id} costs when its answer is not cached (a cold key, a change just heard)
    const uncached = results.partner_uncached!.c50 as Record<string, Measured>;
    ratios.partner_uncached = { direct_vs_bare_koa_throughput_c50: ratio(uncached.direct!.requests_per_s, uncached.bare_koa!.requests_per_s) };
    const report = {
      benchmark: 'gateway',
      endpoints: Object.fromEntries(endpoints.map((e) => [e.name, `GET ${e.target.replace(partnerId, '{partner_id}')}`])),
      duration_s: DURATION_S,
      rounds: ROUNDS,
      machine: {
        cpus: os.cpus().length,
        node: process.version,
        // the machine is shared: its load around the run says how far the absolute figures can be trusted (the ratios compare within the run)
        loadavg_before: loadBefore.map((l) => Number(l.toFixed(2))),
        loadavg_after: os.loadavg().map((l) => Number(l.toFixed(2))),
      },
      results,
      // *_server_cpu_*: bare reference's server CPU per request / the target's (the throughput ratio a CPU-bound machine would show)
      ratios,
      targets,
      errors: Object.values(results)
        .flatMap((byC) => Object.values(byC).flatMap((r) => Object.values(r)))
        .reduce((n, m) => n + m.errors + m.non_2xx, 0),
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/gateway.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report.ratios)}\n${JSON.stringify(report.targets)}\nload ${JSON.stringify(report.machine)}\nwritten bench/results/gateway.json\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
  // The servers wrote their CPU profiles on exit.
  if (existsSync(profileDir)) {
    mkdirSync('bench/results/profiles', { recursive: true });
    for (const name of readdirSync(profileDir)) {
      // the main thread's profile (thread 0), not the module loader's
      const main = readdirSync(path.join(profileDir, name)).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (!main) continue;
      const out = path.join('bench/results/profiles', `${name}.txt`);
      writeFileSync(out, summarizeProfileFile(path.join(profileDir, name, main)));
      process.stdout.write(`written ${out}\n`);
    }
    rmSync(profileDir, { recursive: true, force: true });
  }
}
