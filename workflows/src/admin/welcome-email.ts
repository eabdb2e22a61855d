import { patched, proxyActivities } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export const WELCOME_EMAIL_TASK_QUEUE = TASK_QUEUES.admin;

export function welcomeEmailWorkflowId(userId: string): string {
  return `welcome-email-${userId}`;
}

/**
 * Patch id of the three-step send (prepare → deliver → record): histories recorded before it ran
 * one `sendWelcomeEmail` activity and still replay that way.
 */
export const WELCOME_EMAIL_SEND_THEN_RECORD = 'welcome-email-send-then-record';

export interface WelcomeEmailInput extends RetryWindowInput {
  organizationId: string;
  userId: string;
  /** id of the API request that created the user, for the activity's logs */
  requestId?: string;
}

export type WelcomeEmailResult =
  | { status: 'sent'; emailId: string; messageId: string }
  | { status: 'already-sent'; emailId: string; messageId: string | null }
  | { status: 'skipped'; reason: string };

export type PrepareWelcomeEmailResult = { status: 'ready'; emailId: string } | Exclude<WelcomeEmailResult, { status: 'sent' }>;
export type DeliverWelcomeEmailResult = { status: 'delivered'; emailId: string; messageId: string } | Exclude<WelcomeEmailResult, { status: 'sent' }>;

/** Activity contract, implemented by services/admin (createWelcomeEmailActivities). */
export interface WelcomeEmailActivities {
  /** Before the patch: claim, send and record in one activity (kept for running and recorded workflows). */
  sendWelcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult>;
  /** Records the intent: the outbound-email row keyed `welcome-<userId>` (its id makes the Message-ID); or says why nothing is sent. */
  prepareWelcomeEmail(input: WelcomeEmailInput): Promise<PrepareWelcomeEmailResult>;
  /** The send (the kernel's sendRecordedEmail): checks the intent and counts the attempt before the SMTP call, writes "sent" at once after it, best effort (a failed write never fails the activity, which would resend). */
  deliverWelcomeEmail(input: WelcomeEmailInput & { emailId: string }): Promise<DeliverWelcomeEmailResult>;
  /** Marks the row sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordWelcomeEmailSent(input: { organizationId: string; emailId: string; messageId: string }): Promise<void>;
}

/**
 * SMTP attempts of a welcome email (the SMTP server's deliberate policy: first retry after 2 s,
 * backoff up to 5 minutes, about an hour and a half in all). Enforced by the delivery activity on
 * SMTP failures (capExternalFailure), so a database outage never uses them up.
 */
export const WELCOME_EMAIL_SMTP_ATTEMPTS = 20;
/** Minutes the SMTP attempts' backoff may take (added to the retry window). */
const SMTP_BUDGET_MINUTES = 90;

function activities(input: WelcomeEmailInput) {
  const window = input.retryWindowMinutes;
  return {
    db: proxyActivities<WelcomeEmailActivities>(activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: window })),
    smtp: proxyActivities<WelcomeEmailActivities>(
      activityOptions({
        startToCloseTimeout: '1 minute',
        initialInterval: '2 seconds',
        maximumInterval: '5 minutes',
        retryWindowMinutes: window,
        extraWindowMinutes: SMTP_BUDGET_MINUTES,
        nonRetryableErrorTypes: ['EmailNotFound'],
      }),
    ),
  };
}

/**
 * Sends a new user their welcome email once; SMTP outages are retried with backoff. The intent is
 * recorded first, the send is its own activity, and recording "sent" is a separate activity whose
 * failure retries only the recording, never the send.
 */
export async function welcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult> {
  const { db, smtp } = activities(input);
  if (!patched(WELCOME_EMAIL_SEND_THEN_RECORD)) return await smtp.sendWelcomeEmail(input);
  const prepared = await db.prepareWelcomeEmail(input);
  if (prepared.status !== 'ready') return prepared;
  const delivered = await smtp.deliverWelcomeEmail({ ...input, emailId: prepared.emailId });
  if (delivered.status !== 'delivered') return delivered;
  await db.recordWelcomeEmailSent({ organizationId: input.organizationId, emailId: delivered.emailId, messageId: delivered.messageId });
  return { status: 'sent', emailId: delivered.emailId, messageId: delivered.messageId };
}
