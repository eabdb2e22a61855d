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
  created_at: Date;
  modified_at: Date;
}

export async function insertFile(db: Db, row: Pick<FileRow, 'id' | 'organization_id' | 'name' | 'mime_type' | 'size' | 'bucket' | 'object_key' | 'uploaded_by'>): Promise<FileRow> {
  const [r] = await db('files').insert(row).returning('*');
  return r as FileRow;
}

export async function getFile(db: Db, organizationId: string, id: string): Promise<FileRow | null> {
  return ((await db('files').where({ organization_id: organizationId, id }).first()) as FileRow | undefined) ?? null;
}

export async function getFilesByIds(db: Db, organizationId: string, ids: readonly string[]): Promise<Map<string, FileRow>> {
  if (!ids.length) return new Map();
  const rows = (await db('files').where({ organization_id: organizationId }).whereIn('id', ids)) as FileRow[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Records a verification outcome; a verified file stays verified (its checked bytes are recorded once). */
export async function recordVerification(
  db: Db,
  organizationId: string,
  id: string,
  v: { is_verified: boolean; sha256: string | null; sniffed_mime_type: string | null; verification_error: string | null },
): Promise<FileRow> {
  const [r] = await db('files')
    .where({ organization_id: organizationId, id, is_verified: false })
    .update({ ...v, verified_at: v.is_verified ? db.fn.now() : null, modified_at: db.fn.now() })
    .returning('*');
  return (r as FileRow | undefined) ?? (await getFile(db, organizationId, id))!;
}
