/**
 * Temporal Schedules of report configs: `report-<organization id>-<report type>`, a calendar spec at the
 * config's time in the organization's IANA timezone (Temporal resolves daylight-saving changes: 07:30 stays
 * 07:30 local on both sides), overlap policy SKIP and a catch-up window of REPORT_CATCHUP_WINDOW.
 *
 * Consistency with the database (the config row is the source of truth):
 * - create / update / timezone change call Temporal inside the database transaction, before the commit: a
 *   Temporal failure rolls the row back (503, nothing changed). Upserts are idempotent (create, or replace
 *   when the Schedule exists), so a retried request converges.
 * - a commit that fails after the Temporal call leaves a Schedule whose config does not exist (or is older):
 *   the Schedule's next run finds no config, deletes the orphaned Schedule and sends nothing; the next
 *   create or PATCH of that config replaces the Schedule wholesale.
 * - delete commits the row first and then deletes the Schedule (a failure there is logged; the orphan
 *   deletes itself at its next action, as above).
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { activityRetryWindowMinutes, withTemporalDeadline } from '@rp/platform';
import { businessSearchAttributes, reportScheduleId, scheduledReport, scheduledReportWorkflowId, TASK_QUEUES } from '@rp/workflows';
import type { ReportConfigRow } from '../store/report-configs.js';

/** A short outage (Temporal or the workers down for up to 6 hours) still sends; a longer one skips the missed runs. */
export const REPORT_CATCHUP_WINDOW = '6 hours';

const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;

/** The calendar of a config: at `time` daily, on `weekday` (0 = Monday) weekly, on the 1st monthly. */
export function reportCalendar(config: Pick<ReportConfigRow, 'frequency' | 'time' | 'weekday'>) {
  const [hour, minute] = config.time.split(':').map(Number) as [number, number];
  const base = { hour, minute, second: 0, comment: `${config.frequency} at ${config.time}` };
  if (config.frequency === 'weekly') return { ...base, dayOfWeek: DAYS[config.weekday ?? 0] };
  if (config.frequency === 'monthly') return { ...base, dayOfMonth: 1 };
  return base;
}

/** The canonical spelling of an IANA name (`europe/berlin` → `Europe/Berlin`): Temporal's zone lookup is case-sensitive. */
export function canonicalTimezone(timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return timezone;
  }
}

function scheduleOptions(config: ReportConfigRow, zone: string): ScheduleOptions {
  const timezone = canonicalTimezone(zone);
  return {
    scheduleId: reportScheduleId(config.organization_id, config.report_type),
    spec: { calendars: [reportCalendar(config)], timezone },
    action: {
      type: 'startWorkflow',
      workflowType: scheduledReport,
      workflowId: scheduledReportWorkflowId(config.id),
      taskQueue: TASK_QUEUES.admin,
      args: [{ organizationId: config.organization_id, configId: config.id, retryWindowMinutes: activityRetryWindowMinutes() }],
      typedSearchAttributes: businessSearchAttributes(config.organization_id, config.id),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: REPORT_CATCHUP_WINDOW },
    state: { paused: !config.is_enabled, note: config.is_enabled ? undefined : 'report config disabled (is_enabled = false)' },
    typedSearchAttributes: businessSearchAttributes(config.organization_id, config.id),
  };
}

/** Creates the config's Schedule, or replaces the existing one's spec, action, policies and paused state. */
export async function upsertReportSchedule(temporal: Client, config: ReportConfigRow, timezone: string): Promise<void> {
  const opts = scheduleOptions(config, timezone);
  await withTemporalDeadline(temporal, async () => {
    try {
      await temporal.schedule.create(opts);
      return;
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
    await temporal.schedule
      .getHandle(opts.scheduleId)
      .update(() => ({ spec: opts.spec, action: opts.action, policies: opts.policies, state: { paused: opts.state!.paused ?? false, note: opts.state!.note } }));
  });
}

/** Deletes the Schedule (already gone: nothing to do). */
export async function deleteReportSchedule(temporal: Client, organizationId: string, reportType: string): Promise<void> {
  await withTemporalDeadline(temporal, async () => {
    try {
      await temporal.schedule.getHandle(reportScheduleId(organizationId, reportType)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  });
}
