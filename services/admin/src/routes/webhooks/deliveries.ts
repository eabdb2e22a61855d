/** Routes of an endpoint's deliveries: send a test event, list deliveries, retry one. Admins only. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../../deps.js';
import { deliveriesOf, retryDelivery, sendTestEvent } from '../../domain/webhooks/deliveries.js';
import { webhookDeliveryView } from '../../views/webhooks.js';
import { DELIVERY_STATUSES, webhookDeliverySchema } from './schemas.js';

const MAX_PAGE = 200;
const TAGS = ['Webhook endpoints'];
const WAKE =
  'If the delivery worker cannot be reached (503 with Retry-After), what was recorded stays and sending the request again wakes delivery.';

export const webhookDeliveryRoutes = [
  route({
    method: 'post',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}/test',
    operationId: 'testWebhookEndpoint',
    summary: 'Send a test event to a webhook endpoint',
    description:
      'Records a `webhook.test` event (its `data.object` is the endpoint, without secret; it is in GET /v2/events) addressed to this ' +
      'endpoint only, whatever it subscribes to, and queues its delivery. Answers 202 with the queued delivery; follow it in the deliveries ' +
      `list. A disabled endpoint is 409 \`conflict\`. ${WAKE}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params: z.object({ webhook_endpoint_id: idSchema() }),
    response: webhookDeliverySchema,
    status: 202,
    errors: [404, 409, 503],
    handler: async ({ params, identity, deps }) => webhookDeliveryView(await sendTestEvent(deps, identity.org, params.webhook_endpoint_id)),
  }),
  route({
    method: 'get',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List a webhook endpoint\'s deliveries',
    description: 'Newest first. Deliveries are kept as long as their endpoint; the events they carry as long as the event log keeps them.',
    tags: TAGS,
    auth: { role: 'admin' },
    params: z.object({ webhook_endpoint_id: idSchema() }),
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this status.'),
    }),
    response: pageEnvelopeSchema(webhookDeliverySchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await deliveriesOf(deps, {
        organizationId: identity.org,
        endpointId: params.webhook_endpoint_id,
        status: query.status,
        offset: page.offset,
        limit: page.pageSize,
      });
      return pageOf(rows.map(webhookDeliveryView), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry',
    operationId: 'retryWebhookDelivery',
    summary: 'Deliver again now',
    description:
      'Makes the delivery pending and due now, whatever its status (a succeeded one is sent again, with the same `webhook-id`). Its ' +
      '`attempts` are kept: the retry schedule continues from them, so a failure after the last scheduled attempt marks it failed again ' +
      `(retry it again by hand). Answers 202 with the delivery. A disabled endpoint, or a delivery whose event the log no longer keeps ` +
      `(events are kept 30 days by default, deliveries as long as their endpoint), is 409 \`conflict\`. ${WAKE}`,
    tags: TAGS,
    auth: { role: 'admin' },
    params: z.object({ webhook_endpoint_id: idSchema(), delivery_id: idSchema() }),
    response: webhookDeliverySchema,
    status: 202,
    errors: [404, 409, 503],
    handler: async ({ params, identity, deps }) => webhookDeliveryView(await retryDelivery(deps, identity.org, params.webhook_endpoint_id, params.delivery_id)),
  }),
];
