/**
 * A platform run without object storage (S3_ENDPOINT unset): every route that takes a file answers
 * the kernel's one 503 `storage-unavailable` (uploads.ts) — the v1 shape for email-template
 * attachments, the v2 shape for knowledge files — without Retry-After, and stores nothing. Everything
 * else of those services keeps working. Knowledge files have no list endpoint, so "nothing stored" is
 * read from its table; no state is set up with SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

const DETAIL = 'Object storage is not configured for this service (S3_ENDPOINT).';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack({ env: { S3_ENDPOINT: '' } });
  org = await stack.onboard('No Storage Org');
});
afterAll(async () => stack?.close());

describe('without object storage', () => {
  it('an email-template attachment is refused with the v1 503 storage-unavailable, and the template keeps no attachment', async () => {
    const folder = await stack.request('POST', '/v1/email-template-folders', { token: org.token, body: { name: 'Dunning' } });
    expect(folder.status, folder.text).toBe(200);
    const template = await stack.request('POST', '/v1/email-templates', {
      token: org.token,
      body: { folder_id: folder.body.id, name: 'Reminder', subject: 'Hello {{ customer.name }}', body: 'Dear {{ customer.name }}' },
    });
    expect(template.status, template.text).toBe(200);
    const res = await stack.request('POST', `/v1/email-templates/${template.body.id}/attachments`, { token: org.token, body: { name: 'terms.pdf', mime_type: 'application/pdf', size: 10 } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ data: {}, error: 'storage-unavailable', message: DETAIL });
    expect(res.headers.get('retry-after')).toBeNull();
    expect((await stack.request('GET', `/v1/email-templates/${template.body.id}`, { token: org.token })).body.attachments).toEqual([]);
  });

  it('a knowledge file is refused with the v2 503 storage-unavailable, and nothing is stored', async () => {
    const res = await stack.request('POST', '/v2/aether/files', { token: org.token, body: { name: 'playbook.md', mime_type: 'text/markdown', size: 10 } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ type: 'storage-unavailable', status: 503, title: 'Object storage unavailable', detail: DETAIL });
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await stack.sql('SELECT id FROM knowledge.files WHERE organization_id = $1', [org.organizationId])).toEqual([]);
  });
});
