/**
 * Closing documents the source deleted: they stay in the ledger (their ids may be referenced) but
 * are no longer open AR: amount_open 0, status_open false, remote_deleted_at set.
 */
import type { DocumentUpsert } from '../types.js';
import type { Db } from './ledger-sql.js';
import { closeDocuments, lockDocumentsToClose } from './ledger-views.js';

/**
 * The source deleted these documents (by remote id, of one kind). Ids the ledger does not have, or
 * has already closed this way, are skipped. Returns how many documents were closed.
 */
export async function markRemoteDocumentsDeleted(trx: Db, organizationId: string, origin: string, kind: DocumentUpsert['kind'], remoteIds: readonly string[]): Promise<number> {
  const rows = await lockDocumentsToClose(trx, organizationId, origin, kind, { remoteIds });
  await closeDocuments(trx, organizationId, rows.map((r) => r.id));
  return rows.length;
}

/**
 * After a read that returned every live record of a kind: the origin's documents of that kind that
 * were not written since `seenSince` (the run's start; every document the read returned was
 * upserted after it) are gone from the source and are closed as in markRemoteDocumentsDeleted.
 * Documents something else touched in the meantime are left alone (the fail-safe direction: a
 * later full read closes them). Returns how many documents were closed.
 */
export async function closeDocumentsNotSeenSince(trx: Db, organizationId: string, origin: string, kind: DocumentUpsert['kind'], seenSince: Date): Promise<number> {
  const rows = await lockDocumentsToClose(trx, organizationId, origin, kind, { notSeenSince: seenSince });
  await closeDocuments(trx, organizationId, rows.map((r) => r.id));
  return rows.length;
}

/**
 * The database's clock now: the time a sync stamps on the figures it is about to read
 * (`erp_reported_at`), on the same clock as the payments' `posted_at` it is compared with.
 */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = (await db.raw('SELECT clock_timestamp() AS now')) as { rows: { now: Date }[] };
  return rows[0]!.now;
}
