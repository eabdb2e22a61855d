/** SQL of users with their business-unit access and permissions (admin schema); access changes notify the gateways' credential caches. */
import { newId, notifyAuthChanged, type Db } from '@rp/platform';
import type { Knex } from 'knex';

export type Role = 'admin' | 'member';

export interface UserRow {
  id: string;
  organization_id: string;
  email: string;
  name: string;
  role: Role;
  deactivated_at: Date | null;
  created_at: Date;
  modified_at: Date;
  business_unit_ids?: string[];
  permissions?: string[];
}

function withUnits(db: Db | Knex.Transaction) {
  return db('users as u').select(
    'u.*',
    db.raw(`(SELECT coalesce(array_agg(ubu.business_unit_id ORDER BY ubu.business_unit_id), '{}') FROM user_business_units ubu WHERE ubu.user_id = u.id) AS business_unit_ids`),
    db.raw(`(SELECT coalesce(array_agg(up.permission ORDER BY up.permission), '{}') FROM user_permissions up WHERE up.user_id = u.id) AS permissions`),
  );
}

export async function getUser(db: Db | Knex.Transaction, organizationId: string, id: string): Promise<UserRow | undefined> {
  return withUnits(db).where({ 'u.organization_id': organizationId, 'u.id': id }).first();
}

export async function listUsers(db: Db, organizationId: string, offset: number, limit: number) {
  const [rows, [{ count }]] = await Promise.all([
    withUnits(db).where('u.organization_id', organizationId).orderBy('u.created_at').orderBy('u.id').offset(offset).limit(limit),
    db('users').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as UserRow[], total: Number(count) };
}

/** Insert a user and their unit access; null when the email is taken in the organization. */
export async function insertUser(
  trx: Knex.Transaction,
  organizationId: string,
  input: { email: string; name: string; role: Role; business_unit_ids: string[]; permissions: string[] },
): Promise<UserRow | null> {
  const id = newId();
  const res = await trx.raw(
    `INSERT INTO users (id, organization_id, email, name, role) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (organization_id, lower(email)) DO NOTHING RETURNING id`,
    [id, organizationId, input.email, input.name, input.role],
  );
  if (!res.rows.length) return null;
  if (input.business_unit_ids.length) {
    await trx('user_business_units').insert(input.business_unit_ids.map((business_unit_id) => ({ user_id: id, business_unit_id })));
  }
  if (input.permissions.length) await trx('user_permissions').insert(input.permissions.map((permission) => ({ user_id: id, permission })));
  return (await getUser(trx, organizationId, id))!;
}

/** The user, locked for an access change; undefined when not a user of the organization. */
export async function lockUser(
  trx: Knex.Transaction,
  organizationId: string,
  id: string,
): Promise<{ id: string; role: Role; deactivated_at: Date | null } | undefined> {
  return trx('users').select('id', 'role', 'deactivated_at').where({ organization_id: organizationId, id }).forUpdate().first();
}

/**
 * Replace what is given of a user's access (business units, permissions) and tell every gateway's
 * credential cache (NOTIFY, delivered on commit), so the next request carries the new access.
 */
export async function replaceUserAccess(
  trx: Knex.Transaction,
  organizationId: string,
  id: string,
  change: { business_unit_ids?: string[]; permissions?: string[]; name?: string; role?: Role; active?: boolean },
): Promise<void> {
  if (change.business_unit_ids) {
    await trx('user_business_units').where({ user_id: id }).delete();
    if (change.business_unit_ids.length) await trx('user_business_units').insert(change.business_unit_ids.map((business_unit_id) => ({ user_id: id, business_unit_id })));
  }
  if (change.permissions) {
    await trx('user_permissions').where({ user_id: id }).delete();
    if (change.permissions.length) await trx('user_permissions').insert(change.permissions.map((permission) => ({ user_id: id, permission })));
  }
  const profile: Record<string, unknown> = { modified_at: trx.fn.now() };
  if (change.name !== undefined) profile.name = change.name;
  if (change.role !== undefined) profile.role = change.role;
  // Deactivated: the credential resolver refuses the user's tokens from the next request (NOTIFY on commit).
  if (change.active === false) profile.deactivated_at = trx.raw('coalesce(deactivated_at, now())');
  if (change.active === true) profile.deactivated_at = null;
  await trx('users').where({ organization_id: organizationId, id }).update(profile);
  // A reactivated user's tokens may be cached as refused (negative entries carry no user id):
  // `created` drops those too, as for a newly issued credential.
  await notifyAuthChanged(trx, { user_id: id, ...(change.active === true ? { created: true } : {}) });
}

/**
 * Locks the organization's active admins (FOR UPDATE) and returns their ids: a change that could
 * leave the organization without an active admin checks this set while no other change can alter it.
 */
export async function lockActiveAdmins(trx: Knex.Transaction, organizationId: string): Promise<string[]> {
  const rows = await trx('users').select('id').where({ organization_id: organizationId, role: 'admin' }).whereNull('deactivated_at').orderBy('id').forUpdate();
  return rows.map((r: { id: string }) => r.id);
}
