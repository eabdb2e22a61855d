/** The caller's organization as stored, and its settings; its timezone changes through report-configs.ts, which moves the report Schedules with it. */
import { NotFoundError, type Db } from '@rp/platform';
import { changeOrganizationTimezone, type ReportConfigDeps } from './report-configs.js';
import { getOrganization, setAutoApproveThreshold, setCollectionsRunTime, type OrganizationRow } from '../store/organizations.js';
import { requestCollectionsScheduleReconcile } from './collections/collections-schedule.js';

/** The organization; 404 when it no longer exists. */
export async function organizationOrThrow({ db }: { db: Db }, organizationId: string): Promise<OrganizationRow> {
  const org = await getOrganization(db, organizationId);
  if (!org) throw new NotFoundError(`No organization ${organizationId}.`);
  return org;
}

/**
 * PATCH /v2/organization: the automatic-approval threshold (a number 0..1, or null for off), the
 * collections run time (HH:MM) and/or the timezone, each only when given. The plain settings are written
 * first: a timezone change afterwards moves the Schedules (report and collections), which may be retried
 * later. A run time change alone starts the same reconcile after its commit.
 */
export async function changeOrganization(
  deps: ReportConfigDeps,
  organizationId: string,
  change: { timezone?: string; autoApproveThreshold?: number | null; collectionsRunTime?: string },
): Promise<OrganizationRow> {
  if (change.autoApproveThreshold !== undefined) {
    if (!(await setAutoApproveThreshold(deps.db, organizationId, change.autoApproveThreshold))) throw new NotFoundError(`No organization ${organizationId}.`);
  }
  if (change.collectionsRunTime !== undefined) {
    if (!(await setCollectionsRunTime(deps.db, organizationId, change.collectionsRunTime))) throw new NotFoundError(`No organization ${organizationId}.`);
    // the timezone change below starts the reconcile itself (it reads the run time committed here)
    if (change.timezone === undefined) await requestCollectionsScheduleReconcile(deps, organizationId);
  }
  if (change.timezone !== undefined) return changeOrganizationTimezone(deps, organizationId, change.timezone);
  return organizationOrThrow(deps, organizationId);
}
