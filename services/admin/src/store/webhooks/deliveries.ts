/** SQL of webhook deliveries as the API sees them: the list, a test delivery, a manual retry. */
import type { Knex } from 'knex';
import type { Db } from '@rp/platform';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from './rows.js';

type Conn = Db | Knex.Transaction;

/** A page of one endpoint's deliveries, newest first (queue order breaks ties within one instant). */
export async function listDeliveries(
  db: Db,
  q: { organizationId: string; endpointId: string; status?: WebhookDeliveryStatus; offset: number; limit: number },
): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
  const base = () => {
    const b = db<WebhookDeliveryRow>('webhook_deliveries').where({ organization_id: q.organizationId, endpoint_id: q.endpointId });
    return q.status ? b.where({ status: q.status }) : b;
  };
  const [rows, [{ n }]] = await Promise.all([
    base().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'seq', order: 'desc' }]).offset(q.offset).limit(q.limit),
    base().count<{ n: string }[]>({ n: '*' }),
  ]);
  return { rows, total: Number(n) };
}

/** Queues a delivery of one event to one endpoint, due now. */
export async function insertDelivery(
  trx: Knex.Transaction,
  row: Pick<WebhookDeliveryRow, 'id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'event_source' | 'event_type' | 'resource_key'>,
): Promise<WebhookDeliveryRow> {
  const [created] = await trx<WebhookDeliveryRow>('webhook_deliveries')
    .insert({ ...row, status: 'pending', next_attempt_at: trx.fn.now() } as unknown as WebhookDeliveryRow)
    .returning('*');
  return created;
}

export async function getDelivery(db: Conn, organizationId: string, endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db<WebhookDeliveryRow>('webhook_deliveries').where({ organization_id: organizationId, endpoint_id: endpointId, id }).first();
}

/** Makes a delivery of the endpoint due now (pending), keeping its attempts; undefined when it is not that endpoint's. */
export async function makeDeliveryDue(db: Conn, organizationId: string, endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db<WebhookDeliveryRow>('webhook_deliveries')
    .where({ organization_id: organizationId, endpoint_id: endpointId, id })
    .update({ status: 'pending', next_attempt_at: db.fn.now(), modified_at: db.fn.now() } as unknown as Partial<WebhookDeliveryRow>)
    .returning('*');
  return row;
}
