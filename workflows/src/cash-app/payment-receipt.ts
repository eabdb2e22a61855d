/** The payment-receipt workflow: its id, input, activity options, the receipt's failure record and the activity names of histories recorded before the recorded-email family. */
import { ActivityFailure, log, patched, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import { recordedEmail, runRecordedEmail, type RecordedEmailOptions, type RecordedEmailResult, type RecordedEmailSteps } from '../recorded-email.js';

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

/**
 * Patch id of the recorded-email family (kind `receipt`): histories recorded before it ran the three
 * steps as `preparePaymentReceipt` / `deliverPaymentReceipt` / `recordPaymentReceiptSent` and still replay that way.
 */
export const PAYMENT_RECEIPT_RECORDED_EMAIL = 'payment-receipt-recorded-email';

export interface PaymentReceiptInput extends RetryWindowInput {
  organizationId: string;
  /** the outreach record tracking this receipt (the email's intent: its id is the idempotency key and makes the Message-ID) */
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

/** A receipt's answer names the Message-ID it was sent with `emailId` (null when a receipt sent earlier has none recorded). */
export type SendPaymentReceiptResult =
  | { status: 'sent'; emailId: string }
  | { status: 'already-sent'; emailId: string | null }
  | { status: 'skipped'; reason: string };

export type PaymentReceiptResult = SendPaymentReceiptResult | { status: 'failed'; error: string };

export type PreparePaymentReceiptResult = { status: 'ready' } | Exclude<SendPaymentReceiptResult, { status: 'sent' }>;
export type DeliverPaymentReceiptResult = { status: 'delivered'; messageId: string } | Exclude<SendPaymentReceiptResult, { status: 'sent' }>;

/**
 * The receipt's own activity beside the recorded-email family (kind `receipt`), and the activities of
 * workflows started before the family, implemented by services/cash-app
 * (createPaymentReceiptActivities) as long as recorded or running workflows may call them.
 */
export interface PaymentReceiptActivities {
  /** Marks the outreach record `failed` with the last error (unless it was sent meanwhile). */
  markPaymentReceiptFailed(input: { organizationId: string; outreachId: string; error: string }): Promise<void>;
  /** Before the three-step send: renders, sends and records in one activity. */
  sendPaymentReceipt(input: PaymentReceiptInput): Promise<SendPaymentReceiptResult>;
  preparePaymentReceipt(input: PaymentReceiptInput): Promise<PreparePaymentReceiptResult>;
  deliverPaymentReceipt(input: PaymentReceiptInput): Promise<DeliverPaymentReceiptResult>;
  recordPaymentReceiptSent(input: { organizationId: string; outreachId: string; messageId: string }): Promise<void>;
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
 * The database steps under the platform's policy; the delivery under the SMTP server's: the configured
 * first interval, backoff up to 5 minutes. Shared by cash-app's outreach emails (receipts and
 * remittance requests), whose inputs carry the same retry settings.
 */
export function outreachEmailOptions(input: Pick<PaymentReceiptInput, 'retry' | 'retryWindowMinutes'>): RecordedEmailOptions {
  const db = activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: input.retryWindowMinutes });
  const smtp = activityOptions({
    startToCloseTimeout: '1 minute',
    initialInterval: `${input.retry.initialIntervalSeconds} seconds`,
    maximumInterval: '5 minutes',
    retryWindowMinutes: input.retryWindowMinutes,
    extraWindowMinutes: smtpBudgetMinutes(input.retry),
    nonRetryableErrorTypes: ['ReceiptFailed', 'SmtpRejected'],
  });
  return { prepare: db, deliver: smtp, record: db };
}

/** The three steps under the activity names of histories recorded before the family (the outreach record is the intent). */
function stepsBeforeFamily(input: PaymentReceiptInput, options: RecordedEmailOptions): RecordedEmailSteps {
  const { preparePaymentReceipt, recordPaymentReceiptSent } = proxyActivities<PaymentReceiptActivities>(options.prepare);
  const { deliverPaymentReceipt } = proxyActivities<PaymentReceiptActivities>(options.deliver);
  const emailId = input.outreachId;
  const notSent = (r: Exclude<SendPaymentReceiptResult, { status: 'sent' }>): Exclude<RecordedEmailResult, { status: 'sent' }> =>
    r.status === 'already-sent' ? { status: 'already-sent', emailId, messageId: r.emailId } : r;
  return {
    prepare: async () => {
      const prepared = await preparePaymentReceipt(input);
      return prepared.status === 'ready' ? { status: 'ready', emailId } : notSent(prepared);
    },
    deliver: async () => {
      const delivered = await deliverPaymentReceipt(input);
      return delivered.status === 'delivered' ? { status: 'delivered', emailId, messageId: delivered.messageId } : notSent(delivered);
    },
    recordSent: (_emailId, messageId) => recordPaymentReceiptSent({ organizationId: input.organizationId, outreachId: input.outreachId, messageId }),
  };
}

/** The receipt's answer: `emailId` names the Message-ID, as it always has. */
function receiptResult(result: RecordedEmailResult | { status: 'failed'; error: string }): PaymentReceiptResult {
  if (result.status === 'sent') return { status: 'sent', emailId: result.messageId };
  if (result.status === 'already-sent') return { status: 'already-sent', emailId: result.messageId };
  return result;
}

/**
 * Sends a payment's receipt email once (the recorded email, kind `receipt`): SMTP outages are
 * retried with backoff up to the configured number of attempts; after the last one, or any failure
 * before the email went out, the outreach record is marked `failed`. A failure to record "sent"
 * retries only the recording and is never a failed receipt.
 */
export async function paymentReceipt(input: PaymentReceiptInput): Promise<PaymentReceiptResult> {
  const options = outreachEmailOptions(input);
  const { markPaymentReceiptFailed } = proxyActivities<PaymentReceiptActivities>(options.prepare);
  const failed = async (err: ActivityFailure): Promise<{ status: 'failed'; error: string }> => {
    // Users read `error`: the email server's answer, or a message they can act on (never an outage's technical text)
    const error = userFacingFailure(err, RECEIPT_FAILED, [SMTP_UNAVAILABLE]);
    if (error === RECEIPT_FAILED) log.warn('payment receipt failed', { outreachId: input.outreachId, failure: String(err.cause ?? err) });
    await markPaymentReceiptFailed({ organizationId: input.organizationId, outreachId: input.outreachId, error });
    return { status: 'failed', error };
  };
  if (!patched(PAYMENT_RECEIPT_SEND_THEN_RECORD)) {
    try {
      return await proxyActivities<PaymentReceiptActivities>(options.deliver).sendPaymentReceipt(input);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return await failed(err);
    }
  }
  if (!patched(PAYMENT_RECEIPT_RECORDED_EMAIL)) return receiptResult(await runRecordedEmail(stepsBeforeFamily(input, options), failed));
  return receiptResult(await recordedEmail('receipt', input, options, failed));
}
