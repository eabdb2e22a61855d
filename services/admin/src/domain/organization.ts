/** The caller's organization as stored, and its settings; its timezone changes through report-configs.ts, which moves the report Schedules with it. */
import { NotFoundError, type Db } from '@rp/platform';
import { changeOrganizationTimezone, type ReportConfigDeps } from './report-configs.js';
import { getOrganization, setAutoApproveThreshold, type OrganizationRow } from '../store/organizations.js';

/** The organization; 404 when it no longer exists. */
export async function organizationOrThrow({ db }: { db: Db }, organizationId: string): Promise<OrganizationRow> {
  const org = await getOrganization(db, organizationId);
  if (!org) throw new NotFoundError(`No organization ${organizationId}.`);
  return org;
}

/**
 * PATCH /v2/organization: the automatic-approval threshold (a number 0..1, or null for off) and/or the
 * timezone, each only when given. The threshold is written first: a timezone change afterwards
 * moves the report Schedules, which may be retried later, while the threshold is a plain setting.
 */
export async function changeOrganization(
  deps: ReportConfigDeps,
  organizationId: string,
  change: { timezone?: string; autoApproveThreshold?: number | null },
): Promise<OrganizationRow> {
  if (change.autoApproveThreshold !== undefined) {
    if (!(await setAutoApproveThreshold(deps.db, organizationId, change.autoApproveThreshold))) throw new NotFoundError(`No organization ${organizationId}.`);
  }
  if (change.timezone !== undefined) return changeOrganizationTimezone(deps, organizationId, change.timezone);
  return organizationOrThrow(deps, organizationId);
}
