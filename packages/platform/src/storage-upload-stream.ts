/**
 * An object written as its bytes arrive (ObjectStorage.uploadStream): S3 multipart upload parts while
 * the writer still writes, one PUT for bytes that end before a part is full, and nothing left behind
 * when the upload is discarded.
 */
import { Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import type { ObjectStorage } from './storage.js';

/** See ObjectStorage.uploadStream. */
export class ObjectUploadStream extends Writable {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private uploadId: string | null = null;
  private readonly parts: CompletedPart[] = [];
  private completed = false;
  /** bytes written so far */
  size = 0;
  /** resolves when the object is complete under its key; rejects when the upload failed or was discarded */
  readonly finished: Promise<void>;

  constructor(
    private readonly storage: ObjectStorage,
    readonly key: string,
    private readonly contentType: string,
    private readonly partBytes: number,
  ) {
    super({ highWaterMark: 1024 * 1024 });
    this.finished = new Promise((resolve, reject) => {
      this.once('finish', () => resolve());
      this.once('error', reject);
      this.once('close', () => {
        if (!this.writableFinished) reject(new Error(`upload of ${key} discarded`));
      });
    });
    // the writer learns of failures through `finished`; an unhandled 'error' must not crash the process
    this.finished.catch(() => undefined);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.size += chunk.length;
    if (this.pendingBytes < this.partBytes) return callback();
    this.sendPart(this.take(this.partBytes)).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    const rest = this.take(this.pendingBytes);
    const done = async () => {
      const { client, bucket } = this.storage;
      await this.storage.ready();
      if (this.uploadId === null) {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: this.key, Body: rest, ContentLength: rest.length, ContentType: this.contentType }));
      } else {
        if (rest.length > 0 || this.parts.length === 0) await this.sendPart(rest);
        await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: this.key, UploadId: this.uploadId, MultipartUpload: { Parts: this.parts } }));
      }
      this.completed = true;
    };
    done().then(() => callback(), callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.pending = [];
    // a finished upload is destroyed too (autoDestroy): its object stays unless discarded
    if (this.writableFinished) return callback(err);
    this.removeStored().then(
      () => callback(err),
      () => callback(err),
    );
  }

  /** The upload is not wanted (the request was refused): stops it and removes whatever was stored. */
  async discard(): Promise<void> {
    if (!this.destroyed && !this.writableFinished) this.destroy();
    await new Promise<void>((resolve) => (this.closed ? resolve() : this.once('close', () => resolve())));
    await this.removeStored();
  }

  private async removeStored(): Promise<void> {
    const { client, bucket } = this.storage;
    if (this.completed) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: this.key }));
      this.completed = false;
    } else if (this.uploadId !== null) {
      const uploadId = this.uploadId;
      this.uploadId = null;
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: this.key, UploadId: uploadId }));
    }
  }

  private take(n: number): Buffer {
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const part = all.subarray(0, n);
    const rest = all.subarray(n);
    this.pending = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
    return part;
  }

  private async sendPart(body: Buffer): Promise<void> {
    const { client, bucket } = this.storage;
    if (this.uploadId === null) {
      await this.storage.ready();
      const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: this.key, ContentType: this.contentType }));
      this.uploadId = created.UploadId!;
    }
    const PartNumber = this.parts.length + 1;
    const res = await client.send(new UploadPartCommand({ Bucket: bucket, Key: this.key, UploadId: this.uploadId, PartNumber, Body: body, ContentLength: body.length }));
    this.parts.push({ PartNumber, ETag: res.ETag! });
  }
}
