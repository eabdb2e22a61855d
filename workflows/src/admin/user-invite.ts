/** The user-invite workflow: its id, input, activity options and the activity names of histories recorded before the recorded-email family. */
import { patched, proxyActivities } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import {
  recordedEmail,
  runRecordedEmail,
  type DeliverRecordedEmailResult,
  type PrepareRecordedEmailResult,
  type RecordedEmailOptions,
  type RecordedEmailResult,
  type RecordedEmailSteps,
} from '../recorded-email.js';

export const USER_INVITE_TASK_QUEUE = TASK_QUEUES.admin;

export function userInviteWorkflowId(inviteId: string): string {
  return `user-invite-${inviteId}`;
}

/**
 * Patch id of the recorded-email family (kind `invite`): histories recorded before it ran the three
 * steps as `prepareUserInvite` / `deliverUserInvite` / `recordUserInviteSent` and still replay that way.
 */
export const USER_INVITE_RECORDED_EMAIL = 'user-invite-recorded-email';

export interface UserInviteInput extends RetryWindowInput {
  organizationId: string;
  inviteId: string;
  /** id of the API request that created the invite, for the activity's logs */
  requestId?: string;
}

export type UserInviteResult = RecordedEmailResult;

/**
 * Activities of workflows started before the recorded-email family, implemented by services/admin
 * (createUserInviteActivities) as long as recorded or running workflows may call them. New workflows
 * call the family with kind `invite` (the outbound-email row keyed `user-invite-<inviteId>`). No
 * token travels through the workflow: the delivery re-derives it from the invite row.
 */
export interface UserInviteActivities {
  prepareUserInvite(input: UserInviteInput): Promise<PrepareRecordedEmailResult>;
  deliverUserInvite(input: UserInviteInput & { emailId: string }): Promise<DeliverRecordedEmailResult>;
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
function userInviteOptions(input: UserInviteInput): RecordedEmailOptions {
  const window = input.retryWindowMinutes;
  const smtp = activityOptions({
    startToCloseTimeout: '1 minute',
    initialInterval: '2 seconds',
    maximumInterval: '5 minutes',
    retryWindowMinutes: window,
    extraWindowMinutes: SMTP_BUDGET_MINUTES,
    nonRetryableErrorTypes: ['EmailNotFound'],
  });
  // no attempt cap: the email went out; only the record is missing
  const record = activityOptions({ startToCloseTimeout: '30 seconds', maximumInterval: '1 minute', retryWindowMinutes: window });
  return { prepare: smtp, deliver: smtp, record };
}

/** The three steps under the activity names of histories recorded before the family. */
function stepsBeforeFamily(input: UserInviteInput, options: RecordedEmailOptions): RecordedEmailSteps {
  const { prepareUserInvite, deliverUserInvite } = proxyActivities<UserInviteActivities>(options.deliver);
  const { recordUserInviteSent } = proxyActivities<UserInviteActivities>(options.record);
  return {
    prepare: () => prepareUserInvite(input),
    deliver: (emailId) => deliverUserInvite({ ...input, emailId }),
    recordSent: (emailId, messageId) => recordUserInviteSent({ organizationId: input.organizationId, emailId, messageId }),
  };
}

/**
 * Emails an invitation once (workflow id `user-invite-<inviteId>`, admin task queue) as the recorded
 * email of kind `invite`: an invite revoked, replaced, accepted or expired before the send is skipped.
 */
export async function userInvite(input: UserInviteInput): Promise<UserInviteResult> {
  const options = userInviteOptions(input);
  if (!patched(USER_INVITE_RECORDED_EMAIL)) return await runRecordedEmail(stepsBeforeFamily(input, options));
  return await recordedEmail('invite', input, options);
}
