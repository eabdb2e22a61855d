/** Knowledge files (migration 003): declarations within the organization's quota, verification outcomes and deletion. */
import type { Db } from '@rp/platform';

export interface FileRow {
  id: string;
  organization_id: string;
  name: string;
  mime_type: string;
  size: number;
  bucket: string;
  object_key: string;
  uploaded_by: string | null;
  is_verified: boolean;
  sha256: string | null;
  sniffed_mime_type: string | null;
  verification_error: string | null;
  verified_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

/** Serialises the quota check and insert of one organization's files (other organizations never wait). */
async function lockOrganizationFiles(trx: Db, organizationId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`knowledge.files:${organizationId}`]);
}

/** Bytes the organization's files hold or may hold: the declared sizes of all its files (pending, verified, failed, being deleted). */
export async function usedBytes(db: Db, organizationId: string, exceptId?: string): Promise<number> {
  const q = db('files').where({ organization_id: organizationId }).sum({ total: 'size' });
  if (exceptId) q.whereNot({ id: exceptId });
  const [r] = (await q) as { total: string | number | null }[];
  return Number(r?.total ?? 0);
}

/**
 * Inserts the file when the organization's files plus it stay within `quotaBytes`; null (nothing
 * inserted) otherwise, with the bytes in use. Checked and inserted under the organization's lock, so
 * two concurrent declarations cannot both take the last free bytes.
 */
export async function insertFileWithinQuota(
  db: Db,
  row: Pick<FileRow, 'id' | 'organization_id' | 'name' | 'mime_type' | 'size' | 'bucket' | 'object_key' | 'uploaded_by'>,
  quotaBytes: number,
): Promise<{ file: FileRow | null; used: number }> {
  return db.transaction(async (trx) => {
    await lockOrganizationFiles(trx, row.organization_id);
    const used = await usedBytes(trx, row.organization_id);
    if (used + row.size > quotaBytes) return { file: null, used };
    const [r] = await trx('files').insert(row).returning('*');
    return { file: r as FileRow, used };
  });
}

/** The file (null when unknown, another organization's, or being deleted). */
export async function getFile(db: Db, organizationId: string, id: string): Promise<FileRow | null> {
  return ((await db('files').where({ organization_id: organizationId, id }).whereNull('deleted_at').first()) as FileRow | undefined) ?? null;
}

export async function getFilesByIds(db: Db, organizationId: string, ids: readonly string[]): Promise<Map<string, FileRow>> {
  if (!ids.length) return new Map();
  const rows = (await db('files').where({ organization_id: organizationId }).whereIn('id', ids).whereNull('deleted_at')) as FileRow[];
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Marks the file as being deleted unless an extraction job that has not ended reads it. Answers the
 * row (also one already marked: a retried DELETE finishes the removal), 'busy' with the running
 * job's id, or null when there is no such file.
 */
export async function markDeleting(db: Db, organizationId: string, id: string): Promise<FileRow | { busy: string } | null> {
  return db.transaction(async (trx) => {
    const f = (await trx('files').where({ organization_id: organizationId, id }).forUpdate().first()) as FileRow | undefined;
    if (!f) return null;
    const running = (await trx('extraction_jobs').where({ organization_id: organizationId, file_id: id }).whereNotIn('status', ['complete', 'failed']).first('id')) as { id: string } | undefined;
    if (running) return { busy: running.id };
    if (f.deleted_at) return f;
    const [r] = await trx('files').where({ id }).update({ deleted_at: trx.fn.now(), modified_at: trx.fn.now() }).returning('*');
    return r as FileRow;
  });
}

/** Removes a file marked as being deleted (its jobs keep their history with file_id null). */
export async function removeFile(db: Db, organizationId: string, id: string): Promise<void> {
  await db('files').where({ organization_id: organizationId, id }).whereNotNull('deleted_at').delete();
}

/** Records a verification outcome once: a file checked before (verified or refused) keeps its first outcome. */
export async function recordVerification(
  db: Db,
  organizationId: string,
  id: string,
  v: { is_verified: boolean; sha256: string | null; sniffed_mime_type: string | null; verification_error: string | null },
): Promise<FileRow> {
  const [r] = await db('files')
    .where({ organization_id: organizationId, id, is_verified: false, verification_error: null })
    .whereNull('deleted_at')
    .update({ ...v, verified_at: v.is_verified ? db.fn.now() : null, modified_at: db.fn.now() })
    .returning('*');
  return (r as FileRow | undefined) ?? (await getFile(db, organizationId, id))!;
}
