/**
 * `npm run bench -- <name>`: runs one benchmark; results go to bench/results/<name>.json.
 *   gateway   direct service vs bare reverse proxy vs gateway (autocannon, c=1 and c=50)
 *   push      200,000 invoices through the middleware push endpoint vs the same upsert straight through pg
 *   push-events  1,000 invoices pushed with their events recorded vs the bare upsert (insert, identical and changed re-push)
 *   cash-app  predicted overdue over 1M open + 2M closed invoices vs the bare SQL aggregation;
 *             a 10,000-transaction CAMT.053 statement from upload to ready
 *   cash-app-large-statement  a 100,000-line CAMT.053 statement against 200,000 open invoices from
 *             upload to ready, and the DELETE latency while a statement is processed
 *   collections  a customer-segment page (500) over 50,000 customers / 1M open invoices vs the bare SQL,
 *             with and without exclude_higher_priority over 10 segments
 *   collections-run  a collections run over 50,000 customers / 1M open invoices, 10 segments with 5-step
 *             policies: dry-run plan time, a real run's emails per second to SMTP, the worker's peak memory
 *             against a bare scan of the same ledger
 *   templates email-template previews (Liquid renders) per second through the gateway
 *   isolation GET /v2/users/me p50/p99 through the gateway idle and while 8 clients preview a template near its render limit and 2 upload 10 MB statements
 *   knowledge the offline extraction pipeline: quality on the labelled evaluation set, time on a 200-page PDF
 *   knowledge-search  playbook search over 10,000 articles through the gateway (p95)
 *   reports   AR aging report over 1M open invoices / 50,000 customers: the data build vs the bare SQL,
 *             and the whole build activity (XLSX + CSV to S3) in a child process: time and peak RSS
 *   matching  the labelled cash-matching benchmark (bench/matching/): a seeded AR world and a month's
 *             statement with the truth of every line, scored exact / settled / partial / wrong / missed
 *             per scenario, with score calibration. Options: --size small|full, --seed N, --direct
 *   inbox     the labelled AR-inbox corpus (bench/inbox/: 500 emails, 336 remittance advices from 24 payer house
 *             styles, promises, disputes, questions, auto-replies, bounces) over SMTP into the inbound server:
 *             customer match precision/recall at 80, remittance lines exact, category accuracy, messages/s end
 *             to end against bare parse and bare SMTP references, per house style. Options: --seed N.
 *             The corpus alone as .eml files + labels.json: npx tsx bench/inbox/write-corpus.ts <dir>
 *   webhooks  a burst of 10,000 events to 3 endpoints through the delivery engine to a loopback receiver:
 *             events/s recorded and delivered, deliveries/s, lag p50/p99 commit → receipt, loss, order
 */
const benches: Record<string, () => Promise<unknown>> = {
  gateway: async () => (await import('./gateway.js')).run(),
  push: async () => (await import('./push.js')).run(),
  'push-events': async () => (await import('./push-events.js')).run(),
  'cash-app': async () => (await import('./cash-app/run.js')).run(),
  'cash-app-large-statement': async () => (await import('./cash-app/large-statement.js')).runLargeStatement(),
  collections: async () => (await import('./collections.js')).run(),
  'collections-run': async () => (await import('./collections-run.js')).run(),
  templates: async () => (await import('./templates.js')).run(),
  isolation: async () => (await import('./isolation.js')).run(),
  knowledge: async () => (await import('./knowledge/run.js')).run(),
  'knowledge-search': async () => (await import('./knowledge-search.js')).run(),
  reports: async () => (await import('./reports.js')).run(),
  matching: async () => (await import('./matching/run.js')).run(process.argv.slice(3)),
  webhooks: async () => (await import('./webhooks/run.js')).run(),
  inbox: async () => (await import('./inbox/run.js')).run(process.argv.slice(3)),
};

const name = process.argv[2];
if (!name || !benches[name]) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}>\n`);
  process.exit(2);
}
await benches[name]();
process.exit(0);
