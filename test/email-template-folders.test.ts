/**
 * The email template folder listing (spec 2.5, row 7) is bounded: however many templates a folder holds
 * and however many attachments a template has, a listed folder carries `template_count` and only its first
 * templates (each with its first attachments); the folder itself still lists every template and the
 * template every attachment. Through the gateway; attachments are declared through the API (their
 * presigned upload is not needed for the listing). No SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard('Template folders');
});
afterAll(async () => stack?.close());

const req = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: org.token, body });

describe('folder listing (row 7)', () => {
  it('carries template_count and at most 10 templates per folder, each with at most 5 attachments; the folder and template give all', async () => {
    const full = (await req('POST', '/v1/email-template-folders', { name: 'Full' })).body.id;
    const empty = (await req('POST', '/v1/email-template-folders', { name: 'Empty' })).body.id;
    const templateIds: string[] = [];
    for (let i = 0; i < 13; i++) {
      const t = await req('POST', '/v1/email-templates', { folder_id: full, name: `T${i}`, subject: 'Hello {{ customer.name }}', body: 'Dear {{ customer.name }}' });
      expect(t.status, JSON.stringify(t.body)).toBe(200);
      templateIds.push(t.body.id);
    }
    for (let i = 0; i < 7; i++) {
      const at = await req('POST', `/v1/email-templates/${templateIds[0]}/attachments`, { name: `a${i}.txt`, mime_type: 'text/plain', size: 10 });
      expect(at.status, JSON.stringify(at.body)).toBe(200);
    }

    const list = await req('GET', '/v1/email-template-folders?page_size=200');
    expect(list.status).toBe(200);
    const byId = new Map<string, any>(list.body.data.map((f: any) => [f.id, f]));
    const listed = byId.get(full);
    expect(listed.templates.map((t: any) => t.name)).toEqual(['T0', 'T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'T8', 'T9']);
    expect(listed.template_count).toBe(13);
    expect(listed.templates[0].attachments.map((a: any) => a.name)).toEqual(['a0.txt', 'a1.txt', 'a2.txt', 'a3.txt', 'a4.txt']);
    expect(byId.get(empty)).toMatchObject({ template_count: 0, templates: [] });

    const one = await req('GET', `/v1/email-template-folders/${full}`);
    expect(one.body.template_count).toBe(13);
    expect(one.body.templates).toHaveLength(13);
    expect((await req('GET', `/v1/email-templates/${templateIds[0]}`)).body.attachments).toHaveLength(7);
  });
});
