/**
 * Business ids of the collections engine (DESIGN §4): the organization's daily run Schedule, the
 * run workflow, and the promise-to-pay workflow. The workflows and their activity contracts live
 * beside this file (collection-run.ts, promise-to-pay.ts); services import the ids from here.
 */
import { TASK_QUEUES } from '../task-queues.js';

/** Collections workflows run on admin's task queue (admin owns the engine). */
export const COLLECTIONS_TASK_QUEUE = TASK_QUEUES.admin;

/** The organization's daily run: a Temporal Schedule at its `collections_run_time`, in its timezone. */
export function collectionsScheduleId(organizationId: string): string {
  return `collections-${organizationId}`;
}

/** One workflow per run (scheduled or requested): `collection-run-<run id>`. */
export function collectionRunWorkflowId(runId: string): string {
  return `collection-run-${runId}`;
}

/** Workflow type the daily Schedule starts: it records a run as of today and runs it. */
export const SCHEDULED_COLLECTION_RUN_WORKFLOW = 'scheduledCollectionRun';

export interface ScheduledCollectionRunInput {
  organizationId: string;
}

/** One workflow per promise to pay, its timer until the promised date's grace period ends. */
export function promiseToPayWorkflowId(promiseId: string): string {
  return `promise-to-pay-${promiseId}`;
}
