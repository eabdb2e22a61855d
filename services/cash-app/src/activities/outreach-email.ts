/**
 * The parts every cash-app outreach email shares (payment receipts, remittance requests): the
 * outreach record is the email's idempotency row, its id makes the Message-ID
 * (`<record id@from-domain>`, kernel recordedMessageId), and the send goes through the kernel's
 * sendRecordedEmail (the record checked and the attempt counted before the SMTP call, "sent" written
 * at once after it, best effort).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, sendRecordedEmail, type Db, type Mailer } from '@rp/platform';
import { SMTP_UNAVAILABLE } from '@rp/workflows';
import type { Logger } from 'pino';
import { recordReceiptSent } from '../domain/outreach.js';
import { beginReceiptAttempt, getOutreach, markAttemptError, type OutreachRow } from '../store/outreach.js';

export interface OutreachEmailDeps {
  db: Db;
  mailer: Mailer;
  /** the From address (MAIL_FROM) */
  from: string;
}

/** Why a record is not sent (again): it already was, or it was skipped or is gone. */
export type OutreachNotPending = { status: 'already-sent'; messageId: string | null } | { status: 'skipped'; reason: string };

/**
 * The record while it is pending, or what the activity answers instead. A record that already
 * failed is a non-retryable `ReceiptFailed` (the type the workflows' options list) with its error.
 */
export async function pendingOutreach(db: Db, organizationId: string, outreachId: string): Promise<OutreachRow | OutreachNotPending> {
  const record = await getOutreach(db, organizationId, outreachId);
  if (!record) return { status: 'skipped', reason: 'the outreach record no longer exists' };
  if (record.status === 'sent') return { status: 'already-sent', messageId: record.email_id };
  if (record.status === 'skipped') return { status: 'skipped', reason: record.skip_reason ?? 'skipped' };
  if (record.status === 'failed') throw ApplicationFailure.nonRetryable(record.error ?? 'the email already failed', 'ReceiptFailed');
  return record;
}

/**
 * The send of `record`'s email. An SMTP failure is kept on the record (still pending, in words for
 * users) and rethrown: a permanent rejection (5xx) as non-retryable `SmtpRejected` with the server's
 * answer, anything else as `SmtpUnavailable` (retried up to the configured attempts; its technical
 * cause, such as the server's address, goes to the log only).
 */
export function sendOutreachEmail(
  deps: OutreachEmailDeps,
  record: Pick<OutreachRow, 'id'>,
  to: string,
  message: { subject: string; text: string; html: string; headers?: Record<string, string> },
  log: Logger,
  opts: { sentWriteTries: number; recipient?: { to: string; partnerId: string }; what: string },
) {
  return sendRecordedEmail({
    mailer: deps.mailer,
    log,
    intentId: record.id,
    message: { from: deps.from, to, subject: message.subject, text: message.text, html: message.html, ...(message.headers ? { headers: message.headers } : {}) },
    store: { beginAttempt: () => beginReceiptAttempt(deps.db, record.id, opts.recipient), markSent: (messageId) => recordReceiptSent(deps.db, record.id, messageId) },
    sentWriteTries: opts.sentWriteTries,
    smtpFailure: async (e) => {
      log.warn({ err: e }, `${opts.what} not sent`);
      const rejected = e.responseCode !== undefined && e.responseCode >= 500 && e.responseCode < 600;
      const userMessage = rejected ? e.message : `The email server could not be reached or did not accept the message${e.responseCode ? ` (SMTP ${e.responseCode})` : ''}.`;
      await markAttemptError(deps.db, record.id, userMessage);
      if (rejected) return ApplicationFailure.nonRetryable(e.message, 'SmtpRejected');
      return ApplicationFailure.create({ type: SMTP_UNAVAILABLE, message: userMessage, cause: e });
    },
  });
}

/** The configured SMTP attempts, counted by Temporal's attempt number (see capExternalFailure). */
export async function smtpCapped<T>(maximumAttempts: number, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw capExternalFailure(err, Context.current().info.attempt, maximumAttempts);
  }
}
