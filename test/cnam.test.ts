/**
 * Caller-ID name (CNAM) registration (spec 2.18, row 21) through the gateway: 404 until one exists,
 * every field rule reported at once, draft → submitted → in_review (workflow
 * `cnam-registration-<submission id>` with the default operator adapter) → approved | rejected by the
 * operator's CLI (`npm run cli -- cnam decide`), a new submission when an approved registration is
 * edited, admin-only writes, tenant isolation, and the workflow's history replaying.
 *
 * SQL only reads what the API cannot show (the submission records the adapter kept).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { cnamRegistrationWorkflowId, ORGANIZATION_ID, TASK_QUEUES } from '@rp/workflows';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';

const run = promisify(execFile);
let stack: TestStack;
let orgA: Org;
let orgB: Org;
let memberToken: string;
let temporal: TemporalHandle;

const VALID = {
  display_name: 'ACME Collect.',
  legal_business_name: 'Acme Receivables, Inc.',
  street_address: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postal_code: '94105',
  country: 'US',
  business_type: 'corporation',
  business_industry: 'financial services',
  registration_id_type: 'EIN',
  registration_number: '12-3456789',
  regions_of_operation: ['US-CA', 'US-NY', 'US-CA'],
  website: 'https://acme.example/about',
  contact_first_name: 'Ada',
  contact_last_name: 'Admin',
  contact_email: 'ada@acme.example',
  contact_phone: '+12015550123',
  contact_title: 'Controller',
  phone_number: '+14155552671',
};

const put = (token: string, body: unknown) => stack.request('PUT', '/v2/cnam-registration', { token, body });
const get = (token: string) => stack.request('GET', '/v2/cnam-registration', { token });

async function cliProcess(args: string[]): Promise<{ code: number; out: any; err: any }> {
  try {
    const { stdout } = await run(process.execPath, ['scripts/bootstrap.mjs', 'cli', '--quiet-bootstrap', ...args], {
      env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL, TEMPORAL_ADDRESS: stack.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: stack.namespace },
    });
    return { code: 0, out: JSON.parse(stdout), err: null };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    if (typeof err.stderr !== 'string') throw e;
    return { code: err.code, out: null, err: JSON.parse(err.stderr.trim().split('\n').pop()!) };
  }
}

async function cli(args: string[]): Promise<any> {
  const { runCli } = await import('@rp/admin/cli');
  return runCli(args, stack.env);
}

async function waitForStatus(token: string, status: string) {
  await expect.poll(async () => (await get(token)).body.status, { timeout: 30_000, interval: 100 }).toBe(status);
  return (await get(token)).body;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
  orgA = await stack.onboard('Cnam A');
  orgB = await stack.onboard('Cnam B');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  const created = await stack.request('POST', '/v2/users', { token: orgA.token, body: { email: 'member@cnam.example', name: 'Mo Member', role: 'member' } });
  expect(created.status).toBe(200);
  memberToken = (await cli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id])).token;
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('caller-ID name registration', () => {
  it('is 404 until one exists; a member may not write one (403)', async () => {
    const none = await get(orgA.token);
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    const denied = await put(memberToken, VALID);
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe('forbidden');
    expect((await get(orgA.token)).status).toBe(404);
  });

  it('reports every problem at once, each with its loc, and stores nothing', async () => {
    const res = await put(orgA.token, {
      ...VALID,
      display_name: 'Acme Collections!',
      legal_business_name: undefined,
      phone_number: '+10005550100',
      contact_phone: '415-555-2671',
      contact_email: 'ada@',
      country: 'us',
      regions_of_operation: ['California', 'US-ZZ', 'CA-ON'],
      website: 'http://acme.example',
      status: 'approved',
    });
    expect(res.status).toBe(422);
    expect(res.body.type).toBe('request-validation');
    const locs = res.body.errors.map((e: { loc: unknown[] }) => e.loc.join('.'));
    expect(locs.sort()).toEqual(
      [
        'body', // status is set by the platform
        'body.display_name', // 17 characters
        'body.display_name', // "!" is not in the CNAM set
        'body.legal_business_name', // required to submit
        'body.phone_number',
        'body.contact_phone',
        'body.contact_email',
        'body.country',
        'body.regions_of_operation.0',
        'body.regions_of_operation.1',
        'body.website',
      ].sort(),
    );
    const msg = (loc: string) => res.body.errors.filter((e: { loc: unknown[] }) => e.loc.join('.') === loc).map((e: { msg: string }) => e.msg).join(' | ');
    expect(msg('body.display_name')).toMatch(/at most 15/);
    expect(msg('body.display_name')).toMatch(/letters, digits, space and , \. & -/);
    expect(msg('body.phone_number')).toMatch(/not a valid/);
    expect(msg('body.contact_phone')).toMatch(/E\.164/);
    expect(msg('body.legal_business_name')).toMatch(/required to submit/);
    expect(msg('body.regions_of_operation.1')).toMatch(/not an ISO 3166-2 subdivision/);
    expect(msg('body.website')).toMatch(/https/);
    expect((await get(orgA.token)).status).toBe(404);

    // A region of another country than the registration's
    const wrongCountry = await put(orgA.token, { ...VALID, regions_of_operation: ['US-CA', 'CA-ON'] });
    expect(wrongCountry.status).toBe(422);
    expect(wrongCountry.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'regions_of_operation', 1], msg: expect.stringMatching(/country US/) })]);
    const unassigned = await put(orgA.token, { ...VALID, country: 'XX', regions_of_operation: [] });
    expect(unassigned.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'country'], msg: expect.stringMatching(/not an assigned ISO 3166-1/) })]);
    // 15 characters of the set are fine; 16 are not
    expect((await put(orgA.token, { ...VALID, submit: false, display_name: 'A&B, Co. - 1234' })).status).toBe(200);
    expect((await put(orgA.token, { ...VALID, submit: false, display_name: 'A&B, Co. - 12345' })).body.errors[0].loc).toEqual(['body', 'display_name']);
  });

  it('saves a draft without submitting: partial fields, no submission, no time stamps', async () => {
    const draft = await put(orgA.token, { submit: false, display_name: 'ACME', phone_number: '+442071838750', country: 'GB', regions_of_operation: ['GB-LND'] });
    expect(draft.status, draft.text).toBe(200);
    expect(draft.body).toMatchObject({
      object: 'cnam_registration',
      status: 'draft',
      display_name: 'ACME',
      phone_number: '+442071838750',
      legal_business_name: null,
      regions_of_operation: ['GB-LND'],
      submitted_at: null,
      approved_at: null,
      submission_id: null,
      user_id: orgA.userId,
    });
    const read = await get(memberToken);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(draft.body);
    expect(await stack.sql(`SELECT id FROM admin.cnam_submissions WHERE organization_id = $1`, [orgA.organizationId])).toEqual([]);
  });

  let firstSubmission: string;

  it('submits: workflow cnam-registration-<submission id> hands it to the operator adapter and leaves it in review; no change meanwhile (409)', async () => {
    const before = Date.now();
    const res = await put(orgA.token, VALID);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'submitted', display_name: 'ACME Collect.', regions_of_operation: ['US-CA', 'US-NY'], approved_at: null, user_id: orgA.userId });
    expect(new Date(res.body.submitted_at).getTime()).toBeGreaterThanOrEqual(before - 5000);
    firstSubmission = res.body.submission_id;
    expect(firstSubmission).toEqual(expect.any(String));

    const inReview = await waitForStatus(orgA.token, 'in_review');
    expect(inReview).toMatchObject({ status_detail: null, submission_id: firstSubmission, submitted_at: res.body.submitted_at, error_message: null });

    const handle = temporal.client.workflow.getHandle(cnamRegistrationWorkflowId(firstSubmission));
    const description = await handle.describe();
    expect(description.workflowId).toBe(`cnam-registration-${firstSubmission}`);
    expect(description.taskQueue).toBe(TASK_QUEUES.admin);
    expect(description.status.name).toBe('RUNNING');
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgA.organizationId);

    const [sub] = await stack.sql(`SELECT status, adapter, payload, submitted_by_user_id FROM admin.cnam_submissions WHERE id = $1`, [firstSubmission]);
    expect(sub).toMatchObject({ status: 'in_review', adapter: 'operator', submitted_by_user_id: orgA.userId });
    expect(sub.payload).toMatchObject({ display_name: 'ACME Collect.', phone_number: '+14155552671' });

    const busy = await put(orgA.token, { ...VALID, display_name: 'Other' });
    expect(busy.status).toBe(409);
    expect(busy.body.type).toBe('conflict');
    expect((await get(orgA.token)).body.display_name).toBe('ACME Collect.');
  });

  it('the operator records a rejection with `npm run cli -- cnam decide --reject`', async () => {
    const res = await cliProcess(['cnam', 'decide', '--org', orgA.organizationId, '--reject', 'Display name does not match the legal name']);
    expect(res.code, JSON.stringify(res.err)).toBe(0);
    expect(res.out).toMatchObject({ object: 'cnam_registration', status: 'rejected', status_detail: 'Display name does not match the legal name', approved_at: null });
    expect((await get(orgA.token)).body).toMatchObject({ status: 'rejected', status_detail: 'Display name does not match the legal name' });
    expect(await temporal.client.workflow.getHandle(cnamRegistrationWorkflowId(firstSubmission)).result()).toEqual({
      status: 'rejected',
      detail: 'Display name does not match the legal name',
    });
    // nothing left to decide
    const again = await cliProcess(['cnam', 'decide', '--org', orgA.organizationId, '--approve']);
    expect(again.code).toBe(2);
    expect(again.err.error).toMatch(/rejected, not in review/);
  });

  let approvedAt: string;

  it('a rejected registration is corrected and submitted again; the operator approves it; its history replays', async () => {
    const res = await put(orgA.token, { ...VALID, display_name: 'Acme Receivabl' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'submitted', status_detail: null });
    expect(res.body.submission_id).not.toBe(firstSubmission);
    await waitForStatus(orgA.token, 'in_review');

    const approved = await cli(['cnam', 'decide', '--org', orgA.organizationId, '--approve', '--detail', 'Registered with the carrier']);
    expect(approved).toMatchObject({ status: 'approved', status_detail: 'Registered with the carrier', display_name: 'Acme Receivabl' });
    approvedAt = approved.approved_at;
    expect(approvedAt).toMatch(/Z$/);
    expect((await get(memberToken)).body).toMatchObject({ status: 'approved', approved_at: approvedAt });

    const handle = temporal.client.workflow.getHandle(cnamRegistrationWorkflowId(res.body.submission_id));
    expect(await handle.result()).toEqual({ status: 'approved', detail: 'Registered with the carrier' });
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'cnam-registration.json');
  });

  it('editing an approved registration is a new submission (a draft of it is 409)', async () => {
    const draft = await put(orgA.token, { ...VALID, submit: false });
    expect(draft.status).toBe(409);
    expect((await get(orgA.token)).body.status).toBe('approved');

    const current = (await get(orgA.token)).body;
    const res = await put(orgA.token, { ...VALID, display_name: 'Acme AR' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'submitted', approved_at: null, status_detail: null, display_name: 'Acme AR' });
    expect(res.body.submission_id).not.toBe(current.submission_id);
    expect(new Date(res.body.submitted_at).getTime()).toBeGreaterThanOrEqual(new Date(current.submitted_at).getTime());
    await waitForStatus(orgA.token, 'in_review');
    // the earlier submission keeps its answer
    const subs = await stack.sql(`SELECT status FROM admin.cnam_submissions WHERE organization_id = $1 ORDER BY created_at`, [orgA.organizationId]);
    expect(subs.map((s: { status: string }) => s.status)).toEqual(['rejected', 'approved', 'in_review']);
  });

  it('the CLI explains what it cannot do', async () => {
    const both = await cli(['cnam', 'decide', '--org', orgA.organizationId, '--approve', '--reject', 'no']).catch((e: Error) => e);
    expect(String(both)).toMatch(/exactly one of --approve or --reject/);
    const neither = await cli(['cnam', 'decide', '--org', orgA.organizationId]).catch((e: Error) => e);
    expect(String(neither)).toMatch(/exactly one/);
    const none = await cli(['cnam', 'decide', '--org', orgB.organizationId, '--approve']).catch((e: Error) => e);
    expect(String(none)).toMatch(/has no caller-ID name registration/);
    const noOrg = await cli(['cnam', 'decide', '--org', '00000000-0000-7000-8000-000000000000', '--approve']).catch((e: Error) => e);
    expect(String(noOrg)).toMatch(/no organization/);
    expect((await get(orgA.token)).body.status).toBe('in_review');
  });

  it('tenant isolation: org B gets 404 and its own registration, and its operator answer does not reach A', async () => {
    expect((await get(orgB.token)).status).toBe(404);
    const b = await put(orgB.token, { ...VALID, display_name: 'Bravo' });
    expect(b.status).toBe(200);
    expect(b.body.id).not.toBe((await get(orgA.token)).body.id);
    await waitForStatus(orgB.token, 'in_review');
    await cli(['cnam', 'decide', '--org', orgB.organizationId, '--reject', 'B only']);
    expect((await get(orgB.token)).body).toMatchObject({ status: 'rejected', display_name: 'Bravo' });
    expect((await get(orgA.token)).body).toMatchObject({ status: 'in_review', display_name: 'Acme AR' });
  });
});
