/**
 * Temporal Schedules of report configs: `report-<organization id>-<report type>`, a calendar spec at the
 * config's time in the organization's IANA timezone (07:30 stays 07:30 local on both sides of a
 * daylight-saving change), overlap policy SKIP and a catch-up window of REPORT_CATCHUP_WINDOW.
 *
 * Daylight-saving days: a time in the hour clocks go back over occurs twice and Temporal may start an action
 * for each instant; a time in the hour clocks go forward over does not exist and Temporal starts none. The
 * Schedule therefore carries dated entries at the first valid minute after each skipped time
 * (reportCalendars), and the run's idempotency key is the local period (scheduledRunKey): exactly one report
 * per local period.
 *
 * Consistency with the database (the config row is the source of truth):
 * - create / update call Temporal inside the database transaction, before the commit: a Temporal failure
 *   rolls the row back (503, nothing changed). Upserts are idempotent (create, or replace when the Schedule
 *   exists), so a retried request converges.
 * - a timezone change touches every Schedule of the organization: it commits first and then starts the
 *   organization's reconcile workflow (reconcileOrganizationSchedules), which rewrites each Schedule from the
 *   committed state, each step retried until it succeeds. Should the start itself fail (Temporal away), the
 *   change stays committed and the next start converges: another PATCH of the timezone (the same value
 *   too), or the next action of a Schedule still in the old timezone, which notices and starts it.
 * - a commit that fails after the Temporal call leaves a Schedule whose config does not exist (or is older):
 *   the Schedule's next run finds no config, deletes the orphaned Schedule and sends nothing; the next
 *   create or PATCH of that config replaces the Schedule wholesale.
 * - delete commits the row first and then deletes the Schedule (a failure there is logged; the orphan
 *   deletes itself at its next action, as above).
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { activityRetryWindowMinutes, withTemporalDeadline } from '@rp/platform';
import {
  businessSearchAttributes,
  organizationSchedules,
  organizationSchedulesChanged,
  organizationSchedulesWorkflowId,
  reportScheduleId,
  scheduledReport,
  scheduledReportWorkflowId,
  TASK_QUEUES,
} from '@rp/workflows';
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

const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Offset (ms) of `timezone` from UTC at `instant` (whole seconds). */
export function zoneOffset(instant: number, timezone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(instant))
      .filter((p) => p.type !== 'literal')
      .map((p) => [p.type, Number(p.value)]),
  ) as Record<string, number>;
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - Math.floor(instant / 1000) * 1000;
}

export interface SkippedRunTime {
  /** the local date on which `time` does not exist */
  date: string;
  /** the first valid local minute after it (the end of the gap), HH:MM, on `runDate` */
  runAt: string;
  runDate: string;
}

/**
 * The local dates of the years `fromYear..toYear` on which the local time `time` (HH:MM) does not exist in
 * `timezone` because clocks go forward over it, each with the first valid local minute after the gap.
 * Temporal's calendar never fires for a time that does not exist; the Schedule adds one dated entry at that
 * minute for each such day (reportCalendars). Found by comparing the offsets at consecutive UTC noons and
 * narrowing the change down to the minute.
 */
export function skippedRunTimes(time: string, timezone: string, fromYear: number, toYear: number): SkippedRunTime[] {
  const [hh, mm] = time.split(':').map(Number) as [number, number];
  const out: SkippedRunTime[] = [];
  const end = Date.UTC(toYear + 1, 0, 1, 12);
  let t = Date.UTC(fromYear, 0, 1, 12);
  let before = zoneOffset(t, timezone);
  for (; t < end; t += DAY_MS) {
    const after = zoneOffset(t + DAY_MS, timezone);
    if (after > before) {
      // the change happens in (t, t + 1 day]: narrow it to the minute (offsets change on whole minutes)
      let lo = t;
      let hi = t + DAY_MS;
      while (hi - lo > MINUTE_MS) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
        if (zoneOffset(mid, timezone) === before) lo = mid;
        else hi = mid;
      }
      // local wall-clock times, written as UTC values: [gapStart, gapEnd) does not exist
      const gapStart = hi + before;
      const gapEnd = hi + after;
      for (const day of new Set([new Date(gapStart).toISOString().slice(0, 10), new Date(gapEnd - 1).toISOString().slice(0, 10)])) {
        const [y, m, d] = day.split('-').map(Number) as [number, number, number];
        const wanted = Date.UTC(y, m - 1, d, hh, mm);
        if (wanted >= gapStart && wanted < gapEnd) {
          const run = new Date(gapEnd).toISOString();
          out.push({ date: day, runDate: run.slice(0, 10), runAt: run.slice(11, 16) });
        }
      }
    }
    before = after;
  }
  return out;
}

/**
 * Years whose skipped times the Schedule carries: last year (backfills) to two years ahead. Every upsert renews
 * them, and every scheduled action compares the Schedule with what the committed state makes and starts the
 * organization's reconcile when they differ (activities/scheduled-report.ts), so the entries never run out.
 */
function scheduleYears(now = new Date()): [number, number] {
  return [now.getUTCFullYear() - 1, now.getUTCFullYear() + 2];
}

/**
 * The Schedule's calendars: the config's calendar, plus for each day on which its time is skipped by a
 * daylight-saving change (and on which the config runs: every day, its weekday, or the 1st) one entry dated
 * that day at the first valid minute after the gap, so the report of that period still runs. The run's
 * idempotency key is the local period (scheduledRunKey), so an extra entry never makes a second report.
 */
export function reportCalendars(config: Pick<ReportConfigRow, 'frequency' | 'time' | 'weekday'>, timezone: string, years = scheduleYears()) {
  const base = reportCalendar(config);
  const extra = skippedRunTimes(config.time, timezone, years[0], years[1])
    .filter(({ date }) => {
      const [y, m, d] = date.split('-').map(Number) as [number, number, number];
      if (config.frequency === 'weekly') return (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7 === (config.weekday ?? 0);
      if (config.frequency === 'monthly') return d === 1;
      return true;
    })
    .map(({ date, runDate, runAt }) => {
      const [y, m, d] = runDate.split('-').map(Number) as [number, number, number];
      const [hour, minute] = runAt.split(':').map(Number) as [number, number];
      return { year: y, month: MONTHS[m - 1]!, dayOfMonth: d, hour, minute, second: 0, comment: `${config.time} does not exist on ${date} (clocks go forward): runs at ${runAt}` };
    });
  return [base, ...extra];
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
    spec: { calendars: reportCalendars(config, timezone), timezone },
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
  await upsertSchedule(temporal, scheduleOptions(config, timezone));
}

/**
 * Creates a Schedule, or replaces an existing one's spec, action, policies and paused state (its
 * running workflows and history stay): the write of every Schedule admin owns, under the Temporal deadline.
 */
export async function upsertSchedule(temporal: Client, opts: ScheduleOptions): Promise<void> {
  await withTemporalDeadline(temporal, async () => {
    try {
      await temporal.schedule.create(opts);
      return;
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
    await temporal.schedule
      .getHandle(opts.scheduleId)
      .update(() => ({ spec: opts.spec, action: opts.action, policies: opts.policies, state: { paused: opts.state?.paused ?? false, note: opts.state?.note } }));
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

/**
 * Starts the organization's Schedule reconcile (`organization-schedules-<organization id>`), or, when one is
 * running, tells it to make another pass: signal-with-start, so concurrent changes never start two.
 */
export async function reconcileOrganizationSchedules(temporal: Client, organizationId: string): Promise<void> {
  await withTemporalDeadline(temporal, () =>
    temporal.workflow.signalWithStart(organizationSchedules, {
      workflowId: organizationSchedulesWorkflowId(organizationId),
      taskQueue: TASK_QUEUES.admin,
      args: [{ organizationId }],
      signal: organizationSchedulesChanged,
      typedSearchAttributes: businessSearchAttributes(organizationId, organizationId),
    }),
  );
}
