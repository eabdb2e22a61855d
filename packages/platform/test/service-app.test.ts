/**
 * The service kit on its own: a small Koa service built with createServiceApp, called over real
 * HTTP with and without the gateway's signed identity.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeServer,
  createLogger,
  listen,
  createServiceApp,
  NotFoundError,
  pageOf,
  pageRequest,
  paginationQueryShape,
  routeFor,
  deriveIdentityKey,
  signIdentity,
  type Identity,
} from '@rp/platform';

const SECRET = 'kit-test-secret-0123456789abcdef0123456789';
const METRICS_TOKEN = 'kit-test-metrics-token-0123456789abcdef';
const KEY = deriveIdentityKey(SECRET, 'kit-test');
const route = routeFor<{ items: string[] }>();
const item = z.object({ id: z.string(), name: z.string() });

const routes = [
  route({
    method: 'post',
    path: '/v2/things',
    operationId: 'createThing',
    summary: 'create',
    tags: ['t'],
    body: z.object({ name: z.string().min(1).max(5), tiers: z.array(z.object({ days: z.number().int() })).optional() }),
    response: item,
    handler: async ({ body, deps }) => {
      deps.items.push(body.name);
      return { id: String(deps.items.length), name: body.name };
    },
  }),
  route({
    method: 'post',
    path: '/v1/things',
    operationId: 'createThingV1',
    summary: 'create v1',
    tags: ['t'],
    body: z.object({ name: z.string().min(1).max(5) }),
    response: item,
    handler: async ({ body }) => ({ id: 'x', name: body.name }),
  }),
  route({
    method: 'get',
    path: '/v2/things',
    operationId: 'listThings',
    summary: 'list',
    tags: ['t'],
    query: z.object(paginationQueryShape(3)),
    response: z.object({ data: z.array(z.string()), current_page: z.number(), total_records: z.number(), next_page: z.number().nullable() }),
    handler: async ({ query, deps }) => {
      const p = pageRequest(query, 3);
      return pageOf(deps.items.slice(p.offset, p.offset + p.pageSize), deps.items.length, p);
    },
  }),
  route({
    method: 'get',
    path: '/v2/things/{thing_id}',
    operationId: 'getThing',
    summary: 'get',
    tags: ['t'],
    params: z.object({ thing_id: z.string() }),
    response: item,
    handler: async ({ params }) => {
      throw new NotFoundError(`No thing ${params.thing_id}.`);
    },
  }),
  route({
    method: 'get',
    path: '/v2/boom',
    operationId: 'boom',
    summary: 'fails',
    tags: ['t'],
    response: item,
    handler: async () => {
      throw new Error('relation "secret_table" does not exist at /srv/app.ts:12');
    },
  }),
  // A route reading its own body, unparsed (rawBody): it answers the bytes it got.
  route({
    method: 'post',
    path: '/v2/raw',
    operationId: 'rawThing',
    summary: 'raw',
    tags: ['t'],
    rawBody: { mediaTypes: { 'message/rfc822': z.string().max(10).meta({ format: 'binary' }) } },
    response: z.object({ hex: z.string() }),
    handler: async ({ koa }) => {
      const chunks: Buffer[] = [];
      for await (const chunk of koa.req) chunks.push(chunk as Buffer);
      return { hex: Buffer.concat(chunks).toString('hex') };
    },
  }),
  route({
    method: 'delete',
    path: '/v2/admin-only',
    operationId: 'adminOnly',
    summary: 'admin',
    tags: ['t'],
    auth: { role: 'admin' },
    handler: async () => {},
  }),
];

let server: http.Server;
let base: string;
const deps = { items: [] as string[] };
const identity = (over: Partial<Identity> = {}): Identity => ({
  org: 'org-1',
  sub: 'user-1',
  role: 'admin',
  kind: 'user',
  cred: 'cred-1',
  bu: '*',
  iat: Math.floor(Date.now() / 1000),
  ...over,
});

async function call(method: string, path: string, opts: { body?: string; headers?: Record<string, string>; id?: Identity | null } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.id !== null) headers['x-rp-identity'] = signIdentity(opts.id ?? identity(), KEY, { method, target: path });
  if (opts.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  const { app } = createServiceApp({
    name: 'kit-test',
    info: { title: 'kit', version: '1' },
    routes,
    deps,
    log: createLogger('kit-test', 'silent'),
    identitySecret: SECRET,
    identityMaxAgeSeconds: 60,
    metricsToken: METRICS_TOKEN,
    bodyLimitBytes: 2048,
    readiness: [{ name: 'always', check: async () => {} }],
  });
  const bound = await listen(app, 0);
  server = bound.server;
  base = `http://127.0.0.1:${bound.port}`;
});
afterAll(() => closeServer(server));

describe('signed identity', () => {
  it('refuses a call without the gateway identity (401)', async () => {
    const res = await call('GET', '/v2/things', { id: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ type: 'unauthorized', status: 401 });
  });
  it('refuses a forged signature', async () => {
    const good = signIdentity(identity(), KEY, { method: 'GET', target: '/v2/things' });
    const forged = good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect((await call('GET', '/v2/things', { id: null, headers: { 'x-rp-identity': forged } })).status).toBe(401);
    const otherKey = signIdentity(identity(), deriveIdentityKey('another-secret-0123456789abcdef0123456789', 'kit-test'), { method: 'GET', target: '/v2/things' });
    expect((await call('GET', '/v2/things', { id: null, headers: { 'x-rp-identity': otherKey } })).status).toBe(401);
  });
  it('refuses an identity signed for another path, query, method or service (bound signature)', async () => {
    const signedFor = (method: string, target: string, service = 'kit-test') => ({
      id: null,
      headers: { 'x-rp-identity': signIdentity(identity(), deriveIdentityKey(SECRET, service), { method, target }) },
    });
    expect((await call('GET', '/v2/things', signedFor('GET', '/v2/things'))).status).toBe(200);
    expect((await call('GET', '/v2/things', signedFor('GET', '/v2/other'))).status).toBe(401);
    expect((await call('GET', '/v2/things?page=1', signedFor('GET', '/v2/things'))).status).toBe(401);
    expect((await call('GET', '/v2/things', signedFor('POST', '/v2/things'))).status).toBe(401);
    expect((await call('GET', '/v2/things', signedFor('GET', '/v2/things', 'another-service'))).status).toBe(401);
    // The raw shared secret is not a service key either.
    const rawSecret = signIdentity(identity(), Buffer.from(SECRET), { method: 'GET', target: '/v2/things' });
    expect((await call('GET', '/v2/things', { id: null, headers: { 'x-rp-identity': rawSecret } })).status).toBe(401);
  });
  it('refuses an identity outside its time window (replay)', async () => {
    const res = await call('GET', '/v2/things', { id: identity({ iat: Math.floor(Date.now() / 1000) - 600 }) });
    expect(res.status).toBe(401);
  });
  it('accepts a valid identity', async () => {
    expect((await call('GET', '/v2/things')).status).toBe(200);
  });
  it('keeps health and readiness open; metrics need the scrape token', async () => {
    expect((await call('GET', '/healthz', { id: null })).status).toBe(200);
    expect((await call('GET', '/readyz', { id: null })).body).toMatchObject({ status: 'ready', checks: { always: 'ok' } });
    const open = await fetch(base + '/metrics');
    expect(open.status).toBe(401);
    expect(await open.text()).not.toContain('http_request_duration_seconds');
    const wrong = await fetch(base + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    // A gateway identity is not a scrape token.
    expect((await call('GET', '/metrics')).status).toBe(401);
    const metrics = await fetch(base + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('http_request_duration_seconds');
  });
});

describe('validation errors', () => {
  it('answers 422 request-validation with loc arrays in the v2 shape and writes nothing', async () => {
    const before = deps.items.length;
    const res = await call('POST', '/v2/things', { body: JSON.stringify({ name: 'toolongname', tiers: [{ days: 1.5 }] }) });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', status: 422, title: 'Request validation failed' });
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'name'], msg: expect.any(String), type: 'too_big' },
        { loc: ['body', 'tiers', 0, 'days'], msg: expect.any(String), type: 'invalid_type' },
      ]),
    );
    expect(deps.items.length).toBe(before);
  });
  it('answers the v1 detail shape on /v1 paths', async () => {
    const res = await call('POST', '/v1/things', { body: JSON.stringify({ name: '' }) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: { body: { name: [expect.any(String)] } }, message: expect.any(String) });
  });
  it('reports a missing body, malformed JSON and a wrong content type', async () => {
    const missing = await call('POST', '/v2/things');
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['body']);
    const malformed = await call('POST', '/v2/things', { body: '{"name": ' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    const text = await call('POST', '/v2/things', { body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });
  it('refuses a body over the limit with 413', async () => {
    const res = await call('POST', '/v2/things', { body: JSON.stringify({ name: 'x'.repeat(5000) }) });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ type: 'payload-too-large', status: 413 });
  });
});

describe('pagination', () => {
  it('pages with the envelope and next_page', async () => {
    deps.items.splice(0, deps.items.length, 'a', 'b', 'c', 'd', 'e');
    expect((await call('GET', '/v2/things?page=0&page_size=2')).body).toEqual({ data: ['a', 'b'], current_page: 0, total_records: 5, next_page: 1 });
    expect((await call('GET', '/v2/things?page=2&size=2')).body).toEqual({ data: ['e'], current_page: 2, total_records: 5, next_page: null });
    expect((await call('GET', '/v2/things')).body.data).toEqual(['a', 'b', 'c']);
  });
  it.each([
    ['page=-1', 'page'],
    ['page_size=0', 'page_size'],
    ['page_size=4', 'page_size'],
    ['size=abc', 'size'],
  ])('refuses %s with 422', async (qs, field) => {
    const res = await call('GET', `/v2/things?${qs}`);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['query', field]);
  });
});

describe('other errors', () => {
  it('answers 404 entity-not-found in the spec shape', async () => {
    expect((await call('GET', '/v2/things/42')).body).toEqual({ type: 'entity-not-found', status: 404, title: 'Entity not found', detail: 'No thing 42.' });
  });
  it('hides internals of unexpected errors (500)', async () => {
    const res = await call('GET', '/v2/boom');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ type: 'internal-error', status: 500 });
    expect(JSON.stringify(res.body)).not.toMatch(/secret_table|srv|stack/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });
  it('refuses a member on an admin-only route (403) and an unknown method (405)', async () => {
    expect((await call('DELETE', '/v2/admin-only', { id: identity({ role: 'member' }) })).status).toBe(403);
    expect((await call('DELETE', '/v2/admin-only')).status).toBe(204);
    const res = await call('PUT', '/v2/things');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
  it('carries the caller\'s request id', async () => {
    const res = await call('GET', '/v2/things', { headers: { 'x-request-id': 'req-abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
  });
});

describe('OpenAPI', () => {
  it('is generated from the same route declarations', async () => {
    const res = await call('GET', '/openapi.json', { id: null });
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const bodyRef = doc.paths['/v2/things'].post.requestBody.content['application/json'].schema.$ref as string;
    expect(bodyRef).toMatch(/^#\/components\/schemas\//);
    expect(doc.components.schemas[bodyRef.split('/').pop()!].properties.name).toMatchObject({ type: 'string', maxLength: 5 });
    expect(doc.paths['/v2/things'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['page', 'page_size', 'size']);
    expect(doc.paths['/v2/things/{thing_id}'].get.parameters[0]).toMatchObject({ name: 'thing_id', in: 'path', required: true });
    expect(doc.paths['/v1/things'].post.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/ValidationProblemV1');
    expect(doc.paths['/v2/admin-only'].delete['x-rp-auth']).toEqual({ role: 'admin', credentials: ['user'] });
  });
});

describe('routes reading their raw body (rawBody)', () => {
  it('get the bytes as sent (even past the JSON body limit), refuse other media types with 415, and are documented per media type', async () => {
    const bytes = Buffer.concat([Buffer.from('Subject: x\r\n\r\n'), Buffer.from([0xfc, 0xdf, 0xff]), Buffer.alloc(4096, 0x41)]);
    const res = await fetch(base + '/v2/raw', {
      method: 'POST',
      body: bytes,
      headers: { 'content-type': 'message/rfc822', 'x-rp-identity': signIdentity(identity(), KEY, { method: 'POST', target: '/v2/raw' }) },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { hex: string }).hex).toBe(bytes.toString('hex'));

    const json = await call('POST', '/v2/raw', { body: '{}' });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ type: 'unsupported-media-type', status: 415 });

    const { openapi } = createServiceApp({ name: 'doc', info: { title: 'doc', version: '1' }, routes, deps, log: createLogger('doc', 'silent'), identitySecret: SECRET, identityMaxAgeSeconds: 60, bodyLimitBytes: 1, readiness: [] });
    const op = openapi.paths['/v2/raw']!.post as { requestBody: { required: boolean; content: Record<string, { schema: { $ref: string } }> }; responses: Record<string, unknown> };
    expect(op.requestBody.required).toBe(true);
    const schema = openapi.components.schemas![op.requestBody.content['message/rfc822']!.schema.$ref.split('/').pop()!];
    expect(schema).toMatchObject({ type: 'string', format: 'binary', maxLength: 10 });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['413', '415', '422']));
  });
});
