import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Mailer } from '@rp/platform';
import type { Logger } from 'pino';
import type { WelcomeEmailActivities, WelcomeEmailInput, WelcomeEmailResult } from '@rp/workflows';
import { getOrganization } from '../store/organizations.js';
import { getUser } from '../store/users.js';
import { claimEmail, markAttempt, markError, markSent } from '../store/emails.js';
import { renderWelcomeEmail } from '../domain/welcome-email.js';

export interface WelcomeEmailDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  from: string;
  publicBaseUrl: string;
}

/**
 * The send is guarded by an outbound-email row keyed `welcome-<userId>`, recorded before the SMTP
 * call and marked sent after it: a retried or replayed activity never sends a second email once
 * the first is recorded. The Message-ID is derived from that key so a receiving server can
 * de-duplicate the one window (crash after SMTP accepted, before the row was marked) we cannot close.
 */
export function createWelcomeEmailActivities(deps: WelcomeEmailDeps): WelcomeEmailActivities {
  return {
    async sendWelcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult> {
      const log = deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: 'sendWelcomeEmail' });
      const user = await getUser(deps.db, input.organizationId, input.userId);
      if (!user) {
        // The workflow is started inside the transaction that creates the user: give that
        // transaction a few attempts to commit before concluding it rolled back.
        if (Context.current().info.attempt < 4) throw ApplicationFailure.retryable('user not visible yet', 'UserNotFound');
        return { status: 'skipped', reason: 'user does not exist' };
      }
      const org = await getOrganization(deps.db, input.organizationId);
      if (!org) return { status: 'skipped', reason: 'organization no longer exists' };
      const message = renderWelcomeEmail({ user, organization: org, publicBaseUrl: deps.publicBaseUrl });
      const email = await claimEmail(deps.db, {
        organizationId: org.id,
        idempotencyKey: `welcome-${user.id}`,
        kind: 'welcome',
        to: user.email,
        subject: message.subject,
      });
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      await markAttempt(deps.db, email.id);
      const domain = deps.from.match(/@([^>\s]+)/)?.[1] ?? 'receivables.local';
      try {
        const sent = await deps.mailer.send({
          from: deps.from,
          to: user.email,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${email.id}@${domain}>`,
        });
        await markSent(deps.db, email.id, sent.messageId);
        log.info({ email_id: email.id, user_id: user.id }, 'welcome email sent');
        return { status: 'sent', emailId: email.id, messageId: sent.messageId };
      } catch (err) {
        await markError(deps.db, email.id, (err as Error).message);
        log.warn({ email_id: email.id, err }, 'welcome email not sent; Temporal will retry');
        throw err;
      }
    },
  };
}
