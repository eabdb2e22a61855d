/** Report configs and their runs as the API shows them (spec 2.3). */
import { isoTime } from '@rp/platform';
import type { ReportConfigRow, ReportRunRow } from '../store/report-configs.js';

export function reportConfigView(row: ReportConfigRow) {
  return {
    object: 'report_config' as const,
    id: row.id,
    report_type: row.report_type,
    is_enabled: row.is_enabled,
    frequency: row.frequency,
    time: row.time,
    weekday: row.weekday,
    recipient_emails: row.recipient_emails,
    cc_emails: row.cc_emails,
    last_sent_at: isoTime(row.last_sent_at),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

export function reportRunView(row: ReportRunRow) {
  return {
    object: 'report_run' as const,
    id: row.id,
    config_id: row.config_id,
    report_type: row.report_type,
    trigger: row.trigger,
    scheduled_for: isoTime(row.scheduled_for)!,
    status: row.status,
    as_of_date: row.as_of_date,
    period_start: isoTime(row.period_start),
    period_end: isoTime(row.period_end),
    row_count: row.row_count,
    counts: row.counts ?? {},
    files: row.delivery ?? [],
    sent_at: isoTime(row.sent_at),
    error: row.error,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
