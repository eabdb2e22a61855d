import { ActivityFailure, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import { REPORT_BUILD_TASK_QUEUE, type BuiltReport, type ReportBuildActivities, type ReportType } from '../reports/contracts.js';

export const SCHEDULED_REPORT_TASK_QUEUE = TASK_QUEUES.admin;

/** The Temporal Schedule of a report config (one per report type per organization). */
export function reportScheduleId(organizationId: string, reportType: string): string {
  return `report-${organizationId}-${reportType}`;
}

/**
 * Workflow id the Schedule's action carries (Temporal appends the scheduled time to it for each
 * action); a send-now run gets `scheduled-report-<configId>-manual-<runId>`.
 */
export function scheduledReportWorkflowId(configId: string, manualRunId?: string): string {
  return manualRunId ? `scheduled-report-${configId}-manual-${manualRunId}` : `scheduled-report-${configId}`;
}

export interface ScheduledReportInput extends RetryWindowInput {
  organizationId: string;
  configId: string;
  /** A send-now run: the run the API created (and answered with). Absent on Schedule actions. */
  runId?: string;
}

export type ScheduledReportResult =
  | { status: 'sent'; runId: string; messageId: string }
  | { status: 'already-sent'; runId: string }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; runId: string; error: string };

/** What the run is about: the build input's dates, derived from the scheduled time in the organization's timezone. */
export interface ReportRunPlan {
  runId: string;
  reportType: ReportType;
  timezone: string;
  asOfDate: string;
  periodStart: string;
  periodEnd: string;
}

export type StartReportRunResult =
  | { status: 'ready'; plan: ReportRunPlan }
  | { status: 'already-sent'; runId: string }
  | { status: 'skipped'; reason: string };

export type PrepareReportEmailResult = { status: 'ready'; emailId: string } | { status: 'already-sent'; runId: string };
export type DeliverReportEmailResult = { status: 'delivered'; messageId: string } | { status: 'already-sent'; runId: string };

/** Activity contract, implemented by services/admin (createScheduledReportActivities). */
export interface ScheduledReportActivities {
  /**
   * Finds or records the run of this config and scheduled time (idempotent: the key is the config id and
   * the scheduled time, or the send-now run id); skipped when the config no longer exists (its orphaned
   * Schedule is deleted) or is disabled.
   */
  startReportRun(input: { organizationId: string; configId: string; runId?: string; scheduledFor: string }): Promise<StartReportRunResult>;
  /** Records the built report on the run and the email's intent (recipients, subject; its id makes the Message-ID). */
  prepareReportEmail(input: { organizationId: string; runId: string; report: BuiltReport }): Promise<PrepareReportEmailResult>;
  /**
   * The SMTP call alone (attachments from object storage, or presigned links over 10 MB); "sent" is written at once,
   * best effort. An email an earlier attempt already sent is not sent again: `delivered` with its recorded Message-ID.
   */
  deliverReportEmail(input: { organizationId: string; runId: string; emailId: string; report: BuiltReport }): Promise<DeliverReportEmailResult>;
  /** Marks the email and run sent and sets the config's `last_sent_at`; retried on its own, never resending. */
  recordReportSent(input: { organizationId: string; runId: string; emailId: string; messageId: string }): Promise<void>;
  /** Marks the run failed with an error written for users (unless it was sent meanwhile). */
  markReportRunFailed(input: { organizationId: string; runId: string; error: string }): Promise<void>;
}

/** Failure type of an SMTP server that could not be reached or answered a temporary error (message written for users). */
export const REPORT_SMTP_UNAVAILABLE = 'SmtpUnavailable';
/** Failure types of build activities whose messages are written for users. */
export const REPORT_BUILD_FAILED_TYPE = 'ReportBuildFailed';
/** SMTP attempts of a report email (enforced by the delivery activity with capExternalFailure). */
export const REPORT_SMTP_ATTEMPTS = 10;

export const REPORT_FAILED = 'The report could not be sent because a service of the platform was unavailable for too long. Send it again.';

/** Temporal's search attribute on workflows a Schedule started: the action's scheduled time. */
const SCHEDULED_START_TIME = { name: 'TemporalScheduledStartTime', type: 'DATETIME' } as const;

/**
 * The time this run is for: the Schedule's scheduled time (search attribute `TemporalScheduledStartTime`,
 * recorded in the history) or, for send-now and other direct starts, the workflow's start time.
 */
function scheduledFor(): string {
  const info = workflowInfo();
  const scheduled = info.typedSearchAttributes.get(SCHEDULED_START_TIME);
  return (scheduled ?? info.startTime).toISOString();
}

function activities(input: ScheduledReportInput, reportType?: ReportType) {
  const window = input.retryWindowMinutes;
  return {
    db: proxyActivities<ScheduledReportActivities>(activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: window })),
    smtp: proxyActivities<ScheduledReportActivities>(
      activityOptions({
        startToCloseTimeout: '5 minutes',
        // A worker that dies mid-send is noticed within the heartbeat timeout, not the 5 minutes.
        heartbeatTimeout: '10 seconds',
        initialInterval: '2 seconds',
        maximumInterval: '5 minutes',
        retryWindowMinutes: window,
        extraWindowMinutes: 60,
        nonRetryableErrorTypes: ['SmtpRejected', 'ReportEmailNotFound', 'ReportArtifactMissing'],
      }),
    ),
    build: proxyActivities<ReportBuildActivities>(
      activityOptions({ startToCloseTimeout: '30 minutes', taskQueue: REPORT_BUILD_TASK_QUEUE[reportType ?? 'ar_aging_report'], retryWindowMinutes: window }),
    ),
  };
}

/**
 * One report run: record the run (idempotent per config and scheduled time) → build the data on the
 * owning service's task queue (files in object storage, summary back) → record the email's intent →
 * send it (SMTP, attachments or links) → record "sent" and the config's `last_sent_at`. Recording "sent"
 * is its own activity: failing to record never sends again.
 */
export async function scheduledReport(input: ScheduledReportInput): Promise<ScheduledReportResult> {
  const { db } = activities(input);
  const started = await db.startReportRun({ organizationId: input.organizationId, configId: input.configId, runId: input.runId, scheduledFor: scheduledFor() });
  if (started.status !== 'ready') return started;
  const { plan } = started;
  const { build, smtp } = activities(input, plan.reportType);
  const buildInput = {
    organizationId: input.organizationId,
    configId: input.configId,
    runId: plan.runId,
    timezone: plan.timezone,
    asOfDate: plan.asOfDate,
    periodStart: plan.periodStart,
    periodEnd: plan.periodEnd,
  };
  let delivered: DeliverReportEmailResult;
  let emailId: string;
  try {
    const report = plan.reportType === 'ar_aging_report' ? await build.buildArAgingReport(buildInput) : await build.buildIntegrationSyncReport(buildInput);
    const prepared = await db.prepareReportEmail({ organizationId: input.organizationId, runId: plan.runId, report });
    if (prepared.status !== 'ready') return prepared;
    emailId = prepared.emailId;
    delivered = await smtp.deliverReportEmail({ organizationId: input.organizationId, runId: plan.runId, emailId, report });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const error = userFacingFailure(err, REPORT_FAILED, [REPORT_SMTP_UNAVAILABLE, REPORT_BUILD_FAILED_TYPE]);
    if (error === REPORT_FAILED) log.warn('scheduled report failed', { runId: plan.runId, failure: String(err.cause ?? err) });
    await db.markReportRunFailed({ organizationId: input.organizationId, runId: plan.runId, error });
    return { status: 'failed', runId: plan.runId, error };
  }
  if (delivered.status !== 'delivered') return delivered;
  await db.recordReportSent({ organizationId: input.organizationId, runId: plan.runId, emailId, messageId: delivered.messageId });
  return { status: 'sent', runId: plan.runId, messageId: delivered.messageId };
}
