/**
 * The integration sync report's read: per connection of the organization and each of its
 * models, the connection's health, the model's last successful sync (ever), and its sync runs of the
 * period [start, end) — a run belongs to the period when it was created in it — counted by outcome,
 * with the records they synced and the distinct errors of the failed ones (most recent first, with
 * how often each occurred). A connection without models comes back once, with null model fields.
 */
import type { Db } from '@rp/platform';
import type { Health } from '../types.js';

export interface SyncReportRow {
  connection_id: string;
  connection_name: string;
  provider_name: string;
  health: Health | null;
  is_sync_disabled: boolean;
  is_authentication_pending: boolean;
  model_id: string | null;
  model_name: string | null;
  last_successful_sync: Date | null;
  completed: number;
  failed: number;
  cancelled: number;
  in_progress: number;
  records_synced: number;
  /** distinct errors of the period's failed runs, most recent first */
  errors: { error: string; occurrences: number }[];
}

export async function syncReportRows(db: Db, organizationId: string, periodStart: string, periodEnd: string): Promise<SyncReportRow[]> {
  const res = await db.raw(
    `SELECT c.id AS connection_id, c.name AS connection_name, c.provider_name, c.health, c.is_sync_disabled, c.is_authentication_pending,
        m.id AS model_id, m.name AS model_name, ok.last_successful_sync,
        coalesce(agg.completed, 0)::int AS completed, coalesce(agg.failed, 0)::int AS failed, coalesce(agg.cancelled, 0)::int AS cancelled,
        coalesce(agg.in_progress, 0)::int AS in_progress, coalesce(agg.records_synced, 0)::bigint::text AS records_synced,
        coalesce(err.errors, '[]'::json) AS errors
     FROM connections c
     LEFT JOIN connection_models m ON m.connection_id = c.id AND m.organization_id = c.organization_id
     LEFT JOIN LATERAL (
       SELECT max(r.completed_at) AS last_successful_sync FROM sync_runs r
       WHERE r.organization_id = c.organization_id AND r.model_id = m.id AND r.status = 'completed') ok ON true
     LEFT JOIN LATERAL (
       SELECT count(*) FILTER (WHERE r.status = 'completed') AS completed, count(*) FILTER (WHERE r.status = 'failed') AS failed,
              count(*) FILTER (WHERE r.status = 'cancelled') AS cancelled, count(*) FILTER (WHERE r.status IN ('scheduled', 'running')) AS in_progress,
              sum(r.records_synced) AS records_synced
       FROM sync_runs r
       WHERE r.organization_id = c.organization_id AND r.model_id = m.id AND r.created_at >= ?::timestamptz AND r.created_at < ?::timestamptz) agg ON true
     LEFT JOIN LATERAL (
       SELECT json_agg(json_build_object('error', e.error, 'occurrences', e.n) ORDER BY e.last DESC, e.error) AS errors
       FROM (SELECT r.error, count(*)::int AS n, max(coalesce(r.completed_at, r.modified_at)) AS last FROM sync_runs r
             WHERE r.organization_id = c.organization_id AND r.model_id = m.id AND r.status = 'failed' AND r.error IS NOT NULL
               AND r.created_at >= ?::timestamptz AND r.created_at < ?::timestamptz
             GROUP BY r.error) e) err ON true
     WHERE c.organization_id = ?
     ORDER BY c.name, c.created_at, c.id, m.name NULLS FIRST`,
    [periodStart, periodEnd, periodStart, periodEnd, organizationId],
  );
  return (res.rows as (Omit<SyncReportRow, 'records_synced'> & { records_synced: string })[]).map((r) => ({ ...r, records_synced: Number(r.records_synced) }));
}
