import { ActivityCancellationType, CancellationScope, isCancellation, log, proxyActivities } from '@temporalio/workflow';
import { activityOptions, userFacingFailure, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';
import { CUSTOMER_HABITS_TASK_QUEUE, type CustomerHabitsActivities, type CustomerHabitsObject } from './contracts.js';

export const PLAYBOOK_EXTRACTION_TASK_QUEUE = TASK_QUEUES.knowledge;

export function playbookExtractionWorkflowId(jobId: string): string {
  return `playbook-extraction-${jobId}`;
}

/** The job's processing stages, in order (spec 3: the job's status while each runs). */
export const EXTRACTION_STAGES = ['extracting', 'deduping', 'enriching', 'synthesizing'] as const;
export type ExtractionStage = (typeof EXTRACTION_STAGES)[number];

/** Ids only: texts stay in the database (payloads stay small). */
export interface PlaybookExtractionInput extends RetryWindowInput {
  organizationId: string;
  jobId: string;
  /**
   * The job's extraction type, given at start by jobs requested since the onboarding cash-app habits
   * (absent in older histories: those run as before, without the cash-app call). Only `onboarding`
   * changes the command sequence (one customerPaymentHabits call on the cash-app queue before extracting).
   */
  extractionType?: 'file' | 'onboarding' | 'synthesis';
}

/** extractMemories' input: onboarding jobs carry a reference to the cash-app habits in object storage (never the aggregates). */
export interface ExtractMemoriesInput extends PlaybookExtractionInput {
  cashHabits?: CustomerHabitsObject;
}

/** What a stage activity reports (counts only). */
export interface ExtractionStageResult {
  /** the job row does not exist (never committed: the request failed between start and commit) */
  missing: boolean;
  done: number;
  total: number;
}

export type PlaybookExtractionResult =
  | { status: 'complete'; memories: number; proposals: number }
  | { status: 'failed'; error: string }
  | { status: 'missing' };

/**
 * Activity contract, implemented by services/knowledge (createPlaybookExtractionActivities). Each
 * stage sets the job's status to its own name when it starts, heartbeats, writes its output durably
 * (memories unique per job and key, proposals unique per job and item key: a retried stage inserts
 * nothing twice), and records progress and counters from the stored rows.
 */
export interface PlaybookExtractionActivities {
  /** file: parse the stored file into pages and memories; onboarding / synthesis: mine the organization's data. */
  extractMemories(input: ExtractMemoriesInput): Promise<ExtractionStageResult>;
  /** Marks exact and near duplicates (within the job, against the memories of completed jobs and live articles). */
  dedupeMemories(input: PlaybookExtractionInput): Promise<ExtractionStageResult>;
  /** Links customers and segments, normalises entities, infers the collection. */
  enrichMemories(input: PlaybookExtractionInput): Promise<ExtractionStageResult>;
  /** Groups the kept memories into knowledge items and stores one proposal each. */
  synthesizeProposals(input: PlaybookExtractionInput): Promise<ExtractionStageResult>;
  completeExtraction(input: PlaybookExtractionInput): Promise<{ memories: number; proposals: number }>;
  /** `failed` with `error` unless the job already ended (complete or failed). */
  failExtraction(input: PlaybookExtractionInput & { error: string }): Promise<void>;
}

/** Failure types of a job's own problem (the file cannot be parsed, the job was closed): never retried. */
export const EXTRACTION_ERROR = 'ExtractionError';

/** `error` of a job cancelled through POST …/cancel. */
export const EXTRACTION_CANCELLED = 'cancelled';

/** Stored on a job whose processing failed for another reason than its input (an outage that outlasted the retry window, a defect). */
export const EXTRACTION_PROCESSING_FAILED =
  'Extraction stopped because a service of the platform was unavailable for too long. Request the extraction again; the file is kept.';

function activities(input: PlaybookExtractionInput) {
  const common = { retryWindowMinutes: input.retryWindowMinutes, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };
  return {
    // A stage on a 50 MB file takes minutes; the heartbeat timeout, not this bound, detects a lost worker.
    stage: proxyActivities<PlaybookExtractionActivities>(
      activityOptions({ ...common, startToCloseTimeout: '1 hour', heartbeatTimeout: '10 seconds', nonRetryableErrorTypes: [EXTRACTION_ERROR] }),
    ),
    quick: proxyActivities<PlaybookExtractionActivities>(activityOptions({ ...common, startToCloseTimeout: '2 minutes' })),
    cashApp: proxyActivities<CustomerHabitsActivities>(activityOptions({ ...common, startToCloseTimeout: '5 minutes', taskQueue: CUSTOMER_HABITS_TASK_QUEUE })),
  };
}

/**
 * Onboarding: cash-app writes the habits of every customer to object storage and returns a reference
 * (the window of CUSTOMER_HABITS_WINDOW_DAYS days is applied by cash-app). No patched() guards this:
 * onboarding histories recorded with the earlier design (customerPaymentHabits pages whose
 * aggregates went into extractMemories' input) never ran in production (that design was not
 * released); file and synthesis jobs keep their command sequence.
 */
async function gatherCashHabits(cashApp: CustomerHabitsActivities, input: PlaybookExtractionInput): Promise<CustomerHabitsObject> {
  // Workflow time is deterministic on replay: the window is the one of the first run.
  const windowEnd = new Date().toISOString().slice(0, 10);
  return await cashApp.customerPaymentHabits({ organizationId: input.organizationId, jobId: input.jobId, windowEnd });
}

/**
 * A playbook extraction job: extracting → deduping → enriching → synthesizing → complete. A failure
 * after the activities' retries sets the job `failed` with a user-facing `error`; a cancellation (POST
 * …/cancel) sets it `failed` with error `cancelled` and the workflow ends CANCELLED.
 */
export async function playbookExtraction(input: PlaybookExtractionInput): Promise<PlaybookExtractionResult> {
  const { stage, quick, cashApp } = activities(input);
  try {
    const cashHabits = input.extractionType === 'onboarding' ? await gatherCashHabits(cashApp, input) : undefined;
    const extracted = await stage.extractMemories(cashHabits ? { ...input, cashHabits } : input);
    if (extracted.missing) return { status: 'missing' };
    await stage.dedupeMemories(input);
    await stage.enrichMemories(input);
    await stage.synthesizeProposals(input);
    const done = await quick.completeExtraction(input);
    return { status: 'complete', memories: done.memories, proposals: done.proposals };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => quick.failExtraction({ ...input, error: EXTRACTION_CANCELLED }));
      throw err;
    }
    const error = userFacingFailure(err, EXTRACTION_PROCESSING_FAILED);
    if (error === EXTRACTION_PROCESSING_FAILED) log.warn('playbook extraction failed', { jobId: input.jobId, failure: String(err) });
    await CancellationScope.nonCancellable(() => quick.failExtraction({ ...input, error }));
    return { status: 'failed', error };
  }
}
