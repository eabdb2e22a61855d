/**
 * `npm run bench -- cash-app`: the cash-application benchmarks, in one run (results:
 * bench/results/cash-app.json); each case in a file of its own beside this one:
 *
 * (a) predicted-overdue.ts: predicted overdue (spec 4.3 rule 2) over 1,000,000 open and 2,000,000
 *     closed invoices of 50,000 customers, generated straight into a fresh database with
 *     generate_series (ledger.ts). The endpoint is timed through the gateway (warm-up, then the median
 *     of several runs; every service API and the gateway in its own process, as deployed) against the
 *     bare SQL aggregation of the same tiers run straight on Postgres (per customer and tier: LC sum
 *     and count of the invoices aged past the tier, customers with a tripped tier). Target: ≤ 2 s and
 *     ≤ 1.5× the bare aggregation.
 * (b) statement.ts: a CAMT.053 statement of 10,000 incoming transfers against 20,000 open invoices
 *     (2,000 customers) of another organization: uploaded through the gateway (multipart), processed
 *     by the bank-statement workflow on a cash-app worker (parse, store, classify, match, propose
 *     payments) until `ready`. Each transfer pays one invoice, named in its remittance information,
 *     from its customer. Target: ≤ 30 s; reported as transactions per second.
 * (c) pathological.ts: predicted overdue, the pathological customer: one customer with 40 open
 *     invoices of 10,000.00..60,000.00, all uncertain (1..40 days late today, a payment history spread
 *     over 0..120 days), and a 1,000,000.00 tier near the middle of the distribution (the hardest case
 *     for the error). The exact run would track millions of partial sums; the endpoint answers at a
 *     bounded resolution on a worker thread. Reported: its time through the gateway (median), the
 *     reported error bound, and the actual error against the exact answer computed here by meet in
 *     the middle (2 × 2^20 sums).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { connectTemporal, createDb, startServiceWorker, type CommonConfig, type ServiceModule } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { workflowsPath } from '@rp/workflows/paths';
import { SERVICE_MODULES } from '../../scripts/local/services.js';
import { startBenchEnvironment } from '../support/environment.js';
import { pathologicalBenchmark } from './pathological.js';
import { predictedOverdueBenchmark } from './predicted-overdue.js';
import { startApisAndGateway } from './shared.js';
import { previousStatementResult, statementBenchmark } from './statement.js';

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

    // (a) last, on the large ledger it generates
    const predictedOverdue = await predictedOverdueBenchmark(gatewayUrl, token, client, orgId, log);
    await client.end();

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
