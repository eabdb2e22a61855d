/** The caller's organization as stored; its timezone changes through report-configs.ts, which moves the report Schedules with it. */
import { NotFoundError, type Db } from '@rp/platform';
import { getOrganization, type OrganizationRow } from '../store/organizations.js';

/** The organization; 404 when it no longer exists. */
export async function organizationOrThrow({ db }: { db: Db }, organizationId: string): Promise<OrganizationRow> {
  const org = await getOrganization(db, organizationId);
  if (!org) throw new NotFoundError(`No organization ${organizationId}.`);
  return org;
}
