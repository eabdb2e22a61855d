/** The integrations API killed (kill -9) under invoice push load: only unacknowledged batches fail, a retry returns the same ids. */
import { invoiceRecord, sql } from '../api.js';
import { P, type Scenario, suite } from '../context.js';
import type { Stack } from '../stack.js';
import { sleep } from '../wait.js';

export async function apiPush(sc: Scenario) {
  const { stack, api, org } = suite;
  const batches = Array.from({ length: P.pushBatches }, (_, b) =>
    Array.from({ length: P.pushBatchSize }, (_, i) => invoiceRecord(`9${String(b).padStart(3, '0')}${String(i).padStart(4, '0')}`, `CH-${(i % P.customers) + 1}`, (10 + i + b / 100).toFixed(2))),
  );
  const first: { status: number; ids: string[] | null; error?: string }[] = new Array(batches.length);
  let next = 0;
  let done = 0;
  let killed: ReturnType<Stack['kill9']> | null = null;
  const killAfter = Math.floor(batches.length / 3);
  const workers = Array.from({ length: P.pushConcurrency }, async () => {
    for (;;) {
      const b = next++;
      if (b >= batches.length) return;
      const r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batches[b] });
      const ok = r.status === 200 && r.body.results.length === batches[b]!.length && r.body.results.every((x: { success: boolean }) => x.success);
      first[b] = { status: r.status, ids: ok ? r.body.results.map((x: { service_id: string }) => x.service_id) : null, error: r.error };
      if (++done === killAfter && !killed) killed = stack.kill9('integrations-api');
    }
  });
  await Promise.all(workers);
  if (!killed) throw new Error('the load ended before the kill');
  const k = killed as ReturnType<Stack['kill9']>;
  const statuses: Record<string, number> = {};
  for (const f of first) statuses[f.status] = (statuses[f.status] ?? 0) + 1;
  sc.facts.first_pass_statuses = statuses;
  sc.facts.batches = batches.length;
  sc.facts.records = batches.length * P.pushBatchSize;
  const acked = first.filter((f) => f.ids).length;
  sc.check('every batch answered 200 (acknowledged) or 502/503 (not acknowledged)', first.every((f) => f.status === 200 || f.status === 502 || f.status === 503), JSON.stringify(statuses));
  sc.check('failed batches carry no partial acknowledgement', first.every((f) => f.status !== 200 || f.ids), undefined);
  sc.check('some batches failed during the outage (the kill hit the load)', acked < batches.length, `${batches.length - acked} of ${batches.length} not acknowledged`);
  sc.recovery.kill_to_api_ready = await k.ready(P.backMs);
  // a client retries every batch (with backoff while it still sees 502/503)
  const retried: (string[] | null)[] = [];
  for (const [b, batch] of batches.entries()) {
    let r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batch });
    for (let i = 0; i < 20 && (r.status === 502 || r.status === 503 || r.status === 0); i++) {
      await sleep(Number(r.headers.get('retry-after') ?? 1) * 1000);
      r = await api.call('POST', '/v2/integrations/providers/middleware/invoices', { token: org.apiKey, body: batch });
    }
    retried[b] = r.status === 200 && r.body.results.every((x: { success: boolean }) => x.success) ? r.body.results.map((x: { service_id: string }) => x.service_id) : null;
  }
  sc.check('every batch succeeds when retried', retried.every(Boolean), `${retried.filter((x) => !x).length} failed`);
  const changed = first.filter((f, b) => f.ids && JSON.stringify(f.ids) !== JSON.stringify(retried[b])).length;
  sc.check('a retry of an acknowledged batch returns the same ids', changed === 0, `${changed} of ${acked} acknowledged batches answered other ids`);
  const [c] = await sql(stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS rows, count(DISTINCT document_number)::int AS numbers FROM integrations.documents
    WHERE organization_id = $1 AND origin = 'middleware' AND document_number LIKE '9%' AND length(document_number) = 8`, [org.id]);
  const total = batches.length * P.pushBatchSize;
  sc.check(`every record stored once (${total}; SQL cross-check)`, c.rows === total && c.numbers === total, JSON.stringify(c));
}
