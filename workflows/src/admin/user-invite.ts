import { proxyActivities } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export const USER_INVITE_TASK_QUEUE = TASK_QUEUES.admin;

export function userInviteWorkflowId(inviteId: string): string {
  return `user-invite-${inviteId}`;
}

export interface UserInviteInput extends RetryWindowInput {
  organizationId: string;
  inviteId: string;
  /** id of the API request that created the invite, for the activity's logs */
  requestId?: string;
}

export type UserInviteResult =
  | { status: 'sent'; emailId: string; messageId: string }
  | { status: 'already-sent'; emailId: string; messageId: string | null }
  | { status: 'skipped'; reason: string };

export type PrepareUserInviteResult = { status: 'ready'; emailId: string } | Exclude<UserInviteResult, { status: 'sent' }>;
export type DeliverUserInviteResult = { status: 'delivered'; emailId: string; messageId: string } | Exclude<UserInviteResult, { status: 'sent' }>;

/**
 * Activity contract, implemented by services/admin (createUserInviteActivities). No token travels
 * through the workflow: the deliver activity re-derives it from the invite row (see the activities).
 */
export interface UserInviteActivities {
  /** Records the intent: the outbound-email row keyed `user-invite-<inviteId>`; or says why nothing is sent (invite revoked, resent, accepted, expired). */
  prepareUserInvite(input: UserInviteInput): Promise<PrepareUserInviteResult>;
  /** The send (the kernel's sendRecordedEmail): checks the intent and counts the attempt before the SMTP call, writes "sent" at once after it, best effort (a failed write never fails the activity, which would resend). */
  deliverUserInvite(input: UserInviteInput & { emailId: string }): Promise<DeliverUserInviteResult>;
  /** Marks the row sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordUserInviteSent(input: { organizationId: string; emailId: string; messageId: string }): Promise<void>;
}

/**
 * SMTP attempts of an invitation (the SMTP server's deliberate policy, as the welcome email's: first
 * retry after 2 s, backoff up to 5 minutes). Enforced by the delivery activity on SMTP failures
 * (capExternalFailure), so a database outage never uses them up.
 */
export const USER_INVITE_SMTP_ATTEMPTS = 20;
/** Minutes the SMTP attempts' backoff may take (added to the retry window). */
const SMTP_BUDGET_MINUTES = 90;

/** The platform's retry policy (activity-options.ts): outages retried for the window, business errors never. */
function activities(input: UserInviteInput) {
  const window = input.retryWindowMinutes;
  return {
    smtp: proxyActivities<UserInviteActivities>(
      activityOptions({
        startToCloseTimeout: '1 minute',
        initialInterval: '2 seconds',
        maximumInterval: '5 minutes',
        retryWindowMinutes: window,
        extraWindowMinutes: SMTP_BUDGET_MINUTES,
        nonRetryableErrorTypes: ['EmailNotFound'],
      }),
    ),
    // no attempt cap: the email went out; only the record is missing
    db: proxyActivities<UserInviteActivities>(activityOptions({ startToCloseTimeout: '30 seconds', maximumInterval: '1 minute', retryWindowMinutes: window })),
  };
}

/**
 * Emails an invitation once (workflow id `user-invite-<inviteId>`, admin task queue): the intent is
 * recorded first, the SMTP send is its own activity, and recording "sent" is a separate activity
 * whose failure retries only the recording, never the send (as the welcome email).
 */
export async function userInvite(input: UserInviteInput): Promise<UserInviteResult> {
  const { smtp, db } = activities(input);
  const prepared = await smtp.prepareUserInvite(input);
  if (prepared.status !== 'ready') return prepared;
  const delivered = await smtp.deliverUserInvite({ ...input, emailId: prepared.emailId });
  if (delivered.status !== 'delivered') return delivered;
  await db.recordUserInviteSent({ organizationId: input.organizationId, emailId: delivered.emailId, messageId: delivered.messageId });
  return { status: 'sent', emailId: delivered.emailId, messageId: delivered.messageId };
}
