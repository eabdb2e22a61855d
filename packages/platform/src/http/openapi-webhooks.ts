/**
 * The OpenAPI 3.1 `webhooks` of a service: one entry per event type it declares (ServiceModule.events),
 * keyed by the type (`payment.posted`). Each is the POST the platform makes to a subscribed endpoint:
 * the Standard Webhooks headers as parameters, the body a named component `<PascalCase type>Event`
 * (the event envelope whose `data.object` references the resource's own component schema) and the
 * answers that decide success, retry or disabling.
 */
import { z } from 'zod';
import { EVENT_CATALOGUE } from '../events/catalogue.js';
import type { EventDeclaration } from '../events/declare.js';
import { eventEnvelopeShape } from '../events/schema.js';
import type { SchemaComponents } from './openapi.js';

type JsonSchema = Record<string, unknown>;

/** `payment.posted` → `PaymentPostedEvent`; `bank_statement.processed` → `BankStatementProcessedEvent`. */
export function eventComponentName(type: string): string {
  return type.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_, __, c: string) => c.toUpperCase()) + 'Event';
}

/** `payment.posted` → `paymentPostedWebhook`: the webhook's operation id (Swagger UI shows it; unique beside the routes'). */
export function webhookOperationId(type: string): string {
  const name = eventComponentName(type).replace(/Event$/, '');
  return `${name[0]!.toLowerCase()}${name.slice(1)}Webhook`;
}

/** The tag every webhook carries (Swagger UI groups them under it). */
export const WEBHOOKS_TAG = 'Webhooks';

/**
 * How every webhook is delivered: the same for each type, so one text (its numbers are the delivery
 * engine's: docs/webhooks.md describes the same contract at length).
 */
export const WEBHOOK_DELIVERY_DOC =
  'Delivered to every enabled webhook endpoint of the organization subscribed to this type (`events` lists it or is `["*"]`), ' +
  'as `POST <endpoint url>` with a JSON body, following the Standard Webhooks specification: the headers `webhook-id` ' +
  '(the event id, the same on every attempt: deduplicate by it), `webhook-timestamp` (Unix seconds of this attempt) and ' +
  '`webhook-signature` (`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">` keyed with the ' +
  'endpoint secret\'s bytes after `whsec_`; during the 24 hours after a secret rotation, two space-separated signatures, ' +
  'one per secret). Verify the signature over the raw body before parsing it (`verifyWebhook` of @rp/client, or any ' +
  'Standard Webhooks library) and refuse timestamps more than 5 minutes off.\n\n' +
  'At least once: any 2xx answer within 10 seconds is success; anything else (another status, a timeout, a refused ' +
  'connection) is retried with the same body and `webhook-id` after about 5 s, 30 s, 30 min, 2 h, 5 h, 10 h and 10 h (8 ' +
  'attempts over about 27.5 hours, with jitter), and then marked failed (`POST /v2/webhook-endpoints/{id}/deliveries/{delivery_id}/retry` ' +
  'sends it again). 410 Gone disables the endpoint at once; an endpoint failing continuously for 3 days is disabled and the ' +
  'organization\'s admins get an email. Per endpoint, the events of one resource arrive in the order they were recorded ' +
  '(a `payment.posted` never before its `payment.approved`); events of different resources may overtake each other. ' +
  'A consumer that missed deliveries catches up from `GET /v2/events`.';

const headerParameters: JsonSchema[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (UUIDv7, the body\'s `id`): the same on every attempt of this event to this endpoint.',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'When this attempt was sent, in Unix seconds (signed with the body: refuse values more than 5 minutes off).',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$', examples: ['1764185100'] },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{raw body}`; one per endpoint ' +
      'secret in use (two during the 24 hours after a rotation). The request is authentic when one of them matches.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]{44}( v1,[A-Za-z0-9+/=]{44})*$', maxLength: 1024 },
  },
];

const responses: JsonSchema = {
  '2XX': { description: 'Received. Any 2xx answer within 10 seconds ends this event\'s delivery to the endpoint; the answer\'s body is ignored.' },
  '410': { description: 'Gone: the endpoint is disabled at once (`disabled_reason`), and nothing more is sent to it until it is enabled again.' },
  default: { description: 'Any other answer, a timeout after 10 seconds or a failed connection: the delivery is retried later with the same `webhook-id` and body.' },
};

/** The schema of the webhook body of one declared event type: the envelope with its own `type` and `data.object`. */
export function webhookEventSchema(decl: EventDeclaration): z.ZodType {
  const { previous_attributes: previous, ...shape } = eventEnvelopeShape(decl.object);
  return z
    .object({
      ...shape,
      type: z.literal(decl.type).describe('The event type.'),
      ...(decl.previousAttributes ? { previous_attributes: previous } : {}),
    })
    .describe(`The \`${decl.type}\` event: ${EVENT_CATALOGUE[decl.type].summary}`);
}

/**
 * The `webhooks` object of a document, its bodies lifted into `components` (one per type). Two
 * declarations of one type in a service are a programming error and throw.
 */
export function buildWebhooks(components: SchemaComponents, events: readonly EventDeclaration[]): Record<string, JsonSchema> {
  const webhooks: Record<string, JsonSchema> = {};
  for (const decl of events) {
    if (webhooks[decl.type]) throw new Error(`OpenAPI: event type ${decl.type} is declared twice`);
    const entry = EVENT_CATALOGUE[decl.type];
    const schema = components.ref(webhookEventSchema(decl), 'output', { name: eventComponentName(decl.type) });
    webhooks[decl.type] = {
      post: {
        operationId: webhookOperationId(decl.type),
        summary: entry.summary,
        description:
          `\`data.object\` is the ${entry.resource.replaceAll('_', ' ')} exactly as the API returned it when the event was recorded` +
          (decl.previousAttributes ? '; `previous_attributes` holds the changed fields\' earlier values' : '') +
          `.\n\n${WEBHOOK_DELIVERY_DOC}`,
        tags: [WEBHOOKS_TAG],
        parameters: headerParameters,
        requestBody: {
          required: true,
          content: { 'application/json': { schema, ...(decl.example ? { example: exampleEnvelope(decl) } : {}) } },
        },
        responses,
      },
    };
  }
  return Object.fromEntries(Object.entries(webhooks).sort(([a], [b]) => a.localeCompare(b)));
}

/** A whole example body from the declaration's example `data.object`. */
function exampleEnvelope(decl: EventDeclaration): JsonSchema {
  return {
    id: '019ac0de-4f6a-7c11-9a2b-5d3e8f1a2b3c',
    object: 'event',
    type: decl.type,
    created_at: '2026-11-26T19:25:00.000Z',
    data: { object: decl.example },
  };
}
