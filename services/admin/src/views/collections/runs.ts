/** Collection runs and actions as the API shows them. */
import { isoTime } from '@rp/platform';
import type { RunCounts, RunRow } from '../../store/collections/runs.js';
import type { ActionRow } from '../../store/collections/actions.js';

export function collectionRunView(r: RunRow & RunCounts) {
  return {
    object: 'collection_run' as const,
    id: r.id,
    as_of_date: r.as_of_date,
    dry_run: r.dry_run,
    trigger: r.trigger,
    status: r.status,
    error: r.error,
    started_at: isoTime(r.started_at)!,
    completed_at: isoTime(r.completed_at),
    planned: Number(r.planned),
    sent: Number(r.sent),
    skipped: Number(r.skipped),
    failed: Number(r.failed),
  };
}

export function collectionActionView(a: ActionRow) {
  const ref = a.message_id_ref ?? null;
  return {
    object: 'collection_action' as const,
    id: a.id,
    run_id: a.run_id,
    partner_id: a.partner_id,
    policy_id: a.policy_id,
    step_index: a.step_index,
    offset_days: a.offset_days,
    channel: a.channel,
    invoice_ids: a.invoice_ids,
    status: a.status,
    skip_reason: a.skip_reason,
    sender_user_id: a.sender_user_id,
    email_id: a.channel === 'email' ? ref : null,
    sms_id: a.channel === 'sms' ? ref : null,
    task_id: a.channel === 'task' ? (a.task_id ?? null) : null,
    sent_at: isoTime(a.sent_at),
    error: a.error,
    created_at: isoTime(a.created_at)!,
  };
}
