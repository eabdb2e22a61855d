import { proxyActivities } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const USER_INVITE_TASK_QUEUE = TASK_QUEUES.admin;

export function userInviteWorkflowId(inviteId: string): string {
  return `user-invite-${inviteId}`;
}

export interface UserInviteInput {
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
  /** The SMTP call alone: counts the attempt before it and writes nothing after it (a failed write must not resend). */
  deliverUserInvite(input: UserInviteInput & { emailId: string }): Promise<DeliverUserInviteResult>;
  /** Marks the row sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordUserInviteSent(input: { organizationId: string; emailId: string; messageId: string }): Promise<void>;
}

const { prepareUserInvite, deliverUserInvite } = proxyActivities<UserInviteActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

const { recordUserInviteSent } = proxyActivities<UserInviteActivities>({
  startToCloseTimeout: '30 seconds',
  // unlimited attempts (the default): the email went out; only the record is missing
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Emails an invitation once (workflow id `user-invite-<inviteId>`, admin task queue): the intent is
 * recorded first, the SMTP send is its own activity, and recording "sent" is a separate activity
 * whose failure retries only the recording, never the send (as the welcome email).
 */
export async function userInvite(input: UserInviteInput): Promise<UserInviteResult> {
  const prepared = await prepareUserInvite(input);
  if (prepared.status !== 'ready') return prepared;
  const delivered = await deliverUserInvite({ ...input, emailId: prepared.emailId });
  if (delivered.status !== 'delivered') return delivered;
  await recordUserInviteSent({ organizationId: input.organizationId, emailId: delivered.emailId, messageId: delivered.messageId });
  return { status: 'sent', emailId: delivered.emailId, messageId: delivered.messageId };
}
