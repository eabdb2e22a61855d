/**
 * What a service declares about the events it records: for each type, the schema of `data.object`
 * (the resource's API schema) and an example. The kit renders the declarations as the OpenAPI
 * document's `webhooks` (one entry per event type), and the docs page lists them.
 */
import type { z } from 'zod';
import type { EventType } from './catalogue.js';

export interface EventDeclaration {
  type: EventType;
  /** schema of `data.object`: the resource as the API returns it (a named component schema) */
  object: z.ZodType;
  /** whether the event carries `previous_attributes` (the changed fields' earlier values) */
  previousAttributes?: boolean;
  /** an example `data.object` for the docs */
  example?: object;
}
