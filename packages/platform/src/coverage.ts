/**
 * Out-of-office coverage, read side: "who handles this customer today". The admin service owns OOO
 * (schema `admin`, table `user_ooo`) and publishes one read contract for other services, the view
 * `admin.coverage_today` (migration admin 003): per organization and user, the backup covering them
 * today in the organization's timezone. This module is the only reader of that view outside admin,
 * as ledger.ts is of the ledger and auth/credentials.ts of credentials; admin may change its tables
 * freely as long as the view keeps its columns. The customer's assignee comes from the ledger
 * (`partners.assignee_id`, through ledger.ts).
 *
 * No chains: admin refuses a backup who is out of office during the period and a user going out of
 * office while covering somebody, so one hop answers.
 */
import type { Knex } from 'knex';
import { getPartner, type BusinessUnitScope } from './ledger/index.js';

export const COVERAGE_VIEW = 'admin.coverage_today';

export interface Coverage {
  /** the user who is out today */
  user_id: string;
  /** the user covering them today */
  backup_user_id: string;
  ooo_id: string;
  start_date: string;
  end_date: string | null;
}

/** The coverage active today of each given user who is out (users not out are absent from the map). */
export async function coverageToday(db: Knex, organizationId: string, userIds: readonly string[]): Promise<Map<string, Coverage>> {
  const out = new Map<string, Coverage>();
  if (!userIds.length) return out;
  const rows: Coverage[] = await db(COVERAGE_VIEW)
    .select('user_id', 'backup_user_id', 'ooo_id', db.raw(`to_char(start_date, 'YYYY-MM-DD') AS start_date`), db.raw(`to_char(end_date, 'YYYY-MM-DD') AS end_date`))
    .where({ organization_id: organizationId })
    .whereIn('user_id', [...new Set(userIds)]);
  for (const r of rows) out.set(r.user_id, r);
  return out;
}

/** The users whose backup today is `backupUserId` (they are out and `backupUserId` covers them). */
export async function usersCoveredToday(db: Knex, organizationId: string, backupUserId: string): Promise<string[]> {
  const rows: { user_id: string }[] = await db(COVERAGE_VIEW).select('user_id').where({ organization_id: organizationId, backup_user_id: backupUserId });
  return rows.map((r) => r.user_id);
}

/**
 * The assignees whose customers `userId` handles today: `userId` itself unless they are out, plus
 * every user they cover today. A filter "handled by X" is `assignee_id IN (this list)`.
 */
export async function assigneesHandledToday(db: Knex, organizationId: string, userId: string): Promise<string[]> {
  const [own, covered] = await Promise.all([coverageToday(db, organizationId, [userId]), usersCoveredToday(db, organizationId, userId)]);
  return own.has(userId) ? covered : [userId, ...covered];
}

/**
 * The effective assignee of each customer today, for a page of customers: the assignee, or the
 * assignee's backup while the assignee is out (null when nobody is assigned). One query.
 */
export async function effectiveAssignees<T extends { assignee_id: string | null }>(db: Knex, organizationId: string, partners: readonly T[]): Promise<(T & { effective_assignee_id: string | null })[]> {
  const ids = partners.map((p) => p.assignee_id).filter((a): a is string => a !== null);
  const cover = await coverageToday(db, organizationId, ids);
  return partners.map((p) => ({ ...p, effective_assignee_id: p.assignee_id === null ? null : (cover.get(p.assignee_id)?.backup_user_id ?? p.assignee_id) }));
}

/** Who handles a user's work today: the user, or their backup while they are out. */
export async function handlerOfUser(db: Knex, organizationId: string, userId: string): Promise<{ handler_id: string; coverage: Coverage | null }> {
  const coverage = (await coverageToday(db, organizationId, [userId])).get(userId) ?? null;
  return { handler_id: coverage?.backup_user_id ?? userId, coverage };
}

export interface CustomerHandler {
  partner_id: string;
  /** the customer's assignee (null: nobody is assigned) */
  assignee_id: string | null;
  /** who handles the customer today: the assignee, or the assignee's backup while they are out */
  handler_id: string | null;
  /** the assignee's OOO coverage in force today, when the backup handles it */
  coverage: Coverage | null;
}

/**
 * Who handles this customer today: its assignee, or the assignee's backup while the assignee is out
 * of office (organization's timezone). Null when the customer is not the organization's or out of
 * the caller's business-unit scope.
 */
export async function customerHandlerToday(db: Knex, organizationId: string, partnerId: string, scope: BusinessUnitScope = '*'): Promise<CustomerHandler | null> {
  const partner = await getPartner(db, organizationId, partnerId, scope);
  if (!partner) return null;
  if (!partner.assignee_id) return { partner_id: partner.id, assignee_id: null, handler_id: null, coverage: null };
  const { handler_id, coverage } = await handlerOfUser(db, organizationId, partner.assignee_id);
  return { partner_id: partner.id, assignee_id: partner.assignee_id, handler_id, coverage };
}
