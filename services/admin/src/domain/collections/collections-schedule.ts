/**
 * The organization's daily collections run: one Temporal Schedule `collections-<organization id>` that
 * starts `scheduledCollectionRun` ({organizationId}) on admin's task queue at `collections_run_time`
 * (HH:MM) in the organization's IANA timezone, overlap SKIP.
 *
 * - It exists while the organization has a collection policy: running while at least one is enabled,
 *   paused (with a note) while all are disabled, deleted when the last policy is deleted.
 * - Daylight saving: the calendar is local time, so 08:00 stays 08:00 on both sides of a change. A run
 *   time clocks skip on the day they go forward runs at the first valid minute after the gap (dated
 *   entries for last year to two years ahead, as report Schedules carry: reportCalendars; every reconcile
 *   renews them); on the day they go back Temporal starts a repeated local time once. Either way one run
 *   per local date, and the engine's exactly-once step marks make any second run send nothing.
 * - Consistency: the database is the source of truth. Policy writes and PATCH /v2/organization commit first
 *   and then signal-with-start the organization's reconcile workflow (organization-schedules), whose
 *   `reconcileCollectionsSchedule` step writes this Schedule from the committed state, retried until it
 *   succeeds. Temporal away at the change does not refuse it: the next change converges.
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Logger } from 'pino';
import { withTemporalDeadline } from '@rp/platform';
import { businessSearchAttributes, collectionsScheduleId, COLLECTIONS_TASK_QUEUE, SCHEDULED_COLLECTION_RUN_WORKFLOW, type ScheduledCollectionRunInput } from '@rp/workflows';
import { canonicalTimezone, reconcileOrganizationSchedules, reportCalendars, upsertSchedule } from '../report-schedules.js';

/** Workers or Temporal down for up to 6 hours: the day's run still starts when they are back; a longer outage skips it. */
export const COLLECTIONS_CATCHUP_WINDOW = '6 hours';

/** The workflow id of a scheduled run (Temporal appends the action's time to it). */
export function scheduledCollectionRunWorkflowId(organizationId: string): string {
  return `scheduled-collection-run-${organizationId}`;
}

export interface CollectionsScheduleState {
  organizationId: string;
  timezone: string;
  runTime: string;
  /** how many policies the organization has, and how many are enabled */
  policies: { total: number; enabled: number };
}

function scheduleOptions(s: CollectionsScheduleState): ScheduleOptions {
  const timezone = canonicalTimezone(s.timezone);
  const paused = s.policies.enabled === 0;
  const args: [ScheduledCollectionRunInput] = [{ organizationId: s.organizationId }];
  return {
    scheduleId: collectionsScheduleId(s.organizationId),
    spec: { calendars: reportCalendars({ frequency: 'daily', time: s.runTime, weekday: null }, timezone), timezone },
    action: {
      type: 'startWorkflow',
      workflowType: SCHEDULED_COLLECTION_RUN_WORKFLOW,
      workflowId: scheduledCollectionRunWorkflowId(s.organizationId),
      taskQueue: COLLECTIONS_TASK_QUEUE,
      args,
      typedSearchAttributes: businessSearchAttributes(s.organizationId, s.organizationId),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: COLLECTIONS_CATCHUP_WINDOW },
    state: { paused, note: paused ? 'no enabled collection policy' : undefined },
    typedSearchAttributes: businessSearchAttributes(s.organizationId, s.organizationId),
  };
}

/** Writes the Schedule for the state: create or replace while a policy exists, delete when none does. */
export async function writeCollectionsSchedule(temporal: Client, s: CollectionsScheduleState): Promise<'written' | 'deleted'> {
  const scheduleId = collectionsScheduleId(s.organizationId);
  if (s.policies.total === 0) {
    await withTemporalDeadline(temporal, async () => {
      try {
        await temporal.schedule.getHandle(scheduleId).delete();
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    });
    return 'deleted';
  }
  await upsertSchedule(temporal, scheduleOptions(s));
  return 'written';
}

/**
 * After a committed change the collections Schedule depends on (policies, run time, timezone): starts the
 * organization's reconcile. A failure to reach Temporal is logged, never an error of the committed change.
 */
export async function requestCollectionsScheduleReconcile(deps: { temporal: Client; log?: Logger }, organizationId: string): Promise<void> {
  try {
    await reconcileOrganizationSchedules(deps.temporal, organizationId);
  } catch (err) {
    deps.log?.warn({ err, organization_id: organizationId }, 'collections Schedule not reconciled yet; the next policy or organization change starts it again');
  }
}
