/** OpenAPI generation from route declarations: components, typed parameters, merge rules (no I/O). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi, isoDate, mergeOpenApi, NO_NUL_PATTERN, pageEnvelopeSchema, paginationQueryShape, routeFor, type RouteDef } from '../src/index.js';

const route = routeFor<unknown>();
const info = { title: 't', version: '1' };
const widget = z.object({ id: z.string(), size: z.number().int().default(1) }).meta({ id: 'TestWidget' });

const routes: RouteDef<never>[] = [
  route({
    method: 'get',
    path: '/v2/widgets',
    operationId: 'listWidgets',
    summary: 'List',
    tags: ['t'],
    query: z.object({ ...paginationQueryShape(100), day: isoDate().optional(), label: z.string().nullable().optional() }),
    response: pageEnvelopeSchema(widget),
    handler: async () => ({ data: [], current_page: 0, total_records: 0, next_page: null }),
  }),
  route({
    method: 'post',
    path: '/v2/widgets',
    operationId: 'createWidget',
    summary: 'Create',
    tags: ['t'],
    body: widget,
    response: widget,
    handler: async () => ({ id: 'x', size: 1 }),
  }),
] as RouteDef<never>[];

describe('buildOpenApi', () => {
  const doc = buildOpenApi(info, routes);
  const schemas = doc.components.schemas as Record<string, any>;
  const list = (doc.paths['/v2/widgets'] as any).get;
  const create = (doc.paths['/v2/widgets'] as any).post;

  it('lifts named schemas into components and references them', () => {
    expect(list.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TestWidgetPage' });
    expect(schemas.TestWidgetPage.properties.data.items).toEqual({ $ref: '#/components/schemas/TestWidget' });
    expect(create.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TestWidget' });
    // the request variant differs (a default makes `size` optional): it gets its own name
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TestWidgetInput' });
    expect(schemas.TestWidget.required).toEqual(['id', 'size']);
    expect(schemas.TestWidgetInput.required).toEqual(['id']);
  });

  it('types coerced query parameters by their target and leaves nullable ones merely optional', () => {
    const p = Object.fromEntries(list.parameters.map((x: any) => [x.name, x]));
    expect(p.page.schema).toEqual({ type: 'integer', minimum: 0, maximum: 1_000_000 });
    expect(p.page_size.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(p.page_size.description).toMatch(/Page size/);
    expect(p.day.schema).toMatchObject({ type: 'string', format: 'date' });
    expect(p.label).toMatchObject({ required: false, schema: { type: 'string', pattern: NO_NUL_PATTERN } });
  });

  it('documents the error statuses of each route', () => {
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['401', '403', '413', '415', '422', '429', '500']));
    expect(create.responses['415'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ProblemV2' });
  });
});

describe('mergeOpenApi', () => {
  it('refuses two services declaring different schemas under one name', () => {
    const a = buildOpenApi(info, routes);
    const other = z.object({ name: z.string() }).meta({ id: 'TestWidget' });
    const b = buildOpenApi(info, [
      route({ method: 'get', path: '/v2/other', operationId: 'getOther', summary: 's', tags: ['t'], response: other, handler: async () => ({ name: 'x' }) }),
    ] as RouteDef<never>[]);
    expect(() => mergeOpenApi(info, [a, b])).toThrow(/TestWidget is declared differently/);
    // the same schema from two services (the error bodies) is one component
    expect(Object.keys(mergeOpenApi(info, [a, a]).components.schemas!)).toContain('ProblemV2');
  });
});
