/** SQL of out-of-office periods and the organization's OOO lock (admin schema). */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Conn = Db | Knex.Transaction;

export interface OooRow {
  id: string;
  organization_id: string;
  user_id: string;
  backup_user_id: string;
  created_by_id: string | null;
  start_date: string;
  end_date: string | null;
  created_at: Date;
  modified_at: Date;
}

/** Today's date (YYYY-MM-DD) in the organization's timezone, on the database clock. */
export async function organizationToday(db: Conn, organizationId: string): Promise<string | undefined> {
  const res = await db.raw(`SELECT to_char((now() AT TIME ZONE timezone)::date, 'YYYY-MM-DD') AS today FROM organizations WHERE id = ?`, [organizationId]);
  return res.rows[0]?.today as string | undefined;
}

/**
 * Serializes OOO changes of one organization (until the transaction ends): the chain rules look at
 * several users' periods at once, which no single-row constraint covers.
 */
export async function lockOrganizationOoo(trx: Knex.Transaction, organizationId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('rp-ooo:' || ?::text))`, [organizationId]);
}

/** Whether the id names an active (not deactivated) user of the organization. */
export async function isActiveUser(db: Conn, organizationId: string, id: string): Promise<boolean> {
  const row = await db('users').select('id').where({ organization_id: organizationId, id }).whereNull('deactivated_at').first();
  return Boolean(row);
}

export async function listOoo(db: Db, organizationId: string, userId: string, offset: number, limit: number) {
  const q = () => db<OooRow>('user_ooo').where({ organization_id: organizationId, user_id: userId });
  const [rows, [{ count }]] = await Promise.all([
    q().orderBy('start_date', 'desc').orderBy('id', 'desc').offset(offset).limit(limit),
    q().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as OooRow[], total: Number(count) };
}

/**
 * The user's pending OOO (end date not before `today`): the earliest-starting one, i.e. the active
 * one when there is one, else the next scheduled one. Locked when inside a transaction.
 */
export async function pendingOoo(db: Conn, organizationId: string, userId: string, today: string): Promise<OooRow | undefined> {
  const q = db<OooRow>('user_ooo')
    .where({ organization_id: organizationId, user_id: userId })
    .andWhere((w) => {
      void w.whereNull('end_date').orWhere('end_date', '>=', today);
    })
    .orderBy('start_date')
    .first();
  return 'commit' in db ? q.forUpdate() : q;
}

const OVERLAPS = `daterange(start_date, end_date, '[]') && daterange(?::date, ?::date, '[]')`;

/** The first period (by start) whose `column` is `userId` and which overlaps [start, end] (end null = open), other than `exceptId`. */
async function firstOverlapping(
  db: Conn,
  column: 'user_id' | 'backup_user_id',
  organizationId: string,
  userId: string,
  start: string,
  end: string | null,
  exceptId?: string,
): Promise<OooRow | undefined> {
  const q = db<OooRow>('user_ooo').where({ organization_id: organizationId, [column]: userId }).whereRaw(OVERLAPS, [start, end]);
  if (exceptId) q.whereNot({ id: exceptId });
  return q.orderBy('start_date').first();
}

/** A period of `userId` overlapping [start, end] (end null = open), other than `exceptId`. */
export async function overlappingOooOf(db: Conn, organizationId: string, userId: string, start: string, end: string | null, exceptId?: string): Promise<OooRow | undefined> {
  return firstOverlapping(db, 'user_id', organizationId, userId, start, end, exceptId);
}

/** A period during [start, end] in which `userId` covers somebody else (is their backup), other than `exceptId`. */
export async function coverageByDuring(db: Conn, organizationId: string, userId: string, start: string, end: string | null, exceptId?: string): Promise<OooRow | undefined> {
  return firstOverlapping(db, 'backup_user_id', organizationId, userId, start, end, exceptId);
}

export async function insertOoo(
  trx: Knex.Transaction,
  input: { organizationId: string; userId: string; backupUserId: string; createdById: string | null; startDate: string; endDate: string | null },
): Promise<OooRow> {
  const [row] = await trx<OooRow>('user_ooo')
    .insert({
      id: newId(),
      organization_id: input.organizationId,
      user_id: input.userId,
      backup_user_id: input.backupUserId,
      created_by_id: input.createdById,
      start_date: input.startDate,
      end_date: input.endDate,
    })
    .returning('*');
  return row;
}

export async function updateOoo(
  trx: Knex.Transaction,
  id: string,
  change: { backup_user_id: string; start_date: string; end_date: string | null },
): Promise<OooRow> {
  const [row] = await trx<OooRow>('user_ooo')
    .where({ id })
    .update({ ...change, modified_at: trx.fn.now() as unknown as Date })
    .returning('*');
  return row;
}

export async function deleteOoo(trx: Knex.Transaction, id: string): Promise<void> {
  await trx('user_ooo').where({ id }).delete();
}

/** A pending OOO (end not before `today`) in which `userId` is the backup. */
export async function pendingCoverageBy(db: Conn, organizationId: string, userId: string, today: string): Promise<OooRow | undefined> {
  return db<OooRow>('user_ooo')
    .where({ organization_id: organizationId, backup_user_id: userId })
    .andWhere((w) => {
      void w.whereNull('end_date').orWhere('end_date', '>=', today);
    })
    .orderBy('start_date')
    .first();
}
