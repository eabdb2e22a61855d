/** The event log: what happened in the organization, for consumers that poll or catch up after missed webhooks. v2. */
import { z } from 'zod';
import { EVENT_TYPES, eventSchema, idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, type EventType } from '@rp/platform';
import { route } from '../deps.js';
import { eventOf, eventsOf } from '../domain/events.js';
import { eventView } from '../views/events.js';

const MAX_PAGE = 200;

const typesQuery = z
  .union([z.string().max(2000), z.array(z.string().max(100)).max(EVENT_TYPES.length)])
  .transform((v) => [...new Set((Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()))])
  .pipe(z.array(z.enum(EVENT_TYPES as [EventType, ...EventType[]])).min(1).max(EVENT_TYPES.length))
  .optional()
  .describe('Event types, the parameter repeated (`type=payment.posted&type=payment.approved`) or comma-separated; an unknown type is 422.');

const instant = (what: string) => z.iso.datetime({ offset: true }).optional().describe(`Only events recorded ${what} this instant (ISO 8601 with offset; exclusive, compared to the millisecond as \`created_at\` is shown, so the \`created_at\` of the last event seen returns only later ones).`);

export const eventRoutes = [
  route({
    method: 'get',
    path: '/v2/events',
    operationId: 'listEvents',
    summary: 'List events',
    description:
      'The organization\'s events, newest first (`created_at`, then id). Every change that emits a webhook records an event in the ' +
      'same transaction, so this log is complete: a consumer that missed deliveries catches up from here. Events are kept ' +
      '30 days by default (EVENT_RETENTION_DAYS). A member sees the events of resources within their business units (and those tied to none), ' +
      'like the resources themselves. The catalogue of types, with the schema of each `data.object`, is the `webhooks` section.',
    tags: ['Events'],
    auth: { credentials: ['user', 'api_key'] },
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      type: typesQuery,
      created_after: instant('after'),
      created_before: instant('before'),
    }),
    response: pageEnvelopeSchema(eventSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await eventsOf(deps, {
        organizationId: identity.org,
        scope: identity.bu,
        types: query.type,
        createdAfter: query.created_after ? new Date(query.created_after) : undefined,
        createdBefore: query.created_before ? new Date(query.created_before) : undefined,
        offset: page.offset,
        limit: page.pageSize,
      });
      return pageOf(rows.map(eventView) as z.input<typeof eventSchema>[], total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/events/{event_id}',
    operationId: 'getEvent',
    summary: 'Get an event',
    description: 'One event of the organization (within a member\'s business units). Unknown, expired or another organization\'s id: 404.',
    tags: ['Events'],
    auth: { credentials: ['user', 'api_key'] },
    params: z.object({ event_id: idSchema() }),
    response: eventSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => eventView(await eventOf(deps, identity.org, identity.bu, params.event_id)) as z.input<typeof eventSchema>,
  }),
];
