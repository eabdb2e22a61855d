import { ActivityFailure, condition, continueAsNew, defineSignal, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

/**
 * Posting applied cash back to the ERP. The workflow runs on the integrations task queue (the ERP
 * is integrations' business) and reaches cash-app's payments only through activities on the
 * cash-app task queue, so neither service reads the other's schema.
 */
export const PAYMENT_POSTING_TASK_QUEUE = TASK_QUEUES.integrations;

/** One posting workflow per payment at a time (a failed posting may be retried later). */
export function paymentPostingWorkflowId(paymentId: string): string {
  return `payment-posting-${paymentId}`;
}

export type PostingOperation = 'post' | 'unpost';

export interface PaymentPostingInput extends RetryWindowInput {
  organizationId: string;
  paymentId: string;
  operation: PostingOperation;
  /** id of the API request that asked for it, for the activities' logs */
  requestId?: string;
}

export type PaymentPostingStatus = 'not_posted' | 'pending' | 'posted' | 'failed' | 'unposting';

/** One allocation as the ERP sees it: the invoice (its ledger origin and ERP id) and the cash applied, or a credit memo and the credit applied. */
export interface PostingLine {
  invoiceId: string;
  /** the ledger document's kind; a credit memo's amountPaid is the credit applied (absent in histories from before memos: invoice) */
  kind?: 'invoice' | 'credit_memo';
  /** ledger origin of the invoice: `middleware` or `connection:<id>` */
  origin: string;
  /** the ERP's id of the invoice (QuickBooks Invoice Id), when the ledger has one */
  remoteId: string | null;
  documentNumber: string;
  companyCode: string;
  fiscalYear: string;
  /** decimal strings */
  amountPaid: string;
  amountDiscount: string;
  amountWithheld: string;
  adjustmentAmount: string;
}

/** What cash-app hands to posting (amounts are exact decimal strings). */
export interface PaymentForPosting {
  paymentId: string;
  status: 'unapproved' | 'approved';
  postingStatus: PaymentPostingStatus;
  postingId: string | null;
  amount: string;
  currency: string;
  paymentDate: string | null;
  bankReference: string | null;
  partner: { id: string; origin: string; remoteId: string; name: string } | null;
  lines: PostingLine[];
  /** amount − the allocations' cash (invoices' amount_paid less memos' credit): posted on account where the provider allows it */
  unallocatedAmount: string;
}

export type PostingOutcome =
  | {
      status: 'posted';
      postingId: string;
      provider: string;
      /** the provider's cash_app_features.can_unpost_payment */
      canUnpost: boolean;
      erpPaymentId: string | null;
      erpDocumentNumber: string | null;
      /** ISO time the ERP was known to have the payment */
      postedAt: string;
      /**
       * The ERP payment was found by the payment's posting key — stored by an earlier attempt whose
       * answer was lost — and adopted instead of creating a second one (absent in histories from
       * before adoption existed: false).
       */
      adopted?: boolean;
    }
  | { status: 'failed'; postingId: string | null; provider: string | null; error: string }
  | { status: 'unposted'; postingId: string }
  | { status: 'unpost_failed'; postingId: string | null; error: string };

export type PreparedPosting =
  | { mode: 'direct'; postingId: string; provider: string }
  | { mode: 'queue'; postingId: string; provider: string }
  /** nothing to send: already posted by an earlier attempt, or refused before any ERP call */
  | { mode: 'done'; outcome: PostingOutcome };

export type PaymentPostingResult = PostingOutcome | { status: 'skipped'; reason: string };

/** Sent by the middleware endpoints after they stored the middleware's answer (wakes the workflow up). */
export const postingReportedSignal = defineSignal<[{ postingId: string }]>('postingReported');

/** Activities on the cash-app task queue (createPaymentPostingActivities in services/cash-app). */
export interface CashAppPostingActivities {
  /**
   * The payment as posting sees it. With `operation` (workflows started since start-then-commit), a
   * payment not yet in the state the operation's request commits (`pending` / `unposting`) is
   * waited for briefly: the request starts the workflow before its transaction commits.
   */
  loadPaymentForPosting(input: { organizationId: string; paymentId: string; operation?: PostingOperation }): Promise<PaymentForPosting | null>;
  /** Stores the outcome on the payment (idempotent; outcomes of another attempt are ignored). */
  recordPaymentPosting(input: { organizationId: string; paymentId: string; operation: PostingOperation; outcome: PostingOutcome }): Promise<void>;
}

/** Activities on the integrations task queue (createPaymentPostingActivities in services/integrations). */
export interface IntegrationsPostingActivities {
  /** Picks the ERP (the invoices' origin) and records the intent: the posting row whose id is the idempotency key. */
  preparePaymentPosting(input: { organizationId: string; payment: PaymentForPosting; requestId?: string }): Promise<PreparedPosting>;
  /** Direct providers: calls the ERP with the idempotency key, then records the result; an ERP refusal is a `failed` outcome. */
  submitPaymentPosting(input: { organizationId: string; postingId: string; requestId?: string }): Promise<PostingOutcome>;
  /** Marks the posting failed after the ERP call gave up (unreachable after the retries). */
  failPaymentPosting(input: { organizationId: string; postingId: string; error: string }): Promise<PostingOutcome>;
  /** Queue providers: the middleware's answer once it arrived, null while `ready_to_post`. */
  readPaymentPosting(input: { organizationId: string; postingId: string }): Promise<PostingOutcome | null>;
  /** Removes the payment from the ERP (direct providers that can). */
  unpostPayment(input: { organizationId: string; paymentId: string; requestId?: string }): Promise<PostingOutcome>;
}

/**
 * ERP calls that the ERP failed (unreachable, 5xx, rate limited) are tried this many times, then the
 * posting is marked failed (POST /v2/payments/{id}/post retries): the ERP's deliberate policy,
 * enforced by the activity (capExternalFailure) so a database outage never uses the attempts up.
 */
export const POSTING_PROVIDER_ATTEMPTS = 8;

/** Failure types whose messages are written for users (the ERP's answer). */
const ERP_FAILURES = ['AuthenticationRequired', 'ProviderMisconfigured', 'PostingNotFound', 'ProviderUnavailable', 'RateLimited'];

/** Stored on a posting that failed for another reason than the ERP (an outage that outlasted the retry window, a defect). */
export const POSTING_FAILED = 'Posting stopped because a service of the platform was unavailable for too long. Post the payment again.';

function activities(input: PaymentPostingInput) {
  const window = input.retryWindowMinutes;
  return {
    // a database hiccup must not lose an ERP result: outages are retried for the retry window
    cashApp: proxyActivities<CashAppPostingActivities>(activityOptions({ taskQueue: TASK_QUEUES.cashApp, startToCloseTimeout: '1 minute', retryWindowMinutes: window })),
    local: proxyActivities<IntegrationsPostingActivities>(activityOptions({ startToCloseTimeout: '1 minute', retryWindowMinutes: window })),
    // The ERP call is idempotent (the posting id is its requestid): retrying after a lost answer or
    // a failed result write returns the same ERP payment. Unreachable/5xx/429 are retried with
    // backoff up to POSTING_PROVIDER_ATTEMPTS; then the posting is marked failed.
    erp: proxyActivities<IntegrationsPostingActivities>(
      activityOptions({
        startToCloseTimeout: '2 minutes',
        initialInterval: '2 seconds',
        maximumInterval: '2 minutes',
        retryWindowMinutes: window,
        extraWindowMinutes: 30,
        nonRetryableErrorTypes: ['AuthenticationRequired', 'ProviderMisconfigured', 'PostingNotFound'],
      }),
    ),
  };
}

/** How long the workflow sleeps between reads of a queued posting when no signal arrives. */
const QUEUE_POLL = '1 hour';
/** A middleware may take days: after this many reads the workflow continues as new (same input, it finds its posting again). */
const POLLS_PER_RUN = 48;

/** The stored error: the ERP's answer as `<type>: <message>`, else POSTING_FAILED (the technical failure goes to the log). */
function failureMessage(err: unknown): string {
  const cause = (err as { cause?: { type?: string } }).cause;
  const message = userFacingFailure(err, POSTING_FAILED, ERP_FAILURES);
  if (message === POSTING_FAILED) {
    log.warn('payment posting failed', { failure: String(cause ?? err) });
    return message;
  }
  return cause?.type ? `${cause.type}: ${message}` : message;
}

/**
 * Posts an approved payment to the ERP of its invoices (operation `post`) or removes it there
 * (`unpost`), and records the outcome on the payment in cash-app.
 *
 * post: intent recorded (posting row) → QuickBooks Online: Payment created with the row id as
 * `requestid`, result recorded → outcome to cash-app. Middleware: the row waits `ready_to_post`
 * until the middleware answers through the API (signal, with an hourly read as a fallback; after
 * two days of waiting the workflow continues as new, which finds the same posting again).
 */
export async function paymentPosting(input: PaymentPostingInput): Promise<PaymentPostingResult> {
  const { cashApp, local, erp } = activities(input);
  const reported = new Set<string>();
  setHandler(postingReportedSignal, ({ postingId }) => {
    reported.add(postingId);
  });
  const { organizationId, paymentId, requestId } = input;
  const payment = await cashApp.loadPaymentForPosting({ organizationId, paymentId, operation: input.operation });
  if (!payment) return { status: 'skipped', reason: 'the payment no longer exists' };

  let outcome: PostingOutcome;
  if (input.operation === 'unpost') {
    if (payment.postingStatus !== 'unposting') return { status: 'skipped', reason: `the payment is ${payment.postingStatus}, not unposting` };
    try {
      outcome = await erp.unpostPayment({ organizationId, paymentId, requestId });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      outcome = { status: 'unpost_failed', postingId: payment.postingId, error: failureMessage(err) };
    }
  } else {
    if (payment.status !== 'approved' || payment.postingStatus !== 'pending') {
      return { status: 'skipped', reason: `the payment is ${payment.status} with posting ${payment.postingStatus}` };
    }
    const prepared = await local.preparePaymentPosting({ organizationId, payment, requestId });
    if (prepared.mode === 'done') {
      outcome = prepared.outcome;
    } else if (prepared.mode === 'direct') {
      try {
        outcome = await erp.submitPaymentPosting({ organizationId, postingId: prepared.postingId, requestId });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        outcome = await local.failPaymentPosting({ organizationId, postingId: prepared.postingId, error: failureMessage(err) });
      }
    } else {
      const postingId = prepared.postingId;
      let answer: PostingOutcome | null = await local.readPaymentPosting({ organizationId, postingId });
      let polls = 0;
      while (!answer) {
        if (polls >= POLLS_PER_RUN || workflowInfo().continueAsNewSuggested) await continueAsNew<typeof paymentPosting>(input);
        await condition(() => reported.has(postingId), QUEUE_POLL);
        reported.delete(postingId);
        polls += 1;
        answer = await local.readPaymentPosting({ organizationId, postingId });
      }
      outcome = answer;
    }
  }
  await cashApp.recordPaymentPosting({ organizationId, paymentId, operation: input.operation, outcome });
  return outcome;
}
