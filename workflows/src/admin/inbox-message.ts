/**
 * One accepted inbox message, read end to end (workflow type INBOX_MESSAGE_WORKFLOW, id
 * inboxMessageWorkflowId, admin's task queue): admin parses, reads, matches, assigns and acts on it;
 * remittance advice goes to cash-app's activity on cash-app's own task queue; admin then marks the
 * message processed and records its events. Every step is idempotent (a retry finds what an earlier
 * attempt wrote), so the workflow may be retried or replayed freely. A message that cannot be read
 * is marked `failed` with a user-facing reason; the raw message stays in object storage. Advice that
 * cash-app could not record (after its retry window) leaves the message processed, the reason in
 * `processing_error`.
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import type { InboundRemittanceActivities, InboundRemittanceInput, InboundRemittanceResult, InboxMessageInput } from './inbox-contract.js';

export type InboxMessageWorkflowInput = InboxMessageInput & RetryWindowInput;

export type InboxProcessResult = { state: 'missing' } | { state: 'done' } | { state: 'processing'; remittance: InboundRemittanceInput | null; autoAssigned: boolean };

/** Activity contract, implemented by services/admin (createInboxMessageActivities). */
export interface InboxMessageActivities {
  /** Parses, reads, matches, assigns and acts on the message (while it is `received`); answers what cash-app is to read. */
  processInboxMessage(input: InboxMessageInput): Promise<InboxProcessResult>;
  /** Marks the message processed with the remittances recorded, and records inbox_message.received (and .assigned when assigned automatically). */
  finishInboxMessage(input: InboxMessageInput & { remittance: InboundRemittanceResult | null; remittanceError: string | null; autoAssigned: boolean }): Promise<void>;
  /** Marks the message failed with a reason users read. */
  failInboxMessage(input: InboxMessageInput & { error: string }): Promise<void>;
}

export async function inboxMessage(input: InboxMessageWorkflowInput): Promise<'processed' | 'missing' | 'failed'> {
  const base = { retryWindowMinutes: input.retryWindowMinutes } as const;
  const admin = proxyActivities<InboxMessageActivities>(activityOptions({ ...base, startToCloseTimeout: '5 minutes', nonRetryableErrorTypes: ['UnreadableMessage'] }));
  const cash = proxyActivities<InboundRemittanceActivities>(activityOptions({ ...base, startToCloseTimeout: '5 minutes', taskQueue: TASK_QUEUES.cashApp }));
  const ids: InboxMessageInput = { organizationId: input.organizationId, inboxMessageId: input.inboxMessageId };
  try {
    const processed = await admin.processInboxMessage(ids);
    if (processed.state === 'missing') return 'missing';
    if (processed.state === 'done') return 'processed';
    let remittance: InboundRemittanceResult | null = null;
    let remittanceError: string | null = null;
    if (processed.remittance) {
      try {
        remittance = await cash.recordInboundRemittances(processed.remittance);
      } catch (err) {
        if (isCancellation(err)) throw err;
        // the message was read, matched and acted on: it is processed, with why its advice is missing
        remittanceError = userFacingFailure(err, 'cash application did not answer in time.');
      }
    }
    await admin.finishInboxMessage({ ...ids, remittance, remittanceError, autoAssigned: processed.autoAssigned });
    return 'processed';
  } catch (err) {
    if (isCancellation(err)) throw err;
    await admin.failInboxMessage({ ...ids, error: userFacingFailure(err, 'The message could not be read; its raw copy is kept.', ['UnreadableMessage']) });
    return 'failed';
  }
}
