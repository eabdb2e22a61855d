/** The invitation email, recorded before it is sent and sent once: the `invite` kind of the recorded-email family, and the activity names of invite workflows started before it. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, sendRecordedEmail, type Db, type Mailer } from '@rp/platform';
import type { Logger } from 'pino';
import {
  USER_INVITE_SMTP_ATTEMPTS,
  type DeliverRecordedEmailResult,
  type PrepareRecordedEmailResult,
  type RecordedEmailHandler,
  type UserInviteActivities,
  type UserInviteInput,
} from '@rp/workflows';
import { getOrganization, type OrganizationRow } from '../store/organizations.js';
import { getInvite, inviteStatus, isInvitePending, type InviteRow } from '../store/invites.js';
import { claimEmail, outboundEmailIntent, getEmail, markError, markSent } from '../store/emails.js';
import { inviteToken, renderInviteEmail } from '../domain/invites.js';

export interface UserInviteDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  from: string;
  publicBaseUrl: string;
  /** key the invite tokens are derived with (domain/invites.ts inviteTokenKey) */
  tokenKey: Buffer;
}

/**
 * The invitation email, sent once: prepare records the intent (outbound-email row keyed
 * `user-invite-<inviteId>`, whose id makes the Message-ID), deliver sends through the kernel's
 * sendRecordedEmail (row checked and attempt counted before the SMTP call, "sent" written at once
 * after the SMTP server accepted, best effort), recordSent marks it sent for sure and is retried on
 * its own. An invite revoked, replaced, accepted or expired before the send is skipped. The token is
 * re-derived here from the invite's nonce and never logged.
 */
export function userInviteHandler(deps: UserInviteDeps): RecordedEmailHandler<UserInviteInput> {
  async function subject(input: UserInviteInput): Promise<{ invite: InviteRow; org: OrganizationRow } | { status: 'skipped'; reason: string }> {
    const invite = await getInvite(deps.db, input.organizationId, input.inviteId);
    if (!invite) {
      // Started inside the creating transaction: give it a few attempts to commit.
      if (Context.current().info.attempt < 4) throw ApplicationFailure.retryable('invite not visible yet', 'InviteNotFound');
      return { status: 'skipped', reason: 'invite does not exist' };
    }
    const status = inviteStatus(invite);
    if (status !== 'pending' || !(await isInvitePending(deps.db, invite.organization_id, invite.id))) {
      return { status: 'skipped', reason: `invite is ${status === 'pending' ? 'expired' : status}` };
    }
    const org = await getOrganization(deps.db, input.organizationId);
    if (!org) return { status: 'skipped', reason: 'organization no longer exists' };
    return { invite, org };
  }

  const render = (invite: InviteRow, org: OrganizationRow) =>
    renderInviteEmail({ invite, organization: org, token: inviteToken(deps.tokenKey, invite.id, invite.token_nonce), publicBaseUrl: deps.publicBaseUrl });

  return {
    async prepare(input): Promise<PrepareRecordedEmailResult> {
      const found = await subject(input);
      if ('status' in found) return found;
      const email = await claimEmail(deps.db, {
        organizationId: found.org.id,
        idempotencyKey: `user-invite-${found.invite.id}`,
        kind: 'user_invite',
        to: found.invite.email,
        subject: render(found.invite, found.org).subject,
      });
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      return { status: 'ready', emailId: email.id };
    },

    async deliver(input, emailId): Promise<DeliverRecordedEmailResult> {
      // `activity` names the activity type that runs the step (the family's, or a name of workflows started before it)
      const log = deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: Context.current().info.activityType });
      const email = await getEmail(deps.db, emailId);
      if (!email) throw ApplicationFailure.nonRetryable(`outbound email ${emailId} does not exist`, 'EmailNotFound');
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      const found = await subject(input);
      if ('status' in found) return found; // revoked, replaced or accepted since the intent was recorded
      const message = render(found.invite, found.org);
      const sent = await sendRecordedEmail({
        mailer: deps.mailer,
        log,
        intentId: email.id,
        message: { from: deps.from, to: email.to_address, subject: message.subject, text: message.text, html: message.html },
        store: outboundEmailIntent(deps.db, email.id),
        smtpFailure: async (e) => {
          await markError(deps.db, email.id, e.message);
          log.warn({ email_id: email.id, err: e }, 'invitation email not sent; Temporal will retry');
          const failure = ApplicationFailure.create({ type: e.responseCode && e.responseCode >= 500 ? 'SmtpRejected' : 'SmtpUnavailable', message: e.message, cause: e });
          return capExternalFailure(failure, Context.current().info.attempt, USER_INVITE_SMTP_ATTEMPTS);
        },
      });
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId: email.id, messageId: sent.messageId };
      log.info({ email_id: email.id, invite_id: found.invite.id, message_id: sent.messageId }, 'invitation email delivered to the SMTP server');
      return { status: 'delivered', emailId: email.id, messageId: sent.messageId };
    },

    async recordSent(sent): Promise<void> {
      await markSent(deps.db, sent.emailId, sent.messageId);
      deps.log.info({ organization_id: sent.organizationId, email_id: sent.emailId }, 'invitation email recorded as sent');
    },
  };
}

/** The activity names of invite workflows started before the recorded-email family, registered while recorded or running workflows may call them. */
export function createUserInviteActivities(deps: UserInviteDeps): UserInviteActivities {
  const handler = userInviteHandler(deps);
  return {
    prepareUserInvite: (input) => handler.prepare(input),
    deliverUserInvite: ({ emailId, ...input }) => handler.deliver(input, emailId),
    recordUserInviteSent: (sent) => handler.recordSent(sent),
  };
}
