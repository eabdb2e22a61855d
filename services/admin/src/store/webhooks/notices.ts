/**
 * The email intent of an endpoint disabled by delivery (410 Gone, or failing for days): an
 * outbound-email row (kind `webhook-disabled`) written in the transaction that disables the
 * endpoint, keyed by the endpoint and the moment it was disabled, so each disabling is told once.
 */
import type { Knex } from 'knex';
import type { Db } from '@rp/platform';
import { claimEmail } from '../emails.js';
import type { WebhookEndpointRow } from './rows.js';

export function disabledNoticeKey(endpointId: string, disabledAt: Date): string {
  return `webhook-disabled-${endpointId}-${disabledAt.getTime()}`;
}

export function disabledNoticeSubject(endpoint: Pick<WebhookEndpointRow, 'url'>): string {
  return `Webhook endpoint disabled: ${endpoint.url}`.slice(0, 300);
}

/** The organization's active admins' addresses (the notice's recipients). */
export async function activeAdminEmails(db: Db | Knex.Transaction, organizationId: string): Promise<string[]> {
  const rows = await db('users').select('email').where({ organization_id: organizationId, role: 'admin' }).whereNull('deactivated_at').orderBy('email');
  return rows.map((r: { email: string }) => r.email);
}

/** Records the intent (inside the disabling transaction); none when the organization has no active admin. */
export async function recordDisabledNotice(trx: Knex.Transaction, endpoint: WebhookEndpointRow): Promise<void> {
  const to = await activeAdminEmails(trx, endpoint.organization_id);
  if (!to.length || !endpoint.disabled_at) return;
  await claimEmail(trx, { organizationId: endpoint.organization_id, idempotencyKey: disabledNoticeKey(endpoint.id, endpoint.disabled_at), kind: 'webhook-disabled', to: to.join(', '), subject: disabledNoticeSubject(endpoint) });
}

/** The key of the notice of this disabling, when delivery recorded one (a user's disabling has none). */
export async function findDisabledNotice(db: Db, endpointId: string, disabledAt: Date): Promise<string | null> {
  const key = disabledNoticeKey(endpointId, disabledAt);
  const row = await db('outbound_emails').select('id').where({ idempotency_key: key }).first();
  return row ? key : null;
}
