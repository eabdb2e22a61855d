/** The welcome email of a new user, recorded before it is sent and sent once: the `welcome` kind of the recorded-email family, and the activity names of welcome workflows started before it. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, sendRecordedEmail, type Db, type Mailer } from '@rp/platform';
import type { Logger } from 'pino';
import {
  WELCOME_EMAIL_SMTP_ATTEMPTS,
  type DeliverRecordedEmailResult,
  type PrepareRecordedEmailResult,
  type RecordedEmailHandler,
  type WelcomeEmailActivities,
  type WelcomeEmailInput,
  type WelcomeEmailResult,
} from '@rp/workflows';
import { getOrganization, type OrganizationRow } from '../store/organizations.js';
import { getUser, type UserRow } from '../store/users.js';
import { claimEmail, outboundEmailIntent, getEmail, markError, markSent, type OutboundEmailRow } from '../store/emails.js';
import { renderWelcomeEmail } from '../domain/welcome-email.js';

export interface WelcomeEmailDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  from: string;
  publicBaseUrl: string;
}

/**
 * The send is guarded by an outbound-email row keyed `welcome-<userId>` (the idempotency key),
 * written before the SMTP call; its id makes the Message-ID, so a receiving server can de-duplicate
 * the one window no database closes (see the kernel's recorded-email.ts).
 *
 * The workflow runs the family's three steps: prepare records the intent (the row), or why nothing
 * is sent; deliver sends through the kernel's sendRecordedEmail (the row is checked and the attempt
 * counted before the SMTP call, and "sent" is written at once after the SMTP server accepted, best
 * effort, so a worker killed before the activity reported does not send again on the retry);
 * recordSent marks the row sent for sure and is retried on its own. A failure to record "sent"
 * therefore never sends the email again. `send` is the single activity of workflows started before
 * the three steps (they still run it).
 */
export function welcomeEmailHandler(deps: WelcomeEmailDeps): RecordedEmailHandler<WelcomeEmailInput> & { send(input: WelcomeEmailInput): Promise<WelcomeEmailResult> } {
  // `activity` names the activity type that runs the step (the family's, or a name of workflows started before it)
  const logFor = (input: WelcomeEmailInput) => deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: Context.current().info.activityType });

  /** The user and organization, or why there is nobody to welcome. */
  async function subject(input: WelcomeEmailInput): Promise<{ user: UserRow; org: OrganizationRow } | { status: 'skipped'; reason: string }> {
    const user = await getUser(deps.db, input.organizationId, input.userId);
    if (!user) {
      // The workflow is started inside the transaction that creates the user: give that
      // transaction a few attempts to commit before concluding it rolled back.
      if (Context.current().info.attempt < 4) throw ApplicationFailure.retryable('user not visible yet', 'UserNotFound');
      return { status: 'skipped', reason: 'user does not exist' };
    }
    const org = await getOrganization(deps.db, input.organizationId);
    if (!org) return { status: 'skipped', reason: 'organization no longer exists' };
    return { user, org };
  }

  async function claim(user: UserRow, org: OrganizationRow): Promise<OutboundEmailRow> {
    const message = renderWelcomeEmail({ user, organization: org, publicBaseUrl: deps.publicBaseUrl });
    return claimEmail(deps.db, { organizationId: org.id, idempotencyKey: `welcome-${user.id}`, kind: 'welcome', to: user.email, subject: message.subject });
  }

  /**
   * The send (the kernel's sendRecordedEmail); an SMTP failure is kept on the row and rethrown so Temporal retries it, as
   * `SmtpUnavailable` (retryable) or `SmtpRejected` (a 5xx answer, final) once the SMTP attempts
   * (WELCOME_EMAIL_SMTP_ATTEMPTS) are used up.
   */
  async function smtp(email: OutboundEmailRow, user: UserRow, org: OrganizationRow, log: Logger, sentWriteTries = 1) {
    const message = renderWelcomeEmail({ user, organization: org, publicBaseUrl: deps.publicBaseUrl });
    return sendRecordedEmail({
      mailer: deps.mailer,
      log,
      intentId: email.id,
      message: { from: deps.from, to: email.to_address, subject: message.subject, text: message.text, html: message.html },
      store: outboundEmailIntent(deps.db, email.id),
      sentWriteTries,
      smtpFailure: async (e) => {
        await markError(deps.db, email.id, e.message);
        log.warn({ email_id: email.id, err: e }, 'welcome email not sent; Temporal will retry');
        const failure = ApplicationFailure.create({ type: e.responseCode && e.responseCode >= 500 ? 'SmtpRejected' : 'SmtpUnavailable', message: e.message, cause: e });
        return capExternalFailure(failure, Context.current().info.attempt, WELCOME_EMAIL_SMTP_ATTEMPTS);
      },
    });
  }

  return {
    async prepare(input): Promise<PrepareRecordedEmailResult> {
      const found = await subject(input);
      if ('status' in found) return found;
      const email = await claim(found.user, found.org);
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      return { status: 'ready', emailId: email.id };
    },

    async deliver(input, emailId): Promise<DeliverRecordedEmailResult> {
      const log = logFor(input);
      const email = await getEmail(deps.db, emailId);
      if (!email) throw ApplicationFailure.nonRetryable(`outbound email ${emailId} does not exist`, 'EmailNotFound');
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      const found = await subject(input);
      if ('status' in found) return found; // the user or organization was deleted since the intent was recorded
      const sent = await smtp(email, found.user, found.org, log);
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId: email.id, messageId: sent.messageId };
      // "sent" was written at once, best effort (sendRecordedEmail); recordSent records it for sure.
      log.info({ email_id: email.id, user_id: found.user.id, message_id: sent.messageId }, 'welcome email delivered to the SMTP server');
      return { status: 'delivered', emailId: email.id, messageId: sent.messageId };
    },

    async recordSent(sent): Promise<void> {
      await markSent(deps.db, sent.emailId, sent.messageId);
      deps.log.info({ organization_id: sent.organizationId, email_id: sent.emailId }, 'welcome email recorded as sent');
    },

    async send(input): Promise<WelcomeEmailResult> {
      const log = logFor(input);
      const found = await subject(input);
      if ('status' in found) return found;
      const email = await claim(found.user, found.org);
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      // Accepted: a failure to record it must not fail the activity (a retry would send it again); three tries.
      const sent = await smtp(email, found.user, found.org, log, 3);
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId: email.id, messageId: sent.messageId };
      log.info({ email_id: email.id, user_id: found.user.id }, 'welcome email sent');
      return { status: 'sent', emailId: email.id, messageId: sent.messageId };
    },
  };
}

/** The activity names of welcome workflows started before the recorded-email family, registered while recorded or running workflows may call them. */
export function createWelcomeEmailActivities(deps: WelcomeEmailDeps): WelcomeEmailActivities {
  const handler = welcomeEmailHandler(deps);
  return {
    sendWelcomeEmail: (input) => handler.send(input),
    prepareWelcomeEmail: (input) => handler.prepare(input),
    deliverWelcomeEmail: ({ emailId, ...input }) => handler.deliver(input, emailId),
    recordWelcomeEmailSent: (sent) => handler.recordSent(sent),
  };
}
