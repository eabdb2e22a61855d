/**
 * The webhook-endpoint API through the gateway: create (the `whsec_` secret answered once, stored
 * sealed), list, get, patch, delete, secret rotation (the previous secret kept 24 hours), the test
 * event (a `webhook.test` event in the event log and a pending delivery of that endpoint only), the
 * deliveries list and a manual retry; admins only (members 403 on every route), other
 * organizations' ids 404 on every route, event types and URLs validated (422 naming the index or
 * `body.url`; loopback, private and metadata targets refused unless OUTBOUND_ALLOWLIST allows them),
 * and the cap of endpoints per organization.
 *
 * Nothing is delivered here: no admin worker runs, so a wake (signal-with-start of
 * `webhook-endpoint-<id>`) starts a workflow that waits on the task queue; the test reads its history
 * to see the wake and, after a delete, the cancellation request.
 * SQL set-up, for states no endpoint can produce (only the delivery engine writes them): a delivery
 * marked failed (to retry it), an endpoint disabled by the platform (`disabled_reason`, to
 * re-enable it) and an event deleted as retention deletes it (its delivery cannot be retried).
 * SQL reads: the stored secret columns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, newId, openSecret, type TemporalHandle } from '@rp/platform';
import { CONNECTION_SECRETS_KEY, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let memberToken: string;
let temporal: TemporalHandle;

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const keyConfig = { CONNECTION_SECRETS_KEY, CONNECTION_SECRETS_PREVIOUS_KEYS: [] };
const BASE = '/v2/webhook-endpoints';

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });

async function create(token: string, body: Record<string, unknown> = {}) {
  const res = await req('POST', BASE, token, { url: 'https://receiver.example.com/hooks', events: ['payment.posted'], ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function storedRow(id: string) {
  const [row] = await stack.sql(`SELECT * FROM admin.webhook_endpoints WHERE id = $1`, [id]);
  return row;
}

/** Event types of the endpoint workflow's history (empty when it never started). */
async function workflowHistory(endpointId: string): Promise<string[]> {
  try {
    const history = await temporal.client.workflow.getHandle(`webhook-endpoint-${endpointId}`).fetchHistory();
    return (history.events ?? []).map((e) =>
      e.workflowExecutionSignaledEventAttributes
        ? `signaled:${e.workflowExecutionSignaledEventAttributes.signalName}`
        : e.workflowExecutionCancelRequestedEventAttributes
          ? 'cancel-requested'
          : e.workflowExecutionStartedEventAttributes
            ? 'started'
            : 'other',
    );
  } catch (e) {
    if ((e as Error).name === 'WorkflowNotFoundError' || /not found/i.test((e as Error).message)) return [];
    throw e;
  }
}

beforeAll(async () => {
  stack = await startStack();
  [orgA, orgB] = [await stack.onboard('Hooks A'), await stack.onboard('Hooks B')];
  const member = await req('POST', '/v2/users', orgA.token, { email: 'member@hooks.example', name: 'Mo Member', role: 'member' });
  expect(member.status).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  memberToken = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', member.body.id], stack.env)) as { token: string }).token;
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('creating an endpoint', () => {
  it('answers the endpoint with its secret once: whsec_ + base64 of 32 random bytes', async () => {
    const res = await req('POST', BASE, orgA.token, {
      url: 'https://receiver.example.com/hooks?x=1',
      events: ['payment.posted', 'payment.approved', 'payment.posted'],
      description: 'ERP sync',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      object: 'webhook_endpoint',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: 'https://receiver.example.com/hooks?x=1',
      events: ['payment.posted', 'payment.approved'],
      description: 'ERP sync',
      is_enabled: true,
      secret: expect.stringMatching(SECRET),
      created_at: expect.stringMatching(/Z$/),
      modified_at: expect.stringMatching(/Z$/),
      disabled_reason: null,
    });
    expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const other = await create(orgA.token, { events: ['*'], is_enabled: false });
    expect(other).toMatchObject({ events: ['*'], is_enabled: false, description: null });
    expect(other.secret).not.toBe(res.body.secret);
  });

  it('stores the secret sealed (bound to its endpoint) and never shows it again', async () => {
    const made = await create(orgA.token);
    const row = await storedRow(made.id);
    expect(JSON.stringify(row)).not.toContain(made.secret);
    expect(JSON.stringify(row)).not.toContain(made.secret.slice(6, 30));
    expect(openSecret(keyConfig, `webhook-endpoint:${made.id}`, row.secret_enc)).toBe(made.secret);
    expect(() => openSecret(keyConfig, `webhook-endpoint:${newId()}`, row.secret_enc)).toThrow();
    const got = await req('GET', `${BASE}/${made.id}`, orgA.token);
    expect(got.status).toBe(200);
    const shown: Record<string, unknown> = { ...made };
    delete shown.secret;
    expect(got.body).toEqual(shown);
    const listed = await req('GET', `${BASE}?page_size=100`, orgA.token);
    expect(listed.text).not.toContain(made.secret);
    expect(listed.body.data.every((e: object) => !('secret' in e))).toBe(true);
  });

  it('refuses unknown event types naming the index, "*" with others, and no types', async () => {
    const unknown = await req('POST', BASE, orgA.token, { url: 'https://r.example.com/', events: ['payment.posted', 'payment.exploded'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect(unknown.body.errors.map((e: any) => e.loc)).toEqual([['body', 'events', 1]]);
    const star = await req('POST', BASE, orgA.token, { url: 'https://r.example.com/', events: ['payment.posted', '*'] });
    expect(star.status).toBe(422);
    expect(star.body.errors[0].loc).toEqual(['body', 'events']);
    expect((await req('POST', BASE, orgA.token, { url: 'https://r.example.com/', events: [] })).body.errors[0].loc).toEqual(['body', 'events']);
    const long = await req('POST', BASE, orgA.token, { url: 'https://r.example.com/', events: ['*'], description: 'd'.repeat(501) });
    expect(long.body.errors[0].loc).toEqual(['body', 'description']);
  });

  it('refuses URLs that are not http(s), too long, or point at private or metadata addresses (422 at body.url)', async () => {
    const before = (await req('GET', BASE, orgA.token)).body.total_records;
    for (const url of [
      'ftp://files.example.com/hook',
      'not a url',
      'https://user:pw@receiver.example.com/',
      `https://receiver.example.com/${'a'.repeat(2040)}`,
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/',
      'http://10.0.0.7/hook',
      'http://192.168.1.20:8080/hook',
    ]) {
      const res = await req('POST', BASE, orgA.token, { url, events: ['*'] });
      expect(res.status, url).toBe(422);
      expect(res.body.errors.map((e: any) => e.loc), url).toEqual([['body', 'url']]);
    }
    expect((await req('GET', BASE, orgA.token)).body.total_records).toBe(before);
  });

  it('caps an organization at 16 endpoints (409 naming the limit), also under concurrent creates', async () => {
    const org = await stack.onboard('Hooks cap');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => req('POST', BASE, org.token, { url: `https://r${i}.example.com/`, events: ['*'] })));
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(16).fill(200), ...Array(4).fill(409)]);
    const refused = answers.find((r) => r.status === 409)!;
    expect(refused.body).toMatchObject({ type: 'conflict', status: 409 });
    expect(refused.body.detail).toContain('16');
    expect((await req('GET', BASE, org.token)).body.total_records).toBe(16);
    expect((await req('POST', BASE, org.token, { url: 'https://r20.example.com/', events: ['*'] })).status).toBe(409);
  });
});

describe('listing, changing and deleting endpoints', () => {
  it('lists oldest first, paginated', async () => {
    const org = await stack.onboard('Hooks list');
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await create(org.token, { url: `https://l${i}.example.com/` })).id);
    const p0 = await req('GET', `${BASE}?page_size=2`, org.token);
    expect(p0.body).toMatchObject({ current_page: 0, total_records: 3, next_page: 1 });
    const p1 = await req('GET', `${BASE}?page=1&page_size=2`, org.token);
    expect([...p0.body.data, ...p1.body.data].map((e: any) => e.id)).toEqual(made);
    expect(p0.body.data[0]).toMatchObject({ object: 'webhook_endpoint', url: 'https://l0.example.com/' });
  });

  it('patches url, events, description and is_enabled with the same rules', async () => {
    const made = await create(orgA.token, { description: 'old' });
    const res = await req('PATCH', `${BASE}/${made.id}`, orgA.token, { url: 'http://new.example.com/in', events: ['invoice.created', 'invoice.created'], description: null });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: made.id, url: 'http://new.example.com/in', events: ['invoice.created'], description: null, is_enabled: true });
    expect(res.body).not.toHaveProperty('secret');
    expect(res.body.modified_at >= made.modified_at).toBe(true);
    expect((await req('GET', `${BASE}/${made.id}`, orgA.token)).body).toEqual(res.body);

    const bad = await req('PATCH', `${BASE}/${made.id}`, orgA.token, { events: ['invoice.created', 'nope'], url: 'http://127.0.0.2:notaport/' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.loc)).toEqual(expect.arrayContaining([['body', 'events', 1]]));
    const meta = await req('PATCH', `${BASE}/${made.id}`, orgA.token, { url: 'http://169.254.169.254/' });
    expect(meta.status).toBe(422);
    expect(meta.body.errors[0].loc).toEqual(['body', 'url']);
    expect((await req('GET', `${BASE}/${made.id}`, orgA.token)).body).toEqual(res.body);
  });

  it('disabling pauses; re-enabling clears the platform\'s disabled_reason and wakes delivery', async () => {
    const made = await create(orgA.token);
    const off = await req('PATCH', `${BASE}/${made.id}`, orgA.token, { is_enabled: false });
    expect(off.body).toMatchObject({ is_enabled: false, disabled_reason: null });
    // as the delivery engine disables an endpoint that answered 410 (see the header)
    await stack.sql(`UPDATE admin.webhook_endpoints SET disabled_reason = 'The endpoint answered 410 Gone.', disabled_at = now(), failing_since = now() WHERE id = $1`, [made.id]);
    expect((await req('GET', `${BASE}/${made.id}`, orgA.token)).body.disabled_reason).toBe('The endpoint answered 410 Gone.');
    expect(await workflowHistory(made.id)).toEqual([]);
    const on = await req('PATCH', `${BASE}/${made.id}`, orgA.token, { is_enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ is_enabled: true, disabled_reason: null });
    const row = await storedRow(made.id);
    expect(row).toMatchObject({ disabled_at: null, failing_since: null, disabled_reason: null });
    expect(await workflowHistory(made.id)).toContain('signaled:webhookWake');
  });

  it('deletes the endpoint with its deliveries and cancels its delivery workflow', async () => {
    const made = await create(orgA.token);
    expect((await req('POST', `${BASE}/${made.id}/test`, orgA.token)).status).toBe(202);
    const del = await req('DELETE', `${BASE}/${made.id}`, orgA.token);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ object: 'webhook_endpoint', id: made.id });
    expect(del.body).not.toHaveProperty('secret');
    expect((await req('GET', `${BASE}/${made.id}`, orgA.token)).status).toBe(404);
    expect((await req('DELETE', `${BASE}/${made.id}`, orgA.token)).status).toBe(404);
    expect(await stack.sql(`SELECT id FROM admin.webhook_deliveries WHERE endpoint_id = $1`, [made.id])).toEqual([]);
    expect(await workflowHistory(made.id)).toContain('cancel-requested');
  });
});

describe('secret rotation', () => {
  it('answers a new secret and keeps the previous one for 24 hours; rotating again moves the current one back', async () => {
    const made = await create(orgA.token);
    const first = await req('POST', `${BASE}/${made.id}/rotate-secret`, orgA.token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      object: 'webhook_endpoint_secret',
      endpoint_id: made.id,
      secret: expect.stringMatching(SECRET),
      previous_secret_expires_at: expect.stringMatching(/Z$/),
    });
    expect(first.body.secret).not.toBe(made.secret);
    let row = await storedRow(made.id);
    expect(openSecret(keyConfig, `webhook-endpoint:${made.id}`, row.secret_enc)).toBe(first.body.secret);
    expect(openSecret(keyConfig, `webhook-endpoint:${made.id}`, row.previous_secret_enc)).toBe(made.secret);
    expect(row.previous_secret_expires_at.getTime() - row.modified_at.getTime()).toBe(24 * 3600 * 1000);
    expect(new Date(first.body.previous_secret_expires_at).getTime()).toBe(row.previous_secret_expires_at.getTime());
    expect(JSON.stringify(row)).not.toContain(made.secret.slice(6, 30));

    const second = await req('POST', `${BASE}/${made.id}/rotate-secret`, orgA.token);
    expect(second.body.secret).not.toBe(first.body.secret);
    row = await storedRow(made.id);
    expect(openSecret(keyConfig, `webhook-endpoint:${made.id}`, row.previous_secret_enc)).toBe(first.body.secret);
    expect(openSecret(keyConfig, `webhook-endpoint:${made.id}`, row.secret_enc)).toBe(second.body.secret);
    expect((await req('GET', `${BASE}/${made.id}`, orgA.token)).body).not.toHaveProperty('secret');
  });
});

describe('test events and deliveries', () => {
  it('a test records a webhook.test event for that endpoint only and queues its delivery (202)', async () => {
    const made = await create(orgA.token, { events: ['payment.posted'] });
    const bystander = await create(orgA.token, { events: ['*'] });
    const res = await req('POST', `${BASE}/${made.id}/test`, orgA.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({
      object: 'webhook_delivery',
      id: expect.any(String),
      endpoint_id: made.id,
      event_id: expect.any(String),
      event_type: 'webhook.test',
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      next_attempt_at: expect.stringMatching(/Z$/),
      last_status_code: null,
      last_error: null,
      created_at: expect.stringMatching(/Z$/),
    });
    const event = await req('GET', `/v2/events/${res.body.event_id}`, orgA.token);
    expect(event.status).toBe(200);
    const endpoint = (await req('GET', `${BASE}/${made.id}`, orgA.token)).body;
    expect(event.body).toMatchObject({ object: 'event', type: 'webhook.test', data: { object: endpoint } });
    expect(event.body.data.object).not.toHaveProperty('secret');
    const logged = await req('GET', '/v2/events?type=webhook.test', orgA.token);
    expect(logged.body.data.map((e: any) => e.id)).toContain(res.body.event_id);
    expect((await req('GET', '/v2/events?type=webhook.test', orgB.token)).body.data).toEqual([]);

    const deliveries = await req('GET', `${BASE}/${made.id}/deliveries`, orgA.token);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data).toEqual([res.body]);
    expect((await req('GET', `${BASE}/${bystander.id}/deliveries`, orgA.token)).body.total_records).toBe(0);
    expect(await workflowHistory(made.id)).toEqual(expect.arrayContaining(['started', 'signaled:webhookWake']));
  });

  it('refuses a test or a retry of a disabled endpoint (409), changing nothing', async () => {
    const made = await create(orgA.token);
    const queued = (await req('POST', `${BASE}/${made.id}/test`, orgA.token)).body;
    await req('PATCH', `${BASE}/${made.id}`, orgA.token, { is_enabled: false });
    const test = await req('POST', `${BASE}/${made.id}/test`, orgA.token);
    expect(test.status).toBe(409);
    expect(test.body).toMatchObject({ type: 'conflict' });
    const retry = await req('POST', `${BASE}/${made.id}/deliveries/${queued.id}/retry`, orgA.token);
    expect(retry.status).toBe(409);
    expect((await req('GET', `${BASE}/${made.id}/deliveries`, orgA.token)).body.total_records).toBe(1);
  });

  it('lists deliveries newest first, filtered by status; a retry makes a failed delivery pending again, attempts kept', async () => {
    const made = await create(orgA.token);
    const older = (await req('POST', `${BASE}/${made.id}/test`, orgA.token)).body;
    const newer = (await req('POST', `${BASE}/${made.id}/test`, orgA.token)).body;
    const all = await req('GET', `${BASE}/${made.id}/deliveries`, orgA.token);
    expect(all.body.data.map((d: any) => d.id)).toEqual([newer.id, older.id]);
    // as the delivery engine records a delivery that used up its attempts (see the header)
    await stack.sql(
      `UPDATE admin.webhook_deliveries SET status = 'failed', attempts = 8, next_attempt_at = NULL, last_attempt_at = now(), last_status_code = 500, last_error = 'HTTP 500' WHERE id = $1`,
      [older.id],
    );
    const failed = await req('GET', `${BASE}/${made.id}/deliveries?status=failed`, orgA.token);
    expect(failed.body.data).toEqual([expect.objectContaining({ id: older.id, status: 'failed', attempts: 8, next_attempt_at: null, last_status_code: 500, last_error: 'HTTP 500' })]);
    expect((await req('GET', `${BASE}/${made.id}/deliveries?status=gone`, orgA.token)).status).toBe(422);

    const retried = await req('POST', `${BASE}/${made.id}/deliveries/${older.id}/retry`, orgA.token);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body).toMatchObject({ id: older.id, status: 'pending', attempts: 8, last_status_code: 500, last_error: 'HTTP 500', next_attempt_at: expect.stringMatching(/Z$/) });
    expect((await req('GET', `${BASE}/${made.id}/deliveries?status=failed`, orgA.token)).body.data).toEqual([]);
    expect((await req('GET', `${BASE}/${made.id}/deliveries?status=pending`, orgA.token)).body.total_records).toBe(2);

    // a delivery whose event the log no longer keeps (as retention deletes it, see the header) cannot be sent again
    await stack.sql(`DELETE FROM admin.events WHERE id = $1`, [newer.event_id]);
    const expired = await req('POST', `${BASE}/${made.id}/deliveries/${newer.id}/retry`, orgA.token);
    expect(expired.status).toBe(409);
    expect(expired.body.detail).toContain('no longer kept');

    // a delivery of another endpoint of the same organization is not found under this one
    const sibling = await create(orgA.token);
    expect((await req('POST', `${BASE}/${sibling.id}/deliveries/${older.id}/retry`, orgA.token)).status).toBe(404);
  });
});

describe('access', () => {
  it('members get 403 on every route, and nothing changes', async () => {
    const made = await create(orgA.token);
    const queued = (await req('POST', `${BASE}/${made.id}/test`, orgA.token)).body;
    const calls: [string, string, unknown?][] = [
      ['POST', BASE, { url: 'https://m.example.com/', events: ['*'] }],
      ['GET', BASE],
      ['GET', `${BASE}/${made.id}`],
      ['PATCH', `${BASE}/${made.id}`, { is_enabled: false }],
      ['DELETE', `${BASE}/${made.id}`],
      ['POST', `${BASE}/${made.id}/rotate-secret`],
      ['POST', `${BASE}/${made.id}/test`],
      ['GET', `${BASE}/${made.id}/deliveries`],
      ['POST', `${BASE}/${made.id}/deliveries/${queued.id}/retry`],
    ];
    const before = await storedRow(made.id);
    for (const [method, path, body] of calls) {
      const res = await req(method, path, memberToken, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.type).toBe('forbidden');
    }
    expect(await storedRow(made.id)).toEqual(before);
    expect((await req('GET', `${BASE}/${made.id}/deliveries`, orgA.token)).body.total_records).toBe(1);
  });

  it('another organization\'s endpoint or delivery is 404 on every route, and nothing changes', async () => {
    const made = await create(orgA.token);
    const queued = (await req('POST', `${BASE}/${made.id}/test`, orgA.token)).body;
    const before = await storedRow(made.id);
    const theirs = await create(orgB.token);
    const calls: [string, string, unknown?][] = [
      ['GET', `${BASE}/${made.id}`],
      ['PATCH', `${BASE}/${made.id}`, { description: 'mine now' }],
      ['POST', `${BASE}/${made.id}/rotate-secret`],
      ['POST', `${BASE}/${made.id}/test`],
      ['GET', `${BASE}/${made.id}/deliveries`],
      ['POST', `${BASE}/${made.id}/deliveries/${queued.id}/retry`],
      ['POST', `${BASE}/${theirs.id}/deliveries/${queued.id}/retry`],
      ['DELETE', `${BASE}/${made.id}`],
    ];
    for (const [method, path, body] of calls) {
      const res = await req(method, path, orgB.token, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    expect(await storedRow(made.id)).toEqual(before);
    expect((await req('GET', BASE, orgB.token)).body.data.map((e: any) => e.id)).toEqual([theirs.id]);
    expect((await req('GET', `${BASE}/${made.id}/deliveries`, orgA.token)).body.data).toEqual([queued]);
  });
});

describe('without an outbound allowlist', () => {
  let strict: TestStack;
  let org: Org;
  beforeAll(async () => {
    strict = await startStack({ env: { OUTBOUND_ALLOWLIST: '' } });
    org = await strict.onboard('Hooks strict');
  });
  afterAll(async () => strict?.close());

  it('refuses loopback and metadata URLs, by literal or by a name resolving to one (422 at body.url)', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'http://localhost:3000/hook', 'http://0x7f000001/', 'http://169.254.169.254/latest/meta-data/']) {
      const res = await strict.request('POST', BASE, { token: org.token, body: { url, events: ['*'] } });
      expect(res.status, url).toBe(422);
      expect(res.body.errors.map((e: any) => e.loc), url).toEqual([['body', 'url']]);
    }
    const patched = await strict.request('POST', BASE, { token: org.token, body: { url: 'https://hooks.invalid/in', events: ['*'] } });
    expect(patched.status, 'a name that does not resolve is accepted (checked again at every delivery)').toBe(200);
    const loop = await strict.request('PATCH', `${BASE}/${patched.body.id}`, { token: org.token, body: { url: 'http://localhost/' } });
    expect(loop.status).toBe(422);
    expect((await strict.request('GET', BASE, { token: org.token })).body.total_records).toBe(1);
  });
});
