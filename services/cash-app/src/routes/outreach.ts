import { z } from 'zod';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { Logger } from 'pino';
import { ConflictError, isoTime, isUuid, NotFoundError, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { businessSearchAttributes, paymentReceipt, paymentReceiptWorkflowId, TASK_QUEUES, type PaymentReceiptInput } from '@rp/workflows';
import { route } from '../deps.js';
import { claimReceiptRecord, getOutreach, getReceiptPayment, listOutreach, markFailed, OUTREACH_STATUSES, OUTREACH_TYPES, type OutreachRow } from '../store/outreach.js';

const MAX_PAGE = 500;

const outreachSchema = z.object({
  object: z.literal('outreach_record'),
  id: z.string(),
  outreach_type: z.enum(OUTREACH_TYPES),
  status: z.enum(OUTREACH_STATUSES).describe('`pending` until the email is sent (`sent`), skipped (`skipped`, see skip_reason) or failed after retries (`failed`, see error).'),
  skip_reason: z.string().nullable(),
  error: z.string().nullable().describe('The last sending error (also while retries are pending).'),
  bank_transaction_id: z.string().nullable(),
  payment_id: z.string().nullable(),
  partner_id: z.string().nullable(),
  email_id: z.string().nullable().describe('Message-ID of the email once sent.'),
  recipient: z.string().nullable(),
  sent_at: z.string().nullable(),
  ...timestampsShape,
});

function outreachView(r: OutreachRow) {
  return {
    object: 'outreach_record' as const,
    id: r.id,
    outreach_type: r.outreach_type,
    status: r.status,
    skip_reason: r.skip_reason,
    error: r.error,
    bank_transaction_id: r.bank_transaction_id,
    payment_id: r.payment_id,
    partner_id: r.partner_id,
    email_id: r.email_id,
    recipient: r.recipient,
    sent_at: isoTime(r.sent_at),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}

/** How long a request waits for the payment's previous receipt workflow to close before answering. */
export const PREVIOUS_RECEIPT_WAIT_MS = 3_000;
/** How long the start of a receipt is then kept waiting in the background before it is left to the next request. */
const PREVIOUS_RECEIPT_BACKGROUND_WAIT_MS = 10 * 60_000;
const POLL_MS = 250;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Whether the workflow `handle` has closed (or is gone) within `ms`, polling its description. */
async function closedWithin(handle: WorkflowHandle, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if ((await handle.describe()).status.name !== 'RUNNING') return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return true;
      throw err;
    }
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
  }
}

/**
 * Make sure the payment's receipt workflow is running for this outreach record: started unless it
 * already runs for it (a concurrent request started it; the record id is in the workflow memo).
 * When the workflow of the payment's previous receipt (failed or skipped) is still closing, it is
 * given `waitMs` to close; still running then, this returns `deferred` without starting (the caller
 * answers at once). A `pending` record whose workflow is gone (the API stopped between writing the
 * record and starting the workflow, or an operator terminated it) is started again.
 */
async function ensureReceiptWorkflow(temporal: Client, input: PaymentReceiptInput, waitMs = PREVIOUS_RECEIPT_WAIT_MS): Promise<'running' | 'deferred'> {
  const workflowId = paymentReceiptWorkflowId(input.paymentId);
  const handle = temporal.workflow.getHandle(workflowId);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const d = await handle.describe();
      if (d.status.name === 'RUNNING') {
        if (d.memo?.outreachId === input.outreachId) return 'running';
        if (!(await closedWithin(handle, waitMs))) return 'deferred';
      }
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    try {
      await temporal.workflow.start(paymentReceipt, {
        taskQueue: TASK_QUEUES.cashApp,
        workflowId,
        args: [input],
        memo: { outreachId: input.outreachId },
        typedSearchAttributes: businessSearchAttributes(input.organizationId, input.paymentId),
      });
      return 'running';
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  throw new Error(`the receipt workflow ${workflowId} could not be started`);
}

/**
 * The previous receipt workflow did not close in time: keep waiting for it outside the request and
 * start this record's workflow when it has. If this process stops first, the record stays `pending`
 * without a workflow and the next request for the payment starts it (see ensureReceiptWorkflow).
 */
function startWhenPreviousCloses(temporal: Client, input: PaymentReceiptInput, log: Logger): void {
  void ensureReceiptWorkflow(temporal, input, PREVIOUS_RECEIPT_BACKGROUND_WAIT_MS)
    .then((outcome) => {
      if (outcome === 'deferred') log.warn({ payment_id: input.paymentId, outreach_id: input.outreachId }, 'previous receipt workflow still running; the receipt starts on the next request');
    })
    .catch((err: unknown) => log.warn({ err, payment_id: input.paymentId, outreach_id: input.outreachId }, 'receipt workflow not started; the next request starts it'));
}

export const outreachRoutes = [
  route({
    method: 'post',
    path: '/v2/cash-app/outreach/payment-receipt',
    operationId: 'sendPaymentReceipt',
    summary: 'Send a payment receipt',
    description:
      'Emails the payment\'s customer a receipt (amount, date, the invoices it paid) and returns the outreach record that ' +
      'tracks it, `pending` at first. The email is sent by the Temporal workflow `payment-receipt-<payment_id>` over SMTP; ' +
      'the record then becomes `sent` (`email_id` = the Message-ID), `skipped` (`skip_reason`: the payment has no customer, ' +
      'or the customer no email address) or `failed` after the configured SMTP retries (`error`). One receipt per payment: ' +
      'while the payment has a `pending` or `sent` receipt, this returns that record (200) and sends nothing; after a ' +
      '`failed` or `skipped` one it creates a new record and tries again (a `pending` record whose workflow is no longer ' +
      'running is started again). Only an approved payment gets a receipt: an unapproved proposal (its payer and ' +
      'allocations are a guess) → 409 conflict, nothing recorded or sent. The request never waits long: when the workflow of ' +
      'the payment\'s previous receipt is still closing after a few seconds, the new record is returned `pending` and its ' +
      'workflow starts as soon as the previous one has closed. Unknown or another organization\'s payment: 404.',
    tags: ['Cash application'],
    body: z.object({ payment_id: z.string().min(1) }),
    response: outreachSchema,
    errors: [404, 409],
    handler: async ({ body, identity, deps, requestId, log }) => {
      const payment = isUuid(body.payment_id) ? await getReceiptPayment(deps.db, identity.org, body.payment_id) : null;
      if (!payment) throw new NotFoundError(`No payment ${body.payment_id}.`);
      if (payment.status !== 'approved') {
        throw new ConflictError(`Payment ${payment.id} is not approved: a receipt is sent only for an approved payment (approve it first with POST /v2/payments/${payment.id}/approve).`);
      }
      const { record, created } = await claimReceiptRecord(deps.db, identity.org, {
        paymentId: payment.id,
        partnerId: payment.partner_id,
        bankTransactionId: payment.bank_transaction_id,
        requestedBy: identity.sub ?? null,
      });
      const input: PaymentReceiptInput = {
        organizationId: identity.org,
        outreachId: record.id,
        paymentId: payment.id,
        requestId,
        retry: { maximumAttempts: deps.config.PAYMENT_RECEIPT_MAX_ATTEMPTS, initialIntervalSeconds: deps.config.PAYMENT_RECEIPT_RETRY_SECONDS },
      };
      let outcome: 'running' | 'deferred' | null = null;
      if (created) {
        try {
          outcome = await ensureReceiptWorkflow(deps.temporal, input);
        } catch (err) {
          // Nothing will send it: do not leave a pending record that blocks the next request.
          await markFailed(deps.db, identity.org, record.id, `could not start the receipt workflow: ${(err as Error).message}`);
          throw err;
        }
      } else if (record.status === 'pending') {
        outcome = await ensureReceiptWorkflow(deps.temporal, input);
      }
      if (outcome === 'deferred') startWhenPreviousCloses(deps.temporal, input, log);
      return outreachView(created ? record : (await getOutreach(deps.db, identity.org, record.id)) ?? record);
    },
  }),
  route({
    method: 'get',
    path: '/v2/cash-app/outreach',
    operationId: 'listOutreachRecords',
    summary: 'List outreach records',
    description: 'Outreach records, newest first. Filters: `outreach_type`, `status`, `payment_id`. Paginated (`page`, `page_size` 1..500).',
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      outreach_type: z.enum(OUTREACH_TYPES).optional(),
      status: z.enum(OUTREACH_STATUSES).optional(),
      payment_id: z.string().uuid().optional(),
    }),
    response: pageEnvelopeSchema(outreachSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listOutreach(
        deps.db,
        identity.org,
        { outreachType: query.outreach_type, status: query.status, paymentId: query.payment_id },
        page.offset,
        page.pageSize,
      );
      return pageOf(rows.map(outreachView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/cash-app/outreach/{outreach_id}',
    operationId: 'getOutreachRecord',
    summary: 'Get an outreach record',
    description: 'An outreach record (e.g. a payment receipt and whether it was sent). Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ outreach_id: z.string() }),
    response: outreachSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      const row = isUuid(params.outreach_id) ? await getOutreach(deps.db, identity.org, params.outreach_id) : undefined;
      if (!row) throw new NotFoundError(`No outreach record ${params.outreach_id}.`);
      return outreachView(row);
    },
  }),
];
