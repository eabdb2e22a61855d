import { defineSignal, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import { TASK_QUEUES } from '../task-queues.js';

export const ORGANIZATION_SCHEDULES_TASK_QUEUE = TASK_QUEUES.admin;

/** One reconcile per organization at a time: `organization-schedules-<organization id>`. */
export function organizationSchedulesWorkflowId(organizationId: string): string {
  return `organization-schedules-${organizationId}`;
}

/** Sent (with signal-with-start) after every committed change the organization's Schedules depend on. */
export const organizationSchedulesChanged = defineSignal('organizationSchedulesChanged');

export interface OrganizationSchedulesInput {
  organizationId: string;
}

/** Activity contract, implemented by services/admin (createOrganizationScheduleActivities). */
export interface OrganizationScheduleActivities {
  /** The ids of the organization's report configs, as committed now. */
  reportConfigIdsOfOrganization(input: OrganizationSchedulesInput): Promise<string[]>;
  /**
   * Writes the config's Schedule from the database as it is when the activity runs (config and organization
   * timezone), create-or-replace, so a retry or a later pass is harmless; a config deleted meanwhile is skipped.
   */
  reconcileReportSchedule(input: OrganizationSchedulesInput & { configId: string }): Promise<void>;
  /**
   * Writes the organization's daily collections Schedule (`collections-<organization id>`) from the database as
   * it is when the activity runs (run time, timezone, policies): create-or-replace, paused while no policy is
   * enabled, deleted when none exists; idempotent like the report step.
   */
  reconcileCollectionsSchedule(input: OrganizationSchedulesInput): Promise<void>;
}

const activities = proxyActivities<OrganizationScheduleActivities>({
  startToCloseTimeout: '1 minute',
  // No attempt limit: the reconcile exists to converge, however long Temporal or the database are away.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Histories recorded before the collections Schedule joined the reconcile replay without its step. */
export const COLLECTIONS_SCHEDULE_PATCH = 'organization-schedules-collections';

/**
 * Brings every report Schedule and the collections Schedule of the organization to the committed database
 * state, one at a time, each step retried until it succeeds. A change signalled while a pass runs makes another pass, so the last
 * committed state always wins; each step reads the database when it runs, never the state at the signal.
 */
export async function organizationSchedules(input: OrganizationSchedulesInput): Promise<{ passes: number; reconciled: number }> {
  let pending = true;
  setHandler(organizationSchedulesChanged, () => {
    pending = true;
  });
  let passes = 0;
  let reconciled = 0;
  while (pending) {
    pending = false;
    passes++;
    for (const configId of await activities.reportConfigIdsOfOrganization(input)) {
      await activities.reconcileReportSchedule({ ...input, configId });
      reconciled++;
    }
    if (patched(COLLECTIONS_SCHEDULE_PATCH)) {
      await activities.reconcileCollectionsSchedule(input);
      reconciled++;
    }
  }
  return { passes, reconciled };
}
