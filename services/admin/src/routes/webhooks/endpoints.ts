/** Routes of webhook endpoints: create, list, get, change, delete, rotate the secret. Admins only. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../../deps.js';
import { createEndpoint, endpointOf, endpointsOf, MAX_ENDPOINTS_PER_ORGANIZATION, patchEndpoint, removeEndpoint, rotateSecret } from '../../domain/webhooks/endpoints.js';
import { webhookEndpointSecretView, webhookEndpointView, webhookEndpointWithSecretView } from '../../views/webhooks.js';
import {
  endpointDescriptionSchema,
  endpointEventsSchema,
  endpointUrlSchema,
  webhookEndpointSchema,
  webhookEndpointSecretSchema,
  webhookEndpointWithSecretSchema,
} from './schemas.js';

const MAX_PAGE = 100;
const TAGS = ['Webhook endpoints'];
const params = z.object({ webhook_endpoint_id: idSchema() });
const NOT_FOUND = 'Another organization\'s endpoint is indistinguishable from a missing one (404).';

export const webhookEndpointRoutes = [
  route({
    method: 'post',
    path: '/v2/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    description:
      'Events of the subscribed types are POSTed to `url`, signed per the Standard Webhooks specification with the endpoint\'s secret ' +
      '(returned in `secret` by this call only). An organization has at most ' +
      `${MAX_ENDPOINTS_PER_ORGANIZATION} endpoints; one more is 409 \`conflict\`. Only events recorded after the endpoint exists are delivered to it ` +
      '(earlier ones are in GET /v2/events).',
    tags: TAGS,
    auth: { role: 'admin' },
    body: z.object({
      url: endpointUrlSchema,
      events: endpointEventsSchema,
      description: endpointDescriptionSchema.optional(),
      is_enabled: z.boolean().optional().describe('Default true; false creates it paused.'),
    }),
    response: webhookEndpointWithSecretSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => {
      const { row, secret } = await createEndpoint(deps, identity.org, body);
      return webhookEndpointWithSecretView(row, secret) as z.input<typeof webhookEndpointWithSecretSchema>;
    },
  }),
  route({
    method: 'get',
    path: '/v2/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints',
    description: 'The organization\'s endpoints, oldest first. Secrets are never listed.',
    tags: TAGS,
    auth: { role: 'admin' },
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(webhookEndpointSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await endpointsOf(deps, identity.org, page);
      return pageOf(rows.map(webhookEndpointView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}',
    operationId: 'getWebhookEndpoint',
    summary: 'Get a webhook endpoint',
    description: `The endpoint, without its secret. ${NOT_FOUND}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params,
    response: webhookEndpointSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => webhookEndpointView(await endpointOf(deps, identity.org, p.webhook_endpoint_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    description:
      'Only the fields present change, with the rules of creation. A new `events` list applies to events recorded from then on. ' +
      '`is_enabled: false` pauses delivery (queued deliveries stay pending; nothing new is queued meanwhile); `is_enabled: true` clears ' +
      `\`disabled_reason\` and resumes the pending deliveries at once. ${NOT_FOUND}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params,
    body: z.object({
      url: endpointUrlSchema.optional(),
      events: endpointEventsSchema.optional(),
      description: endpointDescriptionSchema.optional(),
      is_enabled: z.boolean().optional().describe('false pauses delivery; true resumes it (and clears `disabled_reason`).'),
    }),
    response: webhookEndpointSchema,
    errors: [404],
    handler: async ({ params: p, body, identity, deps }) => webhookEndpointView(await patchEndpoint(deps, identity.org, p.webhook_endpoint_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description:
      'Deletes the endpoint and its deliveries for good and answers it as it was (200). Pending deliveries stop: none is attempted after the ' +
      `delete (an attempt already in flight may still arrive). ${NOT_FOUND}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params,
    response: webhookEndpointSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps, log }) => webhookEndpointView(await removeEndpoint(deps, identity.org, p.webhook_endpoint_id, log)),
  }),
  route({
    method: 'post',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    summary: 'Rotate a webhook endpoint\'s secret',
    description:
      'Issues a new secret, shown in this answer only. For 24 hours deliveries carry two signatures (new and previous secret, ' +
      'space-separated in `webhook-signature`), so receivers can switch without losing events. Rotating again within those 24 hours makes the ' +
      `secret current until now the previous one (the older one stops signing at once). ${NOT_FOUND}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params,
    response: webhookEndpointSecretSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => {
      const { row, secret } = await rotateSecret(deps, identity.org, p.webhook_endpoint_id);
      return webhookEndpointSecretView(row, secret);
    },
  }),
];
