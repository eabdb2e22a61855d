/**
 * Presigned uploads (kernel): the one lifecycle by which a client hands a file to a service — declare
 * its size and type, PUT the bytes to a presigned URL bound to them, have the object verified against
 * the declaration, download it through fresh presigned GETs — and the one `StorageUnavailableError`.
 * Each service keeps its own rows: these functions return what the service records.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/client';
import { AppError, ConflictError } from './errors.js';
import { MAX_OBJECT_BYTES, type ObjectStorage, type PresignedUrl } from './storage.js';

/** Validity of a presigned upload URL (15 minutes: long enough for a slow link, short enough to leak little). */
export const UPLOAD_URL_SECONDS = 900;
/** Validity of the presigned GET a response carries (one hour after the response). */
export const DOWNLOAD_URL_SECONDS = 3600;

/** The `type` (v2) and `error` (v1) of StorageUnavailableError. */
export const STORAGE_UNAVAILABLE = 'storage-unavailable';
/** Failure type of an activity that needs object storage its worker does not have. */
export const STORAGE_UNAVAILABLE_FAILURE = 'StorageUnavailable';

/**
 * The OpenAPI sentence of every route that needs object storage, so each one tells clients the same.
 * The answer carries no Retry-After: storage that is not configured stays so until an operator sets
 * S3_ENDPOINT and restarts the service; retrying soon does not help.
 */
export const STORAGE_UNAVAILABLE_DOC =
  'Without object storage (S3_ENDPOINT unset) the answer is 503 `storage-unavailable` ("Object storage unavailable": ' +
  '"Object storage is not configured for this service (S3_ENDPOINT).") without Retry-After, and nothing is stored: ' +
  'configuring the storage is the operator\'s fix, not something a retry waits out.';

/** The service has no object storage configured: 503, the same for every service and route. */
export class StorageUnavailableError extends AppError {
  constructor() {
    super({ status: 503, type: STORAGE_UNAVAILABLE, title: 'Object storage unavailable', detail: 'Object storage is not configured for this service (S3_ENDPOINT).' });
  }
}

/** The service's storage, or StorageUnavailableError when it has none. */
export function requireStorage(storage: ObjectStorage | null): ObjectStorage {
  if (!storage) throw new StorageUnavailableError();
  return storage;
}

/**
 * The activity failure of a worker without object storage: retryable, because an operator who sets
 * S3_ENDPOINT and restarts the worker within the workflow's retry window lets the work finish.
 */
export function storageUnavailableFailure(worker: string): ApplicationFailure {
  return ApplicationFailure.retryable(`object storage is not configured for the ${worker} (S3_ENDPOINT)`, STORAGE_UNAVAILABLE_FAILURE);
}

/** Nothing has been PUT to the upload URL yet: 409, the object cannot be verified. */
export class NotUploadedError extends ConflictError {
  constructor(what: string) {
    super(`Nothing has been uploaded to the ${what}’s upload URL yet.`);
  }
}

/** The bounds of one kind of upload. */
export interface UploadPolicy {
  /** Largest size a declaration may name, in bytes. */
  maxBytes: number;
  /** Validity of the presigned PUT, in seconds. */
  uploadSeconds: number;
  /** Validity of the presigned GET, in seconds. */
  downloadSeconds: number;
}

export function uploadPolicy(overrides: Partial<UploadPolicy> = {}): UploadPolicy {
  return { maxBytes: MAX_OBJECT_BYTES, uploadSeconds: UPLOAD_URL_SECONDS, downloadSeconds: DOWNLOAD_URL_SECONDS, ...overrides };
}

/** What a client declared of an object: where it goes, how many bytes and of which type. */
export interface UploadDeclaration {
  key: string;
  size: number;
  contentType: string;
}

const KEY_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * `org/<organization>/<area…>/<id>-<random>`: built from ids and fixed names only, never client text
 * (a file's name travels in the download's Content-Disposition), and unguessable even to someone who
 * knows the record's id.
 */
export function uploadKey(organizationId: string, area: readonly string[], id: string): string {
  for (const segment of [organizationId, ...area, id]) {
    if (!KEY_SEGMENT.test(segment)) throw new Error(`object key segment ${JSON.stringify(segment)} is not an id or fixed name`);
  }
  return `org/${organizationId}/${area.join('/')}/${id}-${randomUUID()}`;
}

/** A declared upload: the key and bucket to record, and the presigned PUT the client sends the bytes to. */
export interface DeclaredUpload {
  key: string;
  bucket: string;
  upload: PresignedUrl;
}

/**
 * Declares an upload: a fresh key under the organization's area and a presigned PUT that binds the
 * exact size and content type (the S3 server refuses other bytes with 403). Size outside
 * 1..policy.maxBytes is a RangeError: routes bound the size in their schema first.
 */
export async function declareUpload(
  storage: ObjectStorage | null,
  policy: UploadPolicy,
  input: { organizationId: string; area: readonly string[]; id: string; size: number; contentType: string },
): Promise<DeclaredUpload> {
  const s = requireStorage(storage);
  await s.ready();
  const key = uploadKey(input.organizationId, input.area, input.id);
  const upload = await s.presignPut({ key, size: input.size, contentType: input.contentType, expiresIn: policy.uploadSeconds, maxBytes: policy.maxBytes });
  return { key, bucket: s.bucket, upload };
}

/** A new presigned PUT for an upload declared earlier (the first one may have expired). */
export async function reissueUpload(storage: ObjectStorage | null, policy: UploadPolicy, declared: UploadDeclaration): Promise<PresignedUrl> {
  return requireStorage(storage).presignPut({ ...declared, expiresIn: policy.uploadSeconds, maxBytes: policy.maxBytes });
}

/** The outcome of checking an uploaded object, in the columns a service records. */
export interface UploadCheck {
  is_verified: boolean;
  sha256: string | null;
  sniffed_mime_type: string | null;
  /** Why the object is not verified (null when it is). */
  verification_error: string | null;
}

/**
 * Checks the uploaded object against its declaration (the kernel's `verifyObject`: size by HEAD and
 * bytes read, stored type, sha256, the type sniffed from the bytes); null when nothing was uploaded.
 * `admit` is the service's own rule on bytes that match (e.g. a quota on the real size): a reason it
 * returns refuses them, keeping their sha256 and sniffed type.
 */
export async function checkUpload(
  storage: ObjectStorage | null,
  declared: UploadDeclaration,
  admit?: (size: number) => Promise<string | null>,
): Promise<UploadCheck | null> {
  const v = await requireStorage(storage).verifyObject(declared);
  if (!v.exists) return null;
  const refused = v.is_verified && admit ? await admit(v.size ?? declared.size) : null;
  return {
    is_verified: v.is_verified && refused === null,
    sha256: v.sha256,
    sniffed_mime_type: v.sniffed_mime_type,
    verification_error: refused ?? v.reason,
  };
}

/**
 * A fresh presigned GET of the object, offering it as `name` when downloaded; null when the service
 * has no object storage (responses then show the record without a link). Signed locally: no request.
 */
export async function downloadUrl(storage: ObjectStorage | null, policy: UploadPolicy, object: { key: string; name?: string }): Promise<PresignedUrl | null> {
  if (!storage) return null;
  return storage.presignGet({ key: object.key, expiresIn: policy.downloadSeconds, ...(object.name ? { downloadName: object.name } : {}) });
}
