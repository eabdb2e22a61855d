/**
 * API mode: the benchmark as a user meets the platform, through the gateway. The ERP middleware
 * pushes customers (with `bank_accounts`) and documents (with `discount_terms`) with the
 * organization's API key; a clerk uploads last month's statement, corrects the proposals that are not
 * the truth (PATCH, or POST where none was proposed) and approves them, so that payers' accounts are
 * learned; then the month's statement is uploaded as camt.053 and, once ready, its transactions and
 * payments are read back and scored.
 */
import type { Benchmark } from './benchmark.js';
import { camtFile } from './camt.js';
import { observedOf } from './direct.js';
import type { Line } from './lines.js';
import { fmtCents } from './random.js';
import { classify, type Observed } from './score.js';
import { customerPushRecord, documentPushRecord } from './world.js';

export interface ApiTarget {
  baseUrl: string;
  /** a user's bearer token (payments:write and payments:approve) */
  token: string;
  /** the organization's API key (the middleware push) */
  apiKey: string;
  log?: (msg: string) => void;
}

interface Ids {
  partners: Map<string, string>;
  documents: Map<string, string>;
}

async function call<T = unknown>(t: ApiTarget, method: string, path: string, body?: unknown, bearer = t.token): Promise<T> {
  const res = await fetch(t.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 800)}`);
  return (text ? JSON.parse(text) : null) as T;
}

async function push(t: ApiTarget, what: 'customers' | 'invoices', records: Record<string, unknown>[], key: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < records.length; i += 100) {
    const batch = records.slice(i, i + 100);
    const res = await call<{ results: { remote_id: string | null; success: boolean; service_id: string | null; message: string | null }[] }>(t, 'POST', `/v2/integrations/providers/middleware/${what}`, batch, t.apiKey);
    res.results.forEach((r, j) => {
      if (!r.success || !r.service_id) throw new Error(`push ${what} ${String(batch[j]![key])}: ${r.message}`);
      ids.set(String(batch[j]![key]), r.service_id);
    });
  }
  return ids;
}

async function pushWorld(t: ApiTarget, b: Benchmark): Promise<Ids> {
  const partners = await push(t, 'customers', b.world.customers.map(customerPushRecord), 'customer_code');
  const documents = await push(t, 'invoices', b.world.documents.map(documentPushRecord), 'document_number');
  t.log?.(`pushed ${partners.size} customers, ${documents.size} documents`);
  return { partners, documents };
}

/** Upload a camt.053 file and wait until every statement in it is ready; their ids. */
async function uploadAndWait(t: ApiTarget, xml: string, name: string, timeoutMs: number): Promise<string[]> {
  const form = new FormData();
  form.set('format', 'camt053');
  form.set('file', new Blob([xml]), name);
  const res = await fetch(`${t.baseUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${t.token}` }, body: form });
  const created = (await res.json()) as { id?: string; statements?: { id: string }[] };
  if (res.status !== 200 || !created.id) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(created).slice(0, 800)}`);
  const ids = (created.statements ?? [{ id: created.id }]).map((s) => s.id);
  const deadline = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const s = await call<{ status: string; error?: string | null }>(t, 'GET', `/v2/bank-statements/${id}?transactions=omit`);
      if (s.status === 'ready') break;
      if (s.status === 'failed' || Date.now() > deadline) throw new Error(`statement ${id} ${s.status}: ${s.error ?? 'timed out'}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return ids;
}

async function allPages<T>(t: ApiTarget, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 0; ; page++) {
    const res = await call<{ data: T[]; next_page: number | null }>(t, 'GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&page_size=500`);
    out.push(...res.data);
    if (res.next_page === null) return out;
  }
}

interface ApiPayment {
  id: string;
  status: string;
  bank_transaction_id: string;
  partner_id: string | null;
  match_score: number | null;
  shortfall?: { amount: string; reason: 'fee' | 'discount' | 'deduction' | 'partial' } | null;
  allocations: { invoice_id: string; amount_paid: string; amount_discount: string; amount_withheld: string; adjustment_amount: string }[];
}

/** Per line id (the entry's bank reference): its transaction id and the payment proposed for it, if any. */
async function readBack(t: ApiTarget, statementIds: string[]): Promise<Map<string, { transactionId: string; payment: ApiPayment | null }>> {
  const out = new Map<string, { transactionId: string; payment: ApiPayment | null }>();
  for (const id of statementIds) {
    const txs = await allPages<{ id: string; bank_reference: string | null }>(t, `/v2/bank-statements/${id}/transactions`);
    const payments = await allPages<ApiPayment>(t, `/v2/payments?statement_id=${id}`);
    const byTx = new Map(payments.map((p) => [p.bank_transaction_id, p]));
    for (const tx of txs) if (tx.bank_reference) out.set(tx.bank_reference, { transactionId: tx.id, payment: byTx.get(tx.id) ?? null });
  }
  return out;
}

const reverse = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [v, k]));

function allocationsBody(l: Line, ids: Ids) {
  return l.truth.allocations.map((a) => ({
    invoice_id: ids.documents.get(a.document)!,
    amount_paid: fmtCents(a.paid),
    amount_discount: fmtCents(a.discount),
    amount_withheld: fmtCents(a.withheld),
    adjustment_amount: fmtCents(0),
  }));
}

/**
 * Last month as a clerk works it: each customer payment approved as the truth says (the proposal
 * corrected with PATCH where it differs, created with POST where there is none). Returns how many
 * proposals the clerk had to correct or create.
 */
async function warmUp(t: ApiTarget, b: Benchmark, ids: Ids, created: string): Promise<{ approved: number; corrected: number; created: number }> {
  const statements = await uploadAndWait(t, camtFile(b.world, b.warmup, `WARMUP-${b.seed}`, created), 'warmup-camt053.xml', 300_000);
  const lines = await readBack(t, statements);
  const partnerCode = reverse(ids.partners);
  const documentNumber = reverse(ids.documents);
  const stats = { approved: 0, corrected: 0, created: 0 };
  for (const l of b.warmup) {
    if (l.truth.notAPayment) continue;
    const seen = lines.get(l.id);
    if (!seen) throw new Error(`warm-up line ${l.id} not found in the statement`);
    const body = { allocations: allocationsBody(l, ids), partner_id: ids.partners.get(l.truth.partner!)! };
    let paymentId = seen.payment?.id;
    const o = seen.payment ? observedOf({ ...seen.payment, score: seen.payment.match_score }, (id) => partnerCode.get(id), (id) => documentNumber.get(id)) : null;
    if (!paymentId) {
      paymentId = (await call<{ id: string }>(t, 'POST', '/v2/payments', { bank_transaction_id: seen.transactionId, ...body })).id;
      stats.created++;
    } else if (!o || classify(l, o) !== 'exact') {
      await call(t, 'PATCH', `/v2/payments/${paymentId}`, body);
      stats.corrected++;
    }
    await call(t, 'POST', `/v2/payments/${paymentId}/approve`, {});
    stats.approved++;
  }
  return stats;
}

export interface ApiRun {
  observed: Map<string, Observed>;
  warmup: { approved: number; corrected: number; created: number };
  statements: string[];
  month_upload_to_ready_ms: number;
}

export async function runThroughApi(t: ApiTarget, b: Benchmark): Promise<ApiRun> {
  const ids = await pushWorld(t, b);
  const warmup = await warmUp(t, b, ids, '2026-10-31');
  t.log?.(`warm-up: ${warmup.approved} payments approved (${warmup.corrected} corrected, ${warmup.created} created by hand)`);
  const t0 = performance.now();
  const statements = await uploadAndWait(t, camtFile(b.world, b.lines, `MONTH-${b.seed}-${b.size}`, '2026-11-27'), 'month-camt053.xml', 900_000);
  const month_upload_to_ready_ms = Math.round(performance.now() - t0);
  const lines = await readBack(t, statements);
  const partnerCode = reverse(ids.partners);
  const documentNumber = reverse(ids.documents);
  const observed = new Map<string, Observed>();
  for (const l of b.lines) {
    const seen = lines.get(l.id);
    if (!seen) throw new Error(`month line ${l.id} not found in the statement`);
    if (seen.payment) observed.set(l.id, observedOf({ ...seen.payment, score: seen.payment.match_score }, (id) => partnerCode.get(id), (id) => documentNumber.get(id)));
  }
  t.log?.(`month: ${b.lines.length} lines, ${observed.size} payments proposed, ready after ${month_upload_to_ready_ms} ms`);
  return { observed, warmup, statements, month_upload_to_ready_ms };
}
