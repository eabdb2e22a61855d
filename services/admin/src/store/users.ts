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

/** A user with their out-of-office in force today and the backup covering them, as one statement reads them. */
export interface UserDetailRow {
  user: UserRow;
  ooo: import('./ooo.js').OooRow | null;
  covered_by: { id: string; name: string; email: string } | null;
  /** the organization's timezone and today's date there when read (a cached answer holds for that day only) */
  timezone: string;
  today: string;
}

/**
 * The user (units, permissions), their OOO in force today in the organization's timezone (admin's
 * `coverage_today`) and the backup covering them, in one statement; undefined when not a user of the organization.
 * A named (prepared) statement: each pooled connection plans it once.
 */
export async function getUserDetail(db: Db | Knex.Transaction, organizationId: string, id: string): Promise<UserDetailRow | undefined> {
  const res = await db.raw(
    `SELECT u.*,
       (SELECT coalesce(array_agg(ubu.business_unit_id ORDER BY ubu.business_unit_id), '{}') FROM user_business_units ubu WHERE ubu.user_id = u.id) AS business_unit_ids,
       (SELECT coalesce(array_agg(up.permission ORDER BY up.permission), '{}') FROM user_permissions up WHERE up.user_id = u.id) AS permissions,
       org.timezone AS org_timezone, to_char((now() AT TIME ZONE org.timezone)::date, 'YYYY-MM-DD') AS org_today,
       o.id AS ooo_id, o.user_id AS ooo_user_id, o.backup_user_id AS ooo_backup_user_id, o.created_by_id AS ooo_created_by_id,
       o.start_date AS ooo_start_date, o.end_date AS ooo_end_date, o.created_at AS ooo_created_at, o.modified_at AS ooo_modified_at,
       b.id AS backup_id, b.name AS backup_name, b.email AS backup_email
     FROM users u
     JOIN organizations org ON org.id = u.organization_id
     LEFT JOIN coverage_today c ON c.organization_id = u.organization_id AND c.user_id = u.id
     LEFT JOIN user_ooo o ON o.id = c.ooo_id
     LEFT JOIN users b ON b.organization_id = u.organization_id AND b.id = o.backup_user_id
     WHERE u.organization_id = ? AND u.id = ?
     LIMIT 1`,
    [organizationId, id],
  ).options({ name: 'rp_admin_user_detail' }); // prepared: planning the joins costs more than running them
  const r = res.rows[0] as (UserRow & Record<string, string | Date | null>) | undefined;
  if (!r) return undefined;
  const {
    org_timezone, org_today, ooo_id, ooo_user_id, ooo_backup_user_id, ooo_created_by_id, ooo_start_date, ooo_end_date, ooo_created_at, ooo_modified_at,
    backup_id, backup_name, backup_email, ...user
  } = r;
  return {
    user: user as UserRow,
    ooo: ooo_id
      ? {
          id: ooo_id as string,
          organization_id: organizationId,
          user_id: ooo_user_id as string,
          backup_user_id: ooo_backup_user_id as string,
          created_by_id: ooo_created_by_id as string | null,
          start_date: ooo_start_date as string,
          end_date: ooo_end_date as string | null,
          created_at: ooo_created_at as Date,
          modified_at: ooo_modified_at as Date,
        }
      : null,
    covered_by: backup_id ? { id: backup_id as string, name: backup_name as string, email: backup_email as string } : null,
    timezone: org_timezone as string,
    today: org_today as string,
  };
}
