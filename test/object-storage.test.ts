/**
 * The object storage kernel (packages/platform/src/storage.ts) against the run's real S3 server
 * (versitygw, started by the global setup). The kernel is exercised directly because these are
 * properties of presigned URLs and of the S3 server, not of an API route; the attachment routes
 * that use it are tested through the gateway in email-templates.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ObjectStorage, fileCategory } from '@rp/platform';

/** A valid 1x1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let storage: ObjectStorage;

beforeAll(async () => {
  storage = new ObjectStorage({
    endpoint: inject('s3Endpoint'),
    bucket: `t-${randomBytes(6).toString('hex')}`,
    accessKeyId: inject('s3AccessKeyId'),
    secretAccessKey: inject('s3SecretAccessKey'),
    region: inject('s3Region'),
  });
  await storage.ensureBucket();
  await storage.ensureBucket(); // idempotent
});

afterAll(() => storage.close());

const key = () => `tests/${randomBytes(8).toString('hex')}`;

async function put(url: string, body: Buffer, contentType: string): Promise<number> {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': contentType } });
  await res.arrayBuffer();
  return res.status;
}

describe('presigned URLs name the public endpoint (S3_PUBLIC_ENDPOINT)', () => {
  it('signs for the address clients use while the service talks to its own, and the bytes arrive', async () => {
    // Two names of the same server: the service's (127.0.0.1) and the clients' (localhost), as
    // `http://s3:7070` and `http://localhost:7070` in docker compose.
    const internal = new URL(inject('s3Endpoint'));
    const publicEndpoint = `http://localhost:${internal.port}`;
    const split = new ObjectStorage({
      endpoint: internal.origin,
      publicEndpoint,
      bucket: storage.bucket,
      accessKeyId: inject('s3AccessKeyId'),
      secretAccessKey: inject('s3SecretAccessKey'),
      region: inject('s3Region'),
    });
    try {
      const k = key();
      const up = await split.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 300 });
      expect(new URL(up.url).origin).toBe(publicEndpoint);
      expect(await put(up.url, PNG, 'image/png')).toBe(200);
      const down = await split.presignGet({ key: k, expiresIn: 60 });
      expect(new URL(down.url).origin).toBe(publicEndpoint);
      expect((await fetch(down.url)).status).toBe(200);
      // the server-side check goes through the internal endpoint
      expect(await split.verifyObject({ key: k, size: PNG.length, contentType: 'image/png' })).toMatchObject({ exists: true, is_verified: true });
    } finally {
      split.close();
    }
  });
});

describe('presigned upload and download', () => {
  it('uploads through a presigned PUT, downloads through a presigned GET, and verifies size, sha256 and type', async () => {
    const k = key();
    const up = await storage.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 300 });
    expect(up.url).toContain(`/${storage.bucket}/${k}`); // path style
    expect(up.url).toMatch(/X-Amz-SignedHeaders=[^&]*content-length/);
    expect(up.url).toMatch(/X-Amz-SignedHeaders=[^&]*content-type/);
    expect(await put(up.url, PNG, 'image/png')).toBe(200);

    const down = await storage.presignGet({ key: k, expiresIn: 60, downloadName: 'logo.png' });
    const res = await fetch(down.url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
    expect(down.expires_at.getTime()).toBeGreaterThan(Date.now());

    const v = await storage.verifyObject({ key: k, size: PNG.length, contentType: 'image/png' });
    expect(v).toMatchObject({ exists: true, is_verified: true, size: PNG.length, sniffed_mime_type: 'image/png', reason: null });
    expect(v.sha256).toBe(createHash('sha256').update(PNG).digest('hex'));
  });

  it('refuses a PUT whose signature was tampered with (403) and stores nothing', async () => {
    const k = key();
    const up = await storage.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 300 });
    const u = new URL(up.url);
    const sig = u.searchParams.get('X-Amz-Signature')!;
    u.searchParams.set('X-Amz-Signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    expect(await put(u.toString(), PNG, 'image/png')).toBe(403);
    // Another key under the same signature is refused too.
    const other = new URL(up.url);
    other.pathname = `/${storage.bucket}/${key()}`;
    expect(await put(other.toString(), PNG, 'image/png')).toBe(403);
    expect((await storage.verifyObject({ key: k, size: PNG.length, contentType: 'image/png' })).exists).toBe(false);
  });

  it('refuses a PUT of another size or another content type than signed (403)', async () => {
    const k = key();
    const up = await storage.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 300 });
    expect(await put(up.url, Buffer.concat([PNG, Buffer.from('x')]), 'image/png')).toBe(403);
    expect(await put(up.url, PNG.subarray(0, PNG.length - 1), 'image/png')).toBe(403);
    expect(await put(up.url, PNG, 'image/jpeg')).toBe(403);
    expect((await storage.verifyObject({ key: k, size: PNG.length, contentType: 'image/png' })).exists).toBe(false);
    // The untampered request still works.
    expect(await put(up.url, PNG, 'image/png')).toBe(200);
  });

  it('honours the expiry of presigned PUT and GET (signed in the past, already expired)', async () => {
    const k = key();
    const past = new Date(Date.now() - 120_000);
    const expiredPut = await storage.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 60, signingDate: past });
    expect(expiredPut.expires_at.getTime()).toBeLessThan(Date.now());
    expect(await put(expiredPut.url, PNG, 'image/png')).toBe(403);

    const fresh = await storage.presignPut({ key: k, size: PNG.length, contentType: 'image/png', expiresIn: 60 });
    expect(await put(fresh.url, PNG, 'image/png')).toBe(200);
    const expiredGet = await storage.presignGet({ key: k, expiresIn: 60, signingDate: past });
    const res = await fetch(expiredGet.url);
    await res.arrayBuffer();
    expect(res.status).toBe(403);
    const okGet = await fetch((await storage.presignGet({ key: k, expiresIn: 60 })).url);
    await okGet.arrayBuffer();
    expect(okGet.status).toBe(200);
  });

  it('leaves bytes that are not what their declared type says unverified', async () => {
    const k = key();
    const fake = Buffer.from('this is plain text pretending to be a PNG image\n');
    const up = await storage.presignPut({ key: k, size: fake.length, contentType: 'image/png', expiresIn: 300 });
    expect(await put(up.url, fake, 'image/png')).toBe(200); // the S3 server takes any bytes…
    const v = await storage.verifyObject({ key: k, size: fake.length, contentType: 'image/png' });
    expect(v.is_verified).toBe(false); // …the check does not
    expect(v.sniffed_mime_type).toBeNull();
    expect(v.reason).toMatch(/not image\/png/);

    // A PNG declared as a PDF: sniffed as PNG, unverified.
    const k2 = key();
    const up2 = await storage.presignPut({ key: k2, size: PNG.length, contentType: 'application/pdf', expiresIn: 300 });
    expect(await put(up2.url, PNG, 'application/pdf')).toBe(200);
    const v2 = await storage.verifyObject({ key: k2, size: PNG.length, contentType: 'application/pdf' });
    expect(v2).toMatchObject({ is_verified: false, sniffed_mime_type: 'image/png' });

    // Plain text declared as text/plain is verified (no magic number; valid UTF-8, no NUL).
    const k3 = key();
    const up3 = await storage.presignPut({ key: k3, size: fake.length, contentType: 'text/plain', expiresIn: 300 });
    expect(await put(up3.url, fake, 'text/plain')).toBe(200);
    expect((await storage.verifyObject({ key: k3, size: fake.length, contentType: 'text/plain' })).is_verified).toBe(true);

    // A declared size that differs from the stored object: unverified.
    expect((await storage.verifyObject({ key: k3, size: fake.length + 1, contentType: 'text/plain' })).is_verified).toBe(false);
  });

  it('refuses to presign out-of-range sizes and expiries, and classifies file types', async () => {
    await expect(storage.presignPut({ key: key(), size: 0, contentType: 'text/plain', expiresIn: 60 })).rejects.toThrow(RangeError);
    await expect(storage.presignPut({ key: key(), size: 1, contentType: 'text/plain', expiresIn: 0 })).rejects.toThrow(RangeError);
    expect(fileCategory('audio/mpeg')).toBe('audio');
    expect(fileCategory('application/pdf')).toBe('document');
    expect(fileCategory('image/png')).toBe('image');
  });
});
