/** SQL of webhook endpoints (admin schema, migration 011_events_webhooks). */
import type { Knex } from 'knex';
import type { Db } from '@rp/platform';
import type { WebhookEndpointRow } from './rows.js';

type Conn = Db | Knex.Transaction;

export type EndpointFields = Pick<WebhookEndpointRow, 'url' | 'events' | 'description' | 'is_enabled'>;

/** Serializes endpoint creation within an organization, so the per-organization cap holds under concurrent creates. */
export async function lockOrganizationEndpoints(trx: Knex.Transaction, organizationId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || ?, 0))`, [organizationId]);
}

export async function countEndpoints(db: Conn, organizationId: string): Promise<number> {
  const [{ n }] = await db('webhook_endpoints').where({ organization_id: organizationId }).count<{ n: string }[]>({ n: '*' });
  return Number(n);
}

export async function insertEndpoint(trx: Knex.Transaction, row: EndpointFields & { id: string; organization_id: string; secret_enc: string }): Promise<WebhookEndpointRow> {
  const [created] = await trx<WebhookEndpointRow>('webhook_endpoints')
    .insert({ ...row, disabled_at: row.is_enabled ? null : trx.fn.now() } as unknown as WebhookEndpointRow)
    .returning('*');
  return created;
}

export async function getEndpoint(db: Conn, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<WebhookEndpointRow | undefined> {
  const q = db<WebhookEndpointRow>('webhook_endpoints').where({ organization_id: organizationId, id });
  return (opts.forUpdate ? q.forUpdate() : q).first();
}

/** A page of the organization's endpoints, oldest first. */
export async function listEndpoints(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: WebhookEndpointRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db<WebhookEndpointRow>('webhook_endpoints').where({ organization_id: organizationId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(offset).limit(limit),
    countEndpoints(db, organizationId),
  ]);
  return { rows, total };
}

/**
 * Writes the changed fields. Disabling stamps `disabled_at`; enabling clears what the platform set
 * when it disabled the endpoint (`disabled_reason`, `disabled_at`, `failing_since`).
 */
export async function updateEndpoint(trx: Knex.Transaction, organizationId: string, id: string, fields: Partial<EndpointFields>): Promise<WebhookEndpointRow> {
  const changes: Record<string, unknown> = { ...fields, modified_at: trx.fn.now() };
  if (fields.is_enabled === true) Object.assign(changes, { disabled_reason: null, disabled_at: null, failing_since: null });
  if (fields.is_enabled === false) changes.disabled_at = trx.raw('coalesce(disabled_at, now())');
  const [row] = await trx<WebhookEndpointRow>('webhook_endpoints').where({ organization_id: organizationId, id }).update(changes).returning('*');
  return row;
}

/** Stores a new sealed secret; the current one becomes the previous one until `now() + interval`. */
export async function rotateEndpointSecret(trx: Knex.Transaction, organizationId: string, id: string, secretEnc: string, previousFor: string): Promise<WebhookEndpointRow> {
  const [row] = await trx<WebhookEndpointRow>('webhook_endpoints')
    .where({ organization_id: organizationId, id })
    .update({
      previous_secret_enc: trx.ref('secret_enc'),
      previous_secret_expires_at: trx.raw(`now() + ?::interval`, [previousFor]),
      secret_enc: secretEnc,
      modified_at: trx.fn.now(),
    } as unknown as Partial<WebhookEndpointRow>)
    .returning('*');
  return row;
}

/** Deletes the endpoint (its deliveries cascade); the row as it was, or undefined when it is not the organization's. */
export async function deleteEndpoint(db: Conn, organizationId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db<WebhookEndpointRow>('webhook_endpoints').where({ organization_id: organizationId, id }).delete().returning('*');
  return row;
}
