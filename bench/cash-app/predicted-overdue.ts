/**
 * Case (a) of `npm run bench -- cash-app`: predicted overdue (spec 4.3 rule 2) over 1,000,000 open and
 * 2,000,000 closed invoices of 50,000 customers through the gateway (warm-up, then the median of
 * RUNS runs) against the bare SQL aggregation of the same tiers straight on Postgres.
 * Targets: ≤ 2 s and ≤ 1.5× the bare aggregation.
 */
import pg from 'pg';
import { generateLedger } from './ledger.js';
import { median, round1 } from './shared.js';

const VOLUME = {
  customers: Number(process.env.BENCH_CUSTOMERS ?? 50_000),
  open: Number(process.env.BENCH_OPEN ?? 1_000_000),
  closed: Number(process.env.BENCH_CLOSED ?? 2_000_000),
};
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const AS_OF_DAYS_AHEAD = 40; // a quarter end ~6 weeks away
const TIERS = [
  { days: 0, amount_lc: '150000.00' },
  { days: 30, amount_lc: '130000.00' },
  { days: 60, amount_lc: '105000.00' },
  { days: 90, amount_lc: '80000.00' },
];

/**
 * The bare aggregation of the same tiers, straight on Postgres: per customer LC sum and count per
 * tier, tripped customers only (reading the same open_lc_cents column and covering index).
 */
function bareAggregationSql(): string {
  const cols = TIERS.map((t, i) => `sum(cents) FILTER (WHERE age > ${t.days}) AS s${i}, count(*) FILTER (WHERE age > ${t.days}) AS c${i}`).join(', ');
  const having = TIERS.map((t) => `sum(cents) FILTER (WHERE age > ${t.days}) > ${t.amount_lc} * 100`).join(' OR ');
  return `SELECT partner_id, sum(cents) AS total, ${cols}
    FROM (SELECT partner_id, $2::date - net_due_date AS age, open_lc_cents AS cents FROM integrations.documents
          WHERE organization_id = $1 AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL) o
    GROUP BY partner_id HAVING ${having}`;
}

/** Generates the ledger into `orgId`'s organization, then times the endpoint against the bare SQL, alternating. */
export async function predictedOverdueBenchmark(gatewayUrl: string, token: string, client: pg.Client, orgId: string, log: (m: string) => void) {
  const genStart = Date.now();
  await generateLedger(client, orgId, { ...VOLUME, log });
  const generationS = (Date.now() - genStart) / 1000;

  const today = new Date().toISOString().slice(0, 10);
  const asOf = new Date(Date.now() + AS_OF_DAYS_AHEAD * 86_400_000).toISOString().slice(0, 10);
  const body = JSON.stringify({ as_of_date: asOf, evaluated_at: today, tiers: TIERS });
  const endpoint = async () => {
    const t = performance.now();
    const res = await fetch(`${gatewayUrl}/v2/analytics/predicted-overdue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`predicted-overdue: ${res.status} ${text.slice(0, 500)}`);
    const parsed = JSON.parse(text) as { customers: { tripped_tiers: unknown[] }[] };
    return { ms, customers: parsed.customers.length, bytes: text.length, tiers: parsed.customers.reduce((n, c) => n + c.tripped_tiers.length, 0) };
  };
  const bareSql = bareAggregationSql();
  const bare = async () => {
    const t = performance.now();
    const r = await client.query(bareSql, [orgId, asOf]);
    return { ms: performance.now() - t, customers: r.rowCount ?? 0 };
  };

  log('warm-up');
  await bare();
  await endpoint();
  const endpointMs: number[] = [];
  const bareMs: number[] = [];
  let last = { customers: 0, bytes: 0, tiers: 0 };
  let bareCustomers = 0;
  for (let i = 0; i < RUNS; i++) {
    const b = await bare();
    bareMs.push(b.ms);
    bareCustomers = b.customers;
    const r = await endpoint();
    endpointMs.push(r.ms);
    last = r;
    log(`run ${i + 1}: endpoint ${r.ms.toFixed(0)} ms, bare ${b.ms.toFixed(0)} ms`);
  }
  if (bareCustomers !== last.customers) throw new Error(`endpoint returned ${last.customers} customers, bare aggregation ${bareCustomers}`);

  const endpointMedian = median(endpointMs);
  const bareMedian = median(bareMs);
  const ratio = endpointMedian / bareMedian;
  const predictedOverdue = {
    volume: { customers: VOLUME.customers, open_invoices: VOLUME.open, closed_invoices: VOLUME.closed },
    generation_s: round1(generationS),
    as_of_date: asOf,
    evaluated_at: today,
    tiers: TIERS,
    tripped_customers: last.customers,
    tripped_tiers: last.tiers,
    response_bytes: last.bytes,
    runs: RUNS,
    endpoint_ms: endpointMs.map(round1),
    bare_sql_ms: bareMs.map(round1),
    endpoint_median_ms: round1(endpointMedian),
    bare_sql_median_ms: round1(bareMedian),
    ratio_endpoint_vs_bare: Number(ratio.toFixed(3)),
    targets: { max_ms: 2000, max_ratio: 1.5, ms_met: endpointMedian <= 2000, ratio_met: ratio <= 1.5 },
  };
  log(JSON.stringify(predictedOverdue));
  return predictedOverdue;
}
