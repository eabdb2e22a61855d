/** An out-of-office period as the API shows it (spec 2.6). */
import { isoTime } from '@rp/platform';
import type { OooRow } from '../store/ooo.js';

export function oooView(row: OooRow) {
  return {
    object: 'user_ooo' as const,
    id: row.id,
    user_id: row.user_id,
    backup_user_id: row.backup_user_id,
    created_by_id: row.created_by_id,
    start_date: row.start_date,
    end_date: row.end_date,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
