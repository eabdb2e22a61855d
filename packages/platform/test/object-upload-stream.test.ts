/**
 * ObjectStorage.uploadStream against the run's S3 server (versitygw): bytes written as they come are
 * stored whole (one PUT when small, a multipart upload of several parts when large), and a
 * discarded upload leaves nothing: no object, no unfinished multipart upload.
 */
import { randomBytes } from 'node:crypto';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ObjectStorage } from '../src/storage.js';

let storage: ObjectStorage;
beforeAll(async () => {
  storage = new ObjectStorage({
    endpoint: inject('s3Endpoint'),
    bucket: `t-${randomBytes(6).toString('hex')}`,
    accessKeyId: inject('s3AccessKeyId'),
    secretAccessKey: inject('s3SecretAccessKey'),
    region: inject('s3Region'),
  });
  await storage.ready();
});
afterAll(() => storage?.close());

/** Writes `bytes` in chunks of 64 KiB, as a request body arrives, honouring backpressure. */
async function writeAll(w: NodeJS.WritableStream, bytes: Buffer): Promise<void> {
  for (let i = 0; i < bytes.length; i += 64 * 1024) {
    if (!w.write(bytes.subarray(i, i + 64 * 1024))) await new Promise((r) => w.once('drain', r));
  }
}

const unfinished = async () => (await storage.client.send(new ListMultipartUploadsCommand({ Bucket: storage.bucket }))).Uploads?.length ?? 0;

describe('uploadStream', () => {
  it('stores small bytes with one PUT and large bytes in parts, whole', async () => {
    for (const size of [0, 1000, 12 * 1024 * 1024 + 17]) {
      const bytes = randomBytes(size);
      const up = storage.uploadStream({ key: `stream/${size}`, contentType: 'application/octet-stream', partBytes: 5 * 1024 * 1024 });
      await writeAll(up, bytes);
      up.end();
      await up.finished;
      expect(up.size).toBe(size);
      expect(Buffer.from((await storage.getObjectBytes(`stream/${size}`))!).equals(bytes)).toBe(true);
    }
    expect(await unfinished()).toBe(0);
  });

  it('leaves nothing when discarded part-way or after it finished', async () => {
    const midway = storage.uploadStream({ key: 'stream/midway', contentType: 'application/octet-stream', partBytes: 5 * 1024 * 1024 });
    await writeAll(midway, randomBytes(11 * 1024 * 1024));
    await midway.discard();
    await expect(midway.finished).rejects.toThrow();
    expect(await storage.getObjectBytes('stream/midway')).toBeNull();
    expect(await unfinished()).toBe(0);

    const done = storage.uploadStream({ key: 'stream/done', contentType: 'application/octet-stream' });
    await writeAll(done, randomBytes(1000));
    done.end();
    await done.finished;
    expect(await storage.getObjectBytes('stream/done')).not.toBeNull();
    await done.discard();
    expect(await storage.getObjectBytes('stream/done')).toBeNull();
  });
});
