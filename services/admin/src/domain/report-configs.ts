/**
 * Report configs (spec 2.3): one per report type per organization, each a Temporal Schedule
 * (report-schedules.ts). Rules beyond the body schema (they depend on the stored config on PATCH):
 * `weekday` is required for weekly and refused otherwise; recipients and cc together at most 50.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { activityRetryWindowMinutes, ConflictError, NotFoundError, ValidationError, withTemporalDeadline, type Db, type ValidationIssue } from '@rp/platform';
import { businessSearchAttributes, scheduledReport, scheduledReportWorkflowId, TASK_QUEUES } from '@rp/workflows';
import type { Knex } from 'knex';
import { lockOrganizationTimezone, setOrganizationTimezone } from '../store/organizations.js';
import {
  claimReportRun,
  deleteReportConfig,
  getReportConfig,
  insertReportConfig,
  listReportConfigs,
  listReportRuns,
  updateReportConfig,
  type Frequency,
  type ReportConfigFields,
  type ReportConfigRow,
  type ReportRunRow,
} from '../store/report-configs.js';
import { canonicalTimezone, deleteReportSchedule, reconcileOrganizationSchedules, upsertReportSchedule, zoneOffset } from './report-schedules.js';
import { newId } from '@rp/platform';

export const MAX_RECIPIENTS = 50;

export interface ReportConfigDeps {
  db: Db;
  temporal: Client;
  log?: Logger;
}

/** 422s of the rules that span fields (checked on the config as it would be stored). */
function checkRules(fields: ReportConfigFields, sent: { weekday: boolean }): void {
  const issues: ValidationIssue[] = [];
  if (fields.frequency === 'weekly' && fields.weekday === null) {
    issues.push({ loc: ['body', 'weekday'], msg: 'is required for a weekly report (0 = Monday … 6 = Sunday)', type: 'missing' });
  }
  if (fields.frequency !== 'weekly' && fields.weekday !== null && sent.weekday) {
    issues.push({ loc: ['body', 'weekday'], msg: `is only used by weekly reports; omit it (or send null) for a ${fields.frequency} report`, type: 'value_error' });
  }
  if (fields.recipient_emails.length + fields.cc_emails.length > MAX_RECIPIENTS) {
    issues.push({ loc: ['body', 'cc_emails'], msg: `recipients and cc together must be at most ${MAX_RECIPIENTS}`, type: 'too_long' });
  }
  if (issues.length) throw new ValidationError(issues);
}

const duplicate = (type: string) => new ConflictError(`This organization already has a ${type} config; change it (PATCH) or delete it first.`);

/** The timezone the Schedule is written with; a concurrent timezone change waits for this transaction (and vice versa). */
async function timezoneOf(trx: Knex.Transaction, organizationId: string): Promise<string> {
  return (await lockOrganizationTimezone(trx, organizationId)) ?? 'UTC';
}

export interface NewReportConfig {
  report_type: ReportConfigRow['report_type'];
  frequency: Frequency;
  time: string;
  weekday?: number | null;
  recipient_emails: string[];
  cc_emails?: string[];
  is_enabled?: boolean;
}

export async function createReportConfig(deps: ReportConfigDeps, organizationId: string, body: NewReportConfig): Promise<ReportConfigRow> {
  const fields: ReportConfigFields = {
    report_type: body.report_type,
    frequency: body.frequency,
    time: body.time,
    weekday: body.weekday ?? null,
    recipient_emails: body.recipient_emails,
    cc_emails: body.cc_emails ?? [],
    is_enabled: body.is_enabled ?? true,
  };
  checkRules(fields, { weekday: body.weekday !== undefined && body.weekday !== null });
  return deps.db.transaction(async (trx) => {
    // The unique index decides: a concurrent create of the same type waits for this transaction, then conflicts.
    const row = await insertReportConfig(trx, organizationId, fields);
    if (!row) throw duplicate(body.report_type);
    await upsertReportSchedule(deps.temporal, row, await timezoneOf(trx, organizationId));
    return row;
  });
}

/** A page of the organization's report configs, by report type. */
export async function reportConfigsOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listReportConfigs(db, organizationId, page.offset, page.pageSize);
}

export async function reportConfigOrThrow({ db }: { db: Db }, organizationId: string, id: string): Promise<ReportConfigRow> {
  const row = await getReportConfig(db, organizationId, id);
  if (!row) throw new NotFoundError(`No report config ${id}.`);
  return row;
}

export type ReportConfigChange = Partial<Omit<NewReportConfig, 'report_type'>>;

export async function changeReportConfig(deps: ReportConfigDeps, organizationId: string, id: string, body: ReportConfigChange): Promise<ReportConfigRow> {
  return deps.db.transaction(async (trx) => {
    const current = await getReportConfig(trx, organizationId, id, { forUpdate: true });
    if (!current) throw new NotFoundError(`No report config ${id}.`);
    const frequency = body.frequency ?? current.frequency;
    // Moving away from weekly drops the stored weekday (unless the body sends one, which is refused).
    const weekday = body.weekday !== undefined ? body.weekday : frequency === 'weekly' ? current.weekday : null;
    const fields: ReportConfigFields = {
      report_type: current.report_type,
      frequency,
      time: body.time ?? current.time,
      weekday,
      recipient_emails: body.recipient_emails ?? current.recipient_emails,
      cc_emails: body.cc_emails ?? current.cc_emails,
      is_enabled: body.is_enabled ?? current.is_enabled,
    };
    checkRules(fields, { weekday: body.weekday !== undefined && body.weekday !== null });
    const row = (await updateReportConfig(trx, organizationId, id, {
      frequency: fields.frequency,
      time: fields.time,
      weekday: fields.weekday,
      recipient_emails: fields.recipient_emails,
      cc_emails: fields.cc_emails,
      is_enabled: fields.is_enabled,
    }))!;
    await upsertReportSchedule(deps.temporal, row, await timezoneOf(trx, organizationId));
    return row;
  });
}

export async function removeReportConfig(deps: ReportConfigDeps, organizationId: string, id: string): Promise<ReportConfigRow> {
  const row = await deps.db.transaction(async (trx) => deleteReportConfig(trx, organizationId, id));
  if (!row) throw new NotFoundError(`No report config ${id}.`);
  try {
    await deleteReportSchedule(deps.temporal, organizationId, row.report_type);
  } catch (err) {
    // The row is gone: the Schedule's next action finds no config and deletes the Schedule itself.
    deps.log?.warn({ err, config_id: id }, 'report schedule not deleted; it deletes itself at its next action');
  }
  return row;
}

/** Send now: records a manual run and starts the report workflow for it (the run is the answer). */
export async function sendReportNow(deps: ReportConfigDeps, organizationId: string, id: string): Promise<ReportRunRow> {
  const config = await reportConfigOrThrow(deps, organizationId, id);
  return deps.db.transaction(async (trx) => {
    const runId = newId();
    const run = await claimReportRun(trx, {
      id: runId,
      organizationId,
      configId: config.id,
      reportType: config.report_type,
      trigger: 'manual',
      idempotencyKey: `manual:${runId}`,
      scheduledFor: new Date(),
    });
    // Started before the commit: if Temporal refuses, no run is recorded; if the commit fails, the
    // workflow's first activity finds no run of this id and records it (same id, same key).
    await withTemporalDeadline(deps.temporal, () =>
      deps.temporal.workflow.start(scheduledReport, {
        taskQueue: TASK_QUEUES.admin,
        workflowId: scheduledReportWorkflowId(config.id, run.id),
        args: [{ organizationId, configId: config.id, runId: run.id, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(organizationId, config.id),
      }),
    );
    return run;
  });
}

export async function reportRunsOf({ db }: { db: Db }, organizationId: string, id: string, page: { offset: number; pageSize: number }) {
  await reportConfigOrThrow({ db }, organizationId, id);
  return listReportRuns(db, organizationId, id, page.offset, page.pageSize);
}

/**
 * Changes the organization's timezone, then (after the commit) starts the reconcile workflow that moves every
 * report Schedule of the organization to it, one by one with retries, from the committed state. A failed start
 * is logged and the change stands: the next change (or the same timezone sent again) or a stale Schedule's next
 * action starts the reconcile again (report-schedules.ts).
 */
export async function changeOrganizationTimezone(deps: ReportConfigDeps, organizationId: string, zone: string) {
  const timezone = canonicalTimezone(zone);
  const org = await deps.db.transaction(async (trx) => setOrganizationTimezone(trx, organizationId, timezone));
  if (!org) throw new NotFoundError(`No organization ${organizationId}.`);
  try {
    await reconcileOrganizationSchedules(deps.temporal, organizationId);
  } catch (err) {
    deps.log?.warn({ err, organization_id: organizationId }, 'report Schedules not reconciled yet; the next timezone change or Schedule action starts it again');
  }
  return org;
}

// ── report dates ─────────────────────────────────────────────────────────────────────────────────

/** The calendar date (YYYY-MM-DD) of `instant` in `timezone`. */
export function localDate(instant: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
}

/** The instant local midnight starts `date` in `timezone` (two passes settle offsets that change that day). */
export function localMidnight(date: string, timezone: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d);
  let t = guess - zoneOffset(guess, timezone);
  t = guess - zoneOffset(t, timezone);
  return new Date(t);
}

function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/**
 * The idempotency key of a Schedule's run: one run per config, frequency and local report date, not per
 * UTC instant. On the day clocks go back a time in the repeated hour occurs twice (Temporal starts an action
 * for each instant), and on the day they go forward a skipped time runs at the next valid minute
 * (report-schedules.ts): every instant of the same local report date gets the same key, so the report of a
 * period is built and emailed once.
 */
export function scheduledRunKey(configId: string, frequency: Frequency, scheduledFor: Date, timezone: string): string {
  return `schedule:${configId}:${frequency}:${localDate(scheduledFor, timezone)}`;
}

/**
 * The report date and period of a run scheduled at `scheduledFor`: the as-of date is that instant's date in
 * the organization's timezone; the period is the previous whole local day (daily), the previous 7 local days
 * (weekly) or the previous calendar month (monthly), as [start, end) instants.
 */
export function reportPeriod(scheduledFor: Date, timezone: string, frequency: Frequency): { asOfDate: string; periodStart: string; periodEnd: string } {
  const asOfDate = localDate(scheduledFor, timezone);
  let startDate: string;
  let endDate = asOfDate;
  if (frequency === 'daily') startDate = addDays(asOfDate, -1);
  else if (frequency === 'weekly') startDate = addDays(asOfDate, -7);
  else {
    const [y, m] = asOfDate.split('-').map(Number) as [number, number];
    endDate = `${asOfDate.slice(0, 7)}-01`;
    startDate = new Date(Date.UTC(y, m - 2, 1)).toISOString().slice(0, 10);
  }
  return { asOfDate, periodStart: localMidnight(startDate, timezone).toISOString(), periodEnd: localMidnight(endDate, timezone).toISOString() };
}
