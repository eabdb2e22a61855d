/**
 * `npm run bench -- knowledge-search` (results: bench/results/knowledge-search.json):
 * playbook search over 10,000 articles, p95 ≤ 50 ms through the gateway.
 *
 * One organization with BENCH_ARTICLES (default 10,000) live articles written straight into the
 * knowledge schema (articles + their version 1; articles are otherwise made only by approving
 * proposals of the extraction workflow, which is not what this measures). Text is generated from a
 * seeded random source: sentences mixing ~120 receivables terms with a Zipf-distributed vocabulary of
 * 3,000 synthetic words, ~120 words of content per article, 30% of the articles scoped to one of 200
 * customers, spread over the seven collections. So a one-term query matches about a quarter of the
 * articles: every hit is ranked (ts_rank_cd) before the page is cut.
 *
 * Measured: GET /v2/aether/playbook/search (page_size 20) through the gateway, sequentially, over a
 * fixed list of queries (single terms, AND of two terms, phrases, `or`, exclusions; a third of them
 * with `customer_id`, some with `collection`), BENCH_SEARCHES (default 600) requests after 60 warm-up
 * ones; p50 / p95 / p99 / max latency, and the hit counts. Interleaved with each request, the same
 * search through the store function in this process (the SQL alone) for comparison.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDb, newId } from '@rp/platform';
import { COLLECTIONS } from '@rp/knowledge';
import { searchArticles } from '../services/knowledge/src/store/articles.js';
import { startBenchEnvironment } from './support/environment.js';
import { onboardBenchOrganization, startApisAndGateway, type BenchApis } from './support/stack.js';
import { mulberry32 } from './support/random.js';

const ARTICLES = Number(process.env.BENCH_ARTICLES ?? 10_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 600);
const WARMUP = 60;
const CUSTOMERS = 200;

const DOMAIN = (
  'invoice payment remittance deduction dispute credit memo short pay overdue reminder dunning freight pallet return rebate promotion ' +
  'allowance chargeback claim backup proof delivery carrier warehouse damage shortage pricing discount terms net days early late fee ' +
  'write-off threshold approval manager escalation collector call email statement balance aging bucket customer account portal ' +
  'lockbox bank transfer check wire ach card settlement reconciliation match allocation unapplied cash receipt posting ledger erp ' +
  'tax vat currency exchange rate partial instalment plan promise hold release limit risk score insolvency legal agency broker ' +
  'retailer distributor contract purchase order reference number document validity expiry audit quarter month year weekly daily ' +
  'contact phone address invoice-copy signature stamp reason code category operation'
).split(/\s+/);

const rand = mulberry32(15);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 've', 'dan', 'mor', 'lin', 'qua', 'zet', 'bru', 'fen', 'gal', 'hox'];
const SYNTHETIC = Array.from({ length: 3000 }, () => {
  const n = 2 + Math.floor(rand() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join('');
});
/** Zipf-like pick: low ranks far more frequent. */
const zipf = (n: number) => Math.min(n - 1, Math.floor(Math.exp(rand() * Math.log(n + 1)) - 1));
const word = () => (rand() < 0.3 ? DOMAIN[Math.floor(rand() * DOMAIN.length)]! : SYNTHETIC[zipf(SYNTHETIC.length)]!);
const sentence = (words: number) => {
  const s = Array.from({ length: words }, word).join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1) + '.';
};

const QUERIES = [
  'freight', 'deduction', 'short pay', 'pallet return', '"credit memo"', 'dispute or chargeback', 'remittance -email', 'overdue reminder',
  'write-off threshold', 'promotion allowance', 'lockbox', 'payment plan instalment', '"proof of delivery"', 'escalation manager', 'rebate',
  'unapplied cash', 'tax', 'carrier damage claim', 'aging bucket', 'portal',
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const round1 = (x: number) => Math.round(x * 10) / 10;

export async function run(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const env = await startBenchEnvironment('knowledge-search');
  let stack: BenchApis | undefined;
  try {
    const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10' };
    stack = await startApisAndGateway(e);
    const gatewayUrl = stack.gatewayUrl;
    const { orgId, token } = await onboardBenchOrganization(e, 'Knowledge search bench', 'knowledge@example.com');

    // ---- generate the articles (knowledge schema, with version 1 of each)
    const client = new pg.Client({ connectionString: e.DATABASE_URL });
    client.on('error', () => {});
    await client.connect();
    const customers = Array.from({ length: CUSTOMERS }, () => randomUUID());
    const genStart = Date.now();
    let words = 0;
    for (let offset = 0; offset < ARTICLES; offset += 1000) {
      const cols: Record<string, (string | null)[]> = { id: [], collection: [], title: [], description: [], content: [], customer_id: [] };
      for (let i = offset; i < Math.min(ARTICLES, offset + 1000); i++) {
        const content = Array.from({ length: 8 }, () => sentence(10 + Math.floor(rand() * 10))).join(' ');
        words += content.split(' ').length;
        cols.id!.push(newId());
        cols.collection!.push(COLLECTIONS[i % COLLECTIONS.length]!);
        cols.title!.push(sentence(3 + Math.floor(rand() * 4)).slice(0, -1));
        cols.description!.push(sentence(12));
        cols.content!.push(content);
        cols.customer_id!.push(rand() < 0.3 ? customers[Math.floor(rand() * CUSTOMERS)]! : null);
      }
      await client.query(
        `INSERT INTO knowledge.articles (id, organization_id, collection, title, description, content, customer_id, knowledge_type, version)
         SELECT id, $1, collection, title, description, content, customer_id, 'procedural', 1
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[]) AS t(id, collection, title, description, content, customer_id)`,
        [orgId, cols.id, cols.collection, cols.title, cols.description, cols.content, cols.customer_id],
      );
      await client.query(
        `INSERT INTO knowledge.article_versions (id, organization_id, article_id, version, action, collection, title, description, content, knowledge_type, customer_id)
         SELECT gen_random_uuid(), organization_id, id, 1, 'create', collection, title, description, content, knowledge_type, customer_id
           FROM knowledge.articles WHERE id = ANY($1::uuid[])`,
        [cols.id],
      );
    }
    await client.query('ANALYZE knowledge.articles');
    const generationS = (Date.now() - genStart) / 1000;
    log(`generated ${ARTICLES} articles (${words} content words) in ${generationS.toFixed(1)} s`);
    await client.end();

    // ---- the requests
    const requests = Array.from({ length: WARMUP + SEARCHES }, (_, i) => {
      const q = QUERIES[i % QUERIES.length]!;
      const params = new URLSearchParams({ q, page_size: '20' });
      if (i % 3 === 1) params.set('customer_id', customers[i % CUSTOMERS]!);
      if (i % 7 === 5) params.set('collection', COLLECTIONS[i % COLLECTIONS.length]!);
      return `/v2/aether/playbook/search?${params.toString()}`;
    });
    // the same search through the store function in this process (SQL only, no HTTP), interleaved
    const knowledgeDb = createDb({ url: e.DATABASE_URL!, schema: 'knowledge', poolMax: 1 });
    const direct = async (path: string) => {
      const params = new URLSearchParams(path.split('?')[1]);
      const t = performance.now();
      await searchArticles(knowledgeDb, orgId, {
        scope: '*', // the bench searches as the admin
        q: params.get('q')!,
        collection: (params.get('collection') ?? undefined) as (typeof COLLECTIONS)[number] | undefined,
        customerId: params.get('customer_id') ?? undefined,
        offset: 0,
        limit: 20,
      });
      return performance.now() - t;
    };
    const latencies: number[] = [];
    const sqlLatencies: number[] = [];
    const hitsPerQuery: Record<string, number> = {};
    for (let i = 0; i < requests.length; i++) {
      const sqlMs = await direct(requests[i]!);
      if (i >= WARMUP) sqlLatencies.push(sqlMs);
      const t = performance.now();
      const res = await fetch(gatewayUrl + requests[i]!, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`GET ${requests[i]}: ${res.status} ${text.slice(0, 500)}`);
      const body = JSON.parse(text) as { total_records: number; data: { rank: number }[] };
      if (i >= WARMUP) latencies.push(ms);
      const q = QUERIES[i % QUERIES.length]!;
      if (!(q in hitsPerQuery) && !requests[i]!.includes('customer_id') && !requests[i]!.includes('collection')) hitsPerQuery[q] = body.total_records;
      for (let k = 1; k < body.data.length; k++) if (body.data[k]!.rank > body.data[k - 1]!.rank) throw new Error(`results not ranked for ${requests[i]}`);
    }
    await knowledgeDb.destroy();
    const p50 = pct(latencies, 50);
    const p95 = pct(latencies, 95);
    const report = {
      benchmark: 'knowledge-search',
      endpoint: 'GET /v2/aether/playbook/search (page_size 20) through the gateway, sequential requests',
      machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)), node: process.version },
      volume: { articles: ARTICLES, content_words: words, customers: CUSTOMERS, customer_scoped_share: 0.3 },
      generation_s: round1(generationS),
      queries: QUERIES,
      hits_per_query_without_filters: hitsPerQuery,
      searches: latencies.length,
      warmup: WARMUP,
      latency_ms: { p50: round1(p50), p95: round1(p95), p99: round1(pct(latencies, 99)), max: round1(Math.max(...latencies)), mean: round1(latencies.reduce((a, b) => a + b, 0) / latencies.length) },
      store_sql_only_latency_ms: { p50: round1(pct(sqlLatencies, 50)), p95: round1(pct(sqlLatencies, 95)), note: 'the same searches through the store function in the bench process (no HTTP, no gateway), interleaved' },
      target: { p95_ms: 50, met: p95 <= 50 },
      generated_at: new Date().toISOString(),
    };
    log(JSON.stringify(report));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/knowledge-search.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/knowledge-search.json');
  } finally {
    await stack?.close();
    await env.stop().catch(() => {});
  }
}
