/** Partner assignment (integrations owns the ledger's partners). */
import type { Db } from '@rp/platform';
import type { Knex } from 'knex';

/** Set the fields given; false when the partner is not the organization's. */
export async function updatePartnerAssignment(db: Db | Knex.Transaction, organizationId: string, id: string, patch: { assignee_id?: string | null; business_unit_id?: string | null }): Promise<boolean> {
  const set: Record<string, unknown> = { modified_at: db.fn.now() };
  if (patch.assignee_id !== undefined) set.assignee_id = patch.assignee_id;
  if (patch.business_unit_id !== undefined) set.business_unit_id = patch.business_unit_id;
  return (await db('partners').where({ organization_id: organizationId, id }).update(set)) > 0;
}
