/**
 * `npm run bench -- matching [--size small|full] [--seed N] [--direct]`: the labelled cash-matching
 * benchmark (see benchmark.ts for the world and scenarios, score.ts for the classes).
 *
 * API mode (default): a fresh stack (embedded Postgres, Temporal dev server, every service API and
 * the gateway in this process, one cash-app worker), a new organization, the world pushed and the
 * statements uploaded through the gateway as a user would. Results: bench/results/matching.json.
 * Direct mode (`--direct`): the pure engine in-process over the same world, for engine iteration.
 * Results: bench/results/matching-direct.json. Either prints the per-scenario table.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { connectTemporal, createDb, startServiceWorker, type CommonConfig, type ServiceModule } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { workflowsPath } from '@rp/workflows/paths';
import { SERVICE_MODULES } from '../../scripts/local/services.js';
import { startBenchEnvironment } from '../support/environment.js';
import { startApisAndGateway } from '../support/stack.js';
import { runThroughApi, type ApiRun } from './api.js';
import { DEFAULT_SEED, generateBenchmark, SIZES, type Benchmark, type BenchSize } from './benchmark.js';
import { runDirect } from './direct.js';
import { formatReport, scoreLines, type Observed, type ScoreReport } from './score.js';
import { fmtCents } from './random.js';

export interface MatchingOptions {
  size: BenchSize;
  seed: number;
  direct: boolean;
}

export function parseOptions(argv: readonly string[]): MatchingOptions {
  const opts: MatchingOptions = { size: 'full', seed: DEFAULT_SEED, direct: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--direct') opts.direct = true;
    else if (a === '--size') {
      const v = value();
      if (!(v in SIZES)) throw new Error(`--size must be ${Object.keys(SIZES).join(' or ')}`);
      opts.size = v as BenchSize;
    } else if (a === '--seed') {
      const n = Number(value());
      if (!Number.isSafeInteger(n) || n < 0) throw new Error('--seed must be a non-negative integer');
      opts.seed = n;
    } else throw new Error(`unknown option ${a} (use --size small|full, --seed N, --direct)`);
  }
  return opts;
}

/** A fresh stack and organization, the benchmark through its API, everything stopped afterwards. */
async function runOnFreshStack(b: Benchmark, log: (m: string) => void): Promise<ApiRun> {
  const env = await startBenchEnvironment('matching');
  const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10' };
  let stack: Awaited<ReturnType<typeof startApisAndGateway>> | undefined;
  let worker: Awaited<ReturnType<typeof startServiceWorker>> | undefined;
  try {
    stack = await startApisAndGateway(e);
    const entry = SERVICE_MODULES['cash-app'];
    worker = await startServiceWorker(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { workflowsPath });
    const temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS!, namespace: e.TEMPORAL_NAMESPACE! });
    const adminDb = createDb({ url: e.DATABASE_URL!, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db: adminDb, temporal: temporal.client },
      { name: b.world.organizationName, base_currency: 'EUR', timezone: 'Europe/Berlin', admin: { email: 'clerk@nordlicht.example', name: 'Cash Clerk' } },
    ).finally(async () => {
      await adminDb.destroy();
      await temporal.close();
    });
    return await runThroughApi({ baseUrl: stack.gatewayUrl, token: org.accessToken.token, apiKey: org.apiKey.token, log }, b);
  } finally {
    await worker?.close().catch(() => {});
    await stack?.close();
    await env.stop().catch(() => {});
  }
}

/** A line that is not exact, with what the engine needs to see why: the line, its truth and the proposal (amounts in cents). */
function explain(b: Benchmark, observed: ReadonlyMap<string, Observed>, s: ScoreReport['scored'][number]) {
  const l = b.lines.find((x) => x.id === s.line)!;
  const o = observed.get(s.line);
  const parts = (a: { document: string; paid: number; discount: number; withheld: number; adjustment: number }) => [a.document, a.paid, a.discount, a.withheld, a.adjustment];
  return {
    ...s,
    line: { id: l.id, amount: fmtCents(l.amount), currency: l.currency, counterparty: l.counterpartyName, iban: l.counterpartyIban, remittance: l.remittance, end_to_end_id: l.endToEndId },
    truth: { partner: l.truth.partner, allocations: l.truth.allocations.map(parts), shortfall: l.truth.shortfall },
    proposal: o ? { partner: o.partner, allocations: o.allocations.map(parts), shortfall: o.shortfall } : null,
  };
}

function perVariant(report: ScoreReport): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const s of report.scored) {
    if (s.variant === null) continue;
    const row = (out[`${s.scenario}/${s.variant}`] ??= { lines: 0 });
    row.lines!++;
    row[s.class] = (row[s.class] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export function resultOf(opts: MatchingOptions, b: Benchmark, report: ScoreReport, observed: ReadonlyMap<string, Observed>, extra: Record<string, unknown>) {
  return {
    benchmark: 'matching',
    mode: opts.direct ? 'direct (pure engine in-process: services/cash-app/src/domain/matching/)' : 'api (real stack through the gateway)',
    size: opts.size,
    seed: opts.seed,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)), node: process.version, note: 'shared machine: other jobs ran concurrently' },
    world: {
      customers: b.world.customers.length,
      open_invoices: b.world.documents.filter((d) => d.statusOpen && d.kind === 'invoice').length,
      open_credit_memos: b.world.documents.filter((d) => d.statusOpen && d.kind === 'credit_memo').length,
      closed_invoices: b.world.documents.filter((d) => !d.statusOpen).length,
      warmup_lines: b.warmup.length,
      month_lines: b.lines.length,
    },
    ...extra,
    summary: { lines: report.lines, customer_deposits: report.customer_deposits, classes: report.classes, rates_percent: report.rates, not_a_payment: report.not_a_payment, over_relieved: report.over_relieved },
    per_scenario: report.per_scenario,
    // the same per finer label (the noise's series, the name form, how the payer's account is known …)
    per_variant: perVariant(report),
    calibration: report.calibration,
    // every line that is not exact (nor a credit correctly left unmatched), for engine work;
    // allocations as [document, paid, discount, withheld, adjustment] in cents
    not_exact: report.scored.filter((s) => s.class !== 'exact' && s.class !== 'not_matched').map((s) => explain(b, observed, s)),
  };
}

export async function run(argv: readonly string[] = []): Promise<void> {
  const opts = parseOptions(argv);
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const b = generateBenchmark(opts.size, opts.seed);
  log(`world: ${b.world.customers.length} customers, ${b.world.documents.length} documents; warm-up ${b.warmup.length} lines, month ${b.lines.length} lines (seed ${opts.seed})`);
  let observed: Map<string, Observed>;
  let extra: Record<string, unknown> = {};
  if (opts.direct) {
    const t0 = performance.now();
    observed = runDirect(b);
    extra = { engine_ms: Math.round(performance.now() - t0) };
  } else {
    const api = await runOnFreshStack(b, log);
    observed = api.observed;
    extra = { warmup: api.warmup, month_upload_to_ready_ms: api.month_upload_to_ready_ms };
  }
  const report = scoreLines(b.lines, observed);
  const file = opts.direct ? 'bench/results/matching-direct.json' : 'bench/results/matching.json';
  mkdirSync('bench/results', { recursive: true });
  // one line per listed line: the file stays readable and a re-run's diff shows which lines changed
  const { not_exact, ...rest } = resultOf(opts, b, report, observed, extra);
  const listed = not_exact.map((x) => `    ${JSON.stringify(x)}`).join(',\n');
  writeFileSync(file, `${JSON.stringify(rest, null, 2).slice(0, -2)},\n  "not_exact": [\n${listed}\n  ]\n}\n`);
  process.stdout.write(`\n${formatReport(report)}\n\n`);
  log(`written ${file}`);
}
