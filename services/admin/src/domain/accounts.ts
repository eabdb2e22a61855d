/** Users and organizations: creating and changing users (at least one active admin stays), reading them with today's coverage, and onboarding an organization with its first admin. */
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import { activityRetryWindowMinutes, ConflictError, NotFoundError, ValidationError, withTemporalDeadline, type Db, type Identity } from '@rp/platform';
import { businessSearchAttributes, TASK_QUEUES, welcomeEmail, welcomeEmailWorkflowId } from '@rp/workflows';
import { insertOrganization, type OrganizationRow } from '../store/organizations.js';
import { getUser, insertUser, listUsers, lockActiveAdmins, lockUser, replaceUserAccess, type Role, type UserRow } from '../store/users.js';
import { organizationToday, pendingCoverageBy } from '../store/ooo.js';
import { type UserCoverage } from './ooo.js';
import { readUserDetail, type UserReads } from './user-reads.js';
import { unknownBusinessUnits } from '../store/business-units.js';
import { issueCredential, type CredentialRow } from '../store/credentials.js';

export interface AccountsDeps {
  db: Db;
  temporal: Client;
  /** this process's cache of user details (user-reads.ts); a change awaits it so the caller's next request sees it */
  userReads?: UserReads | null;
}

export interface NewUser {
  email: string;
  name: string;
  role: Role;
  business_unit_ids: string[];
  permissions?: string[];
}

/** 422 naming each business unit id that is not a unit of the organization. */
export async function checkBusinessUnits(trx: Knex.Transaction, organizationId: string, given: string[]): Promise<string[]> {
  const unitIds = [...new Set(given)];
  const unknown = await unknownBusinessUnits(trx, organizationId, unitIds);
  if (unknown.length) {
    throw new ValidationError(
      unknown.map((id) => ({ loc: ['body', 'business_unit_ids', given.indexOf(id)], msg: `unknown business unit ${id}`, type: 'unknown_reference' })),
    );
  }
  return unitIds;
}

/**
 * Start the welcome email inside the creating transaction: if Temporal refuses, the user is not
 * created; if the commit fails after the start, the activity finds no user and skips.
 */
async function startWelcome(temporal: Client, organizationId: string, userId: string, requestId?: string): Promise<void> {
  await withTemporalDeadline(temporal, () =>
    temporal.workflow.start(welcomeEmail, {
      taskQueue: TASK_QUEUES.admin,
      workflowId: welcomeEmailWorkflowId(userId),
      args: [{ organizationId, userId, retryWindowMinutes: activityRetryWindowMinutes(), ...(requestId ? { requestId } : {}) }],
      typedSearchAttributes: businessSearchAttributes(organizationId, userId),
    }),
  );
}

export async function createUserInTrx(
  trx: Knex.Transaction,
  temporal: Client,
  organizationId: string,
  input: NewUser,
  requestId?: string,
): Promise<UserRow> {
  const unitIds = await checkBusinessUnits(trx, organizationId, input.business_unit_ids);
  const permissions = [...new Set(input.permissions ?? [])].sort();
  const user = await insertUser(trx, organizationId, { ...input, business_unit_ids: unitIds, permissions });
  if (!user) throw new ConflictError(`A user with email ${input.email} already exists in this organization.`);
  await startWelcome(temporal, organizationId, user.id, requestId);
  return user;
}

/** Create a user; `requestId` travels into the welcome-email activity's logs. */
export async function createUser(deps: AccountsDeps, organizationId: string, input: NewUser, requestId?: string): Promise<UserRow> {
  return deps.db.transaction((trx) => createUserInTrx(trx, deps.temporal, organizationId, input, requestId));
}

export interface UserChange {
  business_unit_ids?: string[];
  permissions?: string[];
  name?: string;
  role?: Role;
  /** false deactivates the user (their tokens stop working on commit), true reactivates */
  is_active?: boolean;
}

/**
 * Change a user (row 19's lifecycle for admins): what is given replaces the current name, role,
 * business units or permissions, and `is_active` deactivates or reactivates. The gateways'
 * credential caches are told on commit, so the user's next request carries the change and a
 * deactivated user's tokens are refused from then on.
 * 404 when not a user of the organization; 422 for a business unit that is not the organization's;
 * 409 when the change would leave the organization without an active admin, or deactivates a user
 * who is the backup of a pending out-of-office (change that coverage first).
 */
export async function updateUser(deps: AccountsDeps, organizationId: string, userId: string, change: UserChange): Promise<UserRow> {
  const updated = await deps.db.transaction(async (trx) => {
    const touchesAdmins = change.role !== undefined || change.is_active === false;
    const admins = touchesAdmins ? await lockActiveAdmins(trx, organizationId) : [];
    const user = await lockUser(trx, organizationId, userId);
    if (!user) throw new NotFoundError(`No user ${userId}.`);
    if (touchesAdmins && admins.includes(userId) && (change.role === 'member' || change.is_active === false) && admins.length === 1) {
      throw new ConflictError('An organization keeps at least one active admin: this is its last one. Make another user admin first.');
    }
    if (change.is_active === false && user.deactivated_at === null) {
      const today = (await organizationToday(trx, organizationId))!;
      const covering = await pendingCoverageBy(trx, organizationId, userId, today);
      if (covering) {
        throw new ConflictError(
          `User ${userId} is the backup of user ${covering.user_id}'s out-of-office from ${covering.start_date}; change that coverage before deactivating them.`,
        );
      }
    }
    const business_unit_ids = change.business_unit_ids ? await checkBusinessUnits(trx, organizationId, change.business_unit_ids) : undefined;
    const permissions = change.permissions ? [...new Set(change.permissions)].sort() : undefined;
    await replaceUserAccess(trx, organizationId, userId, { business_unit_ids, permissions, name: change.name, role: change.role, active: change.is_active });
    return (await getUser(trx, organizationId, userId))!;
  });
  // The change was announced on commit (replaceUserAccess): this process has applied it before answering.
  await deps.userReads?.sync();
  return updated;
}

export interface Onboarded {
  organization: OrganizationRow;
  user: UserRow;
  accessToken: { row: CredentialRow; token: string };
  apiKey: { row: CredentialRow; token: string };
}

/** Create an organization with its first admin, an access token for that admin and an API key, atomically. */
export async function onboardOrganization(
  deps: AccountsDeps,
  input: { name: string; base_currency: string; timezone: string; admin: { email: string; name: string } },
): Promise<Onboarded> {
  return deps.db.transaction(async (trx) => {
    const organization = await insertOrganization(trx, { name: input.name, base_currency: input.base_currency, timezone: input.timezone });
    const user = await createUserInTrx(trx, deps.temporal, organization.id, { ...input.admin, role: 'admin', business_unit_ids: [] });
    const accessToken = await issueCredential(trx, { organizationId: organization.id, kind: 'user', userId: user.id, name: 'initial admin token' });
    const apiKey = await issueCredential(trx, { organizationId: organization.id, kind: 'api_key', name: 'initial integration key' });
    return { organization, user, accessToken, apiKey };
  });
}

/** A page of the organization's users, oldest first. */
export async function usersOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listUsers(db, organizationId, page.offset, page.pageSize);
}

export type UserDetail = UserCoverage & { user: UserRow };

/** The user of the organization with the out-of-office in force today and who covers them; 404 otherwise. */
export async function userDetail(deps: { db: Db; userReads?: UserReads | null }, organizationId: string, userId: string): Promise<UserDetail> {
  const detail = await readUserDetail(deps, organizationId, userId);
  if (!detail) throw new NotFoundError(`No user ${userId}.`);
  return { user: detail.user, ooo: detail.ooo, covered_by: detail.covered_by };
}

/** The caller (the user the access token belongs to) in detail; 404 when that user no longer exists or the token is not a user's. */
export async function callerDetail(deps: { db: Db; userReads?: UserReads | null }, identity: Pick<Identity, 'org' | 'sub'>): Promise<UserDetail> {
  const detail = identity.sub ? await readUserDetail(deps, identity.org, identity.sub) : undefined;
  if (!detail) throw new NotFoundError('The user of this token no longer exists.');
  return { user: detail.user, ooo: detail.ooo, covered_by: detail.covered_by };
}
