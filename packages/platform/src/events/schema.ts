/** The event envelope's API schema (`GET /v2/events`, and each webhook body with its own `data.object`). */
import { z } from 'zod';
import { EVENT_TYPES } from './catalogue.js';

export const eventTypeSchema = z.enum(EVENT_TYPES as [string, ...string[]]).meta({ id: 'EventType' });

/** The envelope with `data.object` typed by `object` (the generic one when omitted). */
export function eventEnvelopeShape(object: z.ZodType = z.record(z.string(), z.unknown()).describe('The resource exactly as the API returned it when the event was recorded; its schema per type is in the `webhooks` section.')) {
  return {
    id: z.string().describe('Event id (UUIDv7); also the `webhook-id` header of every delivery attempt.'),
    object: z.literal('event'),
    type: eventTypeSchema,
    created_at: z.string().describe('When the change was recorded (ISO 8601 UTC).'),
    data: z.object({ object }),
    previous_attributes: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('For `*.updated` and `*.health_changed` events: the fields that changed, with their values before the change.'),
  };
}

export const eventSchema = z.object(eventEnvelopeShape()).meta({ id: 'Event' });
