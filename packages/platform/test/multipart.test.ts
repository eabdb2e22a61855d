/**
 * Routes declared with `multipart`: a file upload arrives in the body as an UploadedFile next to the
 * string fields, the same route still takes JSON, and the route's own size limit applies (413).
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { closeServer, createLogger, createServiceApp, deriveIdentityKey, IDENTITY_HEADER, listen, routeFor, signIdentity, type UploadedFile } from '@rp/platform';

const SECRET = 'multipart-test-secret-0123456789abcdef01234567';
const SERVICE = 'multipart-test';
const route = routeFor<object>();
const uploaded = z.custom<UploadedFile>((v) => typeof v === 'object' && v !== null && Buffer.isBuffer((v as UploadedFile).content), 'must be a file');

let server: http.Server;
let base: string;

beforeAll(async () => {
  const { app, openapi } = createServiceApp({
    name: SERVICE,
    info: { title: 'multipart', version: '1' },
    routes: [
      route({
        method: 'post',
        path: '/v2/uploads',
        operationId: 'upload',
        summary: 'upload',
        tags: ['t'],
        multipart: { maxBytes: 4096, schema: z.object({ file: z.string(), kind: z.string() }) },
        body: z.union([z.object({ file: uploaded, kind: z.string() }), z.object({ text: z.string() })]),
        response: z.object({ kind: z.string(), filename: z.string().nullable(), size: z.number(), content: z.string() }),
        handler: async ({ body }) =>
          'file' in body
            ? { kind: body.kind, filename: body.file.filename, size: body.file.size, content: body.file.content.toString('utf8') }
            : { kind: 'json', filename: null, size: body.text.length, content: body.text },
      }),
    ],
    deps: {},
    log: createLogger('multipart-test', 'silent'),
    identitySecret: SECRET,
    identityMaxAgeSeconds: 60,
    bodyLimitBytes: 1024,
    readiness: [],
  });
  expect(Object.keys((openapi.paths['/v2/uploads'].post as { requestBody: { content: object } }).requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
  const l = await listen(app, 0, '127.0.0.1');
  server = l.server;
  base = `http://127.0.0.1:${l.port}`;
});
afterAll(async () => closeServer(server));

const identity = () =>
  signIdentity({ org: 'o', sub: 'u', role: 'admin', kind: 'user', cred: 'c', bu: '*', iat: Math.floor(Date.now() / 1000) }, deriveIdentityKey(SECRET, SERVICE), {
    method: 'POST',
    target: '/v2/uploads',
  });

async function post(body: FormData | string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/v2/uploads`, { method: 'POST', headers: { [IDENTITY_HEADER]: identity(), ...headers }, body });
  return { status: res.status, body: await res.json() };
}

describe('multipart routes', () => {
  it('puts the uploaded file into the body next to the fields', async () => {
    const form = new FormData();
    form.set('kind', 'statement');
    form.set('file', new Blob(['line 1\nline 2\n']), 'statement.txt');
    const res = await post(form);
    expect(res).toEqual({ status: 200, body: { kind: 'statement', filename: 'statement.txt', size: 14, content: 'line 1\nline 2\n' } });
  });
  it('still takes JSON, beyond the service-wide body limit up to the route limit', async () => {
    const text = 'x'.repeat(2000);
    const res = await post(JSON.stringify({ text }), { 'content-type': 'application/json' });
    expect(res).toMatchObject({ status: 200, body: { kind: 'json', size: 2000 } });
  });
  it('refuses a file over the route limit with 413 and other content types with 415', async () => {
    const form = new FormData();
    form.set('kind', 'big');
    form.set('file', new Blob(['y'.repeat(5000)]), 'big.txt');
    expect((await post(form)).status).toBe(413);
    expect((await post('a,b', { 'content-type': 'text/csv' })).status).toBe(415);
  });
  it('validates a form without the file', async () => {
    const form = new FormData();
    form.set('kind', 'nofile');
    const res = await post(form);
    expect(res.status).toBe(422);
  });
});
