/**
 * The integration middleware's posting queue and its answers to queued postings (`posted` / `failed`): stored on the
 * payment's newest middleware posting under the payment's posting lock, then the payment's
 * `payment-posting-<id>` workflow is woken up (it also reads the answer on its hourly poll, so a
 * failed signal loses nothing).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ConflictError, isUuid, NotFoundError, type Db } from '@rp/platform';
import { paymentPostingWorkflowId, postingReportedSignal } from '@rp/workflows';
import { latestPostingOf, listPostings, lockPaymentPostings, markFailed, markPosted, type PostingRow, type PostingRowStatus } from '../store/payment-postings.js';

export const MIDDLEWARE_PROVIDER = 'middleware';

/** The statuses the middleware's queue shows (the transient `posting` / `unposting` are never the middleware's). */
export const MIDDLEWARE_QUEUE_STATUSES = ['ready_to_post', 'posted', 'failed', 'unposted'] as const satisfies readonly PostingRowStatus[];
export type MiddlewareQueueStatus = (typeof MIDDLEWARE_QUEUE_STATUSES)[number];

/** The middleware's posting queue of the organization, oldest first, optionally of one status. */
export async function middlewareQueue(deps: { db: Db }, organizationId: string, status: MiddlewareQueueStatus | undefined, page: { offset: number; pageSize: number }) {
  return listPostings(deps.db, organizationId, { providerName: MIDDLEWARE_PROVIDER, status }, page.offset, page.pageSize);
}

export type MiddlewareAnswer = { status: 'posted'; erpDocumentNumber: string } | { status: 'failed'; error: string };

/** Wake the payment's posting workflow up; it reads the stored answer (and would find it on its hourly read anyway). */
async function notifyWorkflow(temporal: Client, log: { warn: (o: object, m: string) => void }, row: PostingRow): Promise<void> {
  try {
    await temporal.workflow.getHandle(paymentPostingWorkflowId(row.payment_id)).signal(postingReportedSignal, { postingId: row.id });
  } catch (err) {
    log.warn({ err, posting_id: row.id, not_found: err instanceof WorkflowNotFoundError }, 'could not signal the payment posting workflow');
  }
}

/**
 * Store the middleware's answer for the payment's newest posting. The same answer again changes
 * nothing; another answer to a posting that is no longer `ready_to_post` → 409; unknown → 404.
 */
export async function reportMiddlewarePosting(
  deps: { db: Db; temporal: Client },
  log: { warn: (o: object, m: string) => void },
  request: { organizationId: string; paymentId: string; answer: MiddlewareAnswer },
): Promise<PostingRow> {
  const { organizationId: org, paymentId, answer } = request;
  if (!isUuid(paymentId)) throw new NotFoundError(`No payment ${paymentId} in the posting queue.`);
  const row = await deps.db.transaction(async (trx) => {
    await lockPaymentPostings(trx, org, paymentId);
    const current = await latestPostingOf(trx, org, paymentId, MIDDLEWARE_PROVIDER);
    if (!current) throw new NotFoundError(`No payment ${paymentId} in the posting queue.`);
    const same =
      answer.status === 'posted'
        ? current.status === 'posted' && current.erp_document_number === answer.erpDocumentNumber
        : current.status === 'failed' && current.error === answer.error;
    if (same) return current;
    if (current.status !== 'ready_to_post') throw new ConflictError(`The payment's posting is ${current.status}, not ready_to_post.`);
    const written =
      answer.status === 'posted'
        ? await markPosted(trx, org, current.id, { erpPaymentId: null, erpDocumentNumber: answer.erpDocumentNumber })
        : await markFailed(trx, org, current.id, answer.error);
    return written!;
  });
  await notifyWorkflow(deps.temporal, log, row);
  return row;
}
