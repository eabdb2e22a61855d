import { proxyActivities } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const WELCOME_EMAIL_TASK_QUEUE = TASK_QUEUES.admin;

export function welcomeEmailWorkflowId(userId: string): string {
  return `welcome-email-${userId}`;
}

export interface WelcomeEmailInput {
  organizationId: string;
  userId: string;
  /** id of the API request that created the user, for the activity's logs */
  requestId?: string;
}

export type WelcomeEmailResult =
  | { status: 'sent'; emailId: string; messageId: string }
  | { status: 'already-sent'; emailId: string; messageId: string | null }
  | { status: 'skipped'; reason: string };

/** Activity contract, implemented by services/admin (createWelcomeEmailActivities). */
export interface WelcomeEmailActivities {
  sendWelcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult>;
}

const { sendWelcomeEmail } = proxyActivities<WelcomeEmailActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/** Sends a new user their welcome email once; SMTP outages are retried with backoff. */
export async function welcomeEmail(input: WelcomeEmailInput): Promise<WelcomeEmailResult> {
  return await sendWelcomeEmail(input);
}
