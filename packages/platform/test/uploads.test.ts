/**
 * The kernel's presigned-upload lifecycle (uploads.ts) against the run's real S3 server (versitygw,
 * started by the global setup): declare → PUT → check → download, and the one answer every service
 * gives without object storage. The services' routes over it are tested through the gateway
 * (test/email-templates.test.ts, test/knowledge-files-trust.test.ts, test/storage-unavailable.test.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import {
  checkUpload,
  declareUpload,
  downloadUrl,
  NotUploadedError,
  ObjectStorage,
  reissueUpload,
  requireStorage,
  STORAGE_UNAVAILABLE_FAILURE,
  StorageUnavailableError,
  storageUnavailableFailure,
  uploadKey,
  uploadPolicy,
  v1ErrorBody,
  v2ErrorBody,
} from '../src/index.js';

/** A valid 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const ORG = '0190a000-0000-7000-8000-000000000001';
const policy = uploadPolicy({ maxBytes: 1024, uploadSeconds: 120, downloadSeconds: 600 });
let storage: ObjectStorage;

beforeAll(() => {
  // a bucket of this file's own, created by the first declaration (declareUpload readies it)
  storage = new ObjectStorage({
    endpoint: inject('s3Endpoint'),
    bucket: `t-${randomBytes(6).toString('hex')}`,
    accessKeyId: inject('s3AccessKeyId'),
    secretAccessKey: inject('s3SecretAccessKey'),
    region: inject('s3Region'),
  });
});

afterAll(() => storage.close());

const newId = () => randomBytes(8).toString('hex');

async function put(upload: { url: string; headers: Record<string, string> }, body: Buffer, headers = upload.headers): Promise<number> {
  const res = await fetch(upload.url, { method: 'PUT', headers, body });
  await res.arrayBuffer();
  return res.status;
}

describe('without object storage', () => {
  it('every step answers the one 503 storage-unavailable, in both wire shapes, without Retry-After', async () => {
    const expected = { status: 503, type: 'storage-unavailable', title: 'Object storage unavailable', detail: 'Object storage is not configured for this service (S3_ENDPOINT).' };
    expect(() => requireStorage(null)).toThrow(StorageUnavailableError);
    const err = await declareUpload(null, policy, { organizationId: ORG, area: ['files'], id: newId(), size: 3, contentType: 'text/plain' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect(v2ErrorBody(err as StorageUnavailableError)).toEqual(expected);
    expect(v1ErrorBody(err as StorageUnavailableError)).toEqual({ data: {}, error: 'storage-unavailable', message: expected.detail });
    expect((err as StorageUnavailableError).headers).toEqual({});
    await expect(checkUpload(null, { key: 'k', size: 3, contentType: 'text/plain' })).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(reissueUpload(null, policy, { key: 'k', size: 3, contentType: 'text/plain' })).rejects.toBeInstanceOf(StorageUnavailableError);
    // a download link is simply absent: the record is still shown
    expect(await downloadUrl(null, policy, { key: 'k', name: 'a.txt' })).toBeNull();
  });

  it("a worker's activity fails retryable with the one failure type", () => {
    const failure = storageUnavailableFailure('knowledge worker');
    expect(failure.type).toBe(STORAGE_UNAVAILABLE_FAILURE);
    expect(failure.type).toBe('StorageUnavailable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('object storage is not configured for the knowledge worker (S3_ENDPOINT)');
  });
});

describe('declare', () => {
  it('keys the object under the organization and area with no client text, and binds the PUT to the declared size and type', async () => {
    const id = newId();
    const d = await declareUpload(storage, policy, { organizationId: ORG, area: ['knowledge', 'files'], id, size: PNG.length, contentType: 'image/png' });
    expect(d.key).toMatch(new RegExp(`^org/${ORG}/knowledge/files/${id}-[0-9a-f-]{36}$`));
    expect(d.bucket).toBe(storage.bucket);
    expect(d.upload).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png', 'content-length': String(PNG.length) } });
    expect(new URL(d.upload.url).searchParams.get('X-Amz-Expires')).toBe('120');
    // other bytes or another type are refused by the S3 server itself
    expect(await put(d.upload, Buffer.concat([PNG, Buffer.from('x')]), { 'content-type': 'image/png' })).toBe(403);
    expect(await put(d.upload, PNG, { 'content-type': 'image/gif' })).toBe(403);
    expect(await put(d.upload, PNG)).toBe(200);
  });

  it('refuses a size beyond the policy and key segments that are not ids or fixed names', async () => {
    await expect(declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: 1025, contentType: 'text/plain' })).rejects.toThrow(RangeError);
    await expect(declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: 0, contentType: 'text/plain' })).rejects.toThrow(RangeError);
    for (const bad of ['../x', 'a/b', '', 'terms.pdf']) expect(() => uploadKey(ORG, ['files', bad], newId())).toThrow(/not an id or fixed name/);
    expect(uploadKey(ORG, ['email-templates', newId()], newId())).not.toBe(uploadKey(ORG, ['files'], newId()));
  });
});

describe('check', () => {
  it('is null before the upload, and records size, sha256 and the sniffed type once the bytes match', async () => {
    const d = await declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: PNG.length, contentType: 'image/png' });
    const declared = { key: d.key, size: PNG.length, contentType: 'image/png' };
    expect(await checkUpload(storage, declared)).toBeNull();
    expect(await put(d.upload, PNG)).toBe(200);
    expect(await checkUpload(storage, declared)).toEqual({
      is_verified: true,
      sha256: createHash('sha256').update(PNG).digest('hex'),
      sniffed_mime_type: 'image/png',
      verification_error: null,
    });
  });

  it('says why bytes that are not the declared type are refused', async () => {
    const fake = Buffer.from('not a png at all');
    const d = await declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: fake.length, contentType: 'image/png' });
    expect(await put(d.upload, fake)).toBe(200);
    const c = await checkUpload(storage, { key: d.key, size: fake.length, contentType: 'image/png' });
    expect(c).toMatchObject({ is_verified: false, sha256: createHash('sha256').update(fake).digest('hex'), sniffed_mime_type: null });
    expect(c!.verification_error).toBe('the bytes are of no recognised type, not image/png');
  });

  it("applies the service's own rule to matching bytes only: its reason refuses them, keeping their hash", async () => {
    const text = Buffer.from('hello');
    const d = await declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: text.length, contentType: 'text/plain' });
    expect(await put(d.upload, text)).toBe(200);
    const declared = { key: d.key, size: text.length, contentType: 'text/plain' };
    const sizes: number[] = [];
    const refused = await checkUpload(storage, declared, async (size) => {
      sizes.push(size);
      return 'over quota';
    });
    expect(sizes).toEqual([text.length]);
    expect(refused).toEqual({ is_verified: false, sha256: createHash('sha256').update(text).digest('hex'), sniffed_mime_type: null, verification_error: 'over quota' });
    expect(await checkUpload(storage, declared, async () => null)).toMatchObject({ is_verified: true, verification_error: null });
    // bytes that already fail the declaration never reach the rule
    let asked = false;
    const mismatch = await checkUpload(storage, { ...declared, contentType: 'image/png' }, async () => {
      asked = true;
      return 'over quota';
    });
    expect(asked).toBe(false);
    expect(mismatch!.verification_error).toMatch(/stored content type text\/plain differs/);
  });

  it('names what was not uploaded in a 409 the service throws', () => {
    const err = new NotUploadedError('attachment');
    expect(v2ErrorBody(err)).toEqual({ type: 'conflict', status: 409, title: 'Conflict', detail: 'Nothing has been uploaded to the attachment’s upload URL yet.' });
  });
});

describe('reissue and download', () => {
  it('a reissued PUT still takes the declared bytes, and a download URL serves them under their name', async () => {
    const d = await declareUpload(storage, policy, { organizationId: ORG, area: ['files'], id: newId(), size: PNG.length, contentType: 'image/png' });
    const again = await reissueUpload(storage, policy, { key: d.key, size: PNG.length, contentType: 'image/png' });
    expect(again.url).not.toBe('');
    expect(await put(again, PNG)).toBe(200);
    const get = (await downloadUrl(storage, policy, { key: d.key, name: 'logo ü.png' }))!;
    expect(get.method).toBe('GET');
    expect(new URL(get.url).searchParams.get('X-Amz-Expires')).toBe('600');
    const res = await fetch(get.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="logo _.png"; filename*=UTF-8''logo%20%C3%BC.png`);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
  });
});
