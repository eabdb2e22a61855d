/**
 * `npm run bench -- reports` (results: bench/results/reports.json).
 *
 * The AR aging report over 1,000,000 open invoices of 50,000 customers (bench/cash-app/ledger.ts
 * generateLedger: generate_series straight into a fresh database; its open documents include 2%
 * credit memos, so it generates 1,020,408 documents to age 1,000,000 invoices), one organization:
 *   (a) the data build — the kernel ledger module's aging read (arAgingPages: one repeatable-read
 *       snapshot, the aggregation into a temporary table, then a server-side cursor over it in pages of
 *       2,000, rows turned into bigint cents and totalled per business unit) — against the bare SQL of
 *       the same buckets (the same statement with its ORDER BY, all rows fetched at once), interleaved
 *       in one run; medians. Target ≤ 1.5×. Both give the same rows and totals (checked).
 *   (b) the whole activity buildArAgingReport (read, XLSX + CSV written, both uploaded to a real S3
 *       server, versitygw) in a child process of its own, as the worker runs it; its time and its
 *       peak RSS (VmHWM). Targets: XLSX written in ≤ 15 s, peak memory ≤ 500 MB.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  AGING_BUCKETS,
  AR_AGING_ORDER,
  arAgingPages,
  arAgingSql,
  connectTemporal,
  createDb,
  startServiceApi,
  withLedgerSnapshot,
  type CommonConfig,
  type RunningApi,
  type ServiceModule,
} from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { SERVICE_MODULES } from '../scripts/local/services.js';
import { startObjectStorage } from '../scripts/local/object-storage.js';
import { startBenchEnvironment } from './support/environment.js';
import { generateLedger } from './cash-app/ledger.js';

const VOLUME = { customers: Number(process.env.BENCH_CUSTOMERS ?? 50_000), open: Number(process.env.BENCH_OPEN ?? 1_020_408), closed: 0 };
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const CHILD_RUNS = Number(process.env.BENCH_CHILD_RUNS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

interface ChildResult {
  ms: number;
  baseline_rss_kb: number;
  peak_rss_kb: number;
  row_count: number;
  counts: Record<string, number>;
  artifacts: { filename: string; size: number }[];
}

/** buildArAgingReport in a child process; its RSS is also sampled from outside every 25 ms. */
async function buildInChild(env: Record<string, string>): Promise<ChildResult & { sampled_peak_rss_kb: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/reports-build.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let sampled = 0;
  const timer = setInterval(() => {
    try {
      const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) sampled = Math.max(sampled, Number(m[1]));
    } catch {
      // exited
    }
  }, 25);
  try {
    const result = await new Promise<ChildResult>((resolve, reject) => {
      let found: ChildResult | null = null;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('RESULT ')) found = JSON.parse(line.slice(7)) as ChildResult;
      });
      child.once('exit', (code) => (found ? resolve(found) : reject(new Error(`the build child exited with ${code}`))));
    });
    return { ...result, sampled_peak_rss_kb: sampled };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const env = await startBenchEnvironment('reports');
  const s3 = await startObjectStorage({
    dataDir: path.resolve('var', 'bench', `reports-s3-${process.pid}`),
    accessKeyId: `bench-${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  });
  const apis: RunningApi[] = [];
  try {
    const e: Record<string, string> = {
      ...env.env,
      DATABASE_POOL_MAX: '4',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: 'bench-reports',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_REGION: s3.region,
    };
    // the schemas (migrations) of the services the report reads
    for (const name of ['admin', 'integrations', 'cash-app'] as const) {
      const entry = SERVICE_MODULES[name];
      apis.push(await startServiceApi(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { port: 0 }));
    }
    const temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS!, namespace: e.TEMPORAL_NAMESPACE! });
    const adminDb = createDb({ url: e.DATABASE_URL!, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: 'Reports bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'reports@example.com', name: 'Bench' } },
    );
    await adminDb.destroy();
    await temporal.close();
    for (const a of apis.splice(0)) await a.close();
    const orgId = org.organization.id;

    const client = new pg.Client({ connectionString: e.DATABASE_URL });
    client.on('error', () => {});
    await client.connect();
    const genStart = Date.now();
    await generateLedger(client, orgId, { ...VOLUME, log });
    const generationS = (Date.now() - genStart) / 1000;
    const { rows: [volume] } = await client.query<{ invoices: number; customers: number }>(
      `SELECT count(*)::int AS invoices, count(DISTINCT partner_id)::int AS customers FROM integrations.documents
       WHERE organization_id = $1 AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL`,
      [orgId],
    );
    log(`open invoices aged: ${volume!.invoices}, customers: ${volume!.customers}`);
    const asOf = new Date().toISOString().slice(0, 10);

    // (a) the data build against the bare SQL
    let n = 0;
    const bareText = `${arAgingSql('open_lc_cents')} ORDER BY ${AR_AGING_ORDER}`.replace(/\?/g, () => `$${++n}`);
    await client.query('SET jit = off'); // as the ledger module runs the statement
    const bare = async () => {
      const t = performance.now();
      const r = await client.query<Record<string, string>>(bareText, [asOf, orgId]);
      const ms = performance.now() - t;
      const totals = AGING_BUCKETS.map((_, i) => r.rows.reduce((s, row) => s + BigInt(row[`b${i}`]!), 0n));
      return { ms, rows: r.rows.length, totals };
    };
    const db = createDb({ url: e.DATABASE_URL!, schema: 'cash_app', poolMax: 2 });
    const build = async () => {
      const t = performance.now();
      const totals = AGING_BUCKETS.map(() => 0n);
      const perUnit = new Map<string | null, bigint>();
      let rows = 0;
      await withLedgerSnapshot(db, async (trx) => {
        for await (const page of arAgingPages(trx, orgId, { asOfDate: asOf, conversion: { currencies: ['EUR'], factors: ['1'] } })) {
          for (const r of page) {
            r.buckets.forEach((c, i) => (totals[i]! += c));
            perUnit.set(r.business_unit_id, (perUnit.get(r.business_unit_id) ?? 0n) + r.total);
            rows++;
          }
        }
      });
      return { ms: performance.now() - t, rows, totals };
    };
    await bare();
    await build();
    const bareMs: number[] = [];
    const buildMs: number[] = [];
    let check: { bare: Awaited<ReturnType<typeof bare>>; build: Awaited<ReturnType<typeof build>> } | null = null;
    for (let i = 0; i < RUNS; i++) {
      const b = await bare();
      const d = await build();
      bareMs.push(b.ms);
      buildMs.push(d.ms);
      check = { bare: b, build: d };
      log(`run ${i + 1}: bare ${b.ms.toFixed(0)} ms, data build ${d.ms.toFixed(0)} ms`);
    }
    await db.destroy();
    if (check!.bare.rows !== check!.build.rows || check!.bare.totals.some((t, i) => t !== check!.build.totals[i])) {
      throw new Error(`the data build and the bare SQL disagree: ${check!.bare.rows} vs ${check!.build.rows} rows`);
    }

    // (b) the whole activity in a child process
    const childRuns: (ChildResult & { sampled_peak_rss_kb: number })[] = [];
    for (let i = 0; i < CHILD_RUNS; i++) {
      const r = await buildInChild({ ...e, BENCH_ORG_ID: orgId, BENCH_AS_OF: asOf, BENCH_RUN_ID: `019a0000-0000-7000-8000-${randomBytes(6).toString('hex')}` });
      if (r.row_count !== check!.bare.rows) throw new Error(`the report has ${r.row_count} rows, the bare SQL ${check!.bare.rows}`);
      childRuns.push(r);
      log(`activity run ${i + 1}: ${r.ms.toFixed(0)} ms, peak RSS ${(r.peak_rss_kb / 1024).toFixed(0)} MB (before the build ${(r.baseline_rss_kb / 1024).toFixed(0)} MB)`);
    }
    await client.end();

    const bareMedian = median(bareMs);
    const buildMedian = median(buildMs);
    const activityMs = childRuns.map((r) => r.ms);
    const peakMb = childRuns.map((r) => r.peak_rss_kb / 1024);
    const result = {
      benchmark: 'reports',
      machine: { cpus: os.cpus().length, load_average_1m: round1(os.loadavg()[0]! * 100) / 100, node: process.version },
      volume: { customers: volume!.customers, open_invoices: volume!.invoices, report_rows: check!.bare.rows },
      generation_s: round1(generationS),
      runs: RUNS,
      data_build: {
        what: 'kernel ledger aging read (arAgingPages: repeatable-read snapshot, aggregation into a temp table, server-side cursor over it in pages of 2,000, bigint cents, totals per business unit) vs the same statement as bare SQL (all rows at once)',
        bare_sql_ms: bareMs.map(round1),
        data_build_ms: buildMs.map(round1),
        bare_sql_median_ms: round1(bareMedian),
        data_build_median_ms: round1(buildMedian),
        ratio: Math.round((buildMedian / bareMedian) * 100) / 100,
        target_ratio: 1.5,
        met: buildMedian / bareMedian <= 1.5,
      },
      activity: {
        what: 'buildArAgingReport in a child process: ledger read + XLSX (exceljs streaming) + CSV + both uploaded to S3 (versitygw)',
        runs: childRuns.map((r) => ({
          total_ms: round1(r.ms),
          peak_rss_mb: round1(r.peak_rss_kb / 1024),
          sampled_peak_rss_mb: round1(r.sampled_peak_rss_kb / 1024),
          rss_before_build_mb: round1(r.baseline_rss_kb / 1024),
          files: r.artifacts,
        })),
        median_total_ms: round1(median(activityMs)),
        max_total_ms: round1(Math.max(...activityMs)),
        max_peak_rss_mb: round1(Math.max(...peakMb)),
        target_ms: 15_000,
        target_peak_rss_mb: 500,
        met: Math.max(...activityMs) <= 15_000 && Math.max(...peakMb) <= 500,
      },
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/reports.json', `${JSON.stringify(result, null, 2)}\n`);
    log(`data build ${buildMedian.toFixed(0)} ms vs bare ${bareMedian.toFixed(0)} ms (${result.data_build.ratio}x); activity max ${result.activity.max_total_ms} ms, peak ${result.activity.max_peak_rss_mb} MB`);
  } finally {
    for (const a of apis) await a.close().catch(() => {});
    await s3.stop();
    rmSync(path.resolve('var', 'bench', `reports-s3-${process.pid}`), { recursive: true, force: true });
    await env.stop();
  }
}
