import { ActivityFailure, log, patched, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export const PAYMENT_RECEIPT_TASK_QUEUE = TASK_QUEUES.cashApp;

/** One receipt workflow per payment at a time (a failed or skipped receipt may be requested again later). */
export function paymentReceiptWorkflowId(paymentId: string): string {
  return `payment-receipt-${paymentId}`;
}

/**
 * Patch id of the three-step send (prepare → deliver → record): histories recorded before it ran
 * one `sendPaymentReceipt` activity and still replay that way.
 */
export const PAYMENT_RECEIPT_SEND_THEN_RECORD = 'payment-receipt-send-then-record';

export interface PaymentReceiptInput extends RetryWindowInput {
  organizationId: string;
  /** the outreach record tracking this receipt (and the email's idempotency key) */
  outreachId: string;
  paymentId: string;
  /** id of the API request that asked for the receipt, for the activity's logs */
  requestId?: string;
  /**
   * SMTP retry policy, from the service configuration (recorded in the history, so replays agree).
   * The delivery activity enforces `maximumAttempts` on SMTP failures itself (capExternalFailure):
   * database outages are retried for the retry window and never use these attempts up.
   */
  retry: { maximumAttempts: number; initialIntervalSeconds: number };
}

export type SendPaymentReceiptResult =
  | { status: 'sent'; emailId: string }
  | { status: 'already-sent'; emailId: string | null }
  | { status: 'skipped'; reason: string };

export type PaymentReceiptResult = SendPaymentReceiptResult | { status: 'failed'; error: string };

export type PreparePaymentReceiptResult = { status: 'ready' } | Exclude<SendPaymentReceiptResult, { status: 'sent' }>;
export type DeliverPaymentReceiptResult = { status: 'delivered'; messageId: string } | Exclude<SendPaymentReceiptResult, { status: 'sent' }>;

/** Activity contract, implemented by services/cash-app (createPaymentReceiptActivities). */
export interface PaymentReceiptActivities {
  /** Before the patch: renders, sends and records in one activity (kept for running and recorded workflows). */
  sendPaymentReceipt(input: PaymentReceiptInput): Promise<SendPaymentReceiptResult>;
  /** Records the intent on the outreach record (recipient; the record id makes the Message-ID), or why nothing is sent. */
  preparePaymentReceipt(input: PaymentReceiptInput): Promise<PreparePaymentReceiptResult>;
  /** The send (the kernel's sendRecordedEmail): checks the intent and counts the attempt before the SMTP call, writes "sent" at once after it, best effort (a failed write never fails the activity, which would resend). */
  deliverPaymentReceipt(input: PaymentReceiptInput): Promise<DeliverPaymentReceiptResult>;
  /** Marks the record sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordPaymentReceiptSent(input: { organizationId: string; outreachId: string; messageId: string }): Promise<void>;
  /** Marks the outreach record `failed` with the last error (unless it was sent meanwhile). */
  markPaymentReceiptFailed(input: { organizationId: string; outreachId: string; error: string }): Promise<void>;
}

/** Failure type of an SMTP server that could not be reached or answered a temporary error (its message is written for users). */
export const SMTP_UNAVAILABLE = 'SmtpUnavailable';

/** Stored on a receipt that failed for another reason than the email server (an outage that outlasted the retry window, a defect). */
export const RECEIPT_FAILED =
  'The receipt could not be sent because a service of the platform was unavailable for too long. Request the receipt again.';

/** Minutes the SMTP policy's backoff may take over its attempts (added to the retry window). */
function smtpBudgetMinutes(retry: PaymentReceiptInput['retry']): number {
  let seconds = 0;
  for (let k = 0; k < retry.maximumAttempts; k++) seconds += Math.min(retry.initialIntervalSeconds * 2 ** k, 300) + 60;
  return Math.ceil(seconds / 60);
}

/**
 * Sends a payment's receipt email: SMTP outages are retried with backoff up to the configured
 * number of attempts; after the last one the outreach record is marked `failed`. The intent is
 * recorded first, the send is its own activity, and recording "sent" is a separate activity whose
 * failure retries only the recording, never the send.
 */
export async function paymentReceipt(input: PaymentReceiptInput): Promise<PaymentReceiptResult> {
  const { markPaymentReceiptFailed, preparePaymentReceipt, recordPaymentReceiptSent } = proxyActivities<PaymentReceiptActivities>(
    activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: input.retryWindowMinutes }),
  );
  // The SMTP server's deliberate policy: the configured first interval, backoff up to 5 minutes.
  const { sendPaymentReceipt, deliverPaymentReceipt } = proxyActivities<PaymentReceiptActivities>(
    activityOptions({
      startToCloseTimeout: '1 minute',
      initialInterval: `${input.retry.initialIntervalSeconds} seconds`,
      maximumInterval: '5 minutes',
      retryWindowMinutes: input.retryWindowMinutes,
      extraWindowMinutes: smtpBudgetMinutes(input.retry),
      nonRetryableErrorTypes: ['ReceiptFailed', 'SmtpRejected'],
    }),
  );
  const sendThenRecord = patched(PAYMENT_RECEIPT_SEND_THEN_RECORD);
  let delivered: DeliverPaymentReceiptResult;
  try {
    if (!sendThenRecord) return await sendPaymentReceipt(input);
    const prepared = await preparePaymentReceipt(input);
    if (prepared.status !== 'ready') return prepared;
    delivered = await deliverPaymentReceipt(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // Users read `error`: the email server's answer, or a message they can act on (never an outage's technical text)
    const error = userFacingFailure(err, RECEIPT_FAILED, [SMTP_UNAVAILABLE]);
    if (error === RECEIPT_FAILED) log.warn('payment receipt failed', { outreachId: input.outreachId, failure: String(err.cause ?? err) });
    await markPaymentReceiptFailed({ organizationId: input.organizationId, outreachId: input.outreachId, error });
    return { status: 'failed', error };
  }
  if (delivered.status !== 'delivered') return delivered;
  // The email went out: from here on only the record is retried (a failure here is never a failed receipt).
  await recordPaymentReceiptSent({ organizationId: input.organizationId, outreachId: input.outreachId, messageId: delivered.messageId });
  return { status: 'sent', emailId: delivered.messageId };
}
