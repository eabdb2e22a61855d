/** The sync run's API shape (spec 2.2 "Sync run"). */
import { isoTime } from '@rp/platform';
import type { SyncRunRow } from '../store/sync-runs.js';

export function syncRunView(row: SyncRunRow) {
  return {
    object: 'sync_run' as const,
    id: row.id,
    connection_id: row.connection_id,
    model_id: row.model_id,
    model_name: row.model_name,
    entity_id: row.entity_id,
    file_id: row.file_id,
    status: row.status,
    attempt: row.attempt,
    batch_id: row.batch_id,
    is_initial_sync: row.is_initial_sync,
    is_one_off: row.is_one_off,
    pagination_state: row.pagination_state,
    records_synced: row.records_synced,
    timerange_start: isoTime(row.timerange_start),
    timerange_end: isoTime(row.timerange_end),
    started_at: isoTime(row.started_at),
    completed_at: isoTime(row.completed_at),
    error: row.error,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
