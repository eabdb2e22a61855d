/** Webhook deliveries past the event retention: deleted with their events (kernel events/retention.ts). */
import type { Knex } from 'knex';

/**
 * Deletes at most `limit` deliveries queued before `before`, whatever their status: a delivery is
 * only ever sent with its event's body, and the event is pruned at the same cutoff.
 */
export async function pruneWebhookDeliveries(db: Knex, before: Date, limit: number): Promise<number> {
  const { rowCount } = await db.raw<{ rowCount: number }>(
    `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    [before, limit],
  );
  return rowCount;
}
