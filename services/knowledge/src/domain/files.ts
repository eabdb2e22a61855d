/**
 * Knowledge files (spec 2.10 `file`): their declaration within the organization's storage quota,
 * their one final verification and their deletion, over the kernel's presigned-upload lifecycle.
 *
 * - Creating one answers a presigned PUT bound to the declared size and type (at most 50 MB).
 * - Reading one checks the upload server-side once it is there (size, sha256 of the bytes, type
 *   sniffed from them; text formats by the kernel's rules) and records the outcome, which is final:
 *   the bytes are downloaded and hashed once per file, never on later reads.
 * - Any type is accepted as a file; an extraction refuses the types the pipeline cannot read.
 * - Deleting one hides it at once, then removes the object and the row.
 */
import type { Logger } from 'pino';
import {
  checkUpload,
  ConflictError,
  declareUpload,
  newId,
  NotFoundError,
  OUTAGE_RETRY_AFTER_SECONDS,
  reissueUpload,
  requireStorage,
  ServiceUnavailableError,
  uploadPolicy,
  type Db,
  type ObjectStorage,
  type PresignedUrl,
} from '@rp/platform';
import { MAX_KNOWLEDGE_FILE_BYTES } from '../extraction/types.js';
import * as store from '../store/files.js';

/** Knowledge files: at most 50 MB, a 15-minute presigned PUT (the kernel's default validity). */
export const FILE_UPLOADS = uploadPolicy({ maxBytes: MAX_KNOWLEDGE_FILE_BYTES });

interface Deps {
  db: Db;
  storage: ObjectStorage | null;
}

/** Bytes of knowledge files one organization may hold (KNOWLEDGE_STORAGE_QUOTA_BYTES). */
export interface Quota {
  quotaBytes: number;
}

/** A file with the presigned PUT its bytes still go to (null once its verification outcome is recorded). */
export interface FileRecord {
  file: store.FileRow;
  upload: PresignedUrl | null;
}

/** The `verification_error` of an upload that would take the organization past its quota. */
export function quotaExceededMessage(used: number, size: number, quota: number): string {
  return `storage quota exceeded: the organization's knowledge files hold ${used} bytes; ${size} more would exceed its quota of ${quota} bytes. Delete files (DELETE /v2/aether/files/{file_id}) to free space`;
}

export async function createFile(deps: Deps & Quota, org: string, userId: string | null, input: { name: string; mime_type: string; size: number }): Promise<FileRecord> {
  const id = newId();
  const { key, bucket, upload } = await declareUpload(deps.storage, FILE_UPLOADS, { organizationId: org, area: ['knowledge', 'files'], id, size: input.size, contentType: input.mime_type });
  const { file, used } = await store.insertFileWithinQuota(
    deps.db,
    { id, organization_id: org, name: input.name, mime_type: input.mime_type, size: input.size, bucket, object_key: key, uploaded_by: userId },
    deps.quotaBytes,
  );
  if (!file) throw new ConflictError(`${quotaExceededMessage(used, input.size, deps.quotaBytes)}. Nothing was stored.`);
  return { file, upload };
}

/** Whether a verification outcome is recorded (verified, or refused with its reason): it is final. */
const checked = (f: store.FileRow) => f.is_verified || f.verification_error !== null;

/**
 * The file, checked now when bytes were uploaded and no outcome is recorded yet. The outcome is
 * recorded once and final: a verified file's sha256 is what extraction reads, and a refused one is
 * not downloaded again (a new file is declared for other bytes). The real size counts against the
 * quota too, so bytes beyond it are refused even when the quota was lowered after the declaration.
 */
export async function verifiedFile(deps: Deps & Quota, org: string, id: string): Promise<store.FileRow> {
  const f = await store.getFile(deps.db, org, id);
  if (!f) throw new NotFoundError(`No file ${id}.`);
  if (checked(f)) return f;
  const outcome = await checkUpload(deps.storage, { key: f.object_key, size: f.size, contentType: f.mime_type }, async (real) => {
    const used = await store.usedBytes(deps.db, org, id);
    return used + real > deps.quotaBytes ? quotaExceededMessage(used, real, deps.quotaBytes) : null;
  });
  return outcome ? store.recordVerification(deps.db, org, id, outcome) : f;
}

/** The file (verified now if its bytes just arrived), with a fresh upload URL while nothing is recorded. */
export async function readFile(deps: Deps & Quota, org: string, id: string): Promise<FileRecord> {
  const f = await verifiedFile(deps, org, id);
  const upload = checked(f) ? null : await reissueUpload(deps.storage, FILE_UPLOADS, { key: f.object_key, size: f.size, contentType: f.mime_type });
  return { file: f, upload };
}

/**
 * Deletes a file: refused (409) while an extraction job that has not ended reads it; otherwise the
 * file is hidden at once (404 on every read), its object is removed from storage, then its row (ended
 * jobs keep their counters, memories and proposals, with `file` and `file_id` null). A failure
 * between the steps leaves the file hidden; a retried DELETE finishes the removal.
 */
export async function deleteFile(deps: Deps, org: string, id: string, log?: Logger): Promise<void> {
  const storage = requireStorage(deps.storage);
  const marked = await store.markDeleting(deps.db, org, id);
  if (!marked) throw new NotFoundError(`No file ${id}.`);
  if ('busy' in marked) throw new ConflictError(`Extraction ${marked.busy} is reading file ${id}; cancel it or wait until it ends, then delete the file.`);
  try {
    await storage.deleteObject(marked.object_key); // S3 answers a missing key with success: a retry is harmless
  } catch (err) {
    log?.warn({ file_id: id, err: err instanceof Error ? err.message : String(err) }, 'could not remove a deleted knowledge file from storage');
    throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, `File ${id} is deleted, but its bytes could not be removed from storage yet; repeat the DELETE to finish.`);
  }
  await store.removeFile(deps.db, org, id);
  log?.info({ file_id: id }, 'knowledge file deleted');
}
