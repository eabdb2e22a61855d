/**
 * The kernel's input rules on their own: the no-NUL and no-lone-surrogate walk, the shared id and email
 * schemas, and deterministic routing with honest 405 `Allow` answers, through a small service built
 * with createServiceApp and called over real HTTP. The same rules through the gateway on the real
 * services: test/input-rules.test.ts.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeServer,
  createLogger,
  createServiceApp,
  deriveIdentityKey,
  emailSchema,
  findInvalidText,
  findNul,
  invalidTextIssue,
  invalidTextIssues,
  ianaTimezone,
  idSchema,
  listen,
  PathRouter,
  routeFor,
  signIdentity,
  type Identity,
  type ValidationIssue,
} from '@rp/platform';

const SECRET = 'kit-test-secret-0123456789abcdef0123456789';
const route = routeFor<{ seen: unknown[] }>();

// Declared in the "wrong" order on purpose: the capture route comes before the fixed one.
const routes = [
  route({
    method: 'get',
    path: '/v2/widgets/{widget_id}',
    operationId: 'getWidget',
    summary: 'get',
    tags: ['t'],
    params: z.object({ widget_id: idSchema() }),
    response: z.object({ route: z.string(), id: z.string() }),
    handler: async ({ params }) => ({ route: 'by-id', id: params.widget_id }),
  }),
  route({
    method: 'patch',
    path: '/v2/widgets/{widget_id}',
    operationId: 'patchWidget',
    summary: 'patch',
    tags: ['t'],
    params: z.object({ widget_id: idSchema() }),
    body: z.object({ name: z.string() }),
    handler: async () => {},
  }),
  route({
    method: 'delete',
    path: '/v2/widgets/{widget_id}',
    operationId: 'deleteWidget',
    summary: 'delete',
    tags: ['t'],
    params: z.object({ widget_id: idSchema() }),
    handler: async () => {},
  }),
  route({
    method: 'get',
    path: '/v2/widgets/special',
    operationId: 'getSpecial',
    summary: 'fixed',
    tags: ['t'],
    response: z.object({ route: z.string() }),
    handler: async () => ({ route: 'special' }),
  }),
  route({
    method: 'post',
    path: '/v2/widgets/receipt',
    operationId: 'postReceipt',
    summary: 'fixed, POST only',
    tags: ['t'],
    body: z.object({ note: z.string().optional(), metadata: z.record(z.string(), z.unknown()).optional() }),
    response: z.object({ route: z.string() }),
    handler: async ({ body, deps }) => {
      deps.seen.push(body);
      return { route: 'receipt' };
    },
  }),
  route({
    method: 'get',
    path: '/v2/widgets',
    operationId: 'listWidgets',
    summary: 'list',
    tags: ['t'],
    query: z.object({ q: z.string().optional(), owner_id: idSchema().optional() }),
    response: z.object({ q: z.string().nullable() }),
    handler: async ({ query }) => ({ q: query.q ?? null }),
  }),
  route({
    method: 'post',
    path: '/v2/widgets/{widget_id}/notes',
    operationId: 'addNote',
    summary: 'text body',
    tags: ['t'],
    params: z.object({ widget_id: idSchema() }),
    textBody: 'text/csv',
    body: z.string(),
    handler: async ({ body, deps }) => {
      deps.seen.push(body);
    },
  }),
  route({
    method: 'post',
    path: '/v2/widgets/upload',
    operationId: 'upload',
    summary: 'multipart',
    tags: ['t'],
    multipart: { maxBytes: 4096 },
    body: z.object({ label: z.string().optional(), file: z.unknown().optional() }),
    handler: async ({ body, deps }) => {
      deps.seen.push(body);
    },
  }),
  route({
    method: 'post',
    path: '/v2/widgets/batch',
    operationId: 'batch',
    summary: 'per-record body',
    tags: ['t'],
    perRecordBody: true,
    body: z.array(z.unknown()).max(10),
    response: z.object({ results: z.array(z.boolean()) }),
    handler: async ({ body }) => ({ results: body.map((r) => findNul(r).length === 0) }),
  }),
  route({
    method: 'post',
    path: '/v1/widgets',
    operationId: 'createWidgetV1',
    summary: 'v1',
    tags: ['t'],
    body: z.object({ name: z.string() }),
    handler: async () => {},
  }),
];

let server: http.Server;
let base: string;
const deps = { seen: [] as unknown[] };
const identity: Identity = { org: 'org-1', sub: 'user-1', role: 'admin', kind: 'user', cred: 'cred-1', bu: '*', iat: 0 };
const ID = '0193a0c4-1f2e-7abc-8def-0123456789ab';

async function call(method: string, path: string, opts: { body?: string | FormData; type?: string } = {}) {
  const headers: Record<string, string> = { 'x-rp-identity': signIdentity({ ...identity, iat: Math.floor(Date.now() / 1000) }, deriveIdentityKey(SECRET, 'input-rules-test'), { method, target: path }) };
  if (typeof opts.body === 'string') headers['content-type'] = opts.type ?? 'application/json';
  const res = await fetch(base + path, { method, headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, allow: res.headers.get('allow'), body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  const { app } = createServiceApp({
    name: 'input-rules-test',
    info: { title: 'kit', version: '1' },
    routes,
    deps,
    log: createLogger('input-rules-test', 'silent'),
    identitySecret: SECRET,
    identityMaxAgeSeconds: 60,
    bodyLimitBytes: 4096,
    readiness: [],
  });
  const bound = await listen(app, 0);
  server = bound.server;
  base = `http://127.0.0.1:${bound.port}`;
});
afterAll(() => closeServer(server));

describe('routing: fixed segments win over captures', () => {
  it('dispatches a fixed path to its own route even when the capture route is declared first', async () => {
    expect((await call('GET', '/v2/widgets/special')).body).toEqual({ route: 'special' });
    expect((await call('GET', `/v2/widgets/${ID}`)).body).toEqual({ route: 'by-id', id: ID });
    expect((await call('GET', '/v2/widgets/special/')).body).toEqual({ route: 'special' });
  });
  it('answers 405 with only the fixed route\'s methods (none of the capture route\'s)', async () => {
    const patch = await call('PATCH', '/v2/widgets/special', { body: '{"name":"x"}' });
    expect(patch.status).toBe(405);
    expect(patch.allow).toBe('GET');
    const get = await call('GET', '/v2/widgets/receipt');
    expect(get.status).toBe(405);
    expect(get.allow).toBe('POST');
    expect(get.body).toMatchObject({ type: 'method-not-allowed', status: 405 });
    const put = await call('PUT', `/v2/widgets/${ID}`);
    expect(put.status).toBe(405);
    expect(put.allow).toBe('GET, PATCH, DELETE');
    expect((await call('GET', '/v2/nothing-here')).status).toBe(404);
  });
  it('orders templates by specificity, left to right, whatever the order they are added in', () => {
    const r = new PathRouter<string>();
    r.add('get', '/a/{x}/{y}', 'xy');
    r.add('get', '/a/{x}/c', 'xc');
    r.add('get', '/a/b/{y}', 'by');
    r.add('post', '/a/b/c', 'bc');
    expect(r.match('GET', '/a/b/c')).toMatchObject({ template: '/a/b/c', handler: undefined, allowed: ['POST'] });
    expect(r.match('GET', '/a/b/z')).toMatchObject({ handler: 'by', params: { y: 'z' } });
    expect(r.match('GET', '/a/q/c')).toMatchObject({ handler: 'xc', params: { x: 'q' } });
    expect(r.match('GET', '/a/q%2Fr/z')).toMatchObject({ handler: 'xy', params: { x: 'q/r', y: 'z' } });
    expect(r.match('HEAD', '/a/q/z')).toMatchObject({ handler: 'xy' });
    expect(r.match('GET', '/a//z')).toBeNull();
    expect(() => r.add('get', '/a/{other}/c', 'dup')).toThrow(/capture names/);
    expect(() => r.add('get', '/a/b/{y}', 'dup')).toThrow(/twice/);
  });
});

describe('no NUL (U+0000) anywhere in what a route reads', () => {
  it('refuses NUL in a path capture, a query value and a query key with their loc', async () => {
    const res = await call('GET', '/v2/widgets?q=a%00b');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ loc: ['query', 'q'], msg: expect.stringContaining('NUL'), type: 'nul_character' }]);
    const key = await call('GET', '/v2/widgets?x%00=1');
    expect(key.body.errors).toEqual([{ loc: ['query', 'x\u0000'], msg: expect.stringContaining('keys'), type: 'nul_character' }]);
    const path = await call('GET', '/v2/widgets/a%00b');
    expect(path.status).toBe(422);
    expect(path.body.errors[0]).toMatchObject({ loc: ['path', 'widget_id'], type: 'nul_character' });
  });
  it('refuses NUL in JSON values and keys at any depth, and stores nothing', async () => {
    const before = deps.seen.length;
    const res = await call('POST', '/v2/widgets/receipt', { body: JSON.stringify({ note: 'ok', metadata: { deep: [{ 'k\u0000': 'v' }, 'x\u0000'] } }) });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { loc: unknown[] }) => e.loc)).toEqual(expect.arrayContaining([
      ['body', 'metadata', 'deep', 0, 'k\u0000'],
      ['body', 'metadata', 'deep', 1],
    ]));
    // an unknown (stripped) field counts too: the rule is about the request, not the schema
    expect((await call('POST', '/v2/widgets/receipt', { body: JSON.stringify({ other: '\u0000' }) })).status).toBe(422);
    expect(deps.seen.length).toBe(before);
    expect((await call('POST', '/v2/widgets/receipt', { body: JSON.stringify({ note: 'fine \\0 is not NUL' }) })).status).toBe(200);
  });
  it('refuses NUL in a text body and in a multipart text field, not in file bytes', async () => {
    const text = await call('POST', `/v2/widgets/${ID}/notes`, { body: 'a,b\n1,\u0000\n', type: 'text/csv' });
    expect(text.status).toBe(422);
    expect(text.body.errors).toEqual([{ loc: ['body'], msg: expect.any(String), type: 'nul_character' }]);
    const form = new FormData();
    form.set('label', 'bad\u0000label');
    const multi = await call('POST', '/v2/widgets/upload', { body: form });
    expect(multi.status).toBe(422);
    expect(multi.body.errors[0].loc).toEqual(['body', 'label']);
    const file = new FormData();
    file.set('label', 'fine');
    file.set('file', new Blob([new Uint8Array([0, 1, 2, 0])]), 'data.bin');
    expect((await call('POST', '/v2/widgets/upload', { body: file })).status).toBe(204);
  });
  it('keeps the v1 validation shape on /v1 paths', async () => {
    const res = await call('POST', '/v1/widgets', { body: JSON.stringify({ name: 'a\u0000' }) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: { body: { name: [expect.stringContaining('NUL')] } }, message: expect.any(String) });
  });
  it('leaves the items of a per-record body to the handler', async () => {
    const res = await call('POST', '/v2/widgets/batch', { body: JSON.stringify([{ a: 'ok' }, { a: 'bad\u0000' }]) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [true, false] });
  });
  it('walks any depth without recursion', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(findNul(deep)[0]!.path).toHaveLength(50_000);
  });
});

describe('findInvalidText: NUL and lone surrogates in one walk', () => {
  it('finds a high surrogate without its low half and a low one without its high half, in values and keys; a pair is text', () => {
    const value = {
      pair: 'smile \ud83d\ude00',
      high_at_end: 'a\ud800',
      high_then_text: '\ud800b',
      low_alone: '\udc00',
      reversed: '\ude00\ud83d',
      list: ['ok', 'x\u0000\udfff'],
      ['k\udbff']: 'fine',
    };
    expect(findInvalidText(value)).toEqual(
      expect.arrayContaining([
        { path: ['high_at_end'], key: false, problem: 'lone_surrogate' },
        { path: ['high_then_text'], key: false, problem: 'lone_surrogate' },
        { path: ['low_alone'], key: false, problem: 'lone_surrogate' },
        { path: ['reversed'], key: false, problem: 'lone_surrogate' },
        { path: ['list', 1], key: false, problem: 'nul' },
        { path: ['list', 1], key: false, problem: 'lone_surrogate' },
        { path: ['k\udbff'], key: true, problem: 'lone_surrogate' },
      ]),
    );
    expect(findInvalidText(value)).toHaveLength(7);
    expect(findInvalidText({ pair: '\ud83d\ude00', text: 'Grüße' })).toEqual([]);
    // findNul keeps to NUL
    expect(findNul(value)).toEqual([{ path: ['list', 1], key: false }]);
  });
  it('as issues, located under a prefix (a per-record caller names its record)', () => {
    const issues: ValidationIssue[] = [];
    invalidTextIssues('body', { a: '\ud800' }, issues);
    expect(issues).toEqual([{ loc: ['body', 'a'], msg: 'must not contain a lone UTF-16 surrogate (invalid Unicode)', type: 'lone_surrogate' }]);
    expect(findInvalidText(['\ud800'], { skipTopLevelItems: true })).toEqual([]);
    expect(findInvalidText({ b: '\udc00' }).map((f) => invalidTextIssue(['body', 3], f))).toEqual([
      { loc: ['body', 3, 'b'], msg: 'must not contain a lone UTF-16 surrogate (invalid Unicode)', type: 'lone_surrogate' },
    ]);
  });
  it('refuses a lone surrogate in a JSON body through the kit (422, its loc) and walks any depth', async () => {
    const res = await call('POST', '/v1/widgets', { body: '{"name":"a\\ud800"}' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: { body: { name: [expect.stringContaining('lone UTF-16 surrogate')] } }, message: expect.any(String) });
    let deep: unknown = '\udc00';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(findInvalidText(deep)[0]!.path).toHaveLength(50_000);
  });
});

describe('shared schemas', () => {
  it('ids: any RFC 9562 UUID, nothing else; JSON Schema format uuid', () => {
    const id = idSchema();
    for (const ok of [ID, '123e4567-e89b-12d3-a456-426614174000', '00000000-0000-0000-0000-000000000000']) expect(id.safeParse(ok).success).toBe(true);
    for (const bad of ['not-a-uuid', `${ID}x`, ID.replace(/-/g, ''), '']) expect(id.safeParse(bad).success).toBe(false);
    expect(z.toJSONSchema(id)).toMatchObject({ type: 'string', format: 'uuid' });
    expect(id.safeParse('nope').error!.issues[0]!.message).toBe('must be a UUID');
  });
  it('emails: RFC limits (local part 64, whole 254), one @, a dotted domain, no spaces', () => {
    const email = emailSchema();
    const local64 = 'a'.repeat(64);
    const domain = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.com`; // 4 labels, 194 chars
    for (const ok of ['ap@acme.example', `${local64}@example.com`, 'first.last+tag@sub.example.co', `${'a'.repeat(55)}@${domain}`]) {
      expect(email.safeParse(ok).success, ok).toBe(true);
    }
    for (const bad of [`${local64}a@example.com`, `${'a'.repeat(60)}@${domain}`, 'a b@example.com', 'a@b@example.com', 'a@localhost', 'a@example.com\n', 'a\u0000@example.com', '.a@example.com', 'a..b@example.com', `a@${'d'.repeat(64)}.com`]) {
      expect(email.safeParse(bad).success, bad).toBe(false);
    }
    expect(z.toJSONSchema(email)).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
  });
  it('timezones: zones of the IANA tz database in any spelling that resolves to one; not the zones it dropped (Temporal refuses them)', () => {
    const tz = ianaTimezone();
    for (const ok of ['Europe/Berlin', 'europe/berlin', 'UTC', 'Etc/UTC', 'Etc/GMT-14', 'Asia/Kolkata', 'Asia/Calcutta', 'Europe/Kyiv', 'US/Pacific-New', 'America/Ciudad_Juarez']) {
      expect(tz.safeParse(ok).success, ok).toBe(true);
    }
    for (const bad of ['SystemV/AST4', 'SystemV/EST5EDT', 'Mars/Olympus', 'EST5EDT', 'CET', '', 'Europe/Berlin\u0000']) expect(tz.safeParse(bad).success, bad).toBe(false);
  });
});
