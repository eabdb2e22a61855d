/**
 * Starting the ERP posting of a payment: workflow `payment-posting-<paymentId>` on the integrations
 * task queue (it calls back cash-app's activities to read the payment and record the outcome).
 * One posting workflow per payment at a time: a request while one runs is a conflict. The payment's
 * `posting_status` is set (pending / unposting) in the caller's transaction before the start; a
 * start that fails leaves a visible posting error instead of a payment that waits forever.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ConflictError, type Db } from '@rp/platform';
import { businessSearchAttributes, paymentPosting, paymentPostingWorkflowId, PAYMENT_POSTING_TASK_QUEUE, type PostingOperation } from '@rp/workflows';
import { markPostingNotStarted, revertUnposting } from '../store/payment-posting.js';

export class PostingInProgressError extends ConflictError {
  constructor(paymentId: string) {
    super(`A posting of payment ${paymentId} to the ERP is in progress; wait for it to finish.`);
  }
}

/**
 * Whether the payment's posting workflow is running. One that is just closing (it has recorded its
 * outcome and returns) is given `waitMs` to close before the answer is yes.
 */
export async function postingWorkflowRunning(temporal: Client, paymentId: string, waitMs = 3_000): Promise<boolean> {
  const handle = temporal.workflow.getHandle(paymentPostingWorkflowId(paymentId));
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return false;
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, waitMs))]);
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Start the workflow. A workflow of the payment that is still running (e.g. an unposting writing its
 * last record) is given a few seconds to close first; still running → PostingInProgressError.
 */
export async function startPostingWorkflow(temporal: Client, input: { organizationId: string; paymentId: string; operation: PostingOperation; requestId?: string }): Promise<void> {
  const workflowId = paymentPostingWorkflowId(input.paymentId);
  for (let attempt = 0; ; attempt++) {
    try {
      await temporal.workflow.start(paymentPosting, {
        taskQueue: PAYMENT_POSTING_TASK_QUEUE,
        workflowId,
        args: [input],
        typedSearchAttributes: businessSearchAttributes(input.organizationId, input.paymentId),
      });
      return;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || attempt >= 1) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new PostingInProgressError(input.paymentId);
        throw err;
      }
      const handle = temporal.workflow.getHandle(workflowId);
      await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, 5_000))]);
    }
  }
}

/**
 * Start a posting whose `pending` / `unposting` state the caller has committed. When the start
 * fails, the state is put back with the reason as the posting error (shown in the caller's answer;
 * POST /v2/payments/{id}/post or /unpost tries again).
 */
export async function requestPosting(
  deps: { db: Db; temporal: Client },
  input: { organizationId: string; paymentId: string; operation: PostingOperation; requestId?: string },
): Promise<void> {
  try {
    await startPostingWorkflow(deps.temporal, input);
  } catch (err) {
    const reason = `Could not start the ERP ${input.operation === 'post' ? 'posting' : 'unposting'}: ${(err as Error).message}`;
    if (input.operation === 'post') await markPostingNotStarted(deps.db, input.organizationId, input.paymentId, reason);
    else await revertUnposting(deps.db, input.organizationId, input.paymentId, reason);
  }
}
