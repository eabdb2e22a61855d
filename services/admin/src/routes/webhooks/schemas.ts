/** Schemas of the webhook-endpoint API: the resources (named components) and the rules of the fields a request sets. */
import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '@rp/platform';

export const URL_MAX_LENGTH = 2048;
export const DESCRIPTION_MAX_LENGTH = 500;

const ALL = '*';
/** The catalogue's types and the wildcard, as `z.enum` takes them (a non-empty tuple). */
const SUBSCRIBABLE = [ALL, ...EVENT_TYPES] as [typeof ALL, ...EventType[]];

export const endpointUrlSchema = z
  .string()
  .max(URL_MAX_LENGTH)
  .describe(
    `Where events are POSTed (http or https, at most ${URL_MAX_LENGTH} characters, no credentials in it). Loopback, private, link-local and ` +
      'metadata addresses are refused (422 at `body.url`) unless the operator\'s OUTBOUND_ALLOWLIST allows them, whether the URL names the ' +
      'address or a host name that resolves to one now. A name that does not resolve yet is accepted: every delivery resolves and checks it again.',
  );

export const endpointEventsSchema = z
  .array(z.enum(SUBSCRIBABLE))
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .refine((v) => !v.includes(ALL) || v.every((t) => t === ALL), 'is either ["*"] (every type, including types added later) or a list of event types')
  .transform((v) => [...new Set(v)])
  .describe('Event types the endpoint receives (the catalogue is the `webhooks` section), or exactly `["*"]` for all, including types added later. Duplicates are dropped; an unknown type is 422 at its index. `webhook.test` events reach an endpoint only when asked for it (POST …/test), whatever it subscribes to.');

export const endpointDescriptionSchema = z.string().max(DESCRIPTION_MAX_LENGTH).nullable().describe(`A note for people (at most ${DESCRIPTION_MAX_LENGTH} characters); null to clear it.`);

const endpointShape = {
  object: z.literal('webhook_endpoint'),
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).describe('Subscribed event types, or `["*"]`.'),
  description: z.string().nullable(),
  is_enabled: z
    .boolean()
    .describe(
      'false: delivery is paused. Deliveries already queued stay pending and no new ones are queued while disabled (events recorded meanwhile ' +
        'are not delivered later; catch up from GET /v2/events). Enabling again resumes the pending ones.',
    ),
  created_at: z.string().describe('ISO 8601 UTC'),
  modified_at: z.string().describe('ISO 8601 UTC'),
  disabled_reason: z
    .string()
    .nullable()
    .describe('Why the platform disabled the endpoint (it answered 410 Gone, or every delivery failed for 3 days); null when an admin disabled it or it is enabled. Enabling clears it.'),
};

export const webhookEndpointSchema = z.object(endpointShape).meta({ id: 'WebhookEndpoint', description: 'A receiver of the organization\'s events. The signing secret is never shown here.' });

export const webhookEndpointWithSecretSchema = z
  .object({
    ...endpointShape,
    secret: z
      .string()
      .describe('The signing secret (`whsec_` + base64 of 32 random bytes; Standard Webhooks). Returned by this call only: store it safely; it is stored encrypted and shown never again (rotate to get a new one).'),
  })
  .meta({ id: 'WebhookEndpointWithSecret', description: 'A new endpoint, with its signing secret.' });

export const webhookEndpointSecretSchema = z
  .object({
    object: z.literal('webhook_endpoint_secret'),
    endpoint_id: z.string(),
    secret: z.string().describe('The new signing secret (`whsec_` + base64 of 32 random bytes), shown this once.'),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .describe('Until then (24 hours) deliveries carry signatures with both the new and the previous secret, space-separated in `webhook-signature`.'),
  })
  .meta({ id: 'WebhookEndpointSecret', description: 'The answer of a secret rotation.' });

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const webhookDeliverySchema = z
  .object({
    object: z.literal('webhook_delivery'),
    id: z.string(),
    endpoint_id: z.string(),
    event_id: z.string().describe('The event delivered (GET /v2/events/{event_id}); also the `webhook-id` header of every attempt.'),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES).describe('pending: queued or waiting for its next attempt; succeeded: a 2xx answer; failed: every scheduled attempt failed (retry it by hand).'),
    attempts: z.number().int().describe('Attempts made so far.'),
    last_attempt_at: z.string().nullable(),
    next_attempt_at: z.string().nullable().describe('When the next attempt is due (pending only).'),
    last_status_code: z.number().int().nullable().describe('HTTP status of the last attempt; null when it got no answer.'),
    last_error: z.string().nullable().describe('What went wrong on the last attempt.'),
    created_at: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'WebhookDelivery', description: 'One event\'s delivery to one endpoint, with its attempts.' });
