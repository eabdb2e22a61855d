/**
 * The knowledge routes' request schemas as published in OpenAPI: every string a client sends (path,
 * query, body, at any depth) is bounded by a maxLength stated in its description too, so a client learns the limit from the
 * document and an over-long value is a 422, never a database error. Enumerations and UUIDs are
 * bounded by their values.
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '@rp/platform';
import { knowledgeModule } from '../src/module.js';

type Js = Record<string, any>;

let strings = 0;

/** The field's description states its limit (a client reads it there, not only in the schema keyword). */
function documents(schema: Js, described: string | undefined): boolean {
  const text = `${schema.description ?? ''} ${described ?? ''}`;
  return text.includes(String(schema.maxLength)) || text.includes(Number(schema.maxLength).toLocaleString('en-US'));
}

function unbounded(doc: Js, schema: Js | undefined, at: string, out: string[], seen = new Set<Js>(), described?: string): void {
  if (!schema || seen.has(schema)) return;
  seen.add(schema);
  if (typeof schema.$ref === 'string') return unbounded(doc, doc.components.schemas[schema.$ref.split('/').pop()!], at, out, seen, schema.description ?? described);
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) for (const s of schema[k] ?? []) unbounded(doc, s, at, out, seen, schema.description ?? described);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) strings++;
  if (types.includes('string') && schema.enum === undefined && schema.const === undefined && schema.format !== 'uuid' && (typeof schema.maxLength !== 'number' || !documents(schema, described))) out.push(at);
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Js>)) unbounded(doc, v, `${at}.${k}`, out, seen);
  if (schema.items) unbounded(doc, schema.items, `${at}[]`, out, seen);
}

describe('knowledge request schemas', () => {
  it('give every string field a maxLength', () => {
    const doc = buildOpenApi(knowledgeModule.info, knowledgeModule.routes as never) as Js;
    const out: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Js>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const p of op.parameters ?? []) unbounded(doc, p.schema, `${method} ${path} ${p.in}.${p.name}`, out, new Set(), p.description);
        for (const [type, c] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Js>)) unbounded(doc, c.schema, `${method} ${path} body(${type})`, out);
      }
    }
    expect(strings).toBeGreaterThan(10);
    expect(out).toEqual([]);
  });
});
