/**
 * Caller-ID name (CNAM) registration of an organization (spec 2.18): the name shown to people the
 * organization's collectors call. Lifecycle (`status`):
 *
 *   draft      saved with `submit: false`; nothing sent
 *   submitted  saved with `submit: true`: a submission is recorded and workflow
 *              `cnam-registration-<submission id>` started on the admin task queue
 *   in_review  the registry adapter took it (the default adapter: recorded for an operator)
 *   approved   the registry accepted it (`approved_at`, `status_detail` an optional note)
 *   rejected   the registry refused it (`status_detail` the reason)
 *
 * While submitted or in review the registration cannot be changed (409). A draft or a rejected
 * registration is edited and saved as a draft or submitted again; an approved one changes only by a
 * new submission (`submit: false` is 409), which takes it back to `submitted`.
 */
import type { Client } from '@temporalio/client';
import { activityRetryWindowMinutes, ConflictError, NotFoundError, withTemporalDeadline, type Db } from '@rp/platform';
import {
  businessSearchAttributes,
  cnamRegistration,
  cnamRegistrationWorkflowId,
  cnamRegistryAnswerSignal,
  TASK_QUEUES,
  type CnamRegistrationResult,
} from '@rp/workflows';
import { CNAM_FIELDS, type CnamFields } from '../domain-types/cnam.js';
import { getCnamRegistration, insertCnamSubmission, lockOrganizationForCnam, writeCnamRegistration, type CnamRegistrationRow } from '../store/cnam.js';

export interface CnamDeps {
  db: Db;
  temporal: Client;
}

export async function readCnamRegistration({ db }: { db: Db }, organizationId: string): Promise<CnamRegistrationRow> {
  const row = await getCnamRegistration(db, organizationId);
  if (!row) throw new NotFoundError('The organization has no caller-ID name registration.');
  return row;
}

/**
 * Saves the registration; with `submit` it records a submission and starts its workflow inside the
 * same transaction (if Temporal refuses, nothing is saved; if the commit fails after the start, the
 * workflow's first activity finds no submission and ends `missing`).
 */
export async function putCnamRegistration(deps: CnamDeps, actor: { org: string; sub: string | null }, input: CnamFields & { submit: boolean }) {
  const row = await deps.db.transaction(async (trx) => {
    await lockOrganizationForCnam(trx, actor.org);
    const existing = await getCnamRegistration(trx, actor.org, { forUpdate: true });
    if (existing && (existing.status === 'submitted' || existing.status === 'in_review')) {
      throw new ConflictError(`The registration is ${existing.status.replace('_', ' ')}: it can be changed once the registry has answered.`);
    }
    if (existing?.status === 'approved' && !input.submit) {
      throw new ConflictError('The registration is approved: a change takes effect only through a new submission (send submit: true).');
    }
    const { submit, ...rest } = input;
    const fields = Object.fromEntries(CNAM_FIELDS.map((f) => [f, rest[f]])) as CnamFields;
    let saved = await writeCnamRegistration(trx, actor.org, existing, { fields, status: submit ? 'submitted' : 'draft', userId: actor.sub });
    if (submit) {
      const submissionId = await insertCnamSubmission(trx, saved, fields as unknown as Record<string, unknown>, actor.sub);
      saved = { ...saved, current_submission_id: submissionId };
      await withTemporalDeadline(deps.temporal, () =>
        deps.temporal.workflow.start(cnamRegistration, {
          taskQueue: TASK_QUEUES.admin,
          workflowId: cnamRegistrationWorkflowId(submissionId),
          args: [{ organizationId: actor.org, registrationId: saved.id, submissionId, retryWindowMinutes: activityRetryWindowMinutes() }],
          typedSearchAttributes: businessSearchAttributes(actor.org, saved.id),
        }),
      );
    }
    return saved;
  });
  return row;
}

export class CnamDecisionError extends Error {}

/**
 * Records the registry's answer to the organization's registration in review (the operator's CLI):
 * signals the submission's workflow, which records it, and waits for it to finish.
 */
export async function decideCnamRegistration(
  deps: CnamDeps,
  organizationId: string,
  answer: { approved: boolean; detail: string | null; source: string },
  opts: { waitMs?: number } = {},
) {
  const reg = await getCnamRegistration(deps.db, organizationId);
  if (!reg) throw new CnamDecisionError(`organization ${organizationId} has no caller-ID name registration`);
  if (reg.status !== 'in_review' || !reg.current_submission_id) {
    const why = reg.status === 'submitted' ? 'it has not reached the registry yet (is the admin worker running?)' : `it is ${reg.status}, not in review`;
    throw new CnamDecisionError(`the registration cannot be decided: ${why}`);
  }
  const handle = deps.temporal.workflow.getHandle<typeof cnamRegistration>(cnamRegistrationWorkflowId(reg.current_submission_id));
  try {
    await handle.signal(cnamRegistryAnswerSignal, answer);
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') throw new CnamDecisionError(`workflow ${handle.workflowId} of the submission is not running`);
    throw err;
  }
  const waitMs = opts.waitMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    handle.result(),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), waitMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (result === 'timeout') {
    throw new CnamDecisionError(`the answer was sent to workflow ${handle.workflowId}, which has not recorded it within ${waitMs / 1000} s (is the admin worker running?)`);
  }
  const after = (await getCnamRegistration(deps.db, organizationId))!;
  return { result: result as CnamRegistrationResult, registration: after };
}
