/**
 * Knowledge files (issue 15 part 1, spec 2.10 `file`): creating one answers a presigned PUT on the
 * object storage bound to the declared size and type (at most 50 MB); reading one checks the upload
 * server-side until it is verified (size, sha256 of the bytes, type sniffed from them; text formats
 * by the kernel's rules) and records the outcome. Any type is accepted as a file; an extraction
 * refuses the types the pipeline cannot read.
 */
import { randomUUID } from 'node:crypto';
import { AppError, isoTime, newId, NotFoundError, type Db, type ObjectStorage } from '@rp/platform';
import { MAX_KNOWLEDGE_FILE_BYTES } from '../extraction/types.js';
import * as store from '../store/files.js';

/** Validity of a presigned upload URL. */
export const UPLOAD_URL_SECONDS = 900;

export class StorageUnavailableError extends AppError {
  constructor() {
    super({ status: 503, type: 'storage-unavailable', title: 'Object storage unavailable', detail: 'Object storage is not configured for this service (S3_ENDPOINT).' });
  }
}

interface Deps {
  db: Db;
  storage: ObjectStorage | null;
}

export function needStorage(deps: Deps): ObjectStorage {
  if (!deps.storage) throw new StorageUnavailableError();
  return deps.storage;
}

/** The file object of spec 2.10 (`upload_url` given while the upload is not verified) with its verification. */
export function fileView(f: store.FileRow, upload: { url: string; headers: Record<string, string>; expires_at: Date } | null) {
  return {
    object: 'file' as const,
    id: f.id,
    name: f.name,
    mime_type: f.mime_type,
    bucket: f.bucket,
    object_key: f.object_key,
    upload_url: upload?.url ?? null,
    upload_headers: upload?.headers ?? null,
    upload_expires_at: upload ? upload.expires_at.toISOString() : null,
    size: f.size,
    is_verified: f.is_verified,
    sha256: f.sha256,
    sniffed_mime_type: f.sniffed_mime_type,
    verification_error: f.verification_error,
    verified_at: isoTime(f.verified_at),
    created_at: isoTime(f.created_at)!,
    modified_at: isoTime(f.modified_at)!,
  };
}

export async function createFile(deps: Deps, org: string, userId: string | null, input: { name: string; mime_type: string; size: number }) {
  const storage = needStorage(deps);
  await storage.ready();
  const id = newId();
  // The key holds no client text.
  const key = `org/${org}/knowledge/files/${id}-${randomUUID()}`;
  const upload = await storage.presignPut({ key, size: input.size, contentType: input.mime_type, expiresIn: UPLOAD_URL_SECONDS, maxBytes: MAX_KNOWLEDGE_FILE_BYTES });
  const row = await store.insertFile(deps.db, { id, organization_id: org, name: input.name, mime_type: input.mime_type, size: input.size, bucket: storage.bucket, object_key: key, uploaded_by: userId });
  return fileView(row, upload);
}

/** The file, verified now when it was not yet (a verified file is never checked again: its sha256 is what extraction reads). */
export async function verifiedFile(deps: Deps, org: string, id: string): Promise<store.FileRow> {
  const f = await store.getFile(deps.db, org, id);
  if (!f) throw new NotFoundError(`No file ${id}.`);
  if (f.is_verified) return f;
  const storage = needStorage(deps);
  const v = await storage.verifyObject({ key: f.object_key, size: f.size, contentType: f.mime_type });
  if (!v.exists) return f;
  return store.recordVerification(deps.db, org, id, { is_verified: v.is_verified, sha256: v.sha256, sniffed_mime_type: v.sniffed_mime_type, verification_error: v.reason });
}

export async function getFileView(deps: Deps, org: string, id: string) {
  const f = await verifiedFile(deps, org, id);
  const upload = f.is_verified ? null : await needStorage(deps).presignPut({ key: f.object_key, size: f.size, contentType: f.mime_type, expiresIn: UPLOAD_URL_SECONDS, maxBytes: MAX_KNOWLEDGE_FILE_BYTES });
  return fileView(f, upload);
}
