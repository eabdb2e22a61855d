/**
 * Knowledge files and playbook extraction jobs end to end through the gateway: a real upload to the run's
 * S3 server through the presigned URL, verification, the job on a
 * real knowledge worker through extracting → deduping → enriching → synthesizing → complete with its
 * counters checked against the stored rows, a worker killed mid-stage, cancel, failed jobs, refused
 * requests, tenant isolation on every endpoint, and replay of the recorded workflow histories.
 *
 * The assertions hold for any correct pipeline (the adapter services/knowledge/src/activities/pipeline.ts
 * is re-pointed to the full pipeline at merge): counters equal the stored rows, the stage sequence is
 * monotone, an exact duplicate paragraph is removed, a customer named in the text is linked, and a
 * resumed job stores exactly what an uninterrupted run of the same file stores.
 *
 * SQL is used only to read stored memories and proposals (no endpoint lists memories; proposals'
 * endpoints belong to the review part) and, for the "missing object" failure, the S3 object is
 * deleted with the storage client (no endpoint deletes a file's bytes).
 *
 * Stages are made observable with KNOWLEDGE_EXTRACTION_CHUNK_SIZE=2 / KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS=150
 * (config.ts): a stage writes two rows, heartbeats, then sleeps (cancellably) before the next chunk.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { connectTemporal, createDb, ObjectStorage, startServiceApi, type CommonConfig, type ServiceModule, type TemporalHandle } from '@rp/platform';
import { ENTITY_ID, ORGANIZATION_ID, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { replayHistory } from './support/histories.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { tcpProxy, type TcpOutage } from './support/outage.js';
import { SERVICE_MODULES } from '../scripts/local/services.js';
import { createPlaybookExtractionActivities } from '../services/knowledge/src/activities/playbook-extraction.js';
import { requestExtraction } from '../services/knowledge/src/domain/extractions.js';

let stack: TestStack;
let org: Org;
let other: Org;
let control: Org;
let temporal: TemporalHandle;
/** The Temporal proxy of the outage test (the knowledge API reaches Temporal through it afterwards). */
let outage: TcpOutage | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STAGES = ['extracting', 'deduping', 'enriching', 'synthesizing'];
const ORDER = ['pending', ...STAGES, 'complete'];

/** A collections playbook: numbered procedures, facts about a customer, a contact table, and one paragraph twice. */
function playbook(paragraphs = 0): string {
  const base = [
    '# Collections playbook',
    'Invoices above EUR 10,000 that are 30 days past due are escalated to the team lead, who calls the customer within 2 business days.',
    'Nordwind Logistik GmbH pays by wire transfer and always quotes the invoice number in the remittance advice.',
    'Dunning procedure for overdue invoices:\n1. Send the first reminder 7 days after the due date.\n2. Send the second reminder 14 days after the due date.\n3. Call the customer 21 days after the due date.',
    'A customer disputing an invoice must state the reason in writing; the dispute is logged the same day.',
    'Invoices above EUR 10,000 that are 30 days past due are escalated to the team lead, who calls the customer within 2 business days.',
    'Contacts for escalations:\nFinance lead, finance@example.com, +49 30 111\nCredit manager, credit@example.com, +49 30 222',
  ];
  for (let i = 0; i < paragraphs; i++) base.push(`Rule ${i + 1}: accounts in region ${i + 1} receive their statement on business day ${(i % 20) + 1} of each month.`);
  return base.join('\n\n') + '\n';
}

async function uploadFile(token: string, name: string, mime: string, bytes: Buffer) {
  const created = await stack.request('POST', '/v2/aether/files', { token, body: { name, mime_type: mime, size: bytes.length } });
  expect(created.status).toBe(200);
  const put = await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes });
  expect(put.status).toBe(200);
  const got = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token });
  expect(got.status).toBe(200);
  return got.body;
}

async function waitJob(token: string, id: string, until: (job: any) => boolean, timeoutMs = 60_000, seen?: string[]): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token });
    expect(res.status).toBe(200);
    if (seen && seen[seen.length - 1] !== res.body.status) seen.push(res.body.status);
    if (until(res.body) || Date.now() > deadline) return res.body;
    await sleep(50);
  }
}
const ended = (j: any) => j.status === 'complete' || j.status === 'failed';

async function stored(jobId: string) {
  const [m] = await stack.sql(
    `SELECT count(*)::int AS memories, count(DISTINCT key)::int AS keys, count(*) FILTER (WHERE duplicate_of_kind IS NOT NULL)::int AS duplicates
       FROM knowledge.memories WHERE extraction_id = $1`,
    [jobId],
  );
  const proposals = await stack.sql(`SELECT id, item_key, action, customer_id, source_excerpts FROM knowledge.proposals WHERE extraction_id = $1`, [jobId]);
  return { ...m, proposals } as { memories: number; keys: number; duplicates: number; proposals: any[] };
}

/** Counters agree with the stored rows; every stage ran once, in order. */
async function expectConsistent(job: any) {
  const s = await stored(job.id);
  expect(job.memory_count).toBe(s.memories);
  expect(s.keys).toBe(s.memories);
  expect(job.dedup_count).toBe(s.duplicates);
  expect(job.proposal_count).toBe(s.proposals.length);
  expect(new Set(s.proposals.map((p) => p.item_key)).size).toBe(s.proposals.length);
  expect(job.proposal_count).toBeLessThanOrEqual(job.knowledge_count);
  expect(job.processed_count).toBe(job.input_count);
  let last = '';
  for (const stage of STAGES) {
    const p = job.progress[stage];
    expect(p, stage).toBeDefined();
    expect(p.done).toBe(p.total);
    expect(p.started_at >= last).toBe(true);
    expect(p.completed_at >= p.started_at).toBe(true);
    last = p.completed_at;
  }
  expect(job.progress.extracting.total).toBe(s.memories);
  expect(job.completed_at >= last).toBe(true);
  // proposals cite kept memories of this job
  const kept = new Set((await stack.sql(`SELECT id FROM knowledge.memories WHERE extraction_id = $1 AND duplicate_of_kind IS NULL`, [job.id])).map((r) => r.id));
  for (const p of s.proposals) for (const e of p.source_excerpts) expect(kept.has(e.memory_id)).toBe(true);
  return s;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['knowledge', 'cash-app'], env: { KNOWLEDGE_EXTRACTION_CHUNK_SIZE: '2', KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS: '150' } });
  [org, other, control] = await Promise.all([stack.onboard('Knowledge Org'), stack.onboard('Other Org'), stack.onboard('Control Org')]);
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  for (const o of [org, control]) {
    const res = await pushCustomers(stack, o.apiKey, [customerRecord({ customer_code: 'C-NORD', name1: 'Nordwind Logistik GmbH' })]);
    expect(res.body.results[0]).toMatchObject({ success: true });
  }
  // three invoices Nordwind paid 5, 9 and 4 days late (what onboarding mines; the pipeline states nothing from fewer than 3)
  const paid = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: 'N-1', customer_code: 'C-NORD', net_due_date: '2026-09-01', clearing_date: '2026-09-06', status_open: false }),
    invoiceRecord({ document_number: 'N-2', customer_code: 'C-NORD', net_due_date: '2026-10-01', clearing_date: '2026-10-10', status_open: false }),
    invoiceRecord({ document_number: 'N-3', customer_code: 'C-NORD', net_due_date: '2026-10-15', clearing_date: '2026-10-19', status_open: false }),
  ]);
  expect(paid.body.results.every((r) => r.success)).toBe(true);
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
  await outage?.close();
});

describe('files', () => {
  it('answers a presigned PUT, verifies the uploaded bytes on GET and keeps them verified', async () => {
    const bytes = Buffer.from(playbook());
    const created = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'playbook.md', mime_type: 'text/markdown', size: bytes.length } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'file', name: 'playbook.md', mime_type: 'text/markdown', size: bytes.length, is_verified: false, bucket: stack.env.S3_BUCKET });
    expect(created.body.object_key).toContain(org.organizationId);
    const before = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: org.token });
    expect(before.body).toMatchObject({ is_verified: false, verification_error: null });
    expect(before.body.upload_url).toMatch(/^http/);
    expect((await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes })).status).toBe(200);
    const after = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: org.token });
    const { createHash } = await import('node:crypto');
    expect(after.body).toMatchObject({ is_verified: true, sha256: createHash('sha256').update(bytes).digest('hex'), verification_error: null, upload_url: null });
  });

  it('does not verify bytes that are not what was declared, and refuses sizes beyond 50 MB', async () => {
    const bytes = Buffer.from('binary\u0000junk');
    const created = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'x.txt', mime_type: 'text/plain', size: bytes.length } });
    await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes });
    const got = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: org.token });
    expect(got.body.is_verified).toBe(false);
    expect(got.body.verification_error).toMatch(/not text\/plain/);
    const big = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'big.pdf', mime_type: 'application/pdf', size: 50 * 1024 * 1024 + 1 } });
    expect(big.status).toBe(422);
    expect(big.body.errors[0].loc).toEqual(['body', 'size']);
    const bad = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'x', mime_type: 'not a type', size: 1 } });
    expect(bad.status).toBe(422);
  });
});

describe('extraction jobs', () => {
  let jobId: string;

  it('runs a Markdown playbook through every stage to complete, counters matching the stored rows', async () => {
    const file = await uploadFile(org.token, 'playbook.md', 'text/markdown', Buffer.from(playbook()));
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, created_by: org.userId, collection: 'collections' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'playbook_extraction', status: 'pending', file_id: file.id, created_by: org.userId, collection: 'collections', extraction_type: 'file', error: null, completed_at: null });
    expect(res.body.file).toMatchObject({ id: file.id, name: 'playbook.md', mime_type: 'text/markdown', size: file.size, object_key: file.object_key });
    jobId = res.body.id;
    const seen: string[] = [];
    const job = await waitJob(org.token, jobId, ended, 60_000, seen);
    expect(job.status).toBe('complete');
    expect(job.error).toBeNull();
    // the statuses observed along the way never go backwards
    const idx = seen.map((s) => ORDER.indexOf(s));
    expect(idx.every((v, i) => v >= 0 && (i === 0 || v > idx[i - 1]!))).toBe(true);
    const s = await expectConsistent(job);
    expect(job.memory_count).toBeGreaterThanOrEqual(5);
    expect(job.dedup_count).toBeGreaterThanOrEqual(1); // the escalation paragraph appears twice
    expect(job.proposal_count).toBeGreaterThanOrEqual(1);
    // the customer named in the text is linked to its ledger partner
    const [nord] = await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND name = 'Nordwind Logistik GmbH'`, [org.organizationId]);
    const linked = await stack.sql(`SELECT customer_id FROM knowledge.memories WHERE extraction_id = $1 AND text LIKE '%Nordwind%' AND duplicate_of_kind IS NULL`, [jobId]);
    expect(linked.length).toBeGreaterThanOrEqual(1);
    expect(linked.every((m) => m.customer_id === nord.id)).toBe(true);
    expect(s.proposals.some((p) => p.customer_id === nord.id)).toBe(true);

    const handle = temporal.client.workflow.getHandle(`playbook-extraction-${jobId}`);
    // The job reads complete once the last activity recorded it; the workflow ends a moment after.
    await handle.result();
    const d = await handle.describe();
    expect(d.taskQueue).toBe(TASK_QUEUES.knowledge);
    expect(d.status.name).toBe('COMPLETED');
    expect(d.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);
    expect(d.typedSearchAttributes.get(ENTITY_ID)).toBe(jobId);
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'playbook-extraction.json');
  }, 90_000);

  it.each([
    [
      'notes.txt',
      'text/plain',
      () => 'Credit holds\n\nA credit hold is placed when the open balance exceeds the credit limit by 10%.\n\nThe credit manager reviews each hold within 3 business days.\n',
    ],
    ['contacts.csv', 'text/csv', () => 'name,role,email,phone\nFinance lead,escalations,finance@example.com,+49 30 111\nCredit manager,credit holds,credit@example.com,+49 30 222\n'],
    [
      'page.html',
      'text/html',
      () => '<html><head><title>x</title><style>p{}</style></head><body><h1>Disputes</h1><p>A customer disputing an invoice must state the reason in writing.</p><p>Short payments below EUR 50 are written off after 60 days.</p></body></html>',
    ],
    [
      'thread.eml',
      'message/rfc822',
      () => 'From: ar@example.com\r\nTo: team@example.com\r\nSubject: Deduction handling\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nDeductions for damaged goods need a proof of delivery before a credit memo is issued.\r\n\r\nPromotional deductions are matched against the trade promotion agreement.\r\n',
    ],
  ])('completes a %s (%s) with consistent counters', async (name, mime, content) => {
    const file = await uploadFile(org.token, name, mime, Buffer.from(content()));
    expect(file.is_verified).toBe(true);
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
    expect(res.status).toBe(200);
    const job = await waitJob(org.token, res.body.id, ended);
    expect(job.status).toBe('complete');
    await expectConsistent(job);
    expect(job.memory_count).toBeGreaterThanOrEqual(1);
    expect(job.collection).not.toBeNull(); // inferred during enriching
  }, 90_000);

  it.each([
    ['ar-playbook.pdf', 'application/pdf'],
    ['short-payment-procedure.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ])('completes the evaluation set\'s %s (%s): memories quote the file\'s own text with its page', async (name, mime) => {
    const bytes = readFileSync(new URL(`./fixtures/knowledge/${name}`, import.meta.url));
    const file = await uploadFile(org.token, name, mime, bytes);
    expect(file.is_verified).toBe(true);
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
    expect(res.status).toBe(200);
    const job = await waitJob(org.token, res.body.id, ended);
    expect(job).toMatchObject({ status: 'complete', error: null });
    await expectConsistent(job);
    expect(job.input_count).toBeGreaterThanOrEqual(1);
    expect(job.memory_count).toBeGreaterThanOrEqual(5);
    expect(job.proposal_count).toBeGreaterThanOrEqual(1);
    const memories = await stack.sql(`SELECT excerpt, page FROM knowledge.memories WHERE extraction_id = $1`, [job.id]);
    expect(memories.every((m) => m.page >= 1 && m.page <= job.input_count && m.excerpt.length > 0)).toBe(true);
  }, 120_000);

  it('lists jobs newest first with filters and pagination', async () => {
    const all = await stack.request('GET', '/v2/aether/playbook/extractions?page_size=200', { token: org.token });
    expect(all.status).toBe(200);
    expect(all.body.total_records).toBeGreaterThanOrEqual(5);
    const created = all.body.data.map((j: any) => j.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const one = await stack.request('GET', '/v2/aether/playbook/extractions?page_size=1&page=0', { token: org.token });
    expect(one.body).toMatchObject({ current_page: 0, next_page: 1, total_records: all.body.total_records });
    expect(one.body.data).toHaveLength(1);
    const byCollection = await stack.request('GET', '/v2/aether/playbook/extractions?collection=collections&status=complete&extraction_type=file', { token: org.token });
    expect(byCollection.body.data.map((j: any) => j.id)).toContain(jobId);
    expect(byCollection.body.data.every((j: any) => j.collection === 'collections' && j.status === 'complete')).toBe(true);
    const job = all.body.data.find((j: any) => j.id === jobId);
    const byFile = await stack.request('GET', `/v2/aether/playbook/extractions?file_id=${job.file_id}`, { token: org.token });
    expect(byFile.body.data.map((j: any) => j.id)).toEqual([jobId]);
    expect((await stack.request('GET', '/v2/aether/playbook/extractions?status=done', { token: org.token })).status).toBe(422);
  });

  it('refuses unknown, unverified and unsupported files, and incomplete requests, storing nothing', async () => {
    const [{ n: before }] = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.extraction_jobs WHERE organization_id = $1`, [org.organizationId]);
    const unknown = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: '0190a0b0-0000-7000-8000-000000000001' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.type).toBe('entity-not-found');

    const pending = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'later.md', mime_type: 'text/markdown', size: 10 } });
    const unverified = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: pending.body.id } });
    expect(unverified.status).toBe(422);
    expect(unverified.body.errors[0]).toMatchObject({ loc: ['body', 'file_id'], type: 'file_not_verified' });

    const json = await uploadFile(org.token, 'data.json', 'application/json', Buffer.from('{"rule": "pay in 30 days"}'));
    expect(json.is_verified).toBe(true);
    const unsupported = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: json.id } });
    expect(unsupported.status).toBe(422);
    expect(unsupported.body.detail).toContain('application/json');
    expect(unsupported.body.errors[0]).toMatchObject({ loc: ['body', 'file_id'], type: 'unsupported_file_type' });

    expect((await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { created_by: 'ada' } })).status).toBe(422);
    expect((await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { extraction_type: 'synthesis' } })).status).toBe(422);
    expect((await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: json.id } })).status).toBe(422);
    const [{ n: after }] = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.extraction_jobs WHERE organization_id = $1`, [org.organizationId]);
    expect(after).toBe(before);
  });

  it('fails a job whose PDF is corrupt, storing no memories or proposals', async () => {
    const file = await uploadFile(org.token, 'broken.pdf', 'application/pdf', Buffer.from('%PDF-1.7\n1 0 obj <</Type /Catalog>> garbage without xref\n%%EOF'));
    expect(file.is_verified).toBe(true);
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, collection: 'company' } });
    const job = await waitJob(org.token, res.body.id, ended);
    expect(job.status).toBe('failed');
    expect(job.error).toContain('application/pdf');
    expect(job.completed_at).not.toBeNull();
    expect(await stored(job.id)).toMatchObject({ memories: 0, proposals: [] });
    expect(job.memory_count).toBe(0);
  }, 60_000);

  it('fails a job whose file is no longer in storage', async () => {
    const file = await uploadFile(org.token, 'gone.md', 'text/markdown', Buffer.from(playbook()));
    const storage = new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION });
    await storage.deleteObject(file.object_key);
    storage.close();
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
    expect(res.status).toBe(200);
    const job = await waitJob(org.token, res.body.id, ended);
    expect(job).toMatchObject({ status: 'failed', memory_count: 0, proposal_count: 0 });
    expect(job.error).toContain('no longer in storage');
  }, 60_000);

  it('cancels a running job: failed with error cancelled, the workflow cancelled, nothing synthesized', async () => {
    const file = await uploadFile(org.token, 'long.md', 'text/markdown', Buffer.from(playbook(60)));
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, collection: 'company' } });
    await waitJob(org.token, res.body.id, (j) => j.progress.extracting?.done >= 4 || ended(j));
    const cancelled = await stack.request('POST', `/v2/aether/playbook/extractions/${res.body.id}/cancel`, { token: org.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'failed', error: 'cancelled' });
    expect(cancelled.body.completed_at).not.toBeNull();
    const handle = temporal.client.workflow.getHandle(`playbook-extraction-${res.body.id}`);
    await expect(handle.result()).rejects.toThrow(); // the cancellation reaches the workflow a moment after the answer
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    const s = await stored(res.body.id);
    expect(s.memories).toBeLessThan(60);
    expect(s.proposals).toEqual([]);
    const again = await stack.request('POST', `/v2/aether/playbook/extractions/${res.body.id}/cancel`, { token: org.token });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('conflict');
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'playbook-extraction-cancelled.json');
  }, 90_000);

  it('resumes on a new worker after the worker dies mid-stage, storing exactly what an uninterrupted run stores', async () => {
    const content = Buffer.from(playbook(40));
    const file = await uploadFile(org.token, 'resume.md', 'text/markdown', content);
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, collection: 'company' } });
    const id = res.body.id as string;
    const mid = await waitJob(org.token, id, (j) => (j.status === 'extracting' && j.progress.extracting?.done >= 4) || ended(j));
    expect(mid.status).toBe('extracting');
    await stack.workers.knowledge!.close();
    const atStop = await stored(id);
    expect(atStop.memories).toBeGreaterThan(0);
    expect(atStop.memories).toBeLessThan(mid.progress.extracting.total);
    expect((await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token: org.token })).body.status).toBe('extracting');

    await stack.startWorker('knowledge');
    // killed again while enriching (updates of stored memories, resumed the same way)
    const enriching = await waitJob(org.token, id, (j) => (j.status === 'enriching' && j.progress.enriching?.done >= 4) || ended(j), 90_000);
    expect(enriching.status).toBe('enriching');
    await stack.workers.knowledge!.close();
    const [{ n: enrichedAtStop }] = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.memories WHERE extraction_id = $1 AND enriched_at IS NOT NULL`, [id]);
    expect(enrichedAtStop).toBeLessThan(enriching.progress.enriching.total);
    await stack.startWorker('knowledge');
    const job = await waitJob(org.token, id, ended, 90_000);
    expect(job.status).toBe('complete');
    await expectConsistent(job);
    const [{ n: enriched }] = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.memories WHERE extraction_id = $1 AND enriched_at IS NOT NULL`, [id]);
    expect(enriched).toBe(job.memory_count - job.dedup_count);

    // the same file in an organization of its own (same ledger, nothing earlier to dedupe against), uninterrupted
    const cfile = await uploadFile(control.token, 'resume.md', 'text/markdown', content);
    const cres = await stack.request('POST', '/v2/aether/playbook/extractions', { token: control.token, body: { file_id: cfile.id, collection: 'company' } });
    const cjob = await waitJob(control.token, cres.body.id, ended, 90_000);
    expect(cjob.status).toBe('complete');
    const pick = (j: any) => ({ input_count: j.input_count, memory_count: j.memory_count, dedup_count: j.dedup_count, knowledge_count: j.knowledge_count, proposal_count: j.proposal_count });
    // memories of earlier jobs of `org` in the same collection may be deduplicated against: compare memories stored
    expect(job.memory_count).toBe(cjob.memory_count);
    const keys = async (jid: string) => (await stack.sql(`SELECT key FROM knowledge.memories WHERE extraction_id = $1 ORDER BY key`, [jid])).map((r) => r.key);
    expect(await keys(id)).toEqual(await keys(cjob.id));
    expect(pick(cjob).proposal_count).toBeGreaterThan(0);
  }, 180_000);

  it('isolates organizations on every endpoint', async () => {
    const file = await uploadFile(org.token, 'mine.md', 'text/markdown', Buffer.from(playbook()));
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
    expect((await stack.request('GET', `/v2/aether/files/${file.id}`, { token: other.token })).status).toBe(404);
    expect((await stack.request('POST', '/v2/aether/playbook/extractions', { token: other.token, body: { file_id: file.id } })).status).toBe(404);
    expect((await stack.request('GET', `/v2/aether/playbook/extractions/${res.body.id}`, { token: other.token })).status).toBe(404);
    const cancel = await stack.request('POST', `/v2/aether/playbook/extractions/${res.body.id}/cancel`, { token: other.token });
    expect(cancel.status).toBe(404);
    const list = await stack.request('GET', '/v2/aether/playbook/extractions', { token: other.token });
    expect(list.body).toMatchObject({ total_records: 0, data: [] });
    expect((await stack.request('GET', `/v2/aether/playbook/extractions?file_id=${file.id}`, { token: other.token })).body.data).toEqual([]);
    const job = await waitJob(org.token, res.body.id, ended);
    expect(job.status).toBe('complete'); // the other organization's cancel did nothing
  }, 60_000);

  it('runs onboarding and synthesis extractions to complete', async () => {
    // Nordwind pays three more invoices by wire, each announced by a remittance advice naming the
    // invoice (POST /v1/remittances), the deposits arriving on a bank statement (POST
    // /v2/bank-statements) that cash-app's matching turns into payments linked to those remittances.
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const open = await pushInvoices(stack, org.apiKey, [1, 2, 3].map((i) => invoiceRecord({ document_number: `N-1${i}`, reference: `INV-N-1${i}`, customer_code: 'C-NORD', amount_in_document_currency: 100 * i, currency: 'EUR' })));
    expect(open.body.results.every((r) => r.success)).toBe(true);
    for (const i of [1, 2, 3]) {
      const rem = await stack.request('POST', '/v1/remittances', {
        token: org.token,
        body: { payer_name: 'Nordwind Logistik GmbH', transaction_amount: 100 * i, transaction_date: day, transaction_number: `NWPAY-${i}`, currency: 'EUR', payment_method: 'wire', allocations: [{ invoice_number: `N-1${i}`, amount_paid: 100 * i }] },
      });
      expect(rem.status).toBe(200);
      expect(rem.body.partner?.name).toBe('Nordwind Logistik GmbH');
    }
    const st = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE44500105175407324931',
        currency: 'EUR',
        statement_number: 'S-NORD-1',
        transactions: [1, 2, 3].map((i) => ({ amount: `${100 * i}.00`, booking_date: day, value_date: day, counterparty_name: 'Nordwind Logistik GmbH', counterparty_account: null, remittance_information: null, bank_reference: `NWPAY-${i}` })),
      },
    });
    expect(st.status).toBe(200);
    const ready = await waitForStatement(stack, org.token, st.body.id);
    for (const tx of ready.transactions as { id: string }[]) {
      const pay = await stack.request('GET', `/v2/payments?bank_transaction_id=${tx.id}`, { token: org.token });
      expect(pay.body.data[0]).toMatchObject({ remittance_id: expect.any(String) });
    }
    // and a fourth, short by 10 EUR freight: a manual payment writing the difference off to an adjustment (a deduction)
    const adj = await stack.request('POST', '/v2/adjustments', { token: org.token, body: { name: 'Freight deduction', ledger_account: { name: 'Freight out', number: '5100' } } });
    expect(adj.status).toBe(200);
    const short = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: 'N-14', reference: 'INV-N-14', customer_code: 'C-NORD', amount_in_document_currency: 47, currency: 'EUR' })]);
    expect(short.body.results[0]).toMatchObject({ success: true });
    const st2 = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: { account: 'DE44500105175407324931', currency: 'EUR', statement_number: 'S-NORD-2', transactions: [{ amount: '37.00', booking_date: day, value_date: day, counterparty_name: null, counterparty_account: null, remittance_information: null, bank_reference: null }] },
    });
    expect(st2.status).toBe(200);
    const [deposit] = (await waitForStatement(stack, org.token, st2.body.id)).transactions as { id: string }[];
    const manual = await stack.request('POST', '/v2/payments', {
      token: org.token,
      body: { bank_transaction_id: deposit!.id, allocations: [{ invoice_id: short.body.results[0].service_id, amount_paid: '37.00', adjustment_id: adj.body.id, adjustment_amount: '10.00' }] },
    });
    expect(manual.status).toBe(200);
    for (const body of [
      { extraction_type: 'onboarding', collection: 'collections' },
      { extraction_type: 'synthesis', collection: 'collections' },
    ]) {
      const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ extraction_type: body.extraction_type, file: null, file_id: null });
      const job = await waitJob(org.token, res.body.id, ended);
      expect(job.status).toBe('complete');
      const s = await expectConsistent(job);
      if (body.extraction_type === 'onboarding') {
        // the customer with payment history becomes knowledge scoped to it
        const [nord] = await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND name = 'Nordwind Logistik GmbH'`, [org.organizationId]);
        expect(job.input_count).toBeGreaterThanOrEqual(1);
        expect(job.memory_count).toBeGreaterThanOrEqual(1);
        expect(s.proposals.some((p) => p.customer_id === nord.id)).toBe(true);
        // cash-app's figures (customerPaymentHabits on the cash-app queue) reach Nordwind's proposals:
        // three of its four payments came with wire remittances naming their invoice numbers, one was short by a deduction
        const texts = s.proposals.filter((p) => p.customer_id === nord.id).flatMap((p) => p.source_excerpts.map((e: { text: string }) => e.text));
        expect(texts).toContainEqual(expect.stringMatching(/^Nordwind Logistik GmbH usually pays by wire transfer \(75% of 4 payments between \d{4}-\d{2}-\d{2} and \d{4}-\d{2}-\d{2}\)\.$/));
        expect(texts).toContainEqual(expect.stringMatching(/^Nordwind Logistik GmbH names the invoice numbers in its remittances \(100% of 3 remittances between /));
        expect(texts).toContainEqual(expect.stringMatching(/^Nordwind Logistik GmbH took 1 deductions totalling EUR 10\.00 between .*, most often for Freight deduction \(1\)\.$/));
        expect(texts).toContainEqual(expect.stringMatching(/^Nordwind Logistik GmbH pays on average 6 days after the due date \(3 invoices paid between 2026-09-06 and /));
        // nothing of Nordwind's payments is stated for the control organization's Nordwind
        const controlTexts = (await stack.sql(`SELECT text FROM knowledge.memories WHERE organization_id = $1`, [control.organizationId])).map((r) => r.text as string);
        expect(controlTexts.filter((t) => /usually pays by|remittances/.test(t))).toEqual([]);
        // the aggregates travel through object storage, never through Temporal: every payload of the
        // job's history (workflow input, activity inputs and results) is a small reference, whatever
        // the number of customers (they used to go into extractMemories' input: past 2 MB at ~8,000 customers)
        const history = await temporal.client.workflow.getHandle(`playbook-extraction-${res.body.id}`).fetchHistory();
        const payloads = (history.events ?? []).flatMap((e) => [
          ...(e.workflowExecutionStartedEventAttributes?.input?.payloads ?? []),
          ...(e.activityTaskScheduledEventAttributes?.input?.payloads ?? []),
          ...(e.activityTaskCompletedEventAttributes?.result?.payloads ?? []),
        ]);
        const texts2 = payloads.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8'));
        expect(texts2.length).toBeGreaterThanOrEqual(6);
        for (const t of texts2) {
          expect(Buffer.byteLength(t)).toBeLessThan(4096);
          expect(t).not.toMatch(/usual_payment_method|top_deduction_reasons|deduction_total/);
        }
        const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
        expect(scheduled.filter((n) => n === 'customerPaymentHabits')).toHaveLength(1);
        const ref = JSON.parse(texts2.find((t) => t.includes('"objectKey"') && t.includes('"sha256"'))!) as { objectKey: string; customers: number; size: number };
        expect(ref).toMatchObject({ objectKey: `knowledge/${org.organizationId}/extractions/${res.body.id}/cash-habits.jsonl`, customers: 1 });
        expect(ref.size).toBeGreaterThan(0);
        // and the object is deleted once the job has completed
        const storage = new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION });
        expect(await storage.readObject(ref.objectKey, 1_000_000)).toBeNull();
        storage.close();
      }
    }
  }, 90_000);

  it('answers 503 with Retry-After while Temporal is unreachable, storing nothing; the same request succeeds after', async () => {
    const file = await uploadFile(org.token, 'outage.md', 'text/markdown', Buffer.from(playbook(2)));
    // The knowledge API again, on its port, reaching Temporal through a proxy the test stops.
    const [host, port] = stack.env.TEMPORAL_ADDRESS.split(':');
    outage = await tcpProxy({ host: host!, port: Number(port) });
    const apiPort = stack.apis.knowledge.port;
    await stack.apis.knowledge.close();
    const entry = SERVICE_MODULES.knowledge;
    stack.apis.knowledge = await startServiceApi(entry.module as ServiceModule<CommonConfig, unknown>, entry.config({ ...stack.env, TEMPORAL_ADDRESS: `127.0.0.1:${outage.port}` }), { port: apiPort });
    const count = async () => (await stack.sql(`SELECT count(*)::int AS n FROM knowledge.extraction_jobs WHERE organization_id = $1`, [org.organizationId]))[0].n as number;
    const before = await count();
    const body = { file_id: file.id };
    try {
      await outage.stop();
      const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ type: 'service-unavailable', status: 503 });
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|UNAVAILABLE|DEADLINE/);
      expect(await count()).toBe(before);
    } finally {
      await outage.start();
    }
    let res;
    for (let i = 0; i < 20; i++) {
      res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body });
      if (res.status !== 503) break;
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
    expect(res!.status).toBe(200);
    expect(await count()).toBe(before + 1);
    expect((await waitJob(org.token, res!.body.id, ended)).status).toBe('complete');
  }, 120_000);

  it('a stage retried after it wrote everything (a worker lost before reporting) inserts nothing twice', async () => {
    // State no endpoint can produce: a completed job put back to the status its stage had when the
    // worker died after the last write (SQL), then the stages run again as retried attempts.
    const file = await uploadFile(org.token, 'retry.md', 'text/markdown', Buffer.from(playbook(6).replace(/region/g, 'district')));
    const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, collection: 'payments' } });
    const done = await waitJob(org.token, res.body.id, ended);
    expect(done.status).toBe('complete');
    const before = await stored(done.id);
    const db = createDb({ url: stack.databaseUrl, schema: 'knowledge', poolMax: 2 });
    try {
      const activities = createPlaybookExtractionActivities({ db, storage: new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION }), chunkSize: 3, chunkPauseMs: 0 });
      const input = { organizationId: org.organizationId, jobId: done.id };
      for (const [status, run] of [
        ['extracting', activities.extractMemories],
        ['deduping', activities.dedupeMemories],
        ['enriching', activities.enrichMemories],
        ['synthesizing', activities.synthesizeProposals],
      ] as const) {
        await stack.sql(`UPDATE knowledge.extraction_jobs SET status = $2, completed_at = NULL WHERE id = $1`, [done.id, status]);
        const result = (await new MockActivityEnvironment({ attempt: 2 }).run(run, input)) as { missing: boolean };
        expect(result.missing).toBe(false);
      }
      await new MockActivityEnvironment({ attempt: 1 }).run(activities.completeExtraction, input);
    } finally {
      await db.destroy();
    }
    const after = await stored(done.id);
    expect(after.memories).toBe(before.memories);
    expect(after.duplicates).toBe(before.duplicates);
    expect(after.proposals.map((p) => p.id).sort()).toEqual(before.proposals.map((p) => p.id).sort());
    const job = (await stack.request('GET', `/v2/aether/playbook/extractions/${done.id}`, { token: org.token })).body;
    expect(job).toMatchObject({ status: 'complete', memory_count: done.memory_count, dedup_count: done.dedup_count, proposal_count: done.proposal_count, knowledge_count: done.knowledge_count });
  }, 60_000);

  it('a request that dies between starting the workflow and committing the job leaves nothing: the workflow ends missing', async () => {
    // Injected at domain level: no API client can kill the server between the two steps.
    const file = await uploadFile(org.token, 'crash.md', 'text/markdown', Buffer.from(playbook(1)));
    const db = createDb({ url: stack.databaseUrl, schema: 'knowledge', poolMax: 2 });
    let jobId = '';
    try {
      const crash = requestExtraction({ db, temporal: temporal.client, storage: null, quotaBytes: 2 ** 40 }, org.organizationId, { file_id: file.id, created_by: org.userId }, {
        beforeCommit: async (id) => {
          jobId = id;
          throw new Error('process killed');
        },
      }).catch((err: unknown) => err);
      // the file is verified already: the request needs no storage (null) to get to the start
      expect(String(await crash)).toContain('process killed');
    } finally {
      await db.destroy();
    }
    expect(jobId).not.toBe('');
    expect(await stack.sql(`SELECT id FROM knowledge.extraction_jobs WHERE id = $1`, [jobId])).toEqual([]);
    expect((await stack.request('GET', `/v2/aether/playbook/extractions/${jobId}`, { token: org.token })).status).toBe(404);
    const result = await temporal.client.workflow.getHandle(`playbook-extraction-${jobId}`).result();
    expect(result).toEqual({ status: 'missing' });
    expect(await stack.sql(`SELECT id FROM knowledge.memories WHERE extraction_id = $1`, [jobId])).toEqual([]);
  }, 60_000);

  it('cancels a job no worker has picked up: the request records it, and the workflow ends cancelled once a worker runs', async () => {
    const file = await uploadFile(org.token, 'idle.md', 'text/markdown', Buffer.from(playbook(1)));
    await stack.workers.knowledge!.close();
    let id = '';
    try {
      const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
      expect(res.body.status).toBe('pending');
      id = res.body.id;
      const cancelled = await stack.request('POST', `/v2/aether/playbook/extractions/${id}/cancel`, { token: org.token });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'failed', error: 'cancelled' });
    } finally {
      await stack.startWorker('knowledge');
    }
    const handle = temporal.client.workflow.getHandle(`playbook-extraction-${id}`);
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    const job = (await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token: org.token })).body;
    expect(job).toMatchObject({ status: 'failed', error: 'cancelled', memory_count: 0, proposal_count: 0 });
    expect(await stored(id)).toMatchObject({ memories: 0, proposals: [] });
  }, 60_000);
});
