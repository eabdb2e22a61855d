/**
 * Business units of an organization (spec 2.16): names unique per organization (case-insensitive),
 * and each caller sees only the units it may access (all of them for admins and API keys).
 */
import { ConflictError, NotFoundError, type Db, type Identity } from '@rp/platform';
import { getBusinessUnit, insertBusinessUnit, listBusinessUnits, type BusinessUnitRow } from '../store/business-units.js';

/** A page of the units the caller may access, by name. */
export async function businessUnitsOf({ db }: { db: Db }, identity: Identity, page: { offset: number; pageSize: number }) {
  return listBusinessUnits(db, identity, page.offset, page.pageSize);
}

/** Creates the unit; 409 when the organization already has one of that name (the unique index decides races). */
export async function createBusinessUnit({ db }: { db: Db }, organizationId: string, input: { name: string; description?: string | null }): Promise<BusinessUnitRow> {
  const row = await insertBusinessUnit(db, organizationId, input);
  if (!row) throw new ConflictError(`A business unit named "${input.name}" already exists.`);
  return row;
}

/** The unit; 404 when it is missing, of another organization or not accessible to the caller (indistinguishable on purpose). */
export async function businessUnitOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<BusinessUnitRow> {
  const row = await getBusinessUnit(db, identity, id);
  if (!row) throw new NotFoundError(`No business unit ${id}.`);
  return row;
}
