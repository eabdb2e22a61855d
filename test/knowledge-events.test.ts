/**
 * Knowledge's events through the gateway: `extraction.completed`, `extraction.failed` and
 * `proposal.created` appear in `GET /v2/events` with the resource exactly as its own GET returns it,
 * once per state change (a retried activity records nothing twice), nothing for a change that rolled
 * back, and only for the organization that owns them. Real knowledge worker, Postgres, Temporal, S3.
 *
 * SQL set-up, for states no endpoint can produce: a test trigger on knowledge.events that fails the
 * first insert of an `extraction.completed` event (the transaction that completes the job rolls back
 * after its change and its event were written; the activity's retry then commits), and a completed
 * job put back to `synthesizing` to re-run its last stage as a retried attempt (as
 * test/knowledge-extraction.test.ts does). SQL also reads the trigger's counter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { connectTemporal, createDb, ObjectStorage } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, pushCustomers } from './support/ledger.js';
import { failInserts } from './support/faults.js';
import { createPlaybookExtractionActivities } from '../services/knowledge/src/activities/playbook-extraction.js';

let stack: TestStack;
let org: Org;
let other: Org;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function playbook(tag: string): string {
  return [
    `# Playbook ${tag}`,
    `Invoices above EUR 10,000 that are 30 days past due are escalated to the ${tag} team lead within 2 business days.`,
    `Dunning procedure for ${tag}:\n1. Send the first reminder 7 days after the due date.\n2. Call the customer 21 days after the due date.`,
    `A customer of ${tag} disputing an invoice must state the reason in writing; the dispute is logged the same day.`,
  ].join('\n\n') + '\n';
}

async function upload(token: string, name: string, mime: string, bytes: Buffer) {
  const created = await stack.request('POST', '/v2/aether/files', { token, body: { name, mime_type: mime, size: bytes.length } });
  expect(created.status).toBe(200);
  expect((await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.upload_headers, body: bytes })).status).toBe(200);
  return (await stack.request('GET', `/v2/aether/files/${created.body.id}`, { token })).body;
}

async function extract(token: string, fileId: string): Promise<string> {
  const res = await stack.request('POST', '/v2/aether/playbook/extractions', { token, body: { file_id: fileId, collection: 'collections' } });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function waitEnded(token: string, id: string): Promise<any> {
  for (let i = 0; i < 1200; i++) {
    const res = await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token });
    if (res.body.status === 'complete' || res.body.status === 'failed') return res.body;
    await sleep(50);
  }
  throw new Error(`extraction ${id} did not end`);
}

/** Every event of `type` the token sees, newest first. */
async function events(token: string, type: string): Promise<any[]> {
  const res = await stack.request('GET', `/v2/events?type=${type}&page_size=200`, { token });
  expect(res.status).toBe(200);
  return res.body.data;
}

const ofJob = (list: any[], jobId: string) => list.filter((e) => e.data.object.id === jobId);
const proposalsOfJob = (list: any[], jobId: string) => list.filter((e) => e.data.object.extraction_id === jobId);

function storage() {
  return new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION });
}

beforeAll(async () => {
  stack = await startStack({ workers: ['knowledge'], env: { KNOWLEDGE_EXTRACTION_CHUNK_SIZE: '2', KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS: '0' } });
  [org, other] = await Promise.all([stack.onboard('Knowledge Events Org'), stack.onboard('Other Events Org')]);
}, 180_000);
afterAll(async () => {
  await stack?.close();
});

describe('knowledge events', () => {
  let jobId: string;

  it('records extraction.completed with the job as GET returns it, and one proposal.created per proposal as GET returns it', async () => {
    const file = await upload(org.token, 'playbook.md', 'text/markdown', Buffer.from(playbook('north')));
    jobId = await extract(org.token, file.id);
    const job = await waitEnded(org.token, jobId);
    expect(job.status).toBe('complete');

    const completed = ofJob(await events(org.token, 'extraction.completed'), jobId);
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ object: 'event', type: 'extraction.completed' });
    expect(completed[0].previous_attributes).toBeUndefined();
    expect(completed[0].data.object).toEqual(job);
    const one = await stack.request('GET', `/v2/events/${completed[0].id}`, { token: org.token });
    expect(one.body).toEqual(completed[0]);

    const proposals = await stack.request('GET', `/v2/aether/playbook/proposals?extraction_id=${jobId}&page_size=200`, { token: org.token });
    expect(proposals.body.total_records).toBeGreaterThanOrEqual(2); // written over several chunks (chunk size 2)
    const created = proposalsOfJob(await events(org.token, 'proposal.created'), jobId);
    expect(created).toHaveLength(proposals.body.total_records);
    expect(new Set(created.map((e) => e.data.object.id)).size).toBe(created.length);
    for (const e of created) {
      const got = await stack.request('GET', `/v2/aether/playbook/proposals/${e.data.object.id}`, { token: org.token });
      expect(e.data.object).toEqual(got.body);
    }
    expect(ofJob(await events(org.token, 'extraction.failed'), jobId)).toHaveLength(0);
  }, 90_000);

  it('records extraction.failed once for a job that fails, with the job as GET returns it', async () => {
    const file = await upload(org.token, 'broken.pdf', 'application/pdf', Buffer.from('%PDF-1.7\n1 0 obj <</Type /Catalog>> garbage without xref\n%%EOF'));
    const id = await extract(org.token, file.id);
    const job = await waitEnded(org.token, id);
    expect(job.status).toBe('failed');
    const failed = ofJob(await events(org.token, 'extraction.failed'), id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data.object).toEqual(job);
    expect(ofJob(await events(org.token, 'extraction.completed'), id)).toHaveLength(0);
  }, 60_000);

  it('records extraction.failed once for a cancelled job, though both the request and the workflow end it', async () => {
    const file = await upload(org.token, 'cancel.md', 'text/markdown', Buffer.from(playbook('cancel')));
    // No worker: the cancel request records the end itself; the workflow, once a worker runs, finds it ended.
    await stack.workers.knowledge!.close();
    let id = '';
    try {
      id = await extract(org.token, file.id);
      const cancelled = await stack.request('POST', `/v2/aether/playbook/extractions/${id}/cancel`, { token: org.token });
      expect(cancelled.body).toMatchObject({ status: 'failed', error: 'cancelled' });
    } finally {
      await stack.startWorker('knowledge');
    }
    const temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
    try {
      await expect(temporal.client.workflow.getHandle(`playbook-extraction-${id}`).result()).rejects.toThrow();
    } finally {
      await temporal.close();
    }
    const job = (await stack.request('GET', `/v2/aether/playbook/extractions/${id}`, { token: org.token })).body;
    const failed = ofJob(await events(org.token, 'extraction.failed'), id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data.object).toEqual(job);
  }, 60_000);

  it('a retried completion, failure or proposal stage records nothing twice', async () => {
    const before = { completed: ofJob(await events(org.token, 'extraction.completed'), jobId), proposals: proposalsOfJob(await events(org.token, 'proposal.created'), jobId) };
    const db = createDb({ url: stack.databaseUrl, schema: 'knowledge', poolMax: 2 });
    const s = storage();
    try {
      const activities = createPlaybookExtractionActivities({ db, storage: s, chunkSize: 2, chunkPauseMs: 0 });
      const input = { organizationId: org.organizationId, jobId };
      // an attempt that runs again after the first one committed (its worker was lost before reporting)
      await new MockActivityEnvironment({ attempt: 2 }).run(activities.completeExtraction, input);
      await new MockActivityEnvironment({ attempt: 2 }).run(activities.failExtraction, { ...input, error: 'late failure' });
      await stack.sql(`UPDATE knowledge.extraction_jobs SET status = 'synthesizing' WHERE id = $1`, [jobId]);
      await new MockActivityEnvironment({ attempt: 2 }).run(activities.synthesizeProposals, input);
      await stack.sql(`UPDATE knowledge.extraction_jobs SET status = 'complete' WHERE id = $1`, [jobId]);
    } finally {
      s.close();
      await db.destroy();
    }
    expect(ofJob(await events(org.token, 'extraction.completed'), jobId)).toEqual(before.completed);
    expect(ofJob(await events(org.token, 'extraction.failed'), jobId)).toHaveLength(0);
    expect(proposalsOfJob(await events(org.token, 'proposal.created'), jobId)).toEqual(before.proposals);
  }, 60_000);

  it('a completion that rolls back after its event was written records nothing; its retry records one', async () => {
    const fault = await failInserts(stack, { table: 'knowledge.events', when: `NEW.type = 'extraction.completed'`, name: 'fail_completed' });
    try {
      const file = await upload(org.token, 'rollback.md', 'text/markdown', Buffer.from(playbook('rollback')));
      const id = await extract(org.token, file.id);
      const job = await waitEnded(org.token, id);
      expect(job.status).toBe('complete');
      expect(await fault.attempts()).toBe(2); // the first transaction wrote its event and rolled back; the retry committed
      const completed = ofJob(await events(org.token, 'extraction.completed'), id);
      expect(completed).toHaveLength(1);
      expect(completed[0].data.object).toEqual(job);
    } finally {
      await fault.restore();
    }
  }, 90_000);

  it('a member sees a proposal.created event exactly when they may see the proposal (its customer\'s business unit)', async () => {
    const unit = async (name: string) => (await stack.request('POST', '/v2/business-units', { token: org.token, body: { name } })).body.id as string;
    const [north, south] = [await unit('North'), await unit('South')];
    const pushed = await pushCustomers(stack, org.apiKey, [{ ...customerRecord({ customer_code: 'C-NORD', name1: 'Nordwind Logistik GmbH' }), business_unit_id: south }]);
    expect(pushed.body.results[0]).toMatchObject({ success: true });
    const customer = pushed.body.results[0].service_id as string;
    const created = await stack.request('POST', '/v2/users', { token: org.token, body: { email: 'north@events.example', name: 'North member', role: 'member', business_unit_ids: [north], permissions: [] } });
    expect(created.status).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const member = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;

    const text = playbook('units') + '\nNordwind Logistik GmbH pays by wire transfer and always quotes the invoice number in the remittance advice.\n';
    const file = await upload(org.token, 'units.md', 'text/markdown', Buffer.from(text));
    const id = await extract(org.token, file.id);
    expect((await waitEnded(org.token, id)).status).toBe('complete');
    const all = proposalsOfJob(await events(org.token, 'proposal.created'), id);
    expect(all.some((e) => e.data.object.customer_id === customer)).toBe(true);
    // the first job's proposals name no customer: the member sees every one of their events
    const unscoped = proposalsOfJob(await events(org.token, 'proposal.created'), jobId);
    expect(unscoped.every((e) => e.data.object.customer_id === null)).toBe(true);
    expect(proposalsOfJob(await events(member, 'proposal.created'), jobId)).toEqual(unscoped);
    const seen = new Set(proposalsOfJob(await events(member, 'proposal.created'), id).map((e) => e.id));
    for (const e of all) {
      const visible = (await stack.request('GET', `/v2/aether/playbook/proposals/${e.data.object.id}`, { token: member })).status === 200;
      expect(seen.has(e.id), e.data.object.title).toBe(visible);
      expect(visible).toBe(e.data.object.customer_id !== customer);
    }
    // the job's events belong to the organization: the member sees them
    expect(ofJob(await events(member, 'extraction.completed'), id)).toHaveLength(1);
  }, 90_000);

  it('another organization sees none of these events', async () => {
    for (const type of ['extraction.completed', 'extraction.failed', 'proposal.created']) expect(await events(other.token, type)).toEqual([]);
    const mine = ofJob(await events(org.token, 'extraction.completed'), jobId);
    expect((await stack.request('GET', `/v2/events/${mine[0].id}`, { token: other.token })).status).toBe(404);
  });
});
