/**
 * Playbook extraction jobs (spec 2.10, row 4): request, read, list, cancel. A
 * request inserts the job `pending` in a transaction, starts `playbook-extraction-<jobId>` on the
 * knowledge task queue and only then commits (start-then-commit): a failed start rolls the row back
 * (503, nothing stored); a crash before the commit leaves a workflow that finds no job and ends
 * `missing`. Nothing is ever left `pending` without a workflow.
 */
import type { Logger } from 'pino';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  AppError,
  ConflictError,
  newId,
  NotFoundError,
  OUTAGE_RETRY_AFTER_SECONDS,
  ServiceUnavailableError,
  ValidationError,
  withTemporalDeadline,
  type Db,
  type ObjectStorage,
  type Identity,
  type PageRequest,
} from '@rp/platform';
import { businessSearchAttributes, EXTRACTION_CANCELLED, playbookExtraction, playbookExtractionWorkflowId, TASK_QUEUES } from '@rp/workflows';
import { SUPPORTED_MIME_TYPES } from '../extraction/types.js';
import type { Collection, ExtractionType } from '../types.js';
import * as store from '../store/extractions.js';
import { getFilesByIds, type FileRow } from '../store/files.js';
import { verifiedFile, type Quota } from './files.js';
import { reviewerOf } from './proposals.js';
import { failJobRecorded } from './extraction-events.js';

interface Deps {
  db: Db;
  temporal: Client;
  storage: ObjectStorage | null;
}

/** How long a cancel waits for the workflow to record the cancellation before recording it itself. */
const CANCEL_WAIT_MS = 10_000;

export interface ExtractionRequest {
  file_id?: string | null;
  created_by: string;
  collection?: Collection | null;
  extraction_type?: ExtractionType;
}

async function startWorkflow(temporal: Client, org: string, jobId: string, extractionType: ExtractionType): Promise<void> {
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.workflow.start(playbookExtraction, {
        taskQueue: TASK_QUEUES.knowledge,
        workflowId: playbookExtractionWorkflowId(jobId),
        args: [{ organizationId: org, jobId, extractionType, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(org, jobId),
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return; // the id is the job's
    throw err;
  }
}

/** A job with its file (null when it has none or the file was deleted since). */
export interface JobRecord {
  job: store.JobRow;
  file: FileRow | null;
}

/** Test seam: runs after the workflow started and before the job row commits (a crash there). */
export interface RequestHooks {
  beforeCommit?: (jobId: string) => Promise<void>;
}

/** `quotaBytes`: the organization's storage quota (a file verified on request counts its real size against it). */
export async function requestExtraction(deps: Deps & Quota, org: string, req: ExtractionRequest, hooks: RequestHooks = {}): Promise<JobRecord> {
  const type = req.extraction_type ?? 'file';
  let file: FileRow | null = null;
  if (type === 'file') {
    if (!req.file_id) throw new ValidationError([{ loc: ['body', 'file_id'], msg: 'is required for an extraction of type file', type: 'missing' }]);
    file = await verifiedFile(deps, org, req.file_id);
    if (!file.is_verified) {
      const why = file.verification_error ?? 'nothing has been uploaded to its upload_url yet';
      throw new ValidationError([{ loc: ['body', 'file_id'], msg: `the file is not verified: ${why}`, type: 'file_not_verified' }], `File ${file.id} is not verified: ${why}.`);
    }
    if (!(SUPPORTED_MIME_TYPES as readonly string[]).includes(file.mime_type)) {
      throw new ValidationError(
        [{ loc: ['body', 'file_id'], msg: `files of type ${file.mime_type} cannot be extracted; supported: ${SUPPORTED_MIME_TYPES.join(', ')}`, type: 'unsupported_file_type' }],
        `Files of type ${file.mime_type} cannot be extracted.`,
      );
    }
  } else {
    if (req.file_id) throw new ValidationError([{ loc: ['body', 'file_id'], msg: `must be omitted for an extraction of type ${type}`, type: 'unexpected' }]);
    if (type === 'synthesis' && !req.collection) throw new ValidationError([{ loc: ['body', 'collection'], msg: 'is required for an extraction of type synthesis', type: 'missing' }]);
  }
  const id = newId();
  let started = false;
  await deps.db
    .transaction(async (trx) => {
      await store.insertJob(trx, { id, organization_id: org, file_id: file?.id ?? null, created_by: req.created_by, collection: req.collection ?? null, extraction_type: type, workflow_id: playbookExtractionWorkflowId(id) });
      await startWorkflow(deps.temporal, org, id, type);
      started = true;
      await hooks.beforeCommit?.(id);
    })
    .catch((err: unknown) => {
      if (started || err instanceof AppError) throw err;
      throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, 'The extraction could not be started; nothing was stored. Request it again.');
    });
  return getJob(deps, org, id);
}

/**
 * Who requested an extraction: always the caller's user id from the gateway's signed identity (an
 * API key has no user: `api_key:<credential id>`). A body's `created_by`, when sent, must be that
 * value, so a job never names a person who did not ask for it (nor anyone outside the organization).
 */
function extractionCreator(identity: Identity, given: string | undefined): string {
  const caller = reviewerOf(identity);
  if (given !== undefined && given !== caller) {
    throw new ValidationError(
      [{ loc: ['body', 'created_by'], msg: `created_by is recorded from your credential (${caller}); it cannot name another user`, type: 'value_error' }],
      'created_by must be omitted or be the caller\'s user id.',
    );
  }
  return caller;
}

/** A caller's request: the job records the caller as its creator (a `created_by` sent must be the caller). */
export async function requestExtractionAs(deps: Deps & Quota, identity: Identity, req: Omit<ExtractionRequest, 'created_by'> & { created_by?: string }): Promise<JobRecord> {
  return requestExtraction(deps, identity.org, { ...req, created_by: extractionCreator(identity, req.created_by) });
}

export async function getJob(deps: Pick<Deps, 'db'>, org: string, id: string): Promise<JobRecord> {
  const j = await store.getJob(deps.db, org, id);
  if (!j) throw new NotFoundError(`No playbook extraction ${id}.`);
  const files = await getFilesByIds(deps.db, org, j.file_id ? [j.file_id] : []);
  return { job: j, file: j.file_id ? (files.get(j.file_id) ?? null) : null };
}

/** A page of jobs, each with its file (read in one query for the page). */
export async function listJobs(deps: Pick<Deps, 'db'>, org: string, filters: store.JobFilters, page: PageRequest): Promise<{ rows: JobRecord[]; total: number }> {
  const { rows, total } = await store.listJobs(deps.db, org, filters, page.offset, page.pageSize);
  const files = await getFilesByIds(deps.db, org, [...new Set(rows.flatMap((r) => (r.file_id ? [r.file_id] : [])))]);
  return { rows: rows.map((r) => ({ job: r, file: r.file_id ? (files.get(r.file_id) ?? null) : null })), total };
}

/**
 * Cancels a running job: its workflow is cancelled (the running stage stops between two chunks, keeping
 * what it stored) and the job ends `failed` with error `cancelled`. A job that already ended → 409.
 */
export async function cancelJob(deps: Deps, org: string, id: string, log?: Logger): Promise<JobRecord> {
  const j = await store.getJob(deps.db, org, id);
  if (!j) throw new NotFoundError(`No playbook extraction ${id}.`);
  if (j.status === 'complete' || j.status === 'failed') throw new ConflictError(`The extraction already ended (status ${j.status}${j.error ? `, error "${j.error}"` : ''}).`);
  const handle = deps.temporal.workflow.getHandle(j.workflow_id);
  try {
    await withTemporalDeadline(deps.temporal, () => handle.cancel());
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) {
      if (err instanceof AppError) throw err;
      throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, 'The extraction could not be cancelled now; it goes on. Retry in a few seconds.');
    }
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([handle.result().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, CANCEL_WAIT_MS)))]);
  clearTimeout(timer);
  // The workflow records `cancelled` itself; when it could not (no worker running, or it already
  // closed), the request does: a stage that runs later finds the job ended and stops.
  if (await failJobRecorded(deps.db, org, id, EXTRACTION_CANCELLED)) log?.warn({ job_id: id }, 'extraction cancelled without its workflow recording it');
  return getJob(deps, org, id);
}
