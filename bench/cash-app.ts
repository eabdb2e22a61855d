/**
 * Cash-application benchmarks, in one run (results: bench/results/cash-app.json):
 *
 * (a) Predicted overdue (spec 4.3 rule 2) over 1,000,000 open and 2,000,000 closed invoices of
 *     50,000 customers, generated straight into a fresh database with generate_series. The endpoint
 *     is timed through the gateway (warm-up, then the median of several runs; every service API and
 *     the gateway in its own process, as deployed) against the bare SQL
 *     aggregation of the same tiers run straight on Postgres (per customer and tier: LC sum and
 *     count of the invoices aged past the tier, customers with a tripped tier). Target: ≤ 2 s and
 *     ≤ 1.5× the bare aggregation.
 * (b) A CAMT.053 statement of 10,000 incoming transfers against 20,000 open invoices (2,000
 *     customers) of another organization: uploaded through the gateway (multipart), processed by
 *     the bank-statement workflow on a cash-app worker (parse, store, classify, match, propose
 *     payments) until `ready`. Each transfer pays one invoice, named in its remittance information,
 *     from its customer. Target: ≤ 30 s; reported as transactions per second.
 * (c) Predicted overdue, the pathological customer: one customer with 40 open invoices of
 *     10,000.00..60,000.00, all uncertain (1..40 days late today, a payment history spread over 0..120
 *     days), and a 1,000,000.00 tier near the middle of the distribution (the hardest case for the error). The exact run would track millions of partial sums; the endpoint
 *     answers at a bounded resolution on a worker thread. Reported: its time through the gateway
 *     (median), the reported error bound, and the actual error against the exact answer computed here
 *     by meet in the middle (2 × 2^20 sums).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { connectTemporal, createDb, startServiceWorker, type CommonConfig, type ServiceModule } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { workflowsPath } from '@rp/workflows/paths';
import type { ServiceName } from '@rp/api-gateway';
import { SERVICE_MODULES } from '../scripts/local/services.js';
import { startBenchEnvironment } from './support/environment.js';
import { serveInChild } from './support/process.js';
import { blendedSurvival, SurvivalCurve, unpaidProbability } from '../services/cash-app/src/domain/predicted-overdue.js';
import { exactTailByMeetInTheMiddle, tailProbability } from '../services/cash-app/src/domain/tail-probability.js';

export interface LedgerVolume {
  customers: number;
  open: number;
  closed: number;
  log?: (msg: string) => void;
}

/**
 * Fill integrations.partners and integrations.documents for one organization, fast (set-based
 * INSERT … SELECT over generate_series; ids derived from md5 so partners and documents line up).
 *   - customers: `C-<n>`, account `ACC-<n>`, business unit round robin over four
 *   - open invoices: due between today − 119 and today + 30 days, 50.00..10,000.00, 20% in USD at
 *     0.92 to EUR, 10% partially open (40% left), 2% are credit memos (ignored by the aging)
 *   - closed invoices: due in the last two years, cleared L days after due, L skewed by a customer
 *     profile (1..5): L = floor(u²·60·profile/3) − 5
 */
export async function generateLedger(client: pg.Client, orgId: string, v: LedgerVolume): Promise<{ businessUnits: string[] }> {
  const log = v.log ?? (() => {});
  await client.query(`SET synchronous_commit = off`);
  await client.query(`SET maintenance_work_mem = '256MB'`);
  // Bulk load without the secondary indexes (building them afterwards is far cheaper than maintaining them row by row).
  const { rows: indexes } = await client.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
     WHERE i.schemaname = 'integrations' AND i.tablename IN ('documents', 'partners')
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
  );
  for (const ix of indexes) await client.query(`DROP INDEX integrations.${ix.name}`);
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, business_unit_id, origin, remote_id, account_number, name)
     SELECT md5($1 || ':p:' || i)::uuid, $1::uuid, md5($1 || ':bu:' || (1 + i % 4))::uuid, 'middleware', 'C-' || i,
            'ACC-' || lpad(i::text, 6, '0'), 'Customer ' || i
     FROM generate_series(1, $2::int) i`,
    [orgId, v.customers],
  );
  log(`partners: ${v.customers}`);
  const chunk = 250_000;
  for (let from = 1; from <= v.open; from += chunk) {
    const to = Math.min(v.open, from + chunk - 1);
    await client.query(
      `INSERT INTO integrations.documents (id, organization_id, business_unit_id, origin, kind, remote_id, partner_id, customer_code,
         company_code, fiscal_year, document_number, currency, net_due_date, document_date, amount_in_document_currency,
         amount_in_local_currency, amount_open, status_open)
       SELECT (substr(md5($1), 1, 8) || '-0000-7000-8001-' || lpad(to_hex(g), 12, '0'))::uuid, $1::uuid, md5($1 || ':bu:' || (1 + c % 4))::uuid, 'middleware',
              CASE WHEN g % 50 = 0 THEN 'credit_memo' ELSE 'invoice' END, 'O' || g, md5($1 || ':p:' || c)::uuid, 'C-' || c,
              '1000', '2026', 'O' || g, CASE WHEN usd THEN 'USD' ELSE 'EUR' END, due, due - 30, amount,
              CASE WHEN usd THEN round(amount * 0.92, 2) ELSE amount END,
              CASE WHEN g % 10 = 3 THEN round(amount * 0.4, 2) ELSE amount END, true
       FROM (SELECT g, 1 + floor(random() * $4::int)::int AS c, current_date + (30 - floor(random() * 150))::int AS due,
                    round((50 + random() * 9950)::numeric, 2) AS amount, random() < 0.2 AS usd
             FROM generate_series($2::int, $3::int) g) s`,
      [orgId, from, to, v.customers],
    );
    log(`open invoices: ${to}`);
  }
  for (let from = 1; from <= v.closed; from += chunk) {
    const to = Math.min(v.closed, from + chunk - 1);
    await client.query(
      `INSERT INTO integrations.documents (id, organization_id, business_unit_id, origin, kind, remote_id, partner_id, customer_code,
         company_code, fiscal_year, document_number, currency, net_due_date, document_date, clearing_date,
         amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
       SELECT (substr(md5($1), 1, 8) || '-0000-7000-8002-' || lpad(to_hex(g), 12, '0'))::uuid, $1::uuid, md5($1 || ':bu:' || (1 + c % 4))::uuid,
              'middleware', 'invoice', 'X' || g,
              md5($1 || ':p:' || c)::uuid, 'C-' || c, '1000', '2025', 'X' || g, 'EUR', due, due - 30,
              due + (floor(power(random(), 2) * 60 * (1 + c % 5) / 3) - 5)::int, amount, amount, 0, false
       FROM (SELECT g, 1 + floor(random() * $4::int)::int AS c, current_date - 1 - floor(random() * 720)::int AS due,
                    round((50 + random() * 9950)::numeric, 2) AS amount
             FROM generate_series($2::int, $3::int) g) s`,
      [orgId, from, to, v.customers],
    );
    log(`closed invoices: ${to}`);
  }
  for (const ix of indexes) await client.query(ix.def);
  log(`indexes rebuilt: ${indexes.length}`);
  await client.query('VACUUM ANALYZE integrations.partners');
  await client.query('VACUUM ANALYZE integrations.documents');
  await client.query('CHECKPOINT'); // write the bulk load back now, not during the measured runs
  log('vacuum analyze, checkpoint');
  const { rows } = await client.query<{ id: string }>(`SELECT md5($1 || ':bu:' || i)::uuid::text AS id FROM generate_series(1, 4) i`, [orgId]);
  return { businessUnits: rows.map((r) => r.id) };
}

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

/** The statement benchmark's section of the existing results file (a run that skipped it), marked as carried over. */
function previousStatementResult(): unknown {
  try {
    const previous = JSON.parse(readFileSync('bench/results/cash-app.json', 'utf8')) as { bank_statement_camt053?: Record<string, unknown> | null };
    const section = previous.bank_statement_camt053;
    if (!section) return null;
    return { ...section, carried_over: section.carried_over ?? 'from an earlier run (this one skipped it: BENCH_SKIP_STATEMENT=1)' };
  } catch {
    return null;
  }
}

const STATEMENT_TRANSACTIONS = Number(process.env.BENCH_STATEMENT_TRANSACTIONS ?? 10_000);
const STATEMENT_INVOICES = Number(process.env.BENCH_STATEMENT_INVOICES ?? 20_000);
const STATEMENT_CUSTOMERS = 2_000;
const STATEMENT_IBAN = 'DE89370400440532013000';

/** 20,000 open invoices of 2,000 customers for the statement benchmark; returns the first `paid` of them (number, amount, customer). */
async function generateStatementLedger(client: pg.Client, orgId: string, paid: number): Promise<{ number: string; amount: string; payer: string }[]> {
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, origin, remote_id, account_number, name)
     SELECT md5($1 || ':sp:' || i)::uuid, $1::uuid, 'middleware', 'S-' || i, 'SACC-' || i, 'Payer Company ' || i || ' Ltd'
     FROM generate_series(1, $2::int) i`,
    [orgId, STATEMENT_CUSTOMERS],
  );
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, reference, currency, net_due_date, document_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', (7100000 + g)::text, md5($1 || ':sp:' || (1 + g % $3::int))::uuid,
       'S-' || (1 + g % $3::int), '1000', '2026', (7100000 + g)::text, 'INV-' || (7100000 + g), 'EUR', current_date - 10, current_date - 40,
       amount, amount, amount, true
     FROM (SELECT g, round((50 + random() * 9950)::numeric, 2) AS amount FROM generate_series(1, $2::int) g) s`,
    [orgId, STATEMENT_INVOICES, STATEMENT_CUSTOMERS],
  );
  await client.query('ANALYZE integrations.documents');
  const { rows } = await client.query<{ number: string; amount: string; payer: string }>(
    `SELECT d.document_number AS number, d.amount_open::numeric(20, 2)::text AS amount, p.name AS payer
     FROM integrations.documents d JOIN integrations.partners p ON p.id = d.partner_id
     WHERE d.organization_id = $1 ORDER BY d.document_number LIMIT $2`,
    [orgId, paid],
  );
  return rows;
}

/** A camt.053.001.02 statement with one booked credit entry per paid invoice. */
function camtStatement(payments: { number: string; amount: string; payer: string }[]): string {
  const day = new Date().toISOString().slice(0, 10);
  const total = payments.reduce((cents, p) => cents + Math.round(Number(p.amount) * 100), 0);
  const entries = payments.map(
    (p, i) => `      <Ntry>
        <Amt Ccy="EUR">${p.amount}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>${day}</Dt></BookgDt>
        <ValDt><Dt>${day}</Dt></ValDt>
        <AcctSvcrRef>BENCH${String(i + 1).padStart(8, '0')}</AcctSvcrRef>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <TxDtls>
            <Refs><EndToEndId>E2E-${p.number}</EndToEndId></Refs>
            <RltdPties><Dbtr><Nm>${p.payer}</Nm></Dbtr></RltdPties>
            <RmtInf><Ustrd>Invoice ${p.number}</Ustrd></RmtInf>
          </TxDtls>
        </NtryDtls>
      </Ntry>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>BENCH-${Date.now()}</MsgId><CreDtTm>${day}T18:00:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>BENCH-STMT-${Date.now()}</Id>
      <CreDtTm>${day}T18:00:00</CreDtTm>
      <Acct><Id><IBAN>${STATEMENT_IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>
      <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${(total / 100).toFixed(2)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>
${entries.join('\n')}
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;
}

async function statementBenchmark(gatewayUrl: string, token: string, client: pg.Client, orgId: string, log: (m: string) => void) {
  const payments = await generateStatementLedger(client, orgId, STATEMENT_TRANSACTIONS);
  const xml = camtStatement(payments);
  log(`statement: ${payments.length} transactions, ${(xml.length / 1e6).toFixed(1)} MB`);
  const form = new FormData();
  form.set('format', 'camt053');
  form.set('file', new Blob([xml]), 'bench-camt053.xml');
  const t0 = performance.now();
  const res = await fetch(`${gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const created = (await res.json()) as { id?: string; status?: string };
  const uploadMs = performance.now() - t0;
  if (res.status !== 200 || !created.id) throw new Error(`statement upload: ${res.status} ${JSON.stringify(created).slice(0, 500)}`);
  let status = created.status;
  let body: Record<string, unknown> = {};
  const deadline = Date.now() + 300_000;
  while (status !== 'ready' && status !== 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const r = await fetch(`${gatewayUrl}/v2/bank-statements/${created.id}?transactions=omit`, { headers: { authorization: `Bearer ${token}` } });
    body = (await r.json()) as Record<string, unknown>;
    status = body.status as string;
  }
  const totalMs = performance.now() - t0;
  if (status !== 'ready') throw new Error(`statement ended ${status}: ${JSON.stringify(body).slice(0, 500)}`);
  const [counts] = (
    await client.query<{ transactions: number; payments: number; allocations: number }>(
      `SELECT (SELECT count(*)::int FROM cash_app.bank_transactions WHERE organization_id = $1) AS transactions,
              (SELECT count(*)::int FROM cash_app.payments WHERE organization_id = $1) AS payments,
              (SELECT count(*)::int FROM cash_app.payment_allocations WHERE organization_id = $1) AS allocations`,
      [orgId],
    )
  ).rows;
  const result = {
    transactions: payments.length,
    open_invoices: STATEMENT_INVOICES,
    file_bytes: xml.length,
    upload_ms: round1(uploadMs),
    upload_to_ready_ms: round1(totalMs),
    transactions_per_s: round1(payments.length / (totalMs / 1000)),
    stored_transactions: counts.transactions,
    proposed_payments: counts.payments,
    payment_allocations: counts.allocations,
    targets: { max_ms: 30_000, met: totalMs <= 30_000 },
  };
  log(JSON.stringify(result));
  return result;
}

const PATHOLOGICAL_INVOICES = 40;
const PATHOLOGICAL_TIER = { days: 0, amount_lc: '1000000.00' };

/** (c): the pathological customer in an organization of its own. */
async function pathologicalBenchmark(gatewayUrl: string, token: string, client: pg.Client, orgId: string, log: (m: string) => void) {
  let x = 20261122;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const amounts = Array.from({ length: PATHOLOGICAL_INVOICES }, () => Math.round((10000 + next() * 50000) * 100)); // cents: about 1,400,000.00 in all, ~1,000,000.00 expected at as_of
  const today = new Date().toISOString().slice(0, 10);
  const asOfDaysAhead = 30;
  const asOf = new Date(Date.now() + asOfDaysAhead * 86_400_000).toISOString().slice(0, 10);
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, origin, remote_id, account_number, name)
     VALUES (md5($1 || ':pp')::uuid, $1::uuid, 'middleware', 'PATH-1', 'PATH-1', 'Pathological customer')`,
    [orgId],
  );
  // open: invoice i (1..40, ordinality) is i days late today; closed: one invoice cleared L days after due for L = 0..120
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, currency, net_due_date, document_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', 'PO-' || i, md5($1 || ':pp')::uuid, 'PATH-1', '1000', '2026', 'PO-' || i, 'EUR',
       current_date - i::int, current_date - (i + 30)::int, a / 100.0, a / 100.0, a / 100.0, true
     FROM unnest($2::bigint[]) WITH ORDINALITY AS t(a, i)`,
    [orgId, amounts],
  );
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, currency, net_due_date, document_date, clearing_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', 'PC-' || l, md5($1 || ':pp')::uuid, 'PATH-1', '1000', '2025', 'PC-' || l, 'EUR',
       current_date - 400, current_date - 430, current_date - 400 + l, 100, 100, 0, false
     FROM generate_series(0, 120) l`,
    [orgId],
  );
  const body = JSON.stringify({ as_of_date: asOf, evaluated_at: today, tiers: [PATHOLOGICAL_TIER] });
  const request = async () => {
    const t = performance.now();
    const res = await fetch(`${gatewayUrl}/v2/analytics/predicted-overdue`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`pathological predicted-overdue: ${res.status} ${text.slice(0, 500)}`);
    const tier = (JSON.parse(text) as { customers: { tripped_tiers: { trip_probability: number; trip_probability_max_error: number }[] }[] }).customers[0]?.tripped_tiers[0];
    if (!tier) throw new Error(`pathological predicted-overdue: the tier did not trip: ${text.slice(0, 500)}`);
    return { ms, tier };
  };
  await request(); // warm-up (starts the worker thread)
  const runs: number[] = [];
  let tier = (await request()).tier;
  for (let i = 0; i < 5; i++) {
    const r = await request();
    runs.push(r.ms);
    tier = r.tier;
  }
  // the same model in process: history 0..120 (the customer's and the organization's), p per invoice
  const history = Array.from({ length: 121 }, (_, l) => l);
  const survival = blendedSurvival(SurvivalCurve.fromValues(history), new SurvivalCurve(history.map((l) => [l, 1] as const)));
  const items = amounts.map((cents, i) => ({ cents, p: unpaidProbability(survival, i + 1, i + 1 + asOfDaysAhead) }));
  const threshold = Number(PATHOLOGICAL_TIER.amount_lc.replace('.', ''));
  let t = performance.now();
  const exact = exactTailByMeetInTheMiddle(items, threshold);
  const exactMs = performance.now() - t;
  t = performance.now();
  const inProcess = tailProbability(items, threshold);
  const boundedMs = performance.now() - t;
  const result = {
    invoices: PATHOLOGICAL_INVOICES,
    tier: PATHOLOGICAL_TIER,
    uncertain_invoices: items.filter((it) => it.p > 0 && it.p < 1).length,
    endpoint_ms: runs.map(round1),
    endpoint_median_ms: round1(median(runs)),
    trip_probability: tier.trip_probability,
    reported_max_error: tier.trip_probability_max_error,
    exact_probability: exact,
    actual_error: Math.abs(tier.trip_probability - exact),
    resolution_cents: inProcess.resolution,
    bounded_computation_ms: round1(boundedMs),
    exact_meet_in_the_middle_ms: round1(exactMs),
    targets: { error_within_bound: Math.abs(tier.trip_probability - exact) <= tier.trip_probability_max_error + 1e-12 },
  };
  log(JSON.stringify(result));
  return result;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Every service's API and the gateway in front of them, each in its own process as deployed
 * (docker-compose.yml: one container per service API), rate limit off; `gatewayEnv` adds gateway
 * settings. Each server's stop goes into `stops` as it starts, so the caller's clean-up stops what
 * started. Its own process matters for what is measured: the answer's serialization (cash-app), its
 * proxying (gateway) and its reading (this process) run on their own event loops, as in production.
 */
async function startApisAndGateway(e: Record<string, string>, stops: Array<() => Promise<void>>, gatewayEnv: Record<string, string>): Promise<{ port: number }> {
  const ports = {} as Record<ServiceName, number>;
  for (const name of Object.keys(SERVICE_MODULES) as ServiceName[]) {
    const api = await serveInChild(`${name}-api`, e);
    stops.push(api.stop);
    ports[name] = api.port;
  }
  const gateway = await serveInChild('gateway', {
    ...e,
    ADMIN_URL: `http://127.0.0.1:${ports.admin}`,
    INTEGRATIONS_URL: `http://127.0.0.1:${ports.integrations}`,
    CASH_APP_URL: `http://127.0.0.1:${ports['cash-app']}`,
    KNOWLEDGE_URL: `http://127.0.0.1:${ports.knowledge}`,
    RATE_LIMIT_PER_SECOND: '0',
    ...gatewayEnv,
  });
  stops.push(gateway.stop);
  return { port: gateway.port };
}

export async function run(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const env = await startBenchEnvironment('cash-app');
  const servers: Array<() => Promise<void>> = [];
  let worker: Awaited<ReturnType<typeof startServiceWorker>> | undefined;
  try {
    const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10' };
    const gateway = await startApisAndGateway(e, servers, {});
    const gatewayUrl = `http://127.0.0.1:${gateway.port}`;

    const temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE });
    const adminDb = createDb({ url: e.DATABASE_URL, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: 'Bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'bench@example.com', name: 'Bench' } },
    );
    const statementOrg = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: 'Statement bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'statements@example.com', name: 'Bench' } },
    );
    const pathologicalOrg = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: 'Pathological bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'pathological@example.com', name: 'Bench' } },
    );
    await adminDb.destroy();
    await temporal.close();
    const orgId = org.organization.id;
    const token = org.accessToken.token;

    const client = new pg.Client({ connectionString: e.DATABASE_URL });
    client.on('error', () => {}); // the environment's shutdown after a failure must not mask that failure
    await client.connect();

    // (b) first, on a small ledger of its own organization
    let statement: Awaited<ReturnType<typeof statementBenchmark>> | null = null;
    if (process.env.BENCH_SKIP_STATEMENT !== '1') {
      const entry = SERVICE_MODULES['cash-app'];
      log('starting the cash-app worker');
      worker = await startServiceWorker(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { workflowsPath });
      statement = await statementBenchmark(gatewayUrl, statementOrg.accessToken.token, client, statementOrg.organization.id, log);
      await worker.close();
      worker = undefined;
    }

    // (c) on its own organization, before the large ledger exists
    const pathological = await pathologicalBenchmark(gatewayUrl, pathologicalOrg.accessToken.token, client, pathologicalOrg.organization.id, log);

    // (a)
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
    await client.end();
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

    const report = {
      benchmark: 'cash-app',
      machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0].toFixed(2)), node: process.version },
      predicted_overdue: predictedOverdue,
      predicted_overdue_pathological: pathological,
      // BENCH_SKIP_STATEMENT=1: the statement's figures of the previous results file stay, marked as such
      bank_statement_camt053: statement ?? previousStatementResult(),
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/cash-app.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/cash-app.json');
  } finally {
    await worker?.close().catch(() => {});
    for (const stop of servers.reverse()) await stop().catch(() => {});
    await env.stop().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// (c) `npm run bench -- cash-app-large-statement` (results: bench/results/cash-app-large-statement.json)
//
// A 100,000-line CAMT.053 statement against 200,000 open invoices (20,000 customers): upload through
// the gateway, processed by the bank-statement workflow on one cash-app worker until `ready`. Before
// the activities heartbeated inside parsing and context loading, a statement of this size exceeded
// the heartbeat timeout and failed after its retries; now it must complete. Also measured: how long a
// DELETE takes to answer when it cancels a statement while the workflow stores its lines and while
// it matches them (target ≤ 3 s; the SDK's heartbeat throttle used to make it up to ~10 s).

const LARGE_LINES = Number(process.env.BENCH_LARGE_LINES ?? 100_000);
const LARGE_INVOICES = Number(process.env.BENCH_LARGE_INVOICES ?? 200_000);
const LARGE_CUSTOMERS = 20_000;

/** Open invoices for the large statement; returns the first `paid` (number, amount, payer) in number order. */
async function generateLargeLedger(client: pg.Client, orgId: string, paid: number): Promise<{ number: string; amount: string; payer: string }[]> {
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, origin, remote_id, account_number, name)
     SELECT md5($1 || ':lp:' || i)::uuid, $1::uuid, 'middleware', 'L-' || i, 'LACC-' || i, 'Large Payer ' || i || ' GmbH'
     FROM generate_series(1, $2::int) i`,
    [orgId, LARGE_CUSTOMERS],
  );
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, reference, currency, net_due_date, document_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', (8100000 + g)::text, md5($1 || ':lp:' || (1 + g % $3::int))::uuid,
       'L-' || (1 + g % $3::int), '1000', '2026', (8100000 + g)::text, 'INV-' || (8100000 + g), 'EUR', current_date - (g % 90), current_date - 30 - (g % 90),
       amount, amount, amount, true
     FROM (SELECT g, round((50 + random() * 9950)::numeric, 2) AS amount FROM generate_series(1, $2::int) g) s`,
    [orgId, LARGE_INVOICES, LARGE_CUSTOMERS],
  );
  await client.query('ANALYZE integrations.documents');
  await client.query('ANALYZE integrations.partners');
  const { rows } = await client.query<{ number: string; amount: string; payer: string }>(
    `SELECT d.document_number AS number, d.amount_open::numeric(20, 2)::text AS amount, p.name AS payer
     FROM integrations.documents d JOIN integrations.partners p ON p.id = d.partner_id
     WHERE d.organization_id = $1 ORDER BY d.document_number LIMIT $2`,
    [orgId, paid],
  );
  return rows;
}

/** A compact camt.053.001.02 statement (one line per entry, to stay under the 50 MB upload limit). */
function compactCamt(iban: string, statementId: string, payments: { number: string; amount: string; payer: string }[]): string {
  const day = new Date().toISOString().slice(0, 10);
  const entries = payments.map(
    (p, i) =>
      `<Ntry><Amt Ccy="EUR">${p.amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>${day}</Dt></BookgDt><AcctSvcrRef>${i + 1}</AcctSvcrRef>` +
      `<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd><NtryDtls><TxDtls>` +
      `<RltdPties><Dbtr><Nm>${p.payer}</Nm></Dbtr></RltdPties><RmtInf><Ustrd>Invoice ${p.number}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>${statementId}</MsgId><CreDtTm>${day}T18:00:00</CreDtTm></GrpHdr>
<Stmt><Id>${statementId}</Id><CreDtTm>${day}T18:00:00</CreDtTm><Acct><Id><IBAN>${iban}</IBAN></Id><Ccy>EUR</Ccy></Acct>
${entries.join('\n')}
</Stmt></BkToCstmrStmt></Document>
`;
}

async function uploadCamt(gatewayUrl: string, token: string, xml: string, name: string): Promise<{ id: string; uploadMs: number }> {
  const form = new FormData();
  form.set('format', 'camt053');
  form.set('file', new Blob([xml]), name);
  const t0 = performance.now();
  const res = await fetch(`${gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 200 || !body.id) throw new Error(`statement upload: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  return { id: body.id, uploadMs: performance.now() - t0 };
}

async function statementStatus(client: pg.Client, id: string): Promise<{ status: string; error: string | null; lines: number; payments: number }> {
  const { rows } = await client.query<{ status: string; error: string | null; lines: number; payments: number }>(
    `SELECT s.status, s.error,
            (SELECT count(*)::int FROM cash_app.bank_transactions t WHERE t.statement_id = s.id) AS lines,
            (SELECT count(*)::int FROM cash_app.payments p JOIN cash_app.bank_transactions t ON t.id = p.bank_transaction_id WHERE t.statement_id = s.id) AS payments
     FROM cash_app.bank_statements s WHERE s.id = $1`,
    [id],
  );
  return rows[0] ?? { status: 'deleted', error: null, lines: 0, payments: 0 };
}

/** Per activity of the statement's workflow: wall time from scheduled to closed, in ms, and attempts. */
async function activityTimes(temporal: Awaited<ReturnType<typeof connectTemporal>>, workflowId: string) {
  const events = (await temporal.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + Math.round((t?.nanos ?? 0) / 1e6);
  const scheduled = new Map<string, { name: string; at: number }>();
  const out: Record<string, { ms: number; attempts: number }> = {};
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { name: s.activityType?.name ?? '?', at: ms(e.eventTime) });
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const a = scheduled.get(String(started.scheduledEventId));
      if (a) out[a.name] = { ms: out[a.name]?.ms ?? 0, attempts: started.attempt ?? 1 };
    }
    if (closed) {
      const a = scheduled.get(String(closed.scheduledEventId));
      if (a) out[a.name] = { ms: ms(e.eventTime) - a.at, attempts: out[a.name]?.attempts ?? 1 };
    }
  }
  return out;
}

export async function runLargeStatement(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const loadBefore = os.loadavg().map((x) => Number(x.toFixed(2)));
  const env = await startBenchEnvironment('cash-app-large-statement');
  const servers: Array<() => Promise<void>> = [];
  let worker: Awaited<ReturnType<typeof startServiceWorker>> | undefined;
  let temporal: Awaited<ReturnType<typeof connectTemporal>> | undefined;
  const client = new pg.Client({ connectionString: env.env.DATABASE_URL });
  try {
    const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10' };
    // The 38.6 MB upload is parsed (validated) in the request; on the shared bench machine that takes
    // longer than the default 30 s upstream timeout. Its time is reported as upload_ms.
    const gateway = await startApisAndGateway(e, servers, { UPSTREAM_TIMEOUT_MS: '600000' });
    const gatewayUrl = `http://127.0.0.1:${gateway.port}`;
    temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE });
    const adminDb = createDb({ url: e.DATABASE_URL, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: 'Large statement bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'large@example.com', name: 'Bench' } },
    );
    await adminDb.destroy();
    const orgId = org.organization.id;
    const token = org.accessToken.token;
    await client.connect();

    // the large statement pays the first LARGE_LINES invoices, the two deleted statements 20,000 others each
    const paid = await generateLargeLedger(client, orgId, LARGE_LINES + 40_000);
    const payments = paid.slice(0, LARGE_LINES);
    log(`ledger: ${LARGE_INVOICES} open invoices of ${LARGE_CUSTOMERS} customers`);
    const entry = SERVICE_MODULES['cash-app'];
    worker = await startServiceWorker(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { workflowsPath });

    // The large statement, from upload to ready.
    const xml = compactCamt('DE89370400440532013000', `LARGE-${Date.now()}`, payments);
    log(`statement: ${payments.length} lines, ${(xml.length / 1e6).toFixed(1)} MB`);
    const t0 = performance.now();
    const { id, uploadMs } = await uploadCamt(gatewayUrl, token, xml, 'large-camt053.xml');
    let s = await statementStatus(client, id);
    while (s.status !== 'ready' && s.status !== 'failed' && performance.now() - t0 < 30 * 60_000) {
      await new Promise((r) => setTimeout(r, 500));
      s = await statementStatus(client, id);
    }
    const totalMs = performance.now() - t0;
    if (s.status !== 'ready') throw new Error(`large statement ended ${s.status}: ${s.error ?? ''}`);
    const activities = await activityTimes(temporal, `bank-statement-${id}`);
    const large = {
      lines: payments.length,
      open_invoices: LARGE_INVOICES,
      file_bytes: xml.length,
      upload_ms: round1(uploadMs),
      upload_to_ready_ms: round1(totalMs),
      lines_per_s: round1(payments.length / (totalMs / 1000)),
      stored_lines: s.lines,
      proposed_payments: s.payments,
      activities,
      completed: true,
    };
    log(JSON.stringify(large));

    // DELETE while processing: once while the lines are stored, once while they are matched.
    const deleteLatency = async (phase: 'storing' | 'matching') => {
      const from = LARGE_LINES + (phase === 'storing' ? 0 : 20_000);
      const lines = paid.slice(from, from + 20_000);
      const other = compactCamt(phase === 'storing' ? 'DE02120300000000202051' : 'DE02500105170137075030', `DEL-${phase}-${Date.now()}`, lines);
      const { id: delId } = await uploadCamt(gatewayUrl, token, other, `delete-${phase}.xml`);
      const deadline = Date.now() + 10 * 60_000;
      let st = await statementStatus(client, delId);
      while (Date.now() < deadline && !(phase === 'storing' ? st.lines > 0 : st.payments > 0) && st.status !== 'ready') {
        await new Promise((r) => setTimeout(r, 20));
        st = await statementStatus(client, delId);
      }
      if (st.status === 'ready') throw new Error(`the ${phase} statement was ready before it could be deleted`);
      const d0 = performance.now();
      const res = await fetch(`${gatewayUrl}/v2/bank-statements/${delId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      const ms = performance.now() - d0;
      if (res.status !== 204) throw new Error(`DELETE during ${phase}: ${res.status} ${await res.text()}`);
      const d = await temporal!.client.workflow.getHandle(`bank-statement-${delId}`).describe();
      return { phase, lines_at_delete: st.lines, payments_at_delete: st.payments, delete_ms: round1(ms), workflow_status: d.status.name };
    };
    const deletes = [await deleteLatency('storing'), await deleteLatency('matching')];
    log(JSON.stringify(deletes));

    const report = {
      benchmark: 'cash-app-large-statement',
      machine: {
        cpus: os.cpus().length,
        load_average_1m_5m_15m_before: loadBefore,
        load_average_1m_5m_15m_after: os.loadavg().map((x) => Number(x.toFixed(2))),
        node: process.version,
        note: 'shared machine: other jobs ran concurrently (see the load averages)',
      },
      large_statement_camt053: large,
      delete_during_processing: { target_ms: 3000, met: deletes.every((d) => d.delete_ms <= 3000), runs: deletes },
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/cash-app-large-statement.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/cash-app-large-statement.json');
  } finally {
    await client.end().catch(() => {});
    await worker?.close().catch(() => {});
    await temporal?.close().catch(() => {});
    for (const stop of servers.reverse()) await stop().catch(() => {});
    await env.stop().catch(() => {});
  }
}
