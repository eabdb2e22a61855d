/**
 * The gateway's merged /openapi.json as tools read it: a valid OpenAPI 3.1 document (checked with a
 * maintained validator), every resource a named component referenced by $ref, no dangling $ref,
 * parameters with their real types and bounds, the kernel's input rules and every error status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { EVENT_TYPES, eventComponentName, isEventType } from '@rp/platform';
import { startStack, type TestStack } from './support/stack.js';

type Json = Record<string, any>;

let stack: TestStack;
let doc: Json;
beforeAll(async () => {
  stack = await startStack();
  const res = await stack.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => stack?.close());

function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op: op as Json })));
}

function walk(node: unknown, fn: (o: Json, at: string) => void, at = '#'): void {
  if (Array.isArray(node)) node.forEach((n, i) => walk(n, fn, `${at}/${i}`));
  else if (node && typeof node === 'object') {
    fn(node as Json, at);
    for (const [k, v] of Object.entries(node)) walk(v, fn, `${at}/${k}`);
  }
}

/** Every string schema a request can carry (parameters and request bodies), with where it is. */
function requestStrings(): { at: string; schema: Json }[] {
  const found: { at: string; schema: Json }[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, at: string) =>
    walk(node, (o, where) => {
      if (o.type === 'string') found.push({ at: where, schema: o });
      if (typeof o.$ref === 'string' && !seen.has(o.$ref)) {
        seen.add(o.$ref);
        visit(doc.components.schemas[o.$ref.split('/').pop()!], o.$ref);
      }
    }, at);
  for (const { path, method, op } of operations()) {
    visit(op.parameters, `${method} ${path} parameters`);
    visit(op.requestBody, `${method} ${path} body`);
  }
  return found;
}

/**
 * Whether a pattern alone bounds a string's length: anchored at both ends with no unbounded
 * quantifier (`*`, `+`, `{n,}`), or opening with a length lookahead such as `(?=.{1,254}$)`.
 */
function patternBounds(pattern: unknown): boolean {
  if (typeof pattern !== 'string') return false;
  if (/^\^\(\?=[^)]*\{\d+,\d+\}\$\)/.test(pattern)) return true;
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return false;
  // drop escapes and character classes, then look for an unbounded quantifier
  const bare = pattern.replace(/\\./g, 'x').replace(/\[[^\]]*\]/g, 'x');
  return !/[*+]|\{\d+,\}/.test(bare);
}

describe('merged OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('has no dangling $ref', () => {
    const dangling: string[] = [];
    walk(doc, (o, at) => {
      if (typeof o.$ref !== 'string') return;
      const m = /^#\/components\/schemas\/(.+)$/.exec(o.$ref);
      if (!m || !doc.components.schemas[m[1]!]) dangling.push(`${at}: ${o.$ref}`);
    });
    expect(dangling).toEqual([]);
  });

  it('names every resource as a component and references it: success bodies, JSON request bodies, errors', () => {
    const schemas = doc.components.schemas as Json;
    for (const name of [
      'Connection',
      'BankStatement',
      'BankTransaction',
      'Payment',
      'Remittance',
      'Adjustment',
      'LedgerAccount',
      'BusinessUnit',
      'User',
      'ApiKey',
      'Provider',
      'SyncRun',
      'ExchangeRate',
      'PaymentPage',
      'ConnectionPage',
      'RemittancePage',
      'ProblemV2',
      'ProblemV1',
      'ValidationProblemV1',
    ]) {
      expect(schemas, name).toHaveProperty(name);
    }
    expect(schemas.PaymentPage.properties.data.items.$ref).toBe('#/components/schemas/Payment');
    expect(schemas.Connection.properties.provider.$ref).toBe('#/components/schemas/Provider');
    expect(schemas.ProblemV2.required).toEqual(['type', 'status', 'title', 'detail']);

    const inline: string[] = [];
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema && !schema.$ref) inline.push(`${method} ${path} ${status}`);
        if (Number(status) >= 400) {
          const want = path.startsWith('/v1/') ? (status === '422' ? 'ValidationProblemV1' : 'ProblemV1') : 'ProblemV2';
          expect(schema?.$ref, `${method} ${path} ${status}`).toBe(`#/components/schemas/${want}`);
        }
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body && !body.$ref) inline.push(`${method} ${path} request body`);
    }
    expect(inline).toEqual([]);
  });

  it("types every declared webhook's body as its <Type>Event component, data.object a named resource component", () => {
    for (const [type, hook] of Object.entries((doc.webhooks ?? {}) as Json)) {
      expect(isEventType(type), `${type} is in the event catalogue`).toBe(true);
      const ref = hook.post.requestBody.content['application/json'].schema.$ref;
      expect(ref, type).toBe(`#/components/schemas/${eventComponentName(type)}`);
      const object = doc.components.schemas[eventComponentName(type)].properties.data.properties.object;
      expect(object.$ref, `${type}: data.object is a named component`).toMatch(/^#\/components\/schemas\/\w+$/);
    }
  });

  it('declares every type of the event catalogue as a webhook', () => {
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('documents every error status a route can return', () => {
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses);
      const label = `${method} ${path}`;
      for (const s of ['401', '403', '429', '500', '502', '504']) expect(statuses, `${label} ${s}`).toContain(s);
      if (op.parameters.length || op.requestBody) expect(statuses, `${label} 422`).toContain('422');
      if (op.parameters.some((p: Json) => p.in === 'path')) expect(statuses, `${label} 404`).toContain('404');
      if (op.requestBody) {
        expect(statuses, `${label} 413`).toContain('413');
        expect(statuses, `${label} 415`).toContain('415');
      }
    }
    expect(Object.keys(doc.paths['/v2/integrations/connections/{connection_id}/sync'].post.responses)).toContain('503');
    expect(Object.keys(doc.paths['/v2/bank-statements'].post.responses)).toContain('409');
  });

  it('gives query and path parameters their real types and bounds', () => {
    const params = operations().flatMap(({ path, method, op }) => (op.parameters as Json[]).map((p) => ({ label: `${method} ${path} ${p.in} ${p.name}`, p })));
    for (const { label, p } of params) {
      // no integer hidden in a string pattern, no range only in prose
      expect(p.schema.pattern === '^-?\\d+$', label).toBe(false);
      if (['page', 'page_size', 'size'].includes(p.name)) {
        expect(p.schema, label).toMatchObject({ type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) });
        expect(p.required, label).toBe(false);
      }
      if (/_date$|^date_/.test(p.name)) expect(p.schema.format, label).toBe('date');
      if (p.in === 'path') expect(p.required, label).toBe(true);
      if (p.name.endsWith('_id')) expect(p.schema.format, label).toBe('uuid');
    }
    const list = doc.paths['/v2/payments'].get.parameters as Json[];
    expect(list.find((p) => p.name === 'page_size')!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 500 });
    expect(list.find((p) => p.name === 'start_date')!.schema).toMatchObject({ type: 'string', format: 'date' });
    expect(list.find((p) => p.name === 'partner_id')!.schema).toMatchObject({ type: 'string', format: 'uuid' });
  });

  it('declares the multipart upload with a binary file field and its required fields', () => {
    const upload = doc.paths['/v2/bank-statements'].post.requestBody.content;
    const form = doc.components.schemas[upload['multipart/form-data'].schema.$ref.split('/').pop()];
    expect(form.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    // `format` may be left out: it is detected from the file (camt.053, MT940, BAI2, JSON)
    expect(form.required).toEqual(['file']);
    expect(form.properties.format).toMatchObject({ enum: expect.arrayContaining(['camt053', 'mt940', 'bai2', 'csv', 'json']) });
    const json = doc.components.schemas[upload['application/json'].schema.$ref.split('/').pop()];
    expect(json.required).toEqual(expect.arrayContaining(['account', 'currency', 'transactions']));
    expect(json.properties).not.toHaveProperty('file');
  });

  it('documents the kernel input rules: no NUL in any request string, real currency codes', () => {
    const strings = requestStrings();
    expect(strings.length).toBeGreaterThan(100);
    for (const { at, schema } of strings) {
      if (schema.enum || schema.const !== undefined || ['date', 'date-time', 'uuid', 'email', 'uri', 'binary'].includes(schema.format)) continue;
      expect(schema.pattern, `${at}: a pattern refusing NUL`).toBeTypeOf('string');
      const re = new RegExp(schema.pattern, 'u');
      expect(re.test('a\u0000b'), `${at}: ${schema.pattern} refuses NUL`).toBe(false);
    }
    const rate = doc.components.schemas.LoadExchangeRatesRequest.items.properties.base_currency;
    expect(rate.enum).toContain('EUR');
    expect(rate.enum).not.toContain('AAA');
    expect(doc.components.schemas.CreateUserRequest.properties.email).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
    expect(doc.components.schemas.CreateUserRequest.properties.business_unit_ids.items).toMatchObject({ type: 'string', format: 'uuid' });
    // object keys: the kernel refuses NUL there too
    expect(doc.components.schemas.CreateUserRequest.propertyNames).toEqual({ pattern: '^[^\\u0000]*$' });
    // a trimmed name that must not be blank says so
    const unit = doc.components.schemas.CreateBusinessUnitRequest.properties.name;
    expect(new RegExp(unit.pattern, 'u').test('   ')).toBe(false);
    expect(new RegExp(unit.pattern, 'u').test(' Nord ')).toBe(true);
  });

  it('bounds every string a request can carry: maxLength, or an enum, a uuid/date/date-time format, or a bounding pattern', () => {
    const unbounded = new Set<string>();
    for (const { at, schema } of requestStrings()) {
      // Open JSON values (condition trees, provider settings, OAuth extra data, unlisted push fields) are
      // described by the kernel's NulFreeJson; each route's domain bounds the strings inside them
      // (conditions 256, settings 1000, push per field), as its own description says.
      if (at.startsWith('#/components/schemas/NulFreeJson/')) continue;
      if (typeof schema.maxLength === 'number') continue;
      if (schema.enum || schema.const !== undefined) continue;
      if (['uuid', 'date', 'date-time'].includes(schema.format)) continue;
      // an uploaded file's bytes: bounded by the route's upload limit (413), not a text field
      if (schema.format === 'binary') continue;
      if (patternBounds(schema.pattern)) continue;
      unbounded.add(at);
    }
    expect([...unbounded].sort(), `string fields without maxLength:\n${[...unbounded].sort().join('\n')}`).toEqual([]);
  });
});
