/** SQL of business units (admin schema): names unique per organization, case-insensitive. */
import { newId, type Db, type Identity } from '@rp/platform';
import type { Knex } from 'knex';

export interface BusinessUnitRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  modified_at: Date;
}

/** The units the identity may access: all of the organization's for admins and API keys. */
function accessible(db: Db, identity: Identity) {
  const q = db<BusinessUnitRow>('business_units').where({ organization_id: identity.org });
  return identity.bu === '*' ? q : q.whereIn('id', identity.bu);
}

export async function listBusinessUnits(db: Db, identity: Identity, offset: number, limit: number) {
  const [rows, [{ count }]] = await Promise.all([
    accessible(db, identity).orderBy('name').orderBy('id').offset(offset).limit(limit),
    accessible(db, identity).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as BusinessUnitRow[], total: Number(count) };
}

export async function getBusinessUnit(db: Db, identity: Identity, id: string): Promise<BusinessUnitRow | undefined> {
  return accessible(db, identity).andWhere({ id }).first();
}

export async function insertBusinessUnit(
  db: Db | Knex.Transaction,
  organizationId: string,
  input: { name: string; description?: string | null },
): Promise<BusinessUnitRow | null> {
  const rows = await db.raw(
    `INSERT INTO business_units (id, organization_id, name, description) VALUES (?, ?, ?, ?)
     ON CONFLICT (organization_id, lower(name)) DO NOTHING RETURNING *`,
    [newId(), organizationId, input.name, input.description ?? null],
  );
  return (rows.rows[0] as BusinessUnitRow | undefined) ?? null;
}

/** Ids among `ids` that do not belong to the organization. */
export async function unknownBusinessUnits(db: Db | Knex.Transaction, organizationId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const found = await db('business_units').where({ organization_id: organizationId }).whereIn('id', ids).pluck('id');
  const set = new Set(found as string[]);
  return ids.filter((id) => !set.has(id));
}
