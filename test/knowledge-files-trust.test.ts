/**
 * Knowledge files and extraction jobs a user can trust, end to end through the gateway on a real
 * knowledge worker, S3 server, Postgres and Temporal:
 * - a file's verification runs once and its outcome is final (later reads do not re-check it);
 * - DELETE /v2/aether/files/{id}: refused while a job reads the file, then the row and the stored
 *   object go, ended jobs keep their history;
 * - the per-organization storage quota, at declaration (declared size) and at verification (real size);
 * - a job's `created_by` is the caller, never a name taken from the body;
 * - a document past an extraction limit (pages, inflated DOCX size, memories) fails its job with the
 *   limit's code in `error`, storing nothing (limits lowered through the KNOWLEDGE_MAX_* settings);
 * - re-running a file after a cancelled job finds all its knowledge again (dedup compares only with
 *   knowledge that exists: memories of completed jobs and live articles).
 *
 * SQL reads only what no endpoint shows (stored memories). The verification-time quota is exercised by
 * calling the files domain with a lower quota than the one the file was declared under (an operator
 * lowering KNOWLEDGE_STORAGE_QUOTA_BYTES between declaration and upload): no API call can produce it.
 * Stages are slowed (chunk size 2, 150 ms pause) so a job can be caught running.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, ObjectStorage } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { readFile } from '../services/knowledge/src/domain/files.js';
import { fileView } from '../services/knowledge/src/views/files.js';

const QUOTA = 200_000;

let stack: TestStack;
let org: Org;
let clean: Org;
let other: Org;
let storage: ObjectStorage;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ended = (j: any) => j.status === 'complete' || j.status === 'failed';

function playbook(rules: number): string {
  const parts = [
    '# Collections playbook',
    'Invoices above EUR 10,000 that are 30 days past due are escalated to the team lead, who calls the customer within 2 business days.',
    'A customer disputing an invoice must state the reason in writing; the dispute is logged the same day.',
    'Invoices above EUR 10,000 that are 30 days past due are escalated to the team lead, who calls the customer within 2 business days.',
  ];
  for (let i = 0; i < rules; i++) parts.push(`Rule ${i + 1}: accounts in region ${i + 1} receive their statement on business day ${(i % 20) + 1} of each month.`);
  return parts.join('\n\n') + '\n';
}

async function declare(o: Org, name: string, mime: string, size: number) {
  return stack.request('POST', '/v2/aether/files', { token: o.token, body: { name, mime_type: mime, size } });
}

async function upload(o: Org, name: string, mime: string, bytes: Buffer) {
  const created = await declare(o, name, mime, bytes.length);
  expect(created.status).toBe(200);
  expect((await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes })).status).toBe(200);
  const got = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: o.token });
  expect(got.status).toBe(200);
  return got.body;
}

async function extract(o: Org, fileId: string, collection: string | null = 'collections') {
  const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: o.token, body: { file_id: fileId, created_by: o.userId, collection } });
  expect(res.status).toBe(200);
  return res.body;
}

async function waitJob(o: Org, id: string, until: (job: any) => boolean, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token: o.token });
    expect(res.status).toBe(200);
    if (until(res.body) || Date.now() > deadline) return res.body;
    await sleep(50);
  }
}

beforeAll(async () => {
  stack = await startStack({
    workers: ['knowledge'],
    env: {
      KNOWLEDGE_EXTRACTION_CHUNK_SIZE: '2',
      KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS: '150',
      KNOWLEDGE_STORAGE_QUOTA_BYTES: String(QUOTA),
      KNOWLEDGE_MAX_PDF_PAGES: '2',
      KNOWLEDGE_MAX_DOCX_INFLATED_BYTES: String(1024 * 1024),
      KNOWLEDGE_MAX_MEMORIES_PER_JOB: '100',
    },
  });
  [org, clean, other] = await Promise.all([stack.onboard('Trust Org'), stack.onboard('Clean Org'), stack.onboard('Other Org')]);
  storage = new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION });
}, 180_000);
afterAll(async () => {
  storage?.close();
  await stack?.close();
});

describe('file verification', () => {
  it('checks an upload once and keeps the outcome: bytes put again later are not re-checked', async () => {
    const junk = Buffer.from('binary\u0000junk, not text');
    const created = await declare(org, 'notes.txt', 'text/plain', junk.length);
    expect(created.status).toBe(200);
    await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: junk });
    const first = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: org.token });
    expect(first.body).toMatchObject({ is_verified: false, sha256: createHash('sha256').update(junk).digest('hex'), upload_url: null });
    expect(first.body.verification_error).toMatch(/not text\/plain/);
    // the first upload URL is still valid: good bytes of the same length replace the object
    const good = Buffer.from('plain text, 21 bytes.');
    expect(good.length).toBe(junk.length);
    expect((await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: good })).status).toBe(200);
    const second = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: org.token });
    expect(second.body).toMatchObject({ is_verified: false, sha256: first.body.sha256, verification_error: first.body.verification_error, upload_url: null });
    // and an extraction refuses it, naming why
    const job = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: created.body.id } });
    expect(job.status).toBe(422);
    expect(job.body.errors[0].loc).toEqual(['body', 'file_id']);
  });
});

describe('DELETE /v2/aether/files/{file_id}', () => {
  it('refuses while a job reads the file, then removes the row and the stored bytes; ended jobs keep their history', async () => {
    const file = await upload(org, 'long.md', 'text/markdown', Buffer.from(playbook(40)));
    expect(file.is_verified).toBe(true);
    const job = await extract(org, file.id);
    await waitJob(org, job.id, (j) => j.status !== 'pending' || ended(j));
    const busy = await stack.request('DELETE', `/v2/aether/files/${file.id}`, { token: org.token });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ type: 'conflict', status: 409 });
    expect(busy.body.detail).toContain(job.id);
    expect((await stack.request('GET', `/v2/aether/files/${file.id}`, { token: org.token })).body.is_verified).toBe(true);
    expect(await storage.getObjectBytes(file.object_key)).not.toBeNull();

    const done = await waitJob(org, job.id, ended);
    expect(done.status).toBe('complete');
    // another organization cannot delete it
    expect((await stack.request('DELETE', `/v2/aether/files/${file.id}`, { token: other.token })).status).toBe(404);
    const del = await stack.request('DELETE', `/v2/aether/files/${file.id}`, { token: org.token });
    expect(del.status).toBe(204);
    expect((await stack.request('GET', `/v2/aether/files/${file.id}`, { token: org.token })).status).toBe(404);
    expect(await storage.getObjectBytes(file.object_key)).toBeNull();
    const after = (await stack.request('GET', `/v2/aether/playbook/extractions/${job.id}`, { token: org.token })).body;
    expect(after).toMatchObject({ status: 'complete', file: null, file_id: null, memory_count: done.memory_count, proposal_count: done.proposal_count });
    expect(after.proposal_count).toBeGreaterThan(0);
    const again = await stack.request('DELETE', `/v2/aether/files/${file.id}`, { token: org.token });
    expect(again.status).toBe(404);
    expect(again.body.type).toBe('entity-not-found');
  }, 120_000);
});

describe('storage quota', () => {
  it('refuses a declaration beyond the organization\'s quota (409, nothing stored); deleting frees the bytes', async () => {
    const quotaOrg = await stack.onboard('Quota Org');
    const big = await declare(quotaOrg, 'big.pdf', 'application/pdf', 150_000);
    expect(big.status).toBe(200);
    const over = await declare(quotaOrg, 'more.pdf', 'application/pdf', QUOTA - 150_000 + 1);
    expect(over.status).toBe(409);
    expect(over.body.type).toBe('conflict');
    expect(over.body.detail).toContain('quota');
    expect(over.body.detail).toContain(String(QUOTA));
    // exactly up to the quota fits; other organizations have their own
    expect((await declare(other, 'other.pdf', 'application/pdf', QUOTA - 1000)).status).toBe(200);
    const fits = await declare(quotaOrg, 'fits.pdf', 'application/pdf', QUOTA - 150_000);
    expect(fits.status).toBe(200);
    expect((await declare(quotaOrg, 'one.txt', 'text/plain', 1)).status).toBe(409);
    expect((await stack.request('DELETE', `/v2/aether/files/${big.body.id}`, { token: quotaOrg.token })).status).toBe(204);
    expect((await declare(quotaOrg, 'one.txt', 'text/plain', 1)).status).toBe(200);
  });

  it('refuses at verification an upload whose real size no longer fits the quota', async () => {
    const quotaOrg = await stack.onboard('Lowered Quota Org');
    const bytes = Buffer.from(playbook(3));
    const created = await declare(quotaOrg, 'p.md', 'text/markdown', bytes.length);
    expect((await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes })).status).toBe(200);
    const db = createDb({ url: stack.databaseUrl, schema: 'knowledge', poolMax: 2 });
    try {
      const { file, upload } = await readFile({ db, storage, quotaBytes: bytes.length - 1 }, quotaOrg.organizationId, created.body.id);
      const view = fileView(file, upload);
      expect(view.is_verified).toBe(false);
      expect(view.verification_error).toContain('storage quota exceeded');
    } finally {
      await db.destroy();
    }
    const got = await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token: quotaOrg.token });
    expect(got.body.is_verified).toBe(false);
    expect(got.body.verification_error).toContain('storage quota exceeded');
  });
});

describe('created_by', () => {
  it('is the caller: a body naming someone else is 422 at body.created_by and stores nothing', async () => {
    const file = await upload(org, 'who.md', 'text/markdown', Buffer.from(playbook(1)));
    const before = (await stack.request('GET', `/v2/aether/playbook/extractions?file_id=${file.id}`, { token: org.token })).body.total_records;
    for (const name of ['mallory@example.com', other.userId]) {
      const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, created_by: name } });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
      expect(res.body.errors[0]).toMatchObject({ loc: ['body', 'created_by'] });
    }
    expect((await stack.request('GET', `/v2/aether/playbook/extractions?file_id=${file.id}`, { token: org.token })).body.total_records).toBe(before);
    const omitted = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id } });
    expect(omitted.status).toBe(200);
    expect(omitted.body.created_by).toBe(org.userId);
    const self = await stack.request('POST', '/v2/aether/playbook/extractions', { token: org.token, body: { file_id: file.id, created_by: org.userId } });
    expect(self.status).toBe(200);
    expect(self.body.created_by).toBe(org.userId);
    await Promise.all([waitJob(org, omitted.body.id, ended), waitJob(org, self.body.id, ended)]);
  }, 90_000);
});

describe('re-running a file', () => {
  it('after a cancelled job yields what a first run yields: dedup ignores memories of jobs that did not complete', async () => {
    // no target collection: deduping then compares with the organization's memories of every collection
    const text = Buffer.from(playbook(30));
    // the reference: one uninterrupted run in an organization that holds nothing
    const ref = await waitJob(clean, (await extract(clean, (await upload(clean, 'p.md', 'text/markdown', text)).id, null)).id, ended);
    expect(ref.status).toBe('complete');
    expect(ref.proposal_count).toBeGreaterThan(0);

    // an organization whose only knowledge is what the cancelled job left behind
    const rerunOrg = await stack.onboard('Rerun Org');
    const file = await upload(rerunOrg, 'rerun.md', 'text/markdown', text);
    const first = await extract(rerunOrg, file.id, null);
    await waitJob(rerunOrg, first.id, (j) => j.progress.extracting?.done >= 8 || ended(j));
    const cancelled = await stack.request('POST', `/v2/aether/playbook/extractions/${first.id}/cancel`, { token: rerunOrg.token });
    expect(cancelled.body).toMatchObject({ status: 'failed', error: 'cancelled' });
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.memories WHERE extraction_id = $1`, [first.id]);
    expect(n).toBeGreaterThanOrEqual(8);

    const rerun = await waitJob(rerunOrg, (await extract(rerunOrg, file.id, null)).id, ended);
    expect(rerun).toMatchObject({ status: 'complete', memory_count: ref.memory_count, dedup_count: ref.dedup_count, proposal_count: ref.proposal_count });
  }, 180_000);
});

describe('extraction limits', () => {
  const fixture = (name: string) => readFileSync(new URL(`./fixtures/knowledge/${name}`, import.meta.url));
  const failsWith = async (o: Org, name: string, mime: string, bytes: Buffer, code: string) => {
    const file = await upload(o, name, mime, bytes);
    expect(file.is_verified).toBe(true);
    const job = await waitJob(o, (await extract(o, file.id)).id, ended);
    expect(job.status).toBe('failed');
    expect(job.error.startsWith(`${code}: `)).toBe(true);
    expect(job.memory_count).toBe(0);
    expect(job.proposal_count).toBe(0);
    return job;
  };

  it('fails a job whose PDF has more pages than allowed, with too_many_pages', async () => {
    const job = await failsWith(org, 'playbook.pdf', 'application/pdf', fixture('ar-playbook.pdf'), 'too_many_pages');
    expect(job.error).toContain('3 pages; at most 2');
  }, 60_000);

  it('fails a job on a DOCX zip bomb, with docx_too_large', async () => {
    const zip = await JSZip.loadAsync(fixture('short-payment-procedure.docx'));
    const xml = await zip.file('word/document.xml')!.async('string');
    zip.file('word/document.xml', xml.replace('</w:document>', `${' '.repeat(8 * 1024 * 1024)}</w:document>`));
    const bomb = Buffer.from(await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } }));
    expect(bomb.length).toBeLessThan(100_000);
    await failsWith(org, 'bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bomb, 'docx_too_large');
  }, 60_000);

  it('fails a job whose file yields more memories than allowed, with too_many_memories', async () => {
    const job = await failsWith(org, 'huge.md', 'text/markdown', Buffer.from(playbook(120)), 'too_many_memories');
    expect(job.error).toContain('at most 100');
  }, 60_000);
});
