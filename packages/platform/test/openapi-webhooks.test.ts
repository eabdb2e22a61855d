/**
 * A service module's declared events (ServiceModule.events) as the OpenAPI 3.1 `webhooks` of its
 * document: one entry per type with the Standard Webhooks headers, a named `<Type>Event` body whose
 * `data.object` references the resource's component, and the answers that decide delivery; the
 * merge keeps every service's webhooks and refuses one type from two services (no I/O).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApi, createLogger, createServiceApp, EVENT_CATALOGUE, mergeOpenApi, routeFor, type EventDeclaration, type RouteDef } from '../src/index.js';

const route = routeFor<unknown>();
const info = { title: 't', version: '1' };
const payment = z.object({ object: z.literal('payment'), id: z.string(), amount: z.number() }).meta({ id: 'TestPayment' });
const invoice = z.object({ object: z.literal('invoice'), id: z.string(), status: z.enum(['open', 'closed']) }).meta({ id: 'TestInvoice' });

const routes = [
  route({ method: 'get', path: '/v2/test-payments/{id}', operationId: 'getTestPayment', summary: 'Get', tags: ['t'], params: z.object({ id: z.string().max(40) }), response: payment, handler: async () => ({ object: 'payment' as const, id: 'p', amount: 1 }) }),
] as RouteDef<unknown>[];

const events: EventDeclaration[] = [
  { type: 'payment.posted', object: payment, example: { object: 'payment', id: 'p_1', amount: 12.5 } },
  { type: 'invoice.updated', object: invoice, previousAttributes: true },
];

type Json = Record<string, any>;

describe('webhooks of a service document', () => {
  const doc = buildOpenApi(info, routes, events) as Json;
  const schemas = doc.components.schemas as Json;

  it('has one webhook per declared event type, keyed by the type', () => {
    expect(Object.keys(doc.webhooks)).toEqual(['invoice.updated', 'payment.posted']);
    const hook = doc.webhooks['payment.posted'].post;
    expect(hook.summary).toBe(EVENT_CATALOGUE['payment.posted'].summary);
    expect(hook.operationId).toBe('paymentPostedWebhook');
    expect(doc.webhooks['invoice.updated'].post.operationId).toBe('invoiceUpdatedWebhook');
    expect(hook.tags).toEqual(['Webhooks']);
    expect(hook.description).toMatch(/webhook-signature/);
    expect(hook.description).toMatch(/2xx answer within 10 seconds/);
    expect(hook.parameters.map((p: Json) => `${p.in} ${p.name} ${p.required}`)).toEqual([
      'header webhook-id true',
      'header webhook-timestamp true',
      'header webhook-signature true',
    ]);
    expect(Object.keys(hook.responses).sort()).toEqual(['2XX', '410', 'default']);
  });

  it('types the body as a named <Type>Event component whose data.object references the resource component', () => {
    const body = doc.webhooks['payment.posted'].post.requestBody;
    expect(body.required).toBe(true);
    expect(body.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PaymentPostedEvent' });
    expect(body.content['application/json'].example).toMatchObject({ object: 'event', type: 'payment.posted', data: { object: { id: 'p_1' } } });
    const posted = schemas.PaymentPostedEvent;
    expect(posted.properties.data.properties.object).toEqual({ $ref: '#/components/schemas/TestPayment' });
    expect(posted.properties.type).toMatchObject({ const: 'payment.posted' });
    expect(posted.properties.object).toMatchObject({ const: 'event' });
    expect(posted.required).toEqual(['id', 'object', 'type', 'created_at', 'data']);
    // previous_attributes only where the declaration says the event carries it
    expect(posted.properties).not.toHaveProperty('previous_attributes');
    const updated = schemas.InvoiceUpdatedEvent;
    expect(updated.properties.data.properties.object).toEqual({ $ref: '#/components/schemas/TestInvoice' });
    expect(updated.properties).toHaveProperty('previous_attributes');
    expect(updated.required).not.toContain('previous_attributes');
    expect(doc.webhooks['invoice.updated'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/InvoiceUpdatedEvent' });
    // the resource is one component, shared by the route that returns it and the event that carries it
    expect(doc.paths['/v2/test-payments/{id}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TestPayment' });
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is left out of a document whose service declares no events, and refuses a type declared twice', () => {
    expect(buildOpenApi(info, routes)).not.toHaveProperty('webhooks');
    expect(() => buildOpenApi(info, routes, [events[0]!, events[0]!])).toThrow(/payment.posted is declared twice/);
  });

  it('is what the service app serves at /openapi.json', () => {
    const { openapi } = createServiceApp({
      name: 'webhooks-test',
      info,
      routes,
      events,
      deps: {},
      log: createLogger('webhooks-test', 'silent'),
      identitySecret: 'webhooks-test-secret-0123456789abcdef0123456',
      identityMaxAgeSeconds: 60,
      bodyLimitBytes: 1024,
      readiness: [],
    });
    expect(openapi).toEqual(doc);
  });
});

describe('mergeOpenApi with webhooks', () => {
  const report = z.object({ object: z.literal('report_run'), id: z.string() }).meta({ id: 'TestReportRun' });
  const a = buildOpenApi(info, routes, events);
  const b = buildOpenApi(info, [], [{ type: 'report.sent', object: report }]);

  it("carries every service's webhooks and their components", () => {
    const merged = mergeOpenApi(info, [b, a]) as Json;
    expect(Object.keys(merged.webhooks)).toEqual(['invoice.updated', 'payment.posted', 'report.sent']);
    expect(merged.webhooks['report.sent'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ReportSentEvent' });
    expect(merged.components.schemas.ReportSentEvent.properties.data.properties.object).toEqual({ $ref: '#/components/schemas/TestReportRun' });
    expect(merged.components.schemas).toHaveProperty('PaymentPostedEvent');
    expect(mergeOpenApi(info, [a])).toHaveProperty('webhooks');
    expect(mergeOpenApi(info, [buildOpenApi(info, routes)])).not.toHaveProperty('webhooks');
  });

  it('refuses one event type declared by two services', () => {
    const other = buildOpenApi(info, [], [{ type: 'payment.posted', object: payment }]);
    expect(() => mergeOpenApi(info, [a, other])).toThrow(/webhook payment.posted is declared by two services/);
  });
});
