/**
 * The remittance-request workflow: its id, input and activity contract. It emails the likely payer of
 * an unidentified deposit and asks which invoices the deposit pays (spec 2.8, outreach_type
 * `remittance_request`), once, through the recorded-email family (kind `remittance-request`) under
 * the same retry policy as a payment receipt.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import { userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import { recordedEmail, type RecordedEmailResult } from '../recorded-email.js';
import { outreachEmailOptions, SMTP_UNAVAILABLE } from './payment-receipt.js';

export const REMITTANCE_REQUEST_TASK_QUEUE = TASK_QUEUES.cashApp;

/** One workflow per outreach record: a failed or skipped request is followed by a new record (and workflow). */
export function remittanceRequestWorkflowId(outreachId: string): string {
  return `remittance-request-${outreachId}`;
}

export interface RemittanceRequestInput extends RetryWindowInput {
  organizationId: string;
  /** the outreach record tracking this request (the email's intent: its id is the idempotency key and makes the Message-ID) */
  outreachId: string;
  bankTransactionId: string;
  /** id of the API request that asked for it, for the activity's logs */
  requestId?: string;
  /** SMTP retry policy, from the service configuration (as a payment receipt's; recorded in the history) */
  retry: { maximumAttempts: number; initialIntervalSeconds: number };
}

export type RemittanceRequestResult = RecordedEmailResult | { status: 'failed'; error: string };

/** The request's own activity beside the recorded-email family, implemented by services/cash-app. */
export interface RemittanceRequestActivities {
  /** Marks the outreach record `failed` with the error (unless it was sent meanwhile) and records outreach.failed. */
  markRemittanceRequestFailed(input: { organizationId: string; outreachId: string; error: string }): Promise<void>;
}

/** Stored on a request that failed for another reason than the email server (an outage that outlasted the retry window, a defect). */
export const REMITTANCE_REQUEST_FAILED =
  'The remittance request could not be sent because a service of the platform was unavailable for too long. Request it again.';

/**
 * Sends the remittance request once: SMTP outages are retried with backoff up to the configured
 * attempts; after the last one, or any failure before the email went out, the outreach record is
 * marked `failed` (a new request for the deposit may then try again). A failure to record "sent"
 * retries only the recording and is never a failed request.
 */
export async function remittanceRequest(input: RemittanceRequestInput): Promise<RemittanceRequestResult> {
  const options = outreachEmailOptions(input);
  const { markRemittanceRequestFailed } = proxyActivities<RemittanceRequestActivities>(options.prepare);
  return recordedEmail('remittance-request', input, options, async (err) => {
    const error = userFacingFailure(err, REMITTANCE_REQUEST_FAILED, [SMTP_UNAVAILABLE]);
    if (error === REMITTANCE_REQUEST_FAILED) log.warn('remittance request failed', { outreachId: input.outreachId, failure: String(err.cause ?? err) });
    await markRemittanceRequestFailed({ organizationId: input.organizationId, outreachId: input.outreachId, error });
    return { status: 'failed' as const, error };
  });
}
