/**
 * The gateway's merged document carries every service's webhooks (ServiceModule.events rendered by
 * the kernel): built here from two small service documents the way the gateway builds /openapi.json
 * (gatewayOpenApi over each service's buildOpenApi), checked with the OpenAPI 3.1 validator, and
 * turned into the typed client's types the way `npm run client:generate` does. The services' own
 * declarations are checked against the running gateway in openapi-contract.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApi, routeFor, type EventDeclaration, type RouteDef } from '@rp/platform';
import { gatewayConfigSchema, gatewayOpenApi } from '@rp/api-gateway';
import { renderClientTypes } from '../scripts/client-types.js';

type Json = Record<string, any>;
const route = routeFor<unknown>();
const limits = gatewayConfigSchema
  .pick({ RATE_LIMIT_PER_SECOND: true, RATE_LIMIT_BURST: true, AUTH_FAILURE_BURST: true, AUTH_FAILURE_PER_MINUTE: true, BODY_LIMIT_BYTES: true, UPLOAD_LIMIT_BYTES: true })
  .parse({});

const payment = z.object({ object: z.literal('payment'), id: z.string(), amount: z.number() }).meta({ id: 'MergePayment' });
const extraction = z.object({ object: z.literal('extraction_job'), id: z.string(), status: z.string() }).meta({ id: 'MergeExtraction' });

function serviceDoc(title: string, path: string, schema: z.ZodType, events: EventDeclaration[]) {
  const routes = [
    route({ method: 'get', path, operationId: `get${title}`, summary: 'Get', tags: [title], response: schema, handler: async () => ({}) }),
  ] as RouteDef<never>[];
  return buildOpenApi({ title, version: '1' }, routes, events);
}

describe("the gateway's merged document", () => {
  const cash = serviceDoc('Cash', '/v2/merge-payments', payment, [
    { type: 'payment.approved', object: payment },
    { type: 'payment.posted', object: payment },
  ]);
  const knowledge = serviceDoc('Knowledge', '/v2/merge-extractions', extraction, [{ type: 'extraction.completed', object: extraction }]);
  const doc = gatewayOpenApi(limits, [cash, knowledge]) as Json;

  it("carries every service's webhooks, each body a named event component referencing its resource", () => {
    expect(Object.keys(doc.webhooks)).toEqual(['extraction.completed', 'payment.approved', 'payment.posted']);
    const body = (type: string) => doc.webhooks[type].post.requestBody.content['application/json'].schema.$ref;
    expect(body('payment.posted')).toBe('#/components/schemas/PaymentPostedEvent');
    expect(body('extraction.completed')).toBe('#/components/schemas/ExtractionCompletedEvent');
    expect(doc.components.schemas.ExtractionCompletedEvent.properties.data.properties.object.$ref).toBe('#/components/schemas/MergeExtraction');
    expect(doc.components.schemas.PaymentApprovedEvent.properties.data.properties.object.$ref).toBe('#/components/schemas/MergePayment');
    // the proxy's 502/504 belong to the operations clients call, not to requests the platform makes
    expect(Object.keys(doc.paths['/v2/merge-payments'].get.responses)).toEqual(expect.arrayContaining(['502', '504']));
    expect(Object.keys(doc.webhooks['payment.posted'].post.responses)).not.toContain('502');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('gives the typed client a webhooks type keyed by event type', async () => {
    const types = await renderClientTypes(doc as never);
    expect(types).toMatch(/export interface webhooks \{/);
    expect(types).toMatch(/"payment\.posted": \{/);
    expect(types).toContain('components["schemas"]["PaymentPostedEvent"]');
    const start = types.indexOf('        PaymentPostedEvent: {');
    const event = types.slice(start, types.indexOf('\n        };', start));
    expect(start).toBeGreaterThan(0);
    expect(event).toContain('type: "payment.posted";');
    expect(event).toContain('object: components["schemas"]["MergePayment"];');
  });
});
