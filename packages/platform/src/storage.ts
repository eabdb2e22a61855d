/**
 * Object storage (kernel): an S3-compatible server through the AWS SDK (path-style addressing, so
 * any S3-compatible server works; locally versitygw). Clients upload and download directly with
 * presigned URLs — bytes never pass through our services — and the server checks an upload
 * afterwards (`verifyObject`) instead of trusting what the client declared. Services take files
 * from clients through uploads.ts, the lifecycle built on these primitives.
 *
 * - `presignPut` binds the object's exact size (Content-Length) and content type into the SigV4
 *   signature: a PUT with other bytes counts or another type is refused by the S3 server (403).
 * - `presignGet` signs a GET valid for `expiresIn` seconds from the signing date.
 * - `verifyObject` HEADs the object (size and type as stored), reads the bytes (bounded by the
 *   declared size), computes their sha256 and sniffs the real type from the bytes with `file-type`.
 *   The object is verified only when size, stored type and sniffed type agree with the declaration.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { fileTypeFromBuffer } from 'file-type';
import type { CommonConfig } from './config.js';
import { ObjectUploadStream } from './storage-upload-stream.js';

export { ObjectUploadStream } from './storage-upload-stream.js';

export interface ObjectStorageConfig {
  endpoint: string;
  /**
   * The endpoint presigned URLs name (clients upload and download there), when clients reach the
   * S3 server under another address than the services do (docker compose: `http://s3:7070` inside,
   * `http://localhost:7070` on the host). Default: `endpoint`.
   */
  publicEndpoint?: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** The storage settings of a service's configuration; throws when a service that needs them lacks them. */
export function storageConfigFrom(
  config: Pick<CommonConfig, 'S3_ENDPOINT' | 'S3_BUCKET' | 'S3_ACCESS_KEY_ID' | 'S3_SECRET_ACCESS_KEY' | 'S3_REGION'> & { S3_PUBLIC_ENDPOINT?: string },
): ObjectStorageConfig {
  const missing = (['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const).filter((k) => !config[k]);
  if (missing.length) throw new Error(`object storage is not configured: set ${missing.join(', ')}`);
  return {
    endpoint: config.S3_ENDPOINT!,
    ...(config.S3_PUBLIC_ENDPOINT ? { publicEndpoint: config.S3_PUBLIC_ENDPOINT } : {}),
    bucket: config.S3_BUCKET!,
    accessKeyId: config.S3_ACCESS_KEY_ID!,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY!,
    region: config.S3_REGION,
  };
}

export interface PresignedUrl {
  url: string;
  method: 'PUT' | 'GET';
  /** Headers the client must send exactly (they are part of the signature). */
  headers: Record<string, string>;
  expires_at: Date;
}

export interface VerificationResult {
  /** False when no object exists under the key (nothing was uploaded yet). */
  exists: boolean;
  is_verified: boolean;
  size: number | null;
  sha256: string | null;
  /** MIME type detected from the bytes; null when the bytes carry no known signature (e.g. text). */
  sniffed_mime_type: string | null;
  /** Why the object is not verified (null when verified). */
  reason: string | null;
}

/** Largest object a presigned upload may declare by default (25 MiB; presignPut's `maxBytes` sets another). */
export const MAX_OBJECT_BYTES = 25 * 1024 * 1024;
/** Longest validity of a presigned URL (SigV4 allows at most 7 days). */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * Types whose bytes have no magic number: accepted as verified when the bytes carry no binary
 * signature either and are valid UTF-8 without NUL bytes. An email (message/rfc822) is text too
 * (RFC 5322: ASCII lines; 8-bit bodies are UTF-8 in practice, others arrive encoded).
 */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'text/html', 'text/markdown', 'text/calendar', 'application/json', 'application/xml', 'text/xml', 'message/rfc822']);

/** Declared types that `file-type` reports under another name. */
const MIME_ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'application/x-zip-compressed': 'application/zip',
};

function normalizeMime(mime: string): string {
  const bare = mime.split(';')[0]!.trim().toLowerCase();
  return MIME_ALIASES[bare] ?? bare;
}

/** Coarse category of a MIME type (the attachment's `file_type`). */
export function fileCategory(mime: string): 'audio' | 'image' | 'video' | 'text' | 'document' | 'archive' | 'other' {
  const m = normalizeMime(mime);
  if (m.startsWith('audio/')) return 'audio';
  if (m.startsWith('image/')) return 'image';
  if (m.startsWith('video/')) return 'video';
  if (TEXT_TYPES.has(m) || m.startsWith('text/')) return 'text';
  if (m === 'application/pdf' || m.includes('officedocument') || m === 'application/msword' || m.includes('opendocument') || m === 'application/rtf') return 'document';
  if (['application/zip', 'application/gzip', 'application/x-7z-compressed', 'application/x-tar', 'application/x-rar-compressed'].includes(m)) return 'archive';
  return 'other';
}

/** Whether sniffed bytes are consistent with a declared type (exported for tests and callers). */
export function typeMatches(declared: string, sniffed: string | null, bytes: Uint8Array): boolean {
  const want = normalizeMime(declared);
  if (sniffed) {
    const got = normalizeMime(sniffed);
    if (got === want) return true;
    // OOXML documents are zip files; file-type recognises most of them, and older ones as zip.
    return got === 'application/zip' && want.includes('officedocument');
  }
  if (!TEXT_TYPES.has(want) && !want.startsWith('text/')) return false;
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export class ObjectStorage {
  readonly client: S3Client;
  /** Signs presigned URLs (no requests): `client`, or one naming config.publicEndpoint. */
  private readonly presigner: S3Client;

  constructor(readonly config: ObjectStorageConfig) {
    // The SDK warns once per process that releases after January 2027 need Node 22; ours is pinned
    // (package.json), so the warning only adds noise to every service's log.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const client = (endpoint: string) =>
      new S3Client({
        endpoint,
        region: config.region,
        forcePathStyle: true,
        credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
        // No flexible checksum headers in presigned URLs: a browser cannot know to send them.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    this.client = client(config.endpoint);
    this.presigner = config.publicEndpoint && config.publicEndpoint !== config.endpoint ? client(config.publicEndpoint) : this.client;
  }

  get bucket(): string {
    return this.config.bucket;
  }

  private bucketReady: Promise<void> | null = null;

  /** ensureBucket once per process (retried after a failure). */
  ready(): Promise<void> {
    this.bucketReady ??= this.ensureBucket().catch((err) => {
      this.bucketReady = null;
      throw err;
    });
    return this.bucketReady;
  }

  /** Create the bucket unless it exists (idempotent; safe when several processes race). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
    }
  }

  /**
   * A presigned PUT for exactly `size` bytes of `contentType`. `signingDate` (default now) is the
   * start of the validity window; `maxBytes` (default MAX_OBJECT_BYTES) bounds the size, for a caller
   * with its own limit (knowledge files: 50 MB).
   */
  async presignPut(opts: { key: string; size: number; contentType: string; expiresIn: number; signingDate?: Date; maxBytes?: number }): Promise<PresignedUrl> {
    const max = opts.maxBytes ?? MAX_OBJECT_BYTES;
    if (!Number.isInteger(opts.size) || opts.size < 1 || opts.size > max) throw new RangeError(`size must be 1..${max}`);
    const expiresIn = clampExpiry(opts.expiresIn);
    const signingDate = opts.signingDate ?? new Date();
    const url = await getSignedUrl(
      this.presigner,
      new PutObjectCommand({ Bucket: this.bucket, Key: opts.key, ContentType: opts.contentType, ContentLength: opts.size }),
      { expiresIn, signingDate, signableHeaders: new Set(['content-type', 'content-length']) },
    );
    return {
      url,
      method: 'PUT',
      headers: { 'content-type': opts.contentType, 'content-length': String(opts.size) },
      expires_at: new Date(Math.floor(signingDate.getTime() / 1000) * 1000 + expiresIn * 1000),
    };
  }

  /** A presigned GET valid for `expiresIn` seconds from `signingDate` (default now). */
  async presignGet(opts: { key: string; expiresIn: number; signingDate?: Date; downloadName?: string }): Promise<PresignedUrl> {
    const expiresIn = clampExpiry(opts.expiresIn);
    const signingDate = opts.signingDate ?? new Date();
    const url = await getSignedUrl(
      this.presigner,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: opts.key,
        ...(opts.downloadName ? { ResponseContentDisposition: contentDisposition(opts.downloadName) } : {}),
      }),
      { expiresIn, signingDate },
    );
    return { url, method: 'GET', headers: {}, expires_at: new Date(Math.floor(signingDate.getTime() / 1000) * 1000 + expiresIn * 1000) };
  }

  /**
   * Check an uploaded object against its declaration: size (HEAD and bytes read), stored content
   * type, sha256 of the bytes and the type sniffed from them.
   */
  async verifyObject(opts: { key: string; size: number; contentType: string }): Promise<VerificationResult> {
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: opts.key }));
    } catch (err) {
      if (isNotFound(err)) return { exists: false, is_verified: false, size: null, sha256: null, sniffed_mime_type: null, reason: 'not uploaded' };
      throw err;
    }
    const size = head.ContentLength ?? null;
    if (size !== opts.size) {
      return { exists: true, is_verified: false, size, sha256: null, sniffed_mime_type: null, reason: `size ${size} differs from the declared ${opts.size}` };
    }
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: opts.key, Range: `bytes=0-${opts.size - 1}` }));
    const bytes = await res.Body!.transformToByteArray();
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const sniffed = (await fileTypeFromBuffer(bytes))?.mime ?? null;
    const base = { exists: true, size, sha256, sniffed_mime_type: sniffed };
    if (bytes.length !== opts.size) return { ...base, is_verified: false, reason: `read ${bytes.length} bytes, declared ${opts.size}` };
    if (head.ContentType && normalizeMime(head.ContentType) !== normalizeMime(opts.contentType)) {
      return { ...base, is_verified: false, reason: `stored content type ${head.ContentType} differs from the declared ${opts.contentType}` };
    }
    if (!typeMatches(opts.contentType, sniffed, bytes)) {
      return { ...base, is_verified: false, reason: `the bytes are ${sniffed ?? 'of no recognised type'}, not ${opts.contentType}` };
    }
    return { ...base, is_verified: true, reason: null };
  }

  /**
   * Upload a local file under `key` (overwriting: a retry writes the same key again), streamed from
   * disk with its exact Content-Length, so the bytes never sit in memory. One PUT: S3 takes up to
   * 5 GiB that way, far beyond any report. Returns the size and sha256 of the bytes sent (read in a
   * first pass over the file, so they describe exactly what was uploaded).
   */
  async putFile(opts: { key: string; path: string; contentType: string; contentDisposition?: string }): Promise<{ size: number; sha256: string }> {
    const { size } = await stat(opts.path);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(opts.path)) hash.update(chunk as Buffer);
    const sha256 = hash.digest('hex');
    await this.ready();
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: opts.key,
        Body: createReadStream(opts.path),
        ContentLength: size,
        ContentType: opts.contentType,
        ...(opts.contentDisposition ? { ContentDisposition: opts.contentDisposition } : {}),
      }),
    );
    return { size, sha256 };
  }

  /**
   * A writable that stores what is written to it under `key` as it arrives, for bytes whose size is
   * not known beforehand (a request body): parts of `partBytes` (default 8 MiB; S3 needs at least
   * 5 MiB but for the last) go up as S3 multipart upload parts while later bytes are still being
   * written, the writable's backpressure holding the writer while a part is sent. Bytes that end
   * before one part is full go up as one PUT. `finished` resolves when the object is complete.
   * Destroying the writable (or `discard()`) aborts the multipart upload, or deletes the object
   * if it was already complete: nothing of a refused upload stays behind.
   */
  uploadStream(opts: { key: string; contentType: string; partBytes?: number }): ObjectUploadStream {
    return new ObjectUploadStream(this, opts.key, opts.contentType, Math.max(5 * 1024 * 1024, opts.partBytes ?? 8 * 1024 * 1024));
  }

  /** The object's bytes (at most `maxBytes`: a larger object is an error); null when no object exists under the key. */
  async readObject(key: string, maxBytes: number): Promise<Uint8Array | null> {
    let res;
    try {
      res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    if ((res.ContentLength ?? 0) > maxBytes) {
      res.Body?.transformToWebStream().cancel().catch(() => undefined);
      throw new RangeError(`object ${key} holds ${res.ContentLength} bytes, more than ${maxBytes}`);
    }
    return res.Body!.transformToByteArray();
  }

  /** The whole object as bytes (small objects: tests, verification); null when there is none. */
  getObjectBytes(key: string): Promise<Uint8Array | null> {
    return this.readObject(key, Number.MAX_SAFE_INTEGER);
  }

  async deleteObject(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  close(): void {
    this.client.destroy();
    if (this.presigner !== this.client) this.presigner.destroy();
  }
}

function clampExpiry(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) throw new RangeError(`expiresIn must be 1..${MAX_PRESIGN_SECONDS} seconds`);
  return seconds;
}

function isNotFound(err: unknown): boolean {
  if (err instanceof S3ServiceException && err.$metadata?.httpStatusCode === 404) return true;
  const name = (err as { name?: string }).name;
  return name === 'NotFound' || name === 'NoSuchKey' || name === 'NoSuchBucket';
}

/** RFC 6266 attachment disposition with an ASCII fallback and the UTF-8 name. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
