/**
 * What an admin does with an endpoint's deliveries: send it a test event, list its deliveries, and
 * deliver one again now. Rows are written first and the endpoint's workflow woken after the commit;
 * a wake that fails (Temporal unavailable) fails the request with 503 while the recorded change
 * stays, and repeating the request wakes it again.
 */
import { ConflictError, getEvent, NotFoundError, newId, recordEvent, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import { getEndpoint } from '../../store/webhooks/endpoints.js';
import { getDelivery, insertDelivery, listDeliveries, makeDeliveryDue } from '../../store/webhooks/deliveries.js';
import type { WebhookDeliveryRow, WebhookDeliveryStatus, WebhookEndpointRow } from '../../store/webhooks/rows.js';
import { webhookEndpointView } from '../../views/webhooks.js';
import type { WebhookDeps } from './endpoints.js';
import { wakeWebhookEndpoint } from './wake.js';

/** The endpoint locked for the change, 404 when it is not the organization's, 409 when it is disabled. */
async function enabledEndpoint(trx: Knex.Transaction, organizationId: string, id: string, what: string): Promise<WebhookEndpointRow> {
  const endpoint = await getEndpoint(trx, organizationId, id, { forUpdate: true });
  if (!endpoint) throw new NotFoundError(`No webhook endpoint ${id}.`);
  if (!endpoint.is_enabled) throw new ConflictError(`The webhook endpoint is disabled; enable it (PATCH is_enabled: true) before ${what}.`);
  return endpoint;
}

/**
 * Records a `webhook.test` event (its object: the endpoint as `GET` shows it) addressed to this
 * endpoint only, and queues its delivery, in one transaction; then wakes the endpoint's workflow.
 */
export async function sendTestEvent(deps: WebhookDeps, organizationId: string, endpointId: string): Promise<WebhookDeliveryRow> {
  const delivery = await deps.db.transaction(async (trx) => {
    const endpoint = await enabledEndpoint(trx, organizationId, endpointId, 'sending it a test event');
    const event = await recordEvent(trx, {
      organizationId,
      type: 'webhook.test',
      resourceId: endpointId,
      object: webhookEndpointView(endpoint),
      targetEndpointId: endpointId,
    });
    return insertDelivery(trx, {
      id: newId(),
      organization_id: organizationId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_source: 'admin',
      event_type: event.type,
      resource_key: `webhook_endpoint:${endpointId}`,
    });
  });
  await wakeWebhookEndpoint(deps.temporal, { organizationId, endpointId });
  return delivery;
}

/** A page of the endpoint's deliveries, newest first; 404 when the endpoint is not the organization's. */
export async function deliveriesOf(
  { db }: { db: Db },
  q: { organizationId: string; endpointId: string; status?: WebhookDeliveryStatus; offset: number; limit: number },
): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
  if (!(await getEndpoint(db, q.organizationId, q.endpointId))) throw new NotFoundError(`No webhook endpoint ${q.endpointId}.`);
  return listDeliveries(db, q);
}

/**
 * Delivers a delivery again now: pending, due now, its attempts kept (the retry schedule continues
 * from them, so a failure after the last scheduled attempt marks it failed again). 409 when its
 * event is no longer kept.
 */
export async function retryDelivery(deps: WebhookDeps, organizationId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryRow> {
  const delivery = await deps.db.transaction(async (trx) => {
    await enabledEndpoint(trx, organizationId, endpointId, 'retrying its deliveries');
    const current = await getDelivery(trx, organizationId, endpointId, deliveryId);
    if (!current) throw new NotFoundError(`No delivery ${deliveryId} of webhook endpoint ${endpointId}.`);
    // Deliveries live as long as their endpoint, events only as long as the log keeps them.
    if (!(await getEvent(trx, organizationId, '*', current.event_id))) {
      throw new ConflictError(`Event ${current.event_id} is no longer kept (events are kept EVENT_RETENTION_DAYS, default 30), so this delivery cannot be sent again.`);
    }
    return (await makeDeliveryDue(trx, organizationId, endpointId, deliveryId))!;
  });
  await wakeWebhookEndpoint(deps.temporal, { organizationId, endpointId });
  return delivery;
}
