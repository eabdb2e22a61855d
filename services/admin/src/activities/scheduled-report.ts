/** Activities of the scheduled-report workflow: claim the run, build the report, deliver its email once and record the outcome. */
import { Readable } from 'node:stream';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { capExternalFailure, recordedMessageId, sendRecordedEmail, type Db, type MailAttachment, type Mailer, type ObjectStorage } from '@rp/platform';
import type { Logger } from 'pino';
import { REPORT_SMTP_ATTEMPTS, REPORT_TYPES, REPORT_SMTP_UNAVAILABLE, reportScheduleId, type BuiltReport, type ScheduledReportActivities } from '@rp/workflows';
import {
  claimReportEmail,
  claimReportRun,
  findReportConfig,
  getReportEmail,
  getReportRun,
  beginReportEmailAttempt,
  markReportEmailError,
  markReportEmailSent,
  setRunBuilt,
  setRunDelivery,
  setRunPlan,
  type ReportConfigRow,
  type ReportDelivery,
} from '../store/report-configs.js';
import { getOrganization } from '../store/organizations.js';
import { reportPeriod, scheduledRunKey } from '../domain/report-configs.js';
import { recordRunFailed, recordRunSent } from '../domain/report-run-events.js';
import { canonicalTimezone, reconcileOrganizationSchedules, reportCalendars } from '../domain/report-schedules.js';
import { REPORT_ATTACHMENT_LIMIT_BYTES, renderReportEmail, type ReportFileLink } from '../domain/report-email.js';

export interface ScheduledReportDeps {
  db: Db;
  log: Logger;
  temporal: Client;
  mailer: Mailer;
  from: string;
  /** Object storage holding the report files (null when S3 is not configured: the send fails, in words). */
  storage: ObjectStorage | null;
  /** Validity of a linked file's presigned URL. */
  linkTtlSeconds: number;
}

/** Seconds a presigned GET used to stream an attachment into the message stays valid. */
const FETCH_TTL_SECONDS = 900;

/**
 * The report email's idempotency: the run is keyed by config id + frequency + local report date (scheduledRunKey; or the send-now run id),
 * its email row (report_emails) is the intent written before the SMTP call, and the email row's id makes the
 * Message-ID, so a receiving server can de-duplicate the one window no database closes. deliverReportEmail
 * writes "sent" at once after the SMTP server accepted (best effort, one try), so a worker that dies
 * between acceptance and the activity's completion does not send again on retry; recordReportSent records
 * it for sure and is retried on its own.
 */
export function createScheduledReportActivities(deps: ScheduledReportDeps): ScheduledReportActivities {
  async function deleteOrphanSchedule(scheduleId: string, configId: string, log: Logger): Promise<void> {
    // Only when the Schedule still starts this (deleted) config: a new config of the same type owns it otherwise.
    try {
      const handle = deps.temporal.schedule.getHandle(scheduleId);
      const described = await handle.describe();
      const args = described.action.type === 'startWorkflow' ? (described.action.args as { configId?: string }[] | undefined) : undefined;
      if (args?.[0]?.configId === configId) {
        await handle.delete();
        log.warn({ schedule_id: scheduleId, config_id: configId }, 'deleted the Schedule of a report config that no longer exists');
      }
    } catch (err) {
      log.info({ err, schedule_id: scheduleId }, 'no orphaned report Schedule to delete');
    }
  }

  /**
   * A Schedule that is not what the committed state makes (another timezone than the organization's, because
   * its reconcile could not be started after a change; or daylight-saving entries of other years, because it
   * was last written long ago) starts the organization's reconcile: the periodic safety net of
   * report-schedules.ts, run at every action. Best effort: the run goes on either way.
   */
  async function reconcileIfStale(config: ReportConfigRow, timezone: string, log: Logger): Promise<void> {
    const scheduleId = reportScheduleId(config.organization_id, config.report_type);
    try {
      const { spec } = await deps.temporal.schedule.getHandle(scheduleId).describe();
      const expected = reportCalendars(config, timezone).map((c) => c.comment);
      const actual = (spec.calendars ?? []).map((c) => c.comment);
      if (spec.timezone === canonicalTimezone(timezone) && expected.join('\n') === actual.join('\n')) return;
      log.warn({ schedule_id: scheduleId, schedule_timezone: spec.timezone, timezone }, 'report Schedule differs from the committed state; reconciling the organization');
      await reconcileOrganizationSchedules(deps.temporal, config.organization_id);
    } catch (err) {
      log.info({ err, schedule_id: scheduleId }, 'report Schedule not checked against the committed state');
    }
  }

  /** Streams an object through a short presigned GET (the kernel's storage signs; bytes never touch the disk). */
  async function objectStream(storage: ObjectStorage, key: string): Promise<Readable> {
    const signed = await storage.presignGet({ key, expiresIn: FETCH_TTL_SECONDS });
    const res = await fetch(signed.url);
    if (res.status === 404) throw ApplicationFailure.nonRetryable(`The report file ${key} is missing from object storage.`, 'ReportArtifactMissing');
    if (!res.ok || !res.body) throw new Error(`object storage answered ${res.status} for ${key}`);
    return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
  }

  return {
    async startReportRun(input) {
      const log = deps.log.child({ organization_id: input.organizationId, config_id: input.configId, activity: 'startReportRun' });
      const config = await findReportConfig(deps.db, input.configId);
      if (!config || config.organization_id !== input.organizationId) {
        if (!input.runId) {
          for (const type of REPORT_TYPES) await deleteOrphanSchedule(reportScheduleId(input.organizationId, type), input.configId, log);
        }
        return { status: 'skipped', reason: 'the report config no longer exists' };
      }
      if (!input.runId && !config.is_enabled) return { status: 'skipped', reason: 'the report config is disabled' };
      const org = await getOrganization(deps.db, input.organizationId);
      const timezone = org?.timezone ?? 'UTC';
      if (!input.runId) await reconcileIfStale(config, timezone, log);
      const run = await claimReportRun(deps.db, {
        id: input.runId,
        organizationId: input.organizationId,
        configId: config.id,
        reportType: config.report_type,
        trigger: input.runId ? 'manual' : 'schedule',
        idempotencyKey: input.runId ? `manual:${input.runId}` : scheduledRunKey(config.id, config.frequency, new Date(input.scheduledFor), timezone),
        scheduledFor: new Date(input.scheduledFor),
      });
      if (run.status === 'sent') return { status: 'already-sent', runId: run.id };
      // Another instant of the same local period (the repeated hour) found this period's run still under way:
      // that run sends the report; only a retry of the same action (same scheduled time) carries it on.
      if (!input.runId && run.scheduled_for.getTime() !== new Date(input.scheduledFor).getTime()) {
        return { status: 'skipped', reason: `the report of this period is already being sent (run ${run.id})` };
      }
      if (run.status === 'failed') return { status: 'skipped', reason: `the run of this time already failed: ${run.error ?? ''}`.trim() };
      const plan = reportPeriod(run.scheduled_for, timezone, config.frequency);
      await setRunPlan(deps.db, run.id, { as_of_date: plan.asOfDate, period_start: plan.periodStart, period_end: plan.periodEnd });
      log.info({ run_id: run.id, as_of_date: plan.asOfDate }, 'report run started');
      return { status: 'ready', plan: { runId: run.id, reportType: config.report_type, timezone, ...plan } };
    },

    async prepareReportEmail(input) {
      const run = await getReportRun(deps.db, input.organizationId, input.runId);
      if (!run) throw ApplicationFailure.nonRetryable('The report config was deleted while the report ran.', 'BusinessError');
      if (run.status === 'sent') return { status: 'already-sent', runId: run.id };
      const config = await findReportConfig(deps.db, run.config_id);
      if (!config) throw ApplicationFailure.nonRetryable('The report config was deleted while the report ran.', 'BusinessError');
      const org = await getOrganization(deps.db, input.organizationId);
      const delivery: ReportDelivery = input.report.artifacts.map((a) => ({ filename: a.filename, size: a.size, mode: a.size > REPORT_ATTACHMENT_LIMIT_BYTES ? 'linked' : 'attached' }));
      await setRunBuilt(deps.db, run.id, { row_count: input.report.rowCount, counts: input.report.counts, delivery });
      const subject = `${org?.name ?? 'Receivables Platform'}: ${input.report.title}`;
      // An email already sent (a retried run) is still 'ready': the delivery answers with its Message-ID and the run gets recorded.
      const email = await claimReportEmail(deps.db, { runId: run.id, organizationId: input.organizationId, to: config.recipient_emails, cc: config.cc_emails, subject });
      return { status: 'ready', emailId: email.id };
    },

    async deliverReportEmail(input) {
      const log = deps.log.child({ organization_id: input.organizationId, run_id: input.runId, activity: 'deliverReportEmail' });
      const email = await getReportEmail(deps.db, input.emailId);
      if (!email) throw ApplicationFailure.nonRetryable(`report email ${input.emailId} does not exist`, 'ReportEmailNotFound');
      // Sent by an earlier attempt (its worker died after the SMTP server accepted): not again; the run is recorded next.
      if (email.status === 'sent') {
        log.info({ message_id: email.message_id }, 'report email already sent by an earlier attempt; not sent again');
        return { status: 'delivered', messageId: email.message_id ?? recordedMessageId(email.id, deps.from) };
      }
      const org = await getOrganization(deps.db, input.organizationId);
      const { attachments, links, delivery } = await files(input.report);
      const message = renderReportEmail({ organizationName: org?.name ?? 'Receivables Platform', report: input.report, attached: attachments.map((a) => a.filename), links });
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      let result;
      try {
        result = await sendRecordedEmail({
          mailer: deps.mailer,
          log,
          intentId: email.id,
          message: { from: deps.from, to: email.to_addresses, cc: email.cc_addresses, subject: email.subject, text: message.text, html: message.html, attachments },
          store: {
            beginAttempt: () => beginReportEmailAttempt(deps.db, email.id),
            // the run's delivery (attached or linked, link expiry) is recorded with "sent"
            markSent: async (id) => {
              await markReportEmailSent(deps.db, email.id, id);
              await setRunDelivery(deps.db, input.runId, delivery);
            },
          },
          smtpFailure: async (e) => {
            log.warn({ err: e }, 'report email not sent');
            const rejected = e.responseCode !== undefined && e.responseCode >= 500 && e.responseCode < 600;
            const userMessage = rejected ? e.message : `The email server could not be reached or did not accept the message${e.responseCode ? ` (SMTP ${e.responseCode})` : ''}.`;
            await markReportEmailError(deps.db, email.id, userMessage).catch(() => {});
            const failure = rejected ? ApplicationFailure.nonRetryable(e.message, 'SmtpRejected') : ApplicationFailure.create({ type: REPORT_SMTP_UNAVAILABLE, message: userMessage, cause: e });
            return capExternalFailure(failure, ctx.info.attempt, REPORT_SMTP_ATTEMPTS);
          },
        });
      } finally {
        clearInterval(beat);
        for (const a of attachments) if (a.content instanceof Readable) a.content.destroy();
      }
      const messageId = result.messageId ?? recordedMessageId(email.id, deps.from);
      if (result.status === 'already-sent') {
        log.info({ message_id: messageId }, 'report email already sent by an earlier attempt; not sent again');
        return { status: 'delivered', messageId };
      }
      log.info({ message_id: messageId }, 'report email delivered to the SMTP server');
      return { status: 'delivered', messageId };
    },

    async recordReportSent(input) {
      await recordRunSent(deps.db, input);
      deps.log.info({ organization_id: input.organizationId, run_id: input.runId }, 'report recorded as sent');
    },

    async markReportRunFailed(input) {
      await recordRunFailed(deps.db, input.organizationId, input.runId, input.error);
      deps.log.warn({ organization_id: input.organizationId, run_id: input.runId, error: input.error }, 'report run failed');
    },
  };

  /** The report's files: attached (streamed from object storage) up to the limit, else presigned links. */
  async function files(report: BuiltReport): Promise<{ attachments: MailAttachment[]; links: ReportFileLink[]; delivery: ReportDelivery }> {
    const storage = deps.storage;
    if (!storage) throw ApplicationFailure.nonRetryable('Object storage is not configured (S3_ENDPOINT): the report files cannot be sent.', 'BusinessError');
    const attachments: MailAttachment[] = [];
    const links: ReportFileLink[] = [];
    const delivery: ReportDelivery = [];
    for (const a of report.artifacts) {
      if (a.size > REPORT_ATTACHMENT_LIMIT_BYTES) {
        const signed = await storage.presignGet({ key: a.objectKey, expiresIn: deps.linkTtlSeconds, downloadName: a.filename });
        links.push({ filename: a.filename, size: a.size, url: signed.url, expiresAt: signed.expires_at });
        delivery.push({ filename: a.filename, size: a.size, mode: 'linked', link_expires_at: signed.expires_at.toISOString() });
      } else {
        attachments.push({ filename: a.filename, contentType: a.contentType, content: await objectStream(storage, a.objectKey) });
        delivery.push({ filename: a.filename, size: a.size, mode: 'attached' });
      }
    }
    return { attachments, links, delivery };
  }
}
