import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
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

export interface PaymentReceiptInput {
  organizationId: string;
  /** the outreach record tracking this receipt (and the email's idempotency key) */
  outreachId: string;
  paymentId: string;
  /** id of the API request that asked for the receipt, for the activity's logs */
  requestId?: string;
  /** SMTP retry policy, from the service configuration (recorded in the history, so replays agree) */
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
  /** The SMTP call alone: counts the attempt before it and writes nothing after it (a failed write must not resend). */
  deliverPaymentReceipt(input: PaymentReceiptInput): Promise<DeliverPaymentReceiptResult>;
  /** Marks the record sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordPaymentReceiptSent(input: { organizationId: string; outreachId: string; messageId: string }): Promise<void>;
  /** Marks the outreach record `failed` with the last error (unless it was sent meanwhile). */
  markPaymentReceiptFailed(input: { organizationId: string; outreachId: string; error: string }): Promise<void>;
}

const { markPaymentReceiptFailed, preparePaymentReceipt, recordPaymentReceiptSent } = proxyActivities<PaymentReceiptActivities>({
  startToCloseTimeout: '30 seconds',
  // unlimited attempts (the default): a database hiccup must not leave the record pending
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Sends a payment's receipt email: SMTP outages are retried with backoff up to the configured
 * number of attempts; after the last one the outreach record is marked `failed`. The intent is
 * recorded first, the send is its own activity, and recording "sent" is a separate activity whose
 * failure retries only the recording, never the send.
 */
export async function paymentReceipt(input: PaymentReceiptInput): Promise<PaymentReceiptResult> {
  const { sendPaymentReceipt, deliverPaymentReceipt } = proxyActivities<PaymentReceiptActivities>({
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: `${input.retry.initialIntervalSeconds} seconds`,
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: input.retry.maximumAttempts,
    },
  });
  const sendThenRecord = patched(PAYMENT_RECEIPT_SEND_THEN_RECORD);
  let delivered: DeliverPaymentReceiptResult;
  try {
    if (!sendThenRecord) return await sendPaymentReceipt(input);
    const prepared = await preparePaymentReceipt(input);
    if (prepared.status !== 'ready') return prepared;
    delivered = await deliverPaymentReceipt(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const cause = err.cause;
    const error = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : err.message;
    await markPaymentReceiptFailed({ organizationId: input.organizationId, outreachId: input.outreachId, error });
    return { status: 'failed', error };
  }
  if (delivered.status !== 'delivered') return delivered;
  // The email went out: from here on only the record is retried (a failure here is never a failed receipt).
  await recordPaymentReceiptSent({ organizationId: input.organizationId, outreachId: input.outreachId, messageId: delivered.messageId });
  return { status: 'sent', emailId: delivered.messageId };
}
