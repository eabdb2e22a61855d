/**
 * `npm run bench -- webhooks` (results: bench/results/webhooks.json): a burst of 10,000 events to 3
 * endpoints through the real engine (the admin worker's dispatcher and delivery workflows on
 * Temporal, PostgreSQL), against a receiver on loopback in its own process that verifies every
 * signature with `standardwebhooks`. Targets (spec §3): ≥ 500 deliveries/s, lag p99 ≤ 2 s from
 * commit to receipt, no loss.
 *
 * Events are recorded through the kernel's recordEvents in batches of 500 (one transaction each, as
 * a service's batch path records them); each event's commit time is the moment its transaction's
 * COMMIT returned. 4 events per resource, so per-resource order is exercised under load (checked).
 * Then a steady phase below capacity (2,000 events, 10 per transaction, 50 ms apart): the lag of traffic
 * the engine keeps up with, where a burst's lag is its queue (deliveries ahead / deliveries per second).
 * The reference figure: plain keep-alive POSTs of the same body from one process to the same
 * receiver, as many in flight as the engine uses (3 endpoints × WEBHOOK_CONCURRENCY).
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { createDb, newId, recordEvents, sealSecret, startServiceWorker, type Db, type NewEvent } from '@rp/platform';
import { adminModule, loadAdminConfig } from '@rp/admin';
import { workflowsPath } from '@rp/workflows/paths';
import { endpointSecretAad } from '../../services/admin/src/store/webhooks/rows.js';
import { startBenchEnvironment } from '../support/environment.js';
import { onboardBenchOrganization } from '../support/stack.js';

const EVENTS = 10_000;
const BATCH = 500;
const ENDPOINTS = 3;
const PER_RESOURCE = 4;
const STEADY_EVENTS = 2000;

type Receipts = [string, string, number, boolean][];
type BenchReceiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Records `events` in transactions of `batch` (a pause between them), waits until every endpoint
 * received every event, and measures: recording rate, delivery rate, lag commit → first receipt,
 * duplicates, signature failures, loss and per-resource order.
 */
async function phase(db: Db, receiver: BenchReceiver, orgId: string, o: { events: number; batch: number; pauseMs: number }) {
  const committedAt = new Map<string, number>();
  const order = new Map<string, string[]>();
  const tag = newId();
  const recordStart = Date.now();
  for (let b = 0; b < o.events / o.batch; b++) {
    const events: NewEvent[] = Array.from({ length: o.batch }, (_, i) => {
      const n = b * o.batch + i;
      const resourceId = `run-${tag}-${n % Math.ceil(o.events / PER_RESOURCE)}`;
      return { organizationId: orgId, type: 'report.sent', resourceId, object: { object: 'report_run', id: resourceId, status: 'sent', sequence: n, note: 'x'.repeat(200) } };
    });
    const ids = await db.transaction((trx) => recordEvents(trx, events));
    const at = Date.now();
    ids.forEach((r, i) => {
      committedAt.set(r.id, at);
      const key = events[i].resourceId;
      order.set(key, [...(order.get(key) ?? []), r.id]);
    });
    if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
  }
  const recordEnd = Date.now();
  let received: Receipts = [];
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    received = (await receiver.report()).filter(([, id]) => committedAt.has(id));
    if (new Set(received.map(([path, id]) => `${path} ${id}`)).size >= o.events * ENDPOINTS || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const first = new Map<string, number>();
  const sequence = new Map<string, string[]>();
  for (const [path, id, at] of received) {
    const key = `${path} ${id}`;
    if (first.has(key)) continue;
    first.set(key, at);
    sequence.set(path, [...(sequence.get(path) ?? []), id]);
  }
  const lags = [...first.entries()].map(([key, at]) => at - committedAt.get(key.split(' ')[1])!).sort((a, b) => a - b);
  let outOfOrder = 0;
  for (const ids of sequence.values()) {
    const position = new Map(ids.map((id, i) => [id, i]));
    for (const chain of order.values()) for (let i = 1; i < chain.length; i++) if ((position.get(chain[i]) ?? -1) < (position.get(chain[i - 1]) ?? -1)) outOfOrder++;
  }
  const seconds = (Math.max(...first.values()) - recordStart) / 1000;
  return {
    events: o.events,
    recorded: { seconds: (recordEnd - recordStart) / 1000, events_per_s: Math.round(o.events / ((recordEnd - recordStart) / 1000)) },
    delivered: {
      deliveries: first.size,
      requests: received.length,
      duplicates: received.length - first.size,
      signature_failures: received.filter((r) => !r[3]).length,
      lost: o.events * ENDPOINTS - first.size,
      out_of_order_per_resource: outOfOrder,
      seconds_from_first_commit: seconds,
      deliveries_per_s: Math.round(first.size / seconds),
      events_per_s: Math.round(o.events / seconds),
    },
    lag_ms: { p50: pct(lags, 50), p90: pct(lags, 90), p99: pct(lags, 99), max: lags[lags.length - 1] },
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function startReceiver(secret: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/webhooks/receiver.ts'], { env: { ...process.env, BENCH_WEBHOOK_SECRET: secret }, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  const port = Number(/^LISTENING (\d+)$/.exec((await next()).trim())![1]);
  return {
    port,
    async report(): Promise<Receipts> {
      child.stdin!.write('report\n');
      return JSON.parse(await next());
    },
    reset: () => child.stdin!.write('reset\n'),
    stop: () => child.kill('SIGTERM'),
  };
}

/** Plain keep-alive POSTs from this process: the receiver's capacity as a bare client sees it. */
async function bareReference(port: number, body: string, total: number, inFlight: number) {
  const agent = new http.Agent({ keepAlive: true });
  let sent = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/bare', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (sent < total) {
        sent++;
        await post();
      }
    }),
  );
  agent.destroy();
  return { requests: total, in_flight: inFlight, requests_per_s: Math.round(total / ((performance.now() - started) / 1000)) };
}

export async function run(): Promise<void> {
  const environment = await startBenchEnvironment('webhooks');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startReceiver(secret);
  const env: Record<string, string> = { ...environment.env, OUTBOUND_ALLOWLIST: `127.0.0.1:${receiver.port}`, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent' };
  const config = loadAdminConfig(env);
  const worker = await startServiceWorker(adminModule, config, { workflowsPath });
  const db = createDb({ url: env.DATABASE_URL, schema: 'admin', poolMax: 2 });
  try {
    const { orgId } = await onboardBenchOrganization(env, 'Webhook Bench Org', 'bench@webhooks.example');
    for (let i = 0; i < ENDPOINTS; i++) {
      const id = newId();
      await db('webhook_endpoints').insert({ id, organization_id: orgId, url: `http://127.0.0.1:${receiver.port}/endpoint-${i}`, events: ['*'], secret_enc: sealSecret(config, endpointSecretAad(id), secret) });
    }
    // the dispatcher's starting position: events recorded before it would not be queued
    while (Number((await db.raw(`SELECT count(*) AS n FROM webhook_dispatch_cursors`)).rows[0].n) < 1) await new Promise((r) => setTimeout(r, 100));

    const sample = JSON.stringify({ id: newId(), object: 'event', type: 'report.sent', created_at: new Date().toISOString(), data: { object: { object: 'report_run', id: newId(), status: 'sent', note: 'x'.repeat(200) } } });
    const bare = await bareReference(receiver.port, sample, 20_000, ENDPOINTS * config.WEBHOOK_CONCURRENCY);
    receiver.reset();

    const burst = await phase(db, receiver, orgId, { events: EVENTS, batch: BATCH, pauseMs: 0 });
    receiver.reset();
    // Steady traffic below capacity: 10 events per transaction, 50 ms apart (at most 200 events/s; the recorded rate is reported).
    const steady = await phase(db, receiver, orgId, { events: STEADY_EVENTS, batch: 10, pauseMs: 50 });
    const report = {
      bench: 'webhooks',
      measured_at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, load_average_1m: os.loadavg()[0] },
      setup: { events: EVENTS, endpoints: ENDPOINTS, batch: BATCH, events_per_resource: PER_RESOURCE, concurrency_per_endpoint: config.WEBHOOK_CONCURRENCY },
      burst,
      steady,
      reference_bare_keep_alive_posts: bare,
      targets: { deliveries_per_s: 500, lag_p99_ms: 2000, lost: 0 },
      note: 'A burst is delivered at the engine\'s throughput, so its lag grows to about (deliveries queued ahead) / (deliveries per second); the steady phase shows the lag of traffic the engine keeps up with.',
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/webhooks.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } finally {
    await db.destroy();
    await worker.close();
    receiver.stop();
    await environment.stop();
  }
}
