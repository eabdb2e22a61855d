/** A follow-up task as the API shows it. */
import { isoTime } from '@rp/platform';
import type { TaskRow } from '../../store/collections/tasks.js';

export function taskView(r: TaskRow) {
  return {
    object: 'task' as const,
    id: r.id,
    partner_id: r.partner_id,
    action_id: r.action_id,
    assignee_id: r.assignee_id,
    title: r.title,
    invoice_ids: r.invoice_ids,
    status: r.status,
    note: r.note,
    due_date: r.due_date,
    completed_at: isoTime(r.completed_at),
    completed_by: r.completed_by,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
