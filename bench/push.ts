/**
 * Middleware push throughput, in one run:
 *   (a) through the gateway: PUSH_RECORDS invoices (one line item each) in batches of 100 to
 *       POST /v2/integrations/providers/middleware/invoices with an organization API key,
 *       PUSH_CONCURRENCY requests in flight (gateway and integrations API each in their own process);
 *   (b) direct: the same records, mapped by the service's own validation, written as the service writes
 *       them (the set-based upsert and its invoice events, `writeDocumentsRecordingEvents`, one
 *       transaction per batch of 100) straight through pg from this one process, with the same
 *       concurrency (pool of PUSH_CONCURRENCY connections).
 * Both phases insert into an empty key space (each into its own organization, whose 5,000 customers
 * are pushed first so documents link to partners), so both measure the same work: fresh inserts.
 * Target: (a) ≥ 10,000 records/s and ≥ 0.8 of (b). CPU per request (one batch of 100: an HTTP request
 * in (a), a transaction in (b)) is reported per process, so the API path's own cost (body parse, record
 * validation, HTTP, gateway) can be read beside the write both phases share. Results: bench/results/push.json.
 */
import http from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { connectTemporal, createDb } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { startBenchEnvironment } from './support/environment.js';
import { serveInChild } from './support/process.js';
import { customerRecord, invoiceRecord } from '../test/support/ledger.js';
import { validateInvoice, type ValidInvoice } from '../services/integrations/src/domain/push.js';
import { writeDocumentsRecordingEvents } from '../services/integrations/src/domain/ledger-events.js';

const RECORDS = Number(process.env.PUSH_RECORDS ?? 200_000);
const BATCH = 100;
const CONCURRENCY = Number(process.env.PUSH_CONCURRENCY ?? 8);
const CUSTOMERS = 5_000;
const PATH = '/v2/integrations/providers/middleware/invoices';
const CUSTOMERS_PATH = '/v2/integrations/providers/middleware/customers';

function invoices(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const cents = 100 + ((i * 7919) % 1_000_000);
    const amount = cents / 100; // e.g. 1234.56: exactly two decimals in its shortest form
    return invoiceRecord({
      document_number: `${prefix}${String(i).padStart(8, '0')}`,
      customer_code: `C-${i % CUSTOMERS}`,
      reference: `INV-${prefix}${i}`,
      amount_in_document_currency: amount,
      amount_in_local_currency: amount,
      status_open: i % 5 !== 0,
      debit_credit_indicator: i % 10 === 0 ? 'H' : 'S',
      line_items: [{ line_number: 1, description: 'Widgets', quantity: 1, unit_amount: amount, total_amount: amount }],
    });
  });
}

function batches<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += BATCH) out.push(rows.slice(i, i + BATCH));
  return out;
}

/** Run `task` over every item with `concurrency` in flight; returns elapsed seconds. */
async function pool<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux); null elsewhere. `reaped`:
 * what its exited children used (Postgres backends that ended count there, at the postmaster).
 */
function processCpu(pid: number): { cpu: number; reaped: number; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { cpu: (Number(f[11]) + Number(f[12])) / 100, reaped: (Number(f[13]) + Number(f[14])) / 100, ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/** CPU seconds per component so far: this process, each server child, and Postgres (postmaster + its backends). */
function cpuSnapshot(children: Record<string, number>, postmasterPid: number | null): Record<string, number> {
  const out: Record<string, number> = { bench_client: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 };
  for (const [name, pid] of Object.entries(children)) out[name] = processCpu(pid)?.cpu ?? 0;
  if (postmasterPid !== null && existsSync('/proc')) {
    const postmaster = processCpu(postmasterPid);
    let pgCpu = postmaster ? postmaster.cpu + postmaster.reaped : 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const p = processCpu(Number(entry));
      if (p && p.ppid === postmasterPid) pgCpu += p.cpu;
    }
    out.postgres = pgCpu;
  }
  return out;
}

const diff = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.keys(b).map((k) => [k, Number((b[k]! - (a[k] ?? 0)).toFixed(2))]));

/** CPU milliseconds per request (batch) of each process, from a phase's CPU seconds. */
const perRequestMs = (cpu: Record<string, number>, requests: number) =>
  Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number(((v * 1000) / requests).toFixed(3))]));

/** The ratio the gateway phase must reach against the direct one. */
const RATIO_MIN = 0.8;

function post(agent: http.Agent, port: number, path: string, token: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path, agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function run(): Promise<void> {
  const env = await startBenchEnvironment('push');
  const benchEnv: Record<string, string> = { ...env.env, CONNECTION_SECRETS_KEY: Buffer.from('bench-connection-secrets-key-012').toString('base64') };
  const stops: Array<() => Promise<void>> = [env.stop];
  try {
    const admin = await serveInChild('admin-api', benchEnv); // migrates the admin schema (organizations, credentials)
    stops.unshift(admin.stop);
    const integrations = await serveInChild('integrations-api', benchEnv);
    stops.unshift(integrations.stop);
    const gateway = await serveInChild('gateway', {
      ...benchEnv,
      ADMIN_URL: `http://127.0.0.1:${admin.port}`,
      INTEGRATIONS_URL: `http://127.0.0.1:${integrations.port}`,
      RATE_LIMIT_PER_SECOND: '0',
    });
    stops.unshift(gateway.stop);

    const temporal = await connectTemporal({ address: benchEnv.TEMPORAL_ADDRESS, namespace: benchEnv.TEMPORAL_NAMESPACE });
    const adminDb = createDb({ url: benchEnv.DATABASE_URL, schema: 'admin', poolMax: 1 });
    const onboard = (name: string) =>
      onboardOrganization({ db: adminDb, temporal: temporal.client }, { name, base_currency: 'EUR', timezone: 'UTC', admin: { email: `${name.toLowerCase()}@example.com`, name } });
    const [viaGateway, direct] = [await onboard('Gateway'), await onboard('Direct')];
    await adminDb.destroy();
    await temporal.close();

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const customers = Array.from({ length: CUSTOMERS }, (_, i) => customerRecord({ customer_code: `C-${i}`, name1: `Customer ${i}` }));
    for (const org of [viaGateway, direct]) {
      for (const b of batches(customers)) {
        const r = await post(agent, gateway.port, CUSTOMERS_PATH, org.apiKey.token, JSON.stringify(b));
        if (r.status !== 200) throw new Error(`customer push: ${r.status} ${r.text}`);
      }
    }

    const records = invoices('G', RECORDS);
    const bodies = batches(records).map((b) => JSON.stringify(b));
    // Warm-up (JIT, connections, plans) on other keys of the same organization.
    await pool(batches(invoices('W', 20 * BATCH)).map((b) => JSON.stringify(b)), CONCURRENCY, async (body) => {
      const r = await post(agent, gateway.port, PATH, viaGateway.apiKey.token, body);
      if (r.status !== 200) throw new Error(`warm-up: ${r.status} ${r.text}`);
    });

    // The direct phase's warm-up too, before either phase: both organizations then hold the same
    // warm-up documents when statistics are taken, and each phase starts from freshly analysed ones.
    // (An organization the statistics do not know yet is estimated to have no documents, and the
    // per-batch reads by id of the one being filled are then planned as a range over its documents:
    // 2-4x the Postgres CPU per batch of the phase that met it, on a loaded machine.)
    const db = createDb({ url: benchEnv.DATABASE_URL, schema: 'integrations', poolMax: CONCURRENCY });
    const mapped = (rs: ReturnType<typeof invoices>) =>
      batches(
        rs.map((r) => {
          const o = validateInvoice(r, 2);
          if (!o.ok) throw new Error(o.message);
          return o.row;
        }),
      );
    const write = (orgId: string) => async (rows: ValidInvoice[]) => {
      await db.transaction((trx) => writeDocumentsRecordingEvents(trx, orgId, 'middleware', rows));
    };
    await pool(mapped(invoices('W', 20 * BATCH)), CONCURRENCY, write(direct.organization.id));
    await db.raw('ANALYZE');
    const pidFile = path.resolve('var', 'bench', `push-${process.pid}`, 'pg', 'postmaster.pid');
    const postmasterPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : null;
    const children = { gateway: gateway.child.pid!, integrations_api: integrations.child.pid! };
    let failures = 0;
    const loadAtStart = { gateway_phase: Number(os.loadavg()[0]!.toFixed(2)), direct_phase: 0 };
    const cpuBeforeGateway = cpuSnapshot(children, postmasterPid);
    const gatewaySeconds = await pool(bodies, CONCURRENCY, async (body) => {
      const r = await post(agent, gateway.port, PATH, viaGateway.apiKey.token, body);
      if (r.status !== 200) throw new Error(`push: ${r.status} ${r.text}`);
      failures += (JSON.parse(r.text) as { results: { success: boolean }[] }).results.filter((x) => !x.success).length;
    });
    const cpuGateway = diff(cpuBeforeGateway, cpuSnapshot(children, postmasterPid));
    agent.destroy();
    process.stdout.write(`gateway: ${RECORDS} records in ${gatewaySeconds.toFixed(2)} s\n`);

    await db.raw('ANALYZE');
    const directBatches = mapped(records);
    loadAtStart.direct_phase = Number(os.loadavg()[0]!.toFixed(2));
    const cpuBeforeDirect = cpuSnapshot(children, postmasterPid);
    const directSeconds = await pool(directBatches, CONCURRENCY, write(direct.organization.id));
    const cpuDirect = diff(cpuBeforeDirect, cpuSnapshot(children, postmasterPid));
    process.stdout.write(`direct: ${RECORDS} records in ${directSeconds.toFixed(2)} s\n`);

    const count = async (orgId: string) =>
      Number((await db.raw<{ rows: { n: string }[] }>(`SELECT count(*) AS n FROM documents WHERE organization_id = ? AND document_number LIKE 'G%'`, [orgId])).rows[0]!.n);
    const linked = async (orgId: string) =>
      Number((await db.raw<{ rows: { n: string }[] }>(`SELECT count(*) AS n FROM documents WHERE organization_id = ? AND partner_id IS NOT NULL AND document_number LIKE 'G%'`, [orgId])).rows[0]!.n);
    const stored = { gateway: await count(viaGateway.organization.id), direct: await count(direct.organization.id) };
    const linkedCount = { gateway: await linked(viaGateway.organization.id), direct: await linked(direct.organization.id) };
    await db.destroy();

    const gatewayRate = RECORDS / gatewaySeconds;
    const directRate = RECORDS / directSeconds;
    const ratio = gatewayRate / directRate;
    const report = {
      benchmark: 'push',
      endpoint: `POST ${PATH}`,
      records: RECORDS,
      batch_size: BATCH,
      concurrency: CONCURRENCY,
      line_items_per_record: 1,
      machine: { cpus: os.cpus().length, node: process.version },
      results: {
        gateway: { seconds: Number(gatewaySeconds.toFixed(3)), records_per_s: Math.round(gatewayRate), requests_per_s: Number((bodies.length / gatewaySeconds).toFixed(1)) },
        direct: { seconds: Number(directSeconds.toFixed(3)), records_per_s: Math.round(directRate) },
      },
      ratio_gateway_vs_direct: Number(ratio.toFixed(3)),
      // CPU seconds each component used during each measured phase (Linux /proc): where the time goes,
      // independent of what else the machine was running. load_average: the machine's 1-minute load at the end.
      cpu_seconds: { gateway_phase: cpuGateway, direct_phase: cpuDirect },
      // the same per request of BATCH records (gateway phase: one HTTP request; direct phase: one transaction)
      cpu_ms_per_request: { gateway_phase: perRequestMs(cpuGateway, bodies.length), direct_phase: perRequestMs(cpuDirect, directBatches.length) },
      load_average_1m: Number(os.loadavg()[0]!.toFixed(2)),
      load_average_1m_at_phase_start: loadAtStart,
      check: { failed_records: failures, stored, linked_to_partner: linkedCount },
      targets: {
        gateway_records_per_s_min: 10_000,
        ratio_min: RATIO_MIN,
        throughput_met: gatewayRate >= 10_000,
        ratio_met: ratio >= RATIO_MIN,
      },
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/push.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report.results)}\n${JSON.stringify(report.cpu_seconds)}\ncpu ms/request ${JSON.stringify(report.cpu_ms_per_request)} load ${JSON.stringify(report.load_average_1m_at_phase_start)} → ${report.load_average_1m}\n${JSON.stringify({ ratio: report.ratio_gateway_vs_direct, ...report.targets, ...report.check })}\nwritten bench/results/push.json\n`);
    if (failures > 0 || stored.gateway !== RECORDS || stored.direct !== RECORDS) throw new Error('push bench: not every record was stored');
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
}
