/** API shape of a knowledge file (spec 2.10 `file`). */
import { isoTime, type PresignedUrl } from '@rp/platform';
import type { FileRow } from '../store/files.js';

/** The file object of spec 2.10 (`upload_url` given while the upload is not verified) with its verification. */
export function fileView(f: FileRow, upload: PresignedUrl | null) {
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
