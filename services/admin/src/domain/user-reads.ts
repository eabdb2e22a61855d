/**
 * A user's detail (GET /v2/users/me, GET /v2/users/{id}): the user, their out-of-office in force today
 * and the backup covering them, read in one statement and kept per process for the next requests.
 *
 * What the answer depends on announces its changes on the auth channel (auth/credentials.ts), so
 * every API process drops a stale entry on commit: a user's own change (`user_id`: name, role,
 * access, deactivation, store/users.ts), their backup's (`user_id` of the backup: the name and email
 * shown in `covered_by`), their out-of-office (`coverage_user_id`, domain/ooo.ts) and the organization
 * (`organization_id`). An entry holds for the organization's day it was read on only: a period
 * starting or ending at midnight in the organization's timezone is seen from the first request of the
 * new day. USER_READ_CACHE_TTL_MS bounds everything else (a change made by hand in the database).
 */
import { AUTH_CHANGES, ReadCache, type AuthChange, type Db, type Logger } from '@rp/platform';
import { getUserDetail, type UserDetailRow } from '../store/users.js';

export type UserReads = ReadCache<UserDetailRow, AuthChange>;

export async function createUserReads(opts: { db: Db; databaseUrl: string; log: Logger; ttlMs: number }): Promise<UserReads | null> {
  if (opts.ttlMs <= 0) return null;
  const cache = new ReadCache<UserDetailRow, AuthChange>({
    name: 'admin-user-reads',
    db: opts.db,
    databaseUrl: opts.databaseUrl,
    log: opts.log,
    ttlMs: opts.ttlMs,
    channel: AUTH_CHANGES,
    stale: (v, change) =>
      change.organization_id === v.user.organization_id ||
      change.user_id === v.user.id ||
      change.coverage_user_id === v.user.id ||
      (change.user_id !== undefined && change.user_id === v.covered_by?.id),
  });
  await cache.start();
  return cache;
}

const dayFormats = new Map<string, Intl.DateTimeFormat | null>();

/** Today's date (YYYY-MM-DD) in the IANA timezone, or null when this runtime does not know the zone. */
function todayIn(timeZone: string): string | null {
  let f = dayFormats.get(timeZone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    } catch {
      f = null;
    }
    dayFormats.set(timeZone, f);
  }
  return f ? f.format(Date.now()) : null;
}

/** The user's detail (undefined when not a user of the organization), from this process's cache when it holds. */
export async function readUserDetail(deps: { db: Db; userReads?: UserReads | null }, organizationId: string, userId: string): Promise<UserDetailRow | undefined> {
  const load = () => getUserDetail(deps.db, organizationId, userId);
  // an entry ends with the organization's day (today's out-of-office cover is part of it)
  return deps.userReads ? deps.userReads.through(`${organizationId}:${userId}`, load, (row) => row.today === todayIn(row.timezone)) : load();
}
