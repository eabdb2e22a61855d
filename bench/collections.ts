/**
 * `npm run bench -- collections` (results: bench/results/collections.json).
 *
 * 50,000 customers with 1,000,000 open invoices (bench/cash-app/ledger.ts generateLedger, no closed ones),
 * one organization (timezone UTC):
 *   (a) one segment page (page_size 500) through the gateway, GET /v2/customer-segments/{id}/partners,
 *       with a three-leaf condition including an aging field, against the bare hand-written SQL of the
 *       same condition, in one run. Target ≤ 300 ms and ≤ 2× the bare SQL.
 *   (b) the same with exclude_higher_priority over 10 segments (9 of higher priority), against the
 *       bare SQL of the same exclusion. Target ≤ 3× the bare SQL.
 * Both answers are checked to be the same partners in the same order as the bare SQL's.
 * (Template preview, the third target of §6, belongs to the email templates work.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { startBenchEnvironment } from './support/environment.js';
import { onboardBenchOrganization, startApisAndGateway, type BenchApis } from './support/stack.js';
import { generateLedger } from './cash-app/ledger.js';

const VOLUME = { customers: Number(process.env.BENCH_CUSTOMERS ?? 50_000), open: Number(process.env.BENCH_OPEN ?? 1_000_000), closed: 0 };
const RUNS = Number(process.env.BENCH_RUNS ?? 9);

const CONDITION = {
  all: [
    { field: 'name', op: 'starts_with', value: 'customer 1' },
    { field: 'max_days_overdue', op: 'gt', value: 100 },
    { field: 'total_open_lc', op: 'gte', value: '80000' },
  ],
};
/** the nine segments of higher priority: (open_invoice_count >= 21 + k AND overdue_lc > 60,000) */
const HIGHER = Array.from({ length: 9 }, (_, k) => ({
  all: [
    { field: 'open_invoice_count', op: 'gte', value: 21 + k },
    { field: 'overdue_lc', op: 'gt', value: '60000' },
  ],
}));

const AGG = `CROSS JOIN LATERAL (
    SELECT count(*) AS cnt, coalesce(sum(open_lc_cents), 0) AS open_cents,
           coalesce(sum(open_lc_cents) FILTER (WHERE net_due_date < t.today), 0) AS overdue_cents,
           coalesce(max(t.today - net_due_date) FILTER (WHERE net_due_date < t.today), 0) AS max_days
    FROM integrations.documents d
    WHERE d.organization_id = p.organization_id AND d.partner_id = p.id AND d.kind = 'invoice' AND d.status_open) a`;

function bareSql(exclude: boolean): string {
  const excluded = exclude ? HIGHER.map((_, k) => `AND NOT (a.cnt >= ${21 + k} AND a.overdue_cents > 6000000)`).join('\n      ') : '';
  return `SELECT p.id FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) t, integrations.partners p
    ${AGG}
    WHERE p.organization_id = $1 AND starts_with(lower(p.name), 'customer 1') AND a.max_days > 100 AND a.open_cents >= 8000000
      ${excluded}
    ORDER BY p.name, p.id LIMIT 500`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

export async function run(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const env = await startBenchEnvironment('collections');
  let stack: BenchApis | undefined;
  try {
    const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10' };
    stack = await startApisAndGateway(e);
    const gatewayUrl = stack.gatewayUrl;
    const { orgId, token } = await onboardBenchOrganization(e, 'Collections bench', 'collections@example.com');
    const client = new pg.Client({ connectionString: e.DATABASE_URL });
    client.on('error', () => {});
    await client.connect();

    const genStart = Date.now();
    await generateLedger(client, orgId, { ...VOLUME, log });
    const generationS = (Date.now() - genStart) / 1000;

    const call = async (method: string, path: string, body?: unknown) => {
      const t = performance.now();
      const res = await fetch(gatewayUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
      return { ms, body: JSON.parse(text) as unknown };
    };
    for (let k = 0; k < HIGHER.length; k++) await call('POST', '/v2/customer-segments', { name: `Higher ${k + 1}`, priority: k + 1, conditions: HIGHER[k] });
    const segment = (await call('POST', '/v2/customer-segments', { name: 'Measured', priority: 10, conditions: CONDITION })).body as { id: string };

    const measure = async (exclude: boolean) => {
      const path = `/v2/customer-segments/${segment.id}/partners?page_size=500${exclude ? '&exclude_higher_priority=true' : ''}`;
      const sql = bareSql(exclude);
      const endpoint = async () => {
        const r = await call('GET', path);
        return { ms: r.ms, ids: (r.body as { id: string }[]).map((p) => p.id) };
      };
      const bare = async () => {
        const t = performance.now();
        const r = await client.query<{ id: string }>(sql, [orgId]);
        return { ms: performance.now() - t, ids: r.rows.map((x) => x.id) };
      };
      await bare();
      await endpoint();
      const endpointMs: number[] = [];
      const bareMs: number[] = [];
      let ids: string[] = [];
      let bareIds: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const b = await bare();
        bareMs.push(b.ms);
        bareIds = b.ids;
        const r = await endpoint();
        endpointMs.push(r.ms);
        ids = r.ids;
        log(`${exclude ? 'exclusion' : 'page'} run ${i + 1}: endpoint ${r.ms.toFixed(0)} ms, bare ${b.ms.toFixed(0)} ms`);
      }
      if (JSON.stringify(ids) !== JSON.stringify(bareIds)) throw new Error(`endpoint and bare SQL disagree (${ids.length} vs ${bareIds.length} partners)`);
      return { partners: ids.length, endpointMs, bareMs, endpointMedian: median(endpointMs), bareMedian: median(bareMs) };
    };

    const page = await measure(false);
    const excl = await measure(true);
    await client.end();
    const pageRatio = page.endpointMedian / page.bareMedian;
    const exclRatio = excl.endpointMedian / excl.bareMedian;
    const report = {
      benchmark: 'collections',
      machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)), node: process.version },
      volume: { customers: VOLUME.customers, open_invoices: VOLUME.open },
      generation_s: round1(generationS),
      runs: RUNS,
      segment_page: {
        condition: CONDITION,
        page_size: 500,
        partners: page.partners,
        endpoint_ms: page.endpointMs.map(round1),
        bare_sql_ms: page.bareMs.map(round1),
        endpoint_median_ms: round1(page.endpointMedian),
        bare_sql_median_ms: round1(page.bareMedian),
        ratio_endpoint_vs_bare: Number(pageRatio.toFixed(3)),
        targets: { max_ms: 300, max_ratio: 2, ms_met: page.endpointMedian <= 300, ratio_met: pageRatio <= 2 },
      },
      exclude_higher_priority: {
        higher_segments: HIGHER,
        partners: excl.partners,
        endpoint_ms: excl.endpointMs.map(round1),
        bare_sql_ms: excl.bareMs.map(round1),
        endpoint_median_ms: round1(excl.endpointMedian),
        bare_sql_median_ms: round1(excl.bareMedian),
        ratio_endpoint_vs_bare: Number(exclRatio.toFixed(3)),
        targets: { max_ratio: 3, ratio_met: exclRatio <= 3 },
      },
    };
    log(JSON.stringify(report));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/collections.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/collections.json');
  } finally {
    await stack?.close();
    await env.stop().catch(() => {});
  }
}
