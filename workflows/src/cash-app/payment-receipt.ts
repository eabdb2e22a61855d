import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const PAYMENT_RECEIPT_TASK_QUEUE = TASK_QUEUES.cashApp;

/** One receipt workflow per payment at a time (a failed or skipped receipt may be requested again later). */
export function paymentReceiptWorkflowId(paymentId: string): string {
  return `payment-receipt-${paymentId}`;
}

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

/** Activity contract, implemented by services/cash-app (createPaymentReceiptActivities). */
export interface PaymentReceiptActivities {
  /** Renders and sends the receipt once (idempotent on the outreach record), or records why it is skipped. */
  sendPaymentReceipt(input: PaymentReceiptInput): Promise<SendPaymentReceiptResult>;
  /** Marks the outreach record `failed` with the last error (unless it was sent meanwhile). */
  markPaymentReceiptFailed(input: { organizationId: string; outreachId: string; error: string }): Promise<void>;
}

const { markPaymentReceiptFailed } = proxyActivities<PaymentReceiptActivities>({
  startToCloseTimeout: '30 seconds',
  // unlimited attempts (the default): a database hiccup must not leave the record pending
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Sends a payment's receipt email: SMTP outages are retried with backoff up to the configured
 * number of attempts; after the last one the outreach record is marked `failed`.
 */
export async function paymentReceipt(input: PaymentReceiptInput): Promise<PaymentReceiptResult> {
  const { sendPaymentReceipt } = proxyActivities<PaymentReceiptActivities>({
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: `${input.retry.initialIntervalSeconds} seconds`,
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: input.retry.maximumAttempts,
    },
  });
  try {
    return await sendPaymentReceipt(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const cause = err.cause;
    const error = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : err.message;
    await markPaymentReceiptFailed({ organizationId: input.organizationId, outreachId: input.outreachId, error });
    return { status: 'failed', error };
  }
}
