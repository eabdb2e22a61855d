/**
 * A collection run (DESIGN §10 "Outreach"): plan → do each planned action exactly once → complete.
 *
 * 1. `planCollectionRun` streams the ledger in pages of customers and writes each page's actions and
 *    step marks in one transaction with the page's cursor, so a killed worker's retry resumes after
 *    the last committed page and never plans an (invoice, step) twice.
 * 2. A real run then does its planned actions in batches (`doCollectionActions`, bounded concurrency
 *    inside), each email or SMS recorded as intent before its send and as result after; sends whose
 *    immediate "sent" write failed come back and are recorded by `recordCollectionActionsSent`, a
 *    separate step that never sends. Actions that met a temporary failure stay planned and are
 *    retried by a later pass after a workflow timer; the last pass fails them (their marks released,
 *    so the next run retries). SMS actions wait in quiet hours (20:00–08:00, the organization's
 *    timezone) on a durable timer until 08:00.
 * 3. `completeCollectionRun` ends the run.
 * A dry run only plans.
 */
import { makeContinueAsNewFunc, proxyActivities, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import type { ScheduledCollectionRunInput } from './collections-contract.js';

export interface CollectionRunInput extends RetryWindowInput {
  organizationId: string;
  runId: string;
  /** where doing resumes after a continue-as-new */
  resume?: { after: string | null; pass: number };
}

export interface UnrecordedSend {
  actionId: string;
  messageId: string | null;
  providerMessageId: string | null;
  segments: number | null;
}

export interface DoActionsResult {
  /** cursor of the next batch of this pass; null: the pass is over */
  next: string | null;
  /** sends whose immediate "sent" write failed: recorded by the separate record step */
  unrecorded: UnrecordedSend[];
  /** at the end of a pass: planned actions left to retry (temporary failures) */
  remaining: number;
  /** at the end of a pass: milliseconds until quiet hours end when SMS actions wait for them (0: none wait) */
  quietWaitMs: number;
}

/** Activity contract, implemented by services/admin (createCollectionRunActivities). */
export interface CollectionRunActivities {
  /** Records the real run of a Schedule action (idempotent by `runId`) as of today in the organization's timezone. */
  recordScheduledCollectionRun(input: { organizationId: string; runId: string }): Promise<{ runId: string } | { skipped: string }>;
  /** Plans the run (resumes after the last committed page); answers whether it is a dry run. */
  planCollectionRun(input: { organizationId: string; runId: string }): Promise<{ dryRun: boolean }>;
  /** Does one batch of the run's planned actions after `after` (by id). `lastPass`: temporary failures fail the action. */
  doCollectionActions(input: { organizationId: string; runId: string; after: string | null; lastPass: boolean }): Promise<DoActionsResult>;
  /** Records sends whose immediate "sent" write failed; idempotent, never sends. */
  recordCollectionActionsSent(input: { organizationId: string; sends: UnrecordedSend[] }): Promise<void>;
  /** Ends the run completed or failed (no-op when it already ended). */
  completeCollectionRun(input: { organizationId: string; runId: string; status: 'completed' | 'failed'; error: string | null }): Promise<void>;
}

/** Passes over the planned actions before a temporary failure fails an action, and the timer between passes. */
export const COLLECTION_RUN_PASSES = 5;
export const COLLECTION_RUN_PASS_DELAY_SECONDS = [30, 60, 120, 240];

function activities(input: RetryWindowInput) {
  const window = input.retryWindowMinutes;
  return {
    db: proxyActivities<CollectionRunActivities>(activityOptions({ startToCloseTimeout: '1 minute', retryWindowMinutes: window })),
    plan: proxyActivities<CollectionRunActivities>(activityOptions({ startToCloseTimeout: '2 hours', heartbeatTimeout: '30 seconds', retryWindowMinutes: window })),
    // a worker that dies mid-batch is noticed within the heartbeat timeout (the batch heartbeats every 5 s)
    act: proxyActivities<CollectionRunActivities>(activityOptions({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '15 seconds', retryWindowMinutes: window })),
  };
}

export async function collectionRun(input: CollectionRunInput): Promise<{ status: 'completed' | 'failed' }> {
  const { db, plan, act } = activities(input);
  const ids = { organizationId: input.organizationId, runId: input.runId };
  try {
    if (!input.resume) {
      const planned = await plan.planCollectionRun(ids);
      if (planned.dryRun) {
        await db.completeCollectionRun({ ...ids, status: 'completed', error: null });
        return { status: 'completed' };
      }
    }
    let after = input.resume?.after ?? null;
    let pass = input.resume?.pass ?? 0;
    for (;;) {
      const r = await act.doCollectionActions({ ...ids, after, lastPass: pass >= COLLECTION_RUN_PASSES - 1 });
      if (r.unrecorded.length) await db.recordCollectionActionsSent({ organizationId: input.organizationId, sends: r.unrecorded });
      if (r.next) {
        after = r.next;
      } else if (r.quietWaitMs > 0) {
        await sleep(r.quietWaitMs);
        after = null;
      } else if (r.remaining > 0) {
        await sleep(`${COLLECTION_RUN_PASS_DELAY_SECONDS[Math.min(pass, COLLECTION_RUN_PASS_DELAY_SECONDS.length - 1)]} seconds`);
        pass++;
        after = null;
      } else {
        break;
      }
      if (workflowInfo().continueAsNewSuggested) await makeContinueAsNewFunc<typeof collectionRun>({ workflowType: 'collectionRun' })({ ...input, resume: { after, pass } });
    }
  } catch (err) {
    await db.completeCollectionRun({ ...ids, status: 'failed', error: 'The run could not finish because a service of the platform was unavailable for too long.' });
    throw err;
  }
  await db.completeCollectionRun({ ...ids, status: 'completed', error: null });
  return { status: 'completed' };
}

/** A time-ordered id (UUIDv7 layout) made deterministically inside the workflow. */
function workflowRunId(): string {
  const hex = Date.now().toString(16).padStart(12, '0');
  const rand = uuid4().replace(/-/g, '');
  const v = `${hex}7${rand.slice(13, 16)}${((parseInt(rand[16]!, 16) & 0x3) | 0x8).toString(16)}${rand.slice(17, 32)}`;
  return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20, 32)}`;
}

/** What the organization's daily Schedule starts: record a real run as of today, then run it. */
export async function scheduledCollectionRun(input: ScheduledCollectionRunInput & RetryWindowInput): Promise<{ status: 'completed' | 'failed' | 'skipped' }> {
  const { db } = activities(input);
  const recorded = await db.recordScheduledCollectionRun({ organizationId: input.organizationId, runId: workflowRunId() });
  if ('skipped' in recorded) return { status: 'skipped' };
  return collectionRun({ ...input, runId: recorded.runId });
}
