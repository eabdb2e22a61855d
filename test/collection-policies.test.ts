/**
 * Collection policies through the gateway (POST/GET/PATCH/DELETE /v2/collection-policies): validation
 * with the location of each problem, steps answered in offset order, the one-default and one-per-segment
 * rules (409, also under concurrent creates), admin-only writes, tenant isolation, and the 409s of deleting
 * a segment, an email template, a folder of templates or an SMS template a policy step uses. No SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;
let member: string;
const ids: Record<string, string> = {};

const req = (o: Org | string, method: string, path: string, body?: unknown) => stack.request(method, path, { token: typeof o === 'string' ? o : o.token, body });
async function ok(p: Promise<{ status: number; body: any }>, status = 200) {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

let segSeq = 0;
const segment = (o: Org) => ok(req(o, 'POST', '/v2/customer-segments', { name: `Seg ${++segSeq}`, priority: segSeq, conditions: { field: 'name', op: 'eq', value: `n${segSeq}` } }));

async function templates(o: Org) {
  const folder = await ok(req(o, 'POST', '/v1/email-template-folders', { name: `Dunning ${Math.random()}` }));
  const email = await ok(req(o, 'POST', '/v1/email-templates', { folder_id: folder.id, name: 'Reminder', subject: 'Hi {{ customer.name }}', body: 'Open: {{ totals.open_amount }}' }));
  const sms = await ok(req(o, 'POST', '/v2/sms-templates', { name: `SMS ${Math.random()}`, body: 'Hi {{ customer.name }}' }));
  return { folder: folder.id as string, email: email.id as string, sms: sms.id as string };
}

beforeAll(async () => {
  stack = await startStack();
  [org, other] = await Promise.all([stack.onboard(), stack.onboard()]);
  Object.assign(ids, await templates(org));
  const theirs = await templates(other);
  ids.otherEmail = theirs.email;
  ids.otherSms = theirs.sms;
  ids.otherSegment = (await segment(other)).id;
  const m = await ok(req(org, 'POST', '/v2/users', { email: 'member@policies.example', name: 'Mo Member', role: 'member', permissions: [] }));
  const { runCli } = await import('@rp/admin/cli');
  member = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', m.id], stack.env)) as { token: string }).token;
}, 120_000);
afterAll(async () => stack?.close());

const steps = () => [
  { offset_days: 30, channel: 'task' },
  { offset_days: -3, channel: 'email', email_template_id: ids.email },
  { offset_days: 7, channel: 'sms', sms_template_id: ids.sms, min_overdue_lc: '250.5' },
];

describe('collection policies', () => {
  it('creates a policy with its steps sorted by offset, reads, lists, patches and deletes it', async () => {
    const seg = await segment(org);
    const created = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Standard', segment_id: seg.id, is_enabled: true, steps: steps() }));
    expect(created).toMatchObject({ object: 'collection_policy', name: 'Standard', description: null, segment_id: seg.id, is_enabled: true });
    expect(created.steps).toEqual([
      { step_index: 0, offset_days: -3, channel: 'email', email_template_id: ids.email, sms_template_id: null, min_overdue_lc: null },
      { step_index: 1, offset_days: 7, channel: 'sms', email_template_id: null, sms_template_id: ids.sms, min_overdue_lc: '250.50' },
      { step_index: 2, offset_days: 30, channel: 'task', email_template_id: null, sms_template_id: null, min_overdue_lc: null },
    ]);
    expect(await ok(req(member, 'GET', `/v2/collection-policies/${created.id}`))).toEqual(created);
    const list = await ok(req(member, 'GET', '/v2/collection-policies?page=0&page_size=50'));
    expect(list.data.map((p: { id: string }) => p.id)).toContain(created.id);

    const patched = await ok(req(org, 'PATCH', `/v2/collection-policies/${created.id}`, { description: 'Nice first', steps: [{ offset_days: 14, channel: 'task', min_overdue_lc: 0 }] }));
    expect(patched).toMatchObject({ name: 'Standard', description: 'Nice first', segment_id: seg.id });
    expect(patched.steps).toEqual([{ step_index: 0, offset_days: 14, channel: 'task', email_template_id: null, sms_template_id: null, min_overdue_lc: '0.00' }]);
    expect(Date.parse(patched.modified_at)).toBeGreaterThanOrEqual(Date.parse(created.modified_at));

    await ok(req(org, 'DELETE', `/v2/collection-policies/${created.id}`), 204);
    expect((await req(org, 'GET', `/v2/collection-policies/${created.id}`)).status).toBe(404);
    expect((await req(org, 'DELETE', `/v2/collection-policies/${created.id}`)).status).toBe(404);
    // the segment is free again
    await ok(req(org, 'DELETE', `/v2/customer-segments/${seg.id}`), 204);
  });

  it('answers 422 at the location of each problem and stores nothing', async () => {
    const before = (await ok(req(org, 'GET', '/v2/collection-policies'))).total_records;
    const bad = async (body: Record<string, unknown>, locs: (string | number)[][]) => {
      const res = await req(org, 'POST', '/v2/collection-policies', { name: 'Bad', segment_id: null, is_enabled: true, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.type).toBe('request-validation');
      expect(res.body.errors.map((e: { loc: unknown }) => e.loc)).toEqual(locs);
    };
    const step = (over: Record<string, unknown>) => ({ offset_days: 0, channel: 'task', ...over });
    await bad({ steps: [step({ channel: 'email', email_template_id: ids.otherEmail })] }, [['body', 'steps', 0, 'email_template_id']]);
    await bad({ steps: [step({}), step({ offset_days: 5, channel: 'sms', sms_template_id: ids.otherSms })] }, [['body', 'steps', 1, 'sms_template_id']]);
    await bad({ steps: [step({ channel: 'email', email_template_id: '0190a000-0000-7000-8000-000000000000' })] }, [['body', 'steps', 0, 'email_template_id']]);
    await bad({ steps: [step({ channel: 'email' })] }, [['body', 'steps', 0, 'email_template_id']]);
    await bad({ steps: [step({ channel: 'sms', email_template_id: ids.email })] }, [['body', 'steps', 0, 'email_template_id'], ['body', 'steps', 0, 'sms_template_id']]);
    await bad({ steps: [step({ sms_template_id: ids.sms })] }, [['body', 'steps', 0, 'sms_template_id']]);
    await bad({ steps: Array.from({ length: 13 }, (_, i) => step({ offset_days: i })) }, [['body', 'steps']]);
    await bad({ steps: [] }, [['body', 'steps']]);
    await bad({ steps: [step({ offset_days: 3 }), step({ offset_days: 4 }), step({ offset_days: 3 })] }, [['body', 'steps', 2, 'offset_days']]);
    await bad({ steps: [step({ offset_days: -61 }), step({ offset_days: 366 }), step({ offset_days: 1.5 })] }, [
      ['body', 'steps', 0, 'offset_days'],
      ['body', 'steps', 1, 'offset_days'],
      ['body', 'steps', 2, 'offset_days'],
    ]);
    await bad({ steps: [step({ min_overdue_lc: '10.001' }), step({ offset_days: 1, min_overdue_lc: -1 }), step({ offset_days: 2, min_overdue_lc: 'abc' })] }, [
      ['body', 'steps', 0, 'min_overdue_lc'],
      ['body', 'steps', 1, 'min_overdue_lc'],
      ['body', 'steps', 2, 'min_overdue_lc'],
    ]);
    await bad({ segment_id: ids.otherSegment, steps: [step({})] }, [['body', 'segment_id']]);
    await bad({ name: 'x'.repeat(257), steps: [step({})] }, [['body', 'name']]);
    await bad({ description: 'x'.repeat(2001), steps: [step({})] }, [['body', 'description']]);
    expect((await ok(req(org, 'GET', '/v2/collection-policies'))).total_records).toBe(before);

    const p = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Valid', segment_id: (await segment(org)).id, is_enabled: false, steps: [step({})] }));
    const patch = await req(org, 'PATCH', `/v2/collection-policies/${p.id}`, { steps: [step({ channel: 'email', email_template_id: ids.otherEmail })] });
    expect(patch.status).toBe(422);
    expect(patch.body.errors[0].loc).toEqual(['body', 'steps', 0, 'email_template_id']);
    expect((await req(org, 'PATCH', `/v2/collection-policies/${p.id}`, {})).status).toBe(422);
    expect((await ok(req(org, 'GET', `/v2/collection-policies/${p.id}`))).steps).toHaveLength(1);
  });

  it('keeps one default policy and one policy per segment (409, also when created at once)', async () => {
    const seg = await segment(org);
    const body = (segment_id: string | null) => ({ name: 'Twice', segment_id, is_enabled: true, steps: [{ offset_days: 1, channel: 'task' }] });
    const defaults = await Promise.all(Array.from({ length: 4 }, () => req(org, 'POST', '/v2/collection-policies', body(null))));
    expect(defaults.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect(defaults.find((r) => r.status === 409)!.body).toMatchObject({ type: 'conflict', status: 409 });
    const forSegment = await Promise.all(Array.from({ length: 3 }, () => req(org, 'POST', '/v2/collection-policies', body(seg.id))));
    expect(forSegment.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    // moving the segment's policy to default clashes too
    const segPolicy = forSegment.find((r) => r.status === 200)!.body;
    expect((await req(org, 'PATCH', `/v2/collection-policies/${segPolicy.id}`, { segment_id: null })).status).toBe(409);
    // another organization has its own default
    expect((await req(other, 'POST', '/v2/collection-policies', body(null))).status).toBe(200);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${defaults.find((r) => r.status === 200)!.body.id}`), 204);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${segPolicy.id}`), 204);
  });

  it('lets members read but not write, and hides other organizations\' policies', async () => {
    const p = await ok(req(other, 'GET', '/v2/collection-policies'));
    const theirs = p.data[0]?.id ?? (await ok(req(other, 'POST', '/v2/collection-policies', { name: 'Theirs', segment_id: ids.otherSegment, is_enabled: true, steps: [{ offset_days: 1, channel: 'task' }] }))).id;
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Mine now' }], ['DELETE', undefined]] as const) {
      const res = await req(org, method, `/v2/collection-policies/${theirs}`, body);
      expect(res.status).toBe(404);
      expect(res.body.type).toBe('entity-not-found');
    }
    expect((await ok(req(org, 'GET', '/v2/collection-policies'))).data.map((x: { id: string }) => x.id)).not.toContain(theirs);
    expect((await req(member, 'POST', '/v2/collection-policies', { name: 'M', segment_id: null, is_enabled: true, steps: [{ offset_days: 1, channel: 'task' }] })).status).toBe(403);
    const mine = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Mine', segment_id: (await segment(org)).id, is_enabled: true, steps: [{ offset_days: 1, channel: 'task' }] }));
    expect((await req(member, 'PATCH', `/v2/collection-policies/${mine.id}`, { name: 'x' })).status).toBe(403);
    expect((await req(member, 'DELETE', `/v2/collection-policies/${mine.id}`)).status).toBe(403);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${mine.id}`), 204);
  });
});

describe('what a policy uses cannot be deleted (409) until the policy lets go', () => {
  it('a segment with a policy', async () => {
    const seg = await segment(org);
    const p = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Holds the segment', segment_id: seg.id, is_enabled: false, steps: [{ offset_days: 1, channel: 'task' }] }));
    const res = await req(org, 'DELETE', `/v2/customer-segments/${seg.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body).toMatchObject({ type: 'conflict', status: 409 });
    expect(res.body.detail).toContain('Holds the segment');
    expect(res.body.detail).toContain(p.id);
    await ok(req(org, 'GET', `/v2/customer-segments/${seg.id}`));
    // moved to another segment: the first one can go
    await ok(req(org, 'PATCH', `/v2/collection-policies/${p.id}`, { segment_id: (await segment(org)).id }));
    await ok(req(org, 'DELETE', `/v2/customer-segments/${seg.id}`), 204);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${p.id}`), 204);
  });

  it('an email template, the folder holding it (cascade), and an SMS template', async () => {
    const t = await templates(org);
    const p = await ok(
      req(org, 'POST', '/v2/collection-policies', {
        name: 'Uses templates',
        segment_id: (await segment(org)).id,
        is_enabled: true,
        steps: [
          { offset_days: 0, channel: 'email', email_template_id: t.email },
          { offset_days: 5, channel: 'sms', sms_template_id: t.sms },
        ],
      }),
    );
    const email = await req(org, 'DELETE', `/v1/email-templates/${t.email}`);
    expect(email.status, JSON.stringify(email.body)).toBe(409);
    expect(email.body.message).toContain('Uses templates');
    const folder = await req(org, 'DELETE', `/v1/email-template-folders/${t.folder}?cascade=true`);
    expect(folder.status, JSON.stringify(folder.body)).toBe(409);
    expect(folder.body.message).toContain('Uses templates');
    const sms = await req(org, 'DELETE', `/v2/sms-templates/${t.sms}`);
    expect(sms.status, JSON.stringify(sms.body)).toBe(409);
    expect(sms.body).toMatchObject({ type: 'conflict' });
    expect(sms.body.detail).toContain('Uses templates');
    // nothing went
    await ok(req(org, 'GET', `/v1/email-templates/${t.email}`));
    await ok(req(org, 'GET', `/v2/sms-templates/${t.sms}`));
    // once the policy no longer uses them, they can be deleted
    await ok(req(org, 'PATCH', `/v2/collection-policies/${p.id}`, { steps: [{ offset_days: 0, channel: 'task' }] }));
    await ok(req(org, 'DELETE', `/v2/sms-templates/${t.sms}`), 204);
    await ok(req(org, 'DELETE', `/v1/email-template-folders/${t.folder}?cascade=true`), 204);
    expect((await req(org, 'GET', `/v1/email-templates/${t.email}`)).status).toBe(404);
  });
});
