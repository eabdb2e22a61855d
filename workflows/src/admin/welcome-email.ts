/** The welcome-email workflow: its id, input, activity options and the activity names of histories recorded before the recorded-email family. */
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

export const WELCOME_EMAIL_TASK_QUEUE = TASK_QUEUES.admin;

export function welcomeEmailWorkflowId(userId: string): string {
  return `welcome-email-${userId}`;
}

/**
 * Patch id of the three-step send (prepare → deliver → record): histories recorded before it ran
 * one `sendWelcomeEmail` activity and still replay that way.
 */
export const WELCOME_EMAIL_SEND_THEN_RECORD = 'welcome-email-send-then-record';

/**
 * Patch id of the recorded-email family (kind `welcome`): histories recorded before it ran the three
 * steps as `prepareWelcomeEmail` / `deliverWelcomeEmail` / `recordWelcomeEmailSent` and still replay that way.
 */
export const WELCOME_EMAIL_RECORDED_EMAIL = 'welcome-email-recorded-email';

export interface WelcomeEmailInput extends RetryWindowInput {
  organizationId: string;
  userId: string;
  /** id of the API request that created the user, for the activity's logs */
  requestId?: string;
}

export type WelcomeEmailResult = RecordedEmailResult;

/**
 * Activities of workflows started before the recorded-email family, implemented by services/admin
 * (createWelcomeEmailActivities) as long as recorded or running workflows may call them. New
 * workflows call the family with kind `welcome` (the outbound-email row keyed `welcome-<userId>`).
 */
export interface WelcomeEmailActivities {
  /** Before the three-step send: claim, send and record in one activity. */
  sendWelcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult>;
  prepareWelcomeEmail(input: WelcomeEmailInput): Promise<PrepareRecordedEmailResult>;
  deliverWelcomeEmail(input: WelcomeEmailInput & { emailId: string }): Promise<DeliverRecordedEmailResult>;
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

/** The database steps under the platform's policy; the delivery under the SMTP server's. */
function welcomeEmailOptions(input: WelcomeEmailInput): RecordedEmailOptions {
  const window = input.retryWindowMinutes;
  const db = activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: window });
  const smtp = activityOptions({
    startToCloseTimeout: '1 minute',
    initialInterval: '2 seconds',
    maximumInterval: '5 minutes',
    retryWindowMinutes: window,
    extraWindowMinutes: SMTP_BUDGET_MINUTES,
    nonRetryableErrorTypes: ['EmailNotFound'],
  });
  return { prepare: db, deliver: smtp, record: db };
}

/** The three steps under the activity names of histories recorded before the family. */
function stepsBeforeFamily(input: WelcomeEmailInput, options: RecordedEmailOptions): RecordedEmailSteps {
  const { prepareWelcomeEmail, recordWelcomeEmailSent } = proxyActivities<WelcomeEmailActivities>(options.prepare);
  const { deliverWelcomeEmail } = proxyActivities<WelcomeEmailActivities>(options.deliver);
  return {
    prepare: () => prepareWelcomeEmail(input),
    deliver: (emailId) => deliverWelcomeEmail({ ...input, emailId }),
    recordSent: (emailId, messageId) => recordWelcomeEmailSent({ organizationId: input.organizationId, emailId, messageId }),
  };
}

/**
 * Sends a new user their welcome email once (the recorded email, kind `welcome`); SMTP outages are
 * retried with backoff, and a send that fails for good fails the workflow.
 */
export async function welcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult> {
  const options = welcomeEmailOptions(input);
  if (!patched(WELCOME_EMAIL_SEND_THEN_RECORD)) return await proxyActivities<WelcomeEmailActivities>(options.deliver).sendWelcomeEmail(input);
  if (!patched(WELCOME_EMAIL_RECORDED_EMAIL)) return await runRecordedEmail(stepsBeforeFamily(input, options));
  return await recordedEmail('welcome', input, options);
}
