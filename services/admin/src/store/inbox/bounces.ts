/**
 * SQL of email bounces (admin schema, migration 016): recipient addresses a delivery-status
 * notification reported as failed, one row per address per organization (the latest bounce wins).
 */
import type { Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export interface BounceRow {
  organization_id: string;
  address: string;
  partner_id: string | null;
  inbox_message_id: string | null;
  status_code: string | null;
  diagnostic: string | null;
  bounced_at: Date;
  created_at: Date;
  modified_at: Date;
}

/** Records (or refreshes) a bounced address; the same message recorded twice changes nothing but modified_at. */
export async function upsertBounce(
  db: Q,
  b: { organization_id: string; address: string; partner_id: string | null; inbox_message_id: string; status_code: string | null; diagnostic: string | null },
): Promise<BounceRow> {
  const [row] = await db('email_bounces')
    .insert({ ...b, address: b.address.toLowerCase() })
    .onConflict(['organization_id', 'address'])
    .merge({
      partner_id: db.raw('COALESCE(EXCLUDED.partner_id, email_bounces.partner_id)'),
      inbox_message_id: b.inbox_message_id,
      status_code: b.status_code,
      diagnostic: b.diagnostic,
      bounced_at: db.raw('CASE WHEN email_bounces.inbox_message_id = EXCLUDED.inbox_message_id THEN email_bounces.bounced_at ELSE now() END'),
      modified_at: db.fn.now(),
    })
    .returning('*');
  return row as BounceRow;
}

/** Which of `addresses` (any case) bounce, lower case. */
export async function bouncingAmong(db: Q, org: string, addresses: readonly string[]): Promise<Set<string>> {
  const wanted = [...new Set(addresses.map((a) => a.toLowerCase()))];
  if (wanted.length === 0) return new Set();
  const rows = (await db('email_bounces').select('address').where({ organization_id: org }).whereIn('address', wanted)) as { address: string }[];
  return new Set(rows.map((r) => r.address));
}
