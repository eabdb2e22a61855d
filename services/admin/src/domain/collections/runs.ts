/**
 * Collection runs through the API: start one now (real as of today, or a dry run as of any date in
 * the allowed window), list and read runs, list actions within the caller's business units.
 */
import { activityRetryWindowMinutes, NotFoundError, ValidationError, withTemporalDeadline, type Identity } from '@rp/platform';
import { businessSearchAttributes, collectionRun, collectionRunWorkflowId, COLLECTIONS_TASK_QUEUE } from '@rp/workflows';
import type { AdminDeps } from '../../deps.js';
import * as runs from '../../store/collections/runs.js';
import * as actions from '../../store/collections/actions.js';
import { organizationToday } from '../../store/ooo.js';
import { addDays } from './plan.js';

/** How far a dry run's `as_of_date` may lie from today (days, either way). */
export const DRY_RUN_WINDOW_DAYS = 366;

export async function startCollectionRun(deps: Pick<AdminDeps, 'db' | 'temporal'>, identity: Identity, input: { dry_run?: boolean; as_of_date?: string }) {
  const org = identity.org;
  const today = await organizationToday(deps.db, org);
  if (!today) throw new NotFoundError(`No organization ${org}.`);
  const dryRun = input.dry_run ?? false;
  const asOf = input.as_of_date ?? today;
  if (!dryRun && asOf !== today) {
    throw new ValidationError([{ loc: ['body', 'as_of_date'], msg: `a real run is as of today (${today} in the organization's timezone); other dates only with dry_run`, type: 'value_error.as_of_date' }]);
  }
  if (asOf < addDays(today, -DRY_RUN_WINDOW_DAYS) || asOf > addDays(today, DRY_RUN_WINDOW_DAYS)) {
    throw new ValidationError([{ loc: ['body', 'as_of_date'], msg: `must be within ${DRY_RUN_WINDOW_DAYS} days of today (${today})`, type: 'value_error.as_of_date' }]);
  }
  const run = await deps.db.transaction(async (trx) => {
    const row = await runs.insertRun(trx, { organization_id: org, as_of_date: asOf, dry_run: dryRun, trigger: 'api', requested_by: identity.sub ?? null });
    // Started before the commit: if Temporal refuses, no run is recorded.
    await withTemporalDeadline(deps.temporal, () =>
      deps.temporal.workflow.start(collectionRun, {
        taskQueue: COLLECTIONS_TASK_QUEUE,
        workflowId: collectionRunWorkflowId(row.id),
        args: [{ organizationId: org, runId: row.id, retryWindowMinutes: activityRetryWindowMinutes() }],
        typedSearchAttributes: businessSearchAttributes(org, row.id),
      }),
    );
    return row;
  });
  return run;
}

export async function collectionRunOrThrow(deps: Pick<AdminDeps, 'db'>, organizationId: string, id: string) {
  const run = await runs.getRun(deps.db, organizationId, id);
  if (!run) throw new NotFoundError(`No collection run ${id}.`);
  return run;
}

export async function collectionRunsOf(deps: Pick<AdminDeps, 'db'>, organizationId: string, page: { offset: number; pageSize: number }) {
  return runs.listRuns(deps.db, organizationId, page.offset, page.pageSize);
}

export async function collectionActionsOf(deps: Pick<AdminDeps, 'db'>, identity: Identity, filters: actions.ActionFilters, page: { offset: number; pageSize: number }) {
  return actions.listActions(deps.db, identity.org, filters, identity.bu, page.offset, page.pageSize);
}
