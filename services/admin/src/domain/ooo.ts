/**
 * Out-of-office coverage (spec 2.6, row 8). Every change runs in one transaction holding the
 * organization's OOO lock, so the rules that span several users (no coverage chains) cannot be
 * raced; the per-user no-overlap rule is also an exclusion constraint (migration admin 003).
 *
 * Rules (each a 422 naming its field): the backup is another active user of the organization
 * (`backup_user_id`), not the user themself, and is not out of office on any day of the period;
 * the user does not cover anybody else during the period (that would chain too: `start_date`);
 * start ≤ end (`end_date`); the end, when given, is not already past in the organization's
 * timezone (`end_date`); periods of one user never overlap (`start_date`).
 * A member manages only their own OOO (403 otherwise; `created_by_id` null = self-service); an
 * admin manages anyone's (`created_by_id` = the admin when it is somebody else's).
 */
import type { Knex } from 'knex';
import { ForbiddenError, NotFoundError, notifyAuthChanged, ValidationError, type Db, type Identity, type ValidationIssue } from '@rp/platform';
import type { UserReads } from './user-reads.js';
import {
  coverageByDuring,
  listOoo,
  deleteOoo,
  insertOoo,
  isActiveUser,
  lockOrganizationOoo,
  organizationToday,
  overlappingOooOf,
  pendingOoo,
  updateOoo,
  type OooRow,
} from '../store/ooo.js';
import { getUser } from '../store/users.js';

export interface OooPeriod {
  backup_user_id: string;
  start_date: string;
  end_date: string | null;
}

const issue = (field: string, msg: string, type: string): ValidationIssue => ({ loc: ['body', field], msg, type });

/** The user of the path (404 when not of the organization) and whether the caller may manage their OOO. */
async function subjectUser(trx: Knex.Transaction | Db, identity: Identity, userId: string, manage: boolean): Promise<void> {
  const user = await getUser(trx, identity.org, userId);
  if (!user) throw new NotFoundError(`No user ${userId}.`);
  if (manage && identity.role !== 'admin' && identity.sub !== userId) {
    throw new ForbiddenError('A member may manage only their own out-of-office; an organization admin may manage anyone\'s.');
  }
}

async function checkPeriod(trx: Knex.Transaction, organizationId: string, userId: string, p: OooPeriod, today: string, exceptId?: string): Promise<void> {
  const issues: ValidationIssue[] = [];
  if (p.backup_user_id === userId) issues.push(issue('backup_user_id', 'the backup must be another user, not the user themself', 'backup_is_self'));
  else if (!(await isActiveUser(trx, organizationId, p.backup_user_id))) {
    issues.push(issue('backup_user_id', `no active user ${p.backup_user_id} in this organization`, 'unknown_reference'));
  }
  const ordered = p.end_date === null || p.start_date <= p.end_date;
  if (!ordered) issues.push(issue('end_date', 'end_date must not be before start_date', 'date_order'));
  if (p.end_date !== null && p.end_date < today) {
    issues.push(issue('end_date', `end_date is already past (today is ${today} in the organization's timezone)`, 'date_past'));
  }
  if (ordered) {
    if (!issues.some((i) => i.loc[1] === 'backup_user_id')) {
      const out = await overlappingOooOf(trx, organizationId, p.backup_user_id, p.start_date, p.end_date);
      if (out) {
        issues.push(
          issue('backup_user_id', `the backup is out of office themself from ${out.start_date} to ${out.end_date ?? 'open end'} (no coverage chains)`, 'backup_out_of_office'),
        );
      }
    }
    const own = await overlappingOooOf(trx, organizationId, userId, p.start_date, p.end_date, exceptId);
    if (own) {
      issues.push(issue('start_date', `overlaps the user's out-of-office from ${own.start_date} to ${own.end_date ?? 'open end'}`, 'ooo_overlap'));
    } else {
      const covering = await coverageByDuring(trx, organizationId, userId, p.start_date, p.end_date, exceptId);
      if (covering) {
        issues.push(
          issue('start_date', `the user covers user ${covering.user_id} from ${covering.start_date} to ${covering.end_date ?? 'open end'} (no coverage chains)`, 'covering_others'),
        );
      }
    }
  }
  if (issues.length) throw new ValidationError(issues);
}

/** A write that the exclusion constraint refused (a race the lock did not cover) is the same 422. */
async function guardOverlap<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as { code?: string }).code === '23P01') {
      throw new ValidationError([issue('start_date', 'overlaps another out-of-office period of the user', 'ooo_overlap')]);
    }
    throw err;
  }
}

async function today(trx: Knex.Transaction | Db, organizationId: string): Promise<string> {
  const t = await organizationToday(trx, organizationId);
  if (!t) throw new NotFoundError('The organization no longer exists.');
  return t;
}

export interface OooDeps {
  db: Db;
  /** this process's cache of user details: a change awaits it, so the caller's next request sees it */
  userReads?: UserReads | null;
}

/**
 * One OOO change of `userId` in a transaction that announces it on commit (user details cached in any
 * API process show the user's `ooo` and `covered_by`), applied to this process's cache before answering.
 */
async function changeCoverage<T>(deps: OooDeps, userId: string, change: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const result = await deps.db.transaction(async (trx) => {
    const r = await change(trx);
    await notifyAuthChanged(trx, { coverage_user_id: userId });
    return r;
  });
  await deps.userReads?.sync();
  return result;
}

export async function createOoo(deps: OooDeps, identity: Identity, userId: string, input: OooPeriod): Promise<OooRow> {
  return changeCoverage(deps, userId, async (trx) => {
    await subjectUser(trx, identity, userId, true);
    await lockOrganizationOoo(trx, identity.org);
    const t = await today(trx, identity.org);
    await checkPeriod(trx, identity.org, userId, input, t);
    return guardOverlap(() =>
      insertOoo(trx, {
        organizationId: identity.org,
        userId,
        backupUserId: input.backup_user_id,
        createdById: identity.sub === userId ? null : identity.sub,
        startDate: input.start_date,
        endDate: input.end_date,
      }),
    );
  });
}

/** The pending OOO of the user, or 404 `entity-not-found`. */
async function pendingOr404(trx: Knex.Transaction, organizationId: string, userId: string, t: string): Promise<OooRow> {
  const pending = await pendingOoo(trx, organizationId, userId, t);
  if (!pending) throw new NotFoundError(`User ${userId} has no pending out-of-office (active or scheduled).`);
  return pending;
}

/** Row 8: only the fields present change; `end_date: null` clears the end (open-ended). */
export async function changePendingOoo(deps: OooDeps, identity: Identity, userId: string, change: Partial<OooPeriod>): Promise<OooRow> {
  return changeCoverage(deps, userId, async (trx) => {
    await subjectUser(trx, identity, userId, true);
    await lockOrganizationOoo(trx, identity.org);
    const t = await today(trx, identity.org);
    const pending = await pendingOr404(trx, identity.org, userId, t);
    const next: OooPeriod = {
      backup_user_id: change.backup_user_id ?? pending.backup_user_id,
      start_date: change.start_date ?? pending.start_date,
      end_date: change.end_date !== undefined ? change.end_date : pending.end_date,
    };
    await checkPeriod(trx, identity.org, userId, next, t, pending.id);
    return guardOverlap(() => updateOoo(trx, pending.id, next));
  });
}

/**
 * Ends the pending OOO: an active one ends today (its `end_date` becomes today in the organization's
 * timezone: today is its last day of coverage), a scheduled one is removed. Answers the record as it
 * is after the change (a removed one as it was).
 */
export async function endPendingOoo(deps: OooDeps, identity: Identity, userId: string): Promise<OooRow> {
  return changeCoverage(deps, userId, async (trx) => {
    await subjectUser(trx, identity, userId, true);
    await lockOrganizationOoo(trx, identity.org);
    const t = await today(trx, identity.org);
    const pending = await pendingOr404(trx, identity.org, userId, t);
    if (pending.start_date > t) {
      await deleteOoo(trx, pending.id);
      return pending;
    }
    return updateOoo(trx, pending.id, { backup_user_id: pending.backup_user_id, start_date: pending.start_date, end_date: t });
  });
}


export interface UserCoverage {
  /** the user's OOO active today, or null */
  ooo: OooRow | null;
  /** the backup covering the user today, or null */
  covered_by: { id: string; name: string; email: string } | null;
}

/** The user's OOO records, newest first (start date); 404 when the user is not of the organization. */
export async function listOooOfUser({ db }: { db: Db }, identity: Identity, userId: string, page: { offset: number; pageSize: number }) {
  await subjectUser(db, identity, userId, false);
  return listOoo(db, identity.org, userId, page.offset, page.pageSize);
}
