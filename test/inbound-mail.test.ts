/**
 * Mail in, as real mail arrives: messages delivered over SMTP (nodemailer as the sending client) to
 * the stack's inbound SMTP listener, and posted through the gateway to the provider endpoint
 * POST /v2/inbound/email/{organization_id} (raw message/rfc822 and SendGrid Inbound Parse's raw-mode
 * multipart form). What a test checks is what intake leaves behind: the SMTP and HTTP answers, the
 * inbox_messages rows and inbound_refusals records (read with SQL: the inbox's own read routes are
 * another part's, and refusals have no route), the raw objects in object storage and the inbox
 * workflow started for each message (no admin worker runs here, so it waits). No state is set up
 * with SQL.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, ObjectStorage, storageConfigFrom, type TemporalHandle } from '@rp/platform';
import { inboxMessageWorkflowId } from '@rp/workflows';
import { loadAdminConfig, startInboundSmtp } from '@rp/admin';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { tcpProxy } from './support/outage.js';

const DOMAIN = 'inbound.receivables.local';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let storage: ObjectStorage;
let temporal: TemporalHandle;

beforeAll(async () => {
  stack = await startStack();
  [orgA, orgB] = [await stack.onboard('Inbound A'), await stack.onboard('Inbound B')];
  storage = new ObjectStorage(storageConfigFrom(loadAdminConfig(stack.env)));
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS!, namespace: stack.namespace });
});
afterAll(async () => {
  storage?.close();
  await temporal?.close();
  await stack?.close();
});

const hostOf = (org: Org) => `${org.organizationId}.${DOMAIN}`;

function transport(port = stack.inboundSmtp.port) {
  return nodemailer.createTransport({ host: stack.inboundSmtp.host, port, secure: false, ignoreTLS: true });
}

function send(mail: Mail.Options, port?: number) {
  return transport(port).sendMail({ from: 'Paula Payer <paula@customer.example>', subject: 'Remittance advice', text: 'We paid invoice INV-1001.', ...mail });
}

async function rows(org: Org) {
  return stack.sql(`SELECT * FROM admin.inbox_messages WHERE organization_id = $1 ORDER BY created_at`, [org.organizationId]);
}

async function refusals(org: Org) {
  return stack.sql(`SELECT * FROM admin.inbound_refusals WHERE organization_id = $1 ORDER BY refused_at`, [org.organizationId]);
}

async function rawMessage(mail: Mail.Options): Promise<Buffer> {
  return new MailComposer({ from: 'Paula Payer <paula@customer.example>', to: 'ar@customer.example', subject: 'Remittance', text: 'Paid INV-2002.', ...mail }).compile().build();
}

async function rotate(org: Org) {
  const res = await stack.request('POST', '/v2/mailbox-settings/inbound-secret', { token: org.token });
  expect(res.status, res.text).toBe(200);
  return res.body as { secret: string; endpoint: string; rotated_at: string };
}

function post(org: Org, body: Buffer | FormData, headers: Record<string, string>) {
  return fetch(`${stack.gatewayUrl}/v2/inbound/email/${org.organizationId}`, { method: 'POST', body, headers }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
}

const basic = (secret: string) => `Basic ${Buffer.from(`sendgrid:${secret}`).toString('base64')}`;

const attachments = (n: number) => Array.from({ length: n }, (_, i) => ({ filename: `advice-${i + 1}.csv`, content: `invoice,amount\nINV-${i},10.00\n` }));

async function workflowType(inboxMessageId: string): Promise<string> {
  const d = await temporal.client.workflow.getHandle(inboxMessageWorkflowId(inboxMessageId)).describe();
  return d.type;
}

describe('inbound SMTP', () => {
  it('accepts mail to the organization\'s inbound host: raw stored first, then the row, then the inbox workflow', async () => {
    const messageId = `<${randomUUID()}@customer.example>`;
    const info = await send({ to: `ar@${hostOf(orgA)}`, cc: 'Carl <carl@customer.example>', messageId, inReplyTo: '<reply-1@platform.example>', references: ['<root@platform.example>', '<reply-1@platform.example>'] });
    expect(info.response).toMatch(/^250 /);
    const [row] = (await rows(orgA)).filter((r) => r.message_id === messageId);
    expect(row).toMatchObject({
      transport: 'smtp',
      envelope_from: 'paula@customer.example',
      envelope_to: [`ar@${hostOf(orgA)}`],
      from_address: 'paula@customer.example',
      from_name: 'Paula Payer',
      subject: 'Remittance advice',
      in_reply_to_header: '<reply-1@platform.example>',
      references_header: ['<root@platform.example>', '<reply-1@platform.example>'],
      thread_id: '<root@platform.example>',
      processing_state: 'received',
      status: 'unassigned',
      raw_object_key: `inbox/${orgA.organizationId}/${row.id}/raw.eml`,
    });
    expect(row.to_addresses).toEqual([{ address: `ar@${hostOf(orgA)}`, name: null }]);
    expect(row.cc_addresses).toEqual([{ address: 'carl@customer.example', name: 'Carl' }]);
    expect(info.response).toContain(row.id);
    const stored = Buffer.from((await storage.getObjectBytes(row.raw_object_key))!);
    expect(stored.length).toBe(row.raw_size);
    expect(stored.toString('utf8')).toContain(`Message-ID: ${messageId}`);
    expect(stored.toString('utf8')).toContain('We paid invoice INV-1001.');
    expect(await workflowType(row.id)).toBe('inboxMessage');
  });

  it('accepts mail to the custom inbound host of the mailbox settings (any local part)', async () => {
    const put = await stack.request('PUT', '/v2/mailbox-settings', {
      token: orgB.token,
      body: { transport_provider: 'domain_send', domain_send: { domain_name: 'mail.b.example', api_key: 'key-0123456789', inbound_parse_hostname: 'Replies.B.example' } },
    });
    expect(put.status, put.text).toBe(200);
    const messageId = `<${randomUUID()}@customer.example>`;
    await send({ to: 'Collections <Collections@replies.b.example>', messageId });
    expect((await rows(orgB)).map((r) => r.message_id)).toContain(messageId);
    expect((await rows(orgA)).map((r) => r.message_id)).not.toContain(messageId);
  });

  it('refuses unknown recipients at RCPT time (550) and stores nothing', async () => {
    const before = (await stack.sql(`SELECT count(*)::int AS n FROM admin.inbox_messages`))[0].n;
    for (const to of ['ar@customer.example', `ar@${randomUUID()}.${DOMAIN}`, `ar@not-a-uuid.${DOMAIN}`, `ar@${DOMAIN}`]) {
      const err = await send({ to }).then(() => null, (e: { code?: string; responseCode?: number; response?: string }) => e);
      expect(err, to).toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
      expect(err!.response).toMatch(/5\.1\.1/);
    }
    // one known and one unknown recipient: the known one gets the message, the other is refused
    const messageId = `<${randomUUID()}@customer.example>`;
    const info = await send({ to: [`ar@${hostOf(orgA)}`, 'someone@elsewhere.example'], messageId });
    expect(info.accepted).toEqual([`ar@${hostOf(orgA)}`]);
    expect(info.rejected).toEqual(['someone@elsewhere.example']);
    const [row] = (await rows(orgA)).filter((r) => r.message_id === messageId);
    expect(row.envelope_to).toEqual([`ar@${hostOf(orgA)}`]);
    expect((await stack.sql(`SELECT count(*)::int AS n FROM admin.inbox_messages`))[0].n).toBe(before + 1);
  });

  it('a second delivery of the same Message-ID is the same message: one row, one object', async () => {
    const messageId = `<${randomUUID()}@customer.example>`;
    const first = await send({ to: `ar@${hostOf(orgA)}`, messageId });
    const second = await send({ to: `remit@${hostOf(orgA)}`, messageId, subject: 'Remittance advice (resent)' });
    const mine = (await rows(orgA)).filter((r) => r.message_id === messageId);
    expect(mine).toHaveLength(1);
    expect(first.response).toContain(mine[0].id);
    expect(second.response).toContain(mine[0].id);
    expect(mine[0].subject).toBe('Remittance advice');
    const objects = await storage.client.send(
      new (await import('@aws-sdk/client-s3')).ListObjectsV2Command({ Bucket: storage.bucket, Prefix: `inbox/${orgA.organizationId}/` }),
    );
    const keys = (objects.Contents ?? []).map((o) => o.Key);
    expect(keys.filter((k) => k === mine[0].raw_object_key)).toHaveLength(1);
    expect(keys.length).toBe((await rows(orgA)).length);
  });

  it('refuses more than 20 attachments at DATA with 552 and records it; 20 are accepted', async () => {
    const tooMany = `<${randomUUID()}@customer.example>`;
    const err = await send({ to: `ar@${hostOf(orgA)}`, messageId: tooMany, attachments: attachments(21) }).then(() => null, (e: { responseCode?: number }) => e);
    expect(err).toMatchObject({ responseCode: 552 });
    expect((await rows(orgA)).map((r) => r.message_id)).not.toContain(tooMany);
    const [refusal] = (await refusals(orgA)).filter((r) => r.message_id === tooMany);
    expect(refusal).toMatchObject({ transport: 'smtp', reason: 'too_many_attachments', attachment_count: 21, envelope_from: 'paula@customer.example', envelope_to: [`ar@${hostOf(orgA)}`] });

    const twenty = `<${randomUUID()}@customer.example>`;
    await send({ to: `ar@${hostOf(orgA)}`, messageId: twenty, attachments: attachments(20) });
    expect((await rows(orgA)).map((r) => r.message_id)).toContain(twenty);
  });

  it('refuses a message over 25 MiB at DATA with 552 and records it without its content', async () => {
    const messageId = `<${randomUUID()}@customer.example>`;
    // 20 MiB of attachment is about 27 MiB once base64-encoded
    const err = await send({ to: `ar@${hostOf(orgB)}`, messageId, attachments: [{ filename: 'scan.pdf', content: Buffer.alloc(20 * 1024 * 1024, 7) }] }).then(
      () => null,
      (e: { responseCode?: number; response?: string }) => e,
    );
    expect(err).toMatchObject({ responseCode: 552 });
    expect(err!.response).toMatch(/exceeds the limit/);
    expect((await rows(orgB)).map((r) => r.message_id)).not.toContain(messageId);
    const [refusal] = (await refusals(orgB)).filter((r) => r.message_id === messageId);
    expect(refusal).toMatchObject({ transport: 'smtp', reason: 'too_large', envelope_to: [`ar@${hostOf(orgB)}`] });
    expect(Number(refusal.size)).toBeGreaterThan(25 * 1024 * 1024);
  });

  it('tenant isolation: one message to two organizations is two messages, each with only its own recipients', async () => {
    const messageId = `<${randomUUID()}@customer.example>`;
    await send({ to: [`ar@${hostOf(orgA)}`, 'AR B <ar@replies.b.example>'], messageId });
    const [a] = (await rows(orgA)).filter((r) => r.message_id === messageId);
    const [b] = (await rows(orgB)).filter((r) => r.message_id === messageId);
    expect(a.envelope_to).toEqual([`ar@${hostOf(orgA)}`]);
    expect(b.envelope_to).toEqual(['ar@replies.b.example']);
    expect(a.id).not.toBe(b.id);
    expect(a.raw_object_key.startsWith(`inbox/${orgA.organizationId}/`)).toBe(true);
    expect(b.raw_object_key.startsWith(`inbox/${orgB.organizationId}/`)).toBe(true);

    const onlyA = `<${randomUUID()}@customer.example>`;
    await send({ to: `ar@${hostOf(orgA)}`, messageId: onlyA });
    expect((await rows(orgB)).map((r) => r.message_id)).not.toContain(onlyA);
  });

  it('leaves nothing half-written when object storage fails (451, no row), and takes the retry', async () => {
    const s3 = new URL(stack.env.S3_ENDPOINT!);
    const proxy = await tcpProxy({ host: s3.hostname, port: Number(s3.port) });
    const listener = await startInboundSmtp(loadAdminConfig({ ...stack.env, S3_ENDPOINT: `http://127.0.0.1:${proxy.port}` }), { port: 0, host: '127.0.0.1' });
    try {
      await proxy.stop();
      const messageId = `<${randomUUID()}@customer.example>`;
      const err = await send({ to: `ar@${hostOf(orgA)}`, messageId }, listener.port).then(() => null, (e: { responseCode?: number }) => e);
      expect(err).toMatchObject({ responseCode: 451 });
      expect((await rows(orgA)).map((r) => r.message_id)).not.toContain(messageId);
      expect((await refusals(orgA)).map((r) => r.message_id)).not.toContain(messageId);

      await proxy.start();
      await send({ to: `ar@${hostOf(orgA)}`, messageId }, listener.port);
      const [row] = (await rows(orgA)).filter((r) => r.message_id === messageId);
      expect(Buffer.from((await storage.getObjectBytes(row.raw_object_key))!).length).toBe(row.raw_size);
    } finally {
      await listener.close();
      await proxy.close();
    }
  });
});

describe('provider endpoint POST /v2/inbound/email/{organization_id}', () => {
  it('the secret is issued by admins only, shown once and stored hashed', async () => {
    const created = await stack.request('POST', '/v2/users', { token: orgA.token, body: { email: 'member@inbound.example', name: 'Mo Member', role: 'member' } });
    const { runCli } = await import('@rp/admin/cli');
    const member = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;
    const denied = await stack.request('POST', '/v2/mailbox-settings/inbound-secret', { token: member });
    expect(denied.status).toBe(403);

    const issued = await rotate(orgA);
    expect(issued.secret).toMatch(/^rpin_[A-Za-z0-9_-]{43}$/);
    expect(issued.endpoint).toMatch(new RegExp(`/v2/inbound/email/${orgA.organizationId}$`));
    const [org] = await stack.sql(`SELECT encode(inbound_secret_hash, 'hex') AS hash, t::text AS whole FROM admin.organizations t WHERE id = $1`, [orgA.organizationId]);
    expect(org.hash).toHaveLength(64);
    expect(org.whole).not.toContain(issued.secret);
  });

  it('accepts a raw message/rfc822 body with the secret as the HTTP Basic password or the X-Inbound-Secret header; a duplicate names the first', async () => {
    const { secret } = await rotate(orgA);
    const messageId = `<${randomUUID()}@customer.example>`;
    const raw = await rawMessage({ messageId });
    const res = await post(orgA, raw, { 'content-type': 'message/rfc822', authorization: basic(secret) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ object: 'inbound_email', duplicate: false });
    const [row] = await stack.sql(`SELECT * FROM admin.inbox_messages WHERE id = $1`, [res.body.inbox_message_id]);
    expect(row).toMatchObject({ organization_id: orgA.organizationId, message_id: messageId, transport: 'http', subject: 'Remittance', raw_size: raw.length });
    expect(Buffer.from((await storage.getObjectBytes(row.raw_object_key))!).equals(raw)).toBe(true);
    expect(await workflowType(row.id)).toBe('inboxMessage');

    const again = await post(orgA, raw, { 'content-type': 'message/rfc822', 'x-inbound-secret': secret });
    expect(again).toEqual({ status: 200, body: { object: 'inbound_email', inbox_message_id: row.id, duplicate: true } });
  });

  it('accepts SendGrid Inbound Parse\'s raw-mode multipart form (email and envelope fields), keeping the bytes as sent', async () => {
    const { secret } = await rotate(orgB);
    const messageId = `<${randomUUID()}@customer.example>`;
    // 8-bit Latin-1 body bytes must reach storage unchanged
    const raw = Buffer.concat([
      Buffer.from(`From: Fran <fran@kunde.example>\r\nTo: ar@replies.b.example\r\nSubject: Zahlungsavis\r\nMessage-ID: ${messageId}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`),
      Buffer.from('Gr\xfc\xdfe, Rechnung RE-77 bezahlt.\r\n', 'latin1'),
    ]);
    // built by hand: FormData would encode a text field as UTF-8, and SendGrid posts the message's bytes as they are
    const boundary = `----rp${randomUUID()}`;
    const part = (name: string, value: Buffer | string) =>
      Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.isBuffer(value) ? value : Buffer.from(value), Buffer.from('\r\n')]);
    const envelope = JSON.stringify({ to: ['ar@replies.b.example'], from: 'bounces@kunde.example' });
    const body = Buffer.concat([part('email', raw), part('envelope', envelope), part('subject', 'Zahlungsavis'), Buffer.from(`--${boundary}--\r\n`)]);
    const res = await post(orgB, body, { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: basic(secret) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await stack.sql(`SELECT * FROM admin.inbox_messages WHERE id = $1`, [res.body.inbox_message_id]);
    expect(row).toMatchObject({ organization_id: orgB.organizationId, message_id: messageId, transport: 'http', envelope_from: 'bounces@kunde.example', envelope_to: ['ar@replies.b.example'] });
    expect(Buffer.from((await storage.getObjectBytes(row.raw_object_key))!).equals(raw)).toBe(true);

    // a form without the raw message is 422 naming the field; nothing is stored
    const bare = new FormData();
    bare.set('text', 'parsed mode is not supported');
    const missing = await post(orgB, bare, { authorization: basic(secret) });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['body', 'email']);
  });

  it('a missing, wrong, rotated-away or other organization\'s secret is 401 and stores nothing', async () => {
    const old = await rotate(orgA);
    const current = await rotate(orgA);
    const other = await rotate(orgB);
    const messageId = `<${randomUUID()}@customer.example>`;
    const raw = await rawMessage({ messageId });
    const attempts: Record<string, string>[] = [{}, { authorization: basic('rpin_wrong') }, { authorization: basic(old.secret) }, { 'x-inbound-secret': other.secret }, { authorization: `Bearer ${orgA.token}` }];
    for (const headers of attempts) {
      const res = await post(orgA, raw, { 'content-type': 'message/rfc822', ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toMatchObject({ type: 'unauthorized', status: 401, title: expect.any(String), detail: expect.any(String) });
    }
    const inQuery = await fetch(`${stack.gatewayUrl}/v2/inbound/email/${orgA.organizationId}?secret=${current.secret}`, { method: 'POST', body: raw, headers: { 'content-type': 'message/rfc822' } });
    expect(inQuery.status).toBe(401);
    const unknownOrg = await fetch(`${stack.gatewayUrl}/v2/inbound/email/${randomUUID()}`, { method: 'POST', body: raw, headers: { 'content-type': 'message/rfc822', authorization: basic(current.secret) } });
    expect(unknownOrg.status).toBe(401);
    expect((await stack.sql(`SELECT 1 FROM admin.inbox_messages WHERE message_id = $1`, [messageId])).length).toBe(0);

    const ok = await post(orgA, raw, { 'content-type': 'message/rfc822', authorization: basic(current.secret) });
    expect(ok.status).toBe(200);
  });

  it('refuses over 25 MiB or over 20 attachments with 413 in the v2 error shape, and records each', async () => {
    const { secret } = await rotate(orgA);
    const many = `<${randomUUID()}@customer.example>`;
    const tooMany = await post(orgA, await rawMessage({ messageId: many, attachments: attachments(21) }), { 'content-type': 'message/rfc822', 'x-inbound-secret': secret });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({ type: 'payload-too-large', status: 413, title: 'Payload too large' });
    expect(tooMany.body.detail).toMatch(/21 attachments/);
    expect((await refusals(orgA)).find((r) => r.message_id === many)).toMatchObject({ transport: 'http', reason: 'too_many_attachments', attachment_count: 21 });

    const big = await rawMessage({ messageId: `<${randomUUID()}@customer.example>`, attachments: [{ filename: 'scan.pdf', content: Buffer.alloc(20 * 1024 * 1024, 1) }] });
    const before = (await refusals(orgA)).filter((r) => r.reason === 'too_large' && r.transport === 'http').length;
    const tooLarge = await post(orgA, big, { 'content-type': 'message/rfc822', 'x-inbound-secret': secret });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ type: 'payload-too-large', status: 413 });
    const recorded = (await refusals(orgA)).filter((r) => r.reason === 'too_large' && r.transport === 'http');
    expect(recorded.length).toBe(before + 1);
    expect(Number(recorded.at(-1).size)).toBe(big.length);
    expect((await stack.sql(`SELECT 1 FROM admin.inbox_messages WHERE message_id = $1`, [many])).length).toBe(0);
  });

  it('a message without a Message-ID is keyed by its bytes\' SHA-256 (the same bytes again are the same message); a bare id is bracketed', async () => {
    const { secret } = await rotate(orgB);
    const headers = { 'content-type': 'message/rfc822', 'x-inbound-secret': secret };
    const noId = Buffer.from(`From: a@customer.example\r\nTo: ar@replies.b.example\r\nSubject: no id ${randomUUID()}\r\n\r\nPaid.\r\n`);
    const first = await post(orgB, noId, headers);
    const second = await post(orgB, noId, headers);
    expect(second.body).toEqual({ ...first.body, duplicate: true });
    const [row] = await stack.sql(`SELECT message_id, thread_id, raw_sha256 FROM admin.inbox_messages WHERE id = $1`, [first.body.inbox_message_id]);
    expect(row.message_id).toBe(`<${row.raw_sha256}@inbound.invalid>`);
    expect(row.thread_id).toBe(row.message_id);

    const bare = `${randomUUID()}@legacy.example`;
    const res = await post(orgB, Buffer.from(`From: a@customer.example\r\nMessage-ID: ${bare}\r\nIn-Reply-To: root@legacy.example\r\nSubject: bare\r\n\r\nPaid.\r\n`), headers);
    const [bareRow] = await stack.sql(`SELECT message_id, in_reply_to_header, thread_id FROM admin.inbox_messages WHERE id = $1`, [res.body.inbox_message_id]);
    expect(bareRow).toEqual({ message_id: `<${bare}>`, in_reply_to_header: '<root@legacy.example>', thread_id: '<root@legacy.example>' });
  });

  it('stores hostile header and envelope values without failing: NUL characters dropped, an impossible Date left unread', async () => {
    const { secret } = await rotate(orgB);
    const messageId = `<${randomUUID()}@customer.example>`;
    const raw = Buffer.from(`From: "Nul\u0000Name" <a@customer.example>\r\nMessage-ID: ${messageId}\r\nDate: Tue, 1 Jan 275000 00:00:00 +0000\r\nSubject: =?utf-8?B?${Buffer.from('pay\u0000ment').toString('base64')}?=\r\n\r\nPaid.\r\n`);
    const boundary = `----rp${randomUUID()}`;
    const part = (name: string, value: Buffer | string) =>
      Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.isBuffer(value) ? value : Buffer.from(value), Buffer.from('\r\n')]);
    const envelope = JSON.stringify({ to: ['ar\u0000@replies.b.example'], from: 'x\u0000@kunde.example' });
    const body = Buffer.concat([part('email', raw), part('envelope', envelope), Buffer.from(`--${boundary}--\r\n`)]);
    const res = await post(orgB, body, { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: basic(secret) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await stack.sql(`SELECT from_name, subject, sent_at, envelope_from, envelope_to FROM admin.inbox_messages WHERE id = $1`, [res.body.inbox_message_id]);
    expect(row).toEqual({ from_name: 'NulName', subject: 'payment', sent_at: null, envelope_from: 'x@kunde.example', envelope_to: ['ar@replies.b.example'] });
  });

  it('decodes a compressed body (Content-Encoding gzip): the message is stored decoded, and its limit counts the decoded bytes', async () => {
    const { secret } = await rotate(orgB);
    const messageId = `<${randomUUID()}@customer.example>`;
    const raw = await rawMessage({ messageId });
    const res = await post(orgB, gzipSync(raw), { 'content-type': 'message/rfc822', 'content-encoding': 'gzip', 'x-inbound-secret': secret });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await stack.sql(`SELECT raw_object_key, message_id FROM admin.inbox_messages WHERE id = $1`, [res.body.inbox_message_id]);
    expect(row.message_id).toBe(messageId);
    expect(Buffer.from((await storage.getObjectBytes(row.raw_object_key))!).equals(raw)).toBe(true);

    // the SendGrid form compressed as a whole
    const formId = `<${randomUUID()}@customer.example>`;
    const boundary = `----rp${randomUUID()}`;
    const form = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\n`), await rawMessage({ messageId: formId }), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const viaForm = await post(orgB, gzipSync(form), { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-encoding': 'gzip', 'x-inbound-secret': secret });
    expect(viaForm.status, JSON.stringify(viaForm.body)).toBe(200);
    expect((await stack.sql(`SELECT message_id FROM admin.inbox_messages WHERE id = $1`, [viaForm.body.inbox_message_id]))[0].message_id).toBe(formId);

    // some 30 kB that inflate beyond 25 MiB
    const bomb = gzipSync(Buffer.concat([Buffer.from('Subject: bomb\r\n\r\n'), Buffer.alloc(26 * 1024 * 1024, 0x41)]));
    const before = (await refusals(orgB)).length;
    const refused = await post(orgB, bomb, { 'content-type': 'message/rfc822', 'content-encoding': 'gzip', 'x-inbound-secret': secret });
    expect(refused.status).toBe(413);
    expect((await refusals(orgB)).length).toBe(before + 1);

    const unknown = await post(orgB, raw, { 'content-type': 'message/rfc822', 'content-encoding': 'compress', 'x-inbound-secret': secret });
    expect(unknown.status).toBe(415);
    const broken = await post(orgB, Buffer.from('not gzip at all'), { 'content-type': 'message/rfc822', 'content-encoding': 'gzip', 'x-inbound-secret': secret });
    expect(broken.status).toBe(422);
  });

  it('refuses other media types with 415', async () => {
    const { secret } = await rotate(orgA);
    const res = await post(orgA, Buffer.from('{"email":"x"}'), { 'content-type': 'application/json', 'x-inbound-secret': secret });
    expect(res.status).toBe(415);
  });
});

describe('the gateway on the inbound route', () => {
  it('needs no bearer token, limits each organization on its own, and counts refused secrets against the address', async () => {
    const { startGateway, loadGatewayConfig } = await import('@rp/api-gateway');
    const gw = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        ADMIN_URL: `http://127.0.0.1:${stack.apis.admin.port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${stack.apis.integrations.port}`,
        CASH_APP_URL: `http://127.0.0.1:${stack.apis['cash-app'].port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${stack.apis.knowledge.port}`,
        INBOUND_RATE_LIMIT_BURST: '2',
        INBOUND_RATE_LIMIT_PER_MINUTE: '1',
        AUTH_FAILURE_BURST: '3',
        AUTH_FAILURE_PER_MINUTE: '1',
      }),
      { port: 0 },
    );
    const to = (org: Org, headers: Record<string, string>, body: Buffer) =>
      fetch(`http://127.0.0.1:${gw.port}/v2/inbound/email/${org.organizationId}`, { method: 'POST', body, headers: { 'content-type': 'message/rfc822', ...headers } });
    try {
      const a = await rotate(orgA);
      const b = await rotate(orgB);
      for (let i = 0; i < 2; i++) {
        const res = await to(orgA, { 'x-inbound-secret': a.secret }, await rawMessage({ messageId: `<${randomUUID()}@customer.example>` }));
        expect(res.status).toBe(200);
      }
      const limited = await to(orgA, { 'x-inbound-secret': a.secret }, await rawMessage({ messageId: `<${randomUUID()}@customer.example>` }));
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as { type: string }).type).toBe('rate-limited');
      // another organization has its own budget
      expect((await to(orgB, { 'x-inbound-secret': b.secret }, await rawMessage({ messageId: `<${randomUUID()}@customer.example>` }))).status).toBe(200);

      // refused secrets spend the address's failed-authentication budget, not the organization's inbound budget:
      // after two of them B still has the one message left of its two
      for (let i = 0; i < 2; i++) expect((await to(orgB, { 'x-inbound-secret': 'rpin_wrong' }, Buffer.from('Subject: x\r\n\r\nx'))).status).toBe(401);
      expect((await to(orgB, { 'x-inbound-secret': b.secret }, await rawMessage({ messageId: `<${randomUUID()}@customer.example>` }))).status).toBe(200);
      // past the address's budget (3) even the right secret of an organization with budget left waits
      const orgC = await stack.onboard('Inbound C');
      const c = await rotate(orgC);
      expect((await to(orgC, { authorization: basic('rpin_wrong') }, Buffer.from('Subject: x\r\n\r\nx'))).status).toBe(401);
      const locked = await to(orgC, { 'x-inbound-secret': c.secret }, await rawMessage({ messageId: `<${randomUUID()}@customer.example>` }));
      expect(locked.status).toBe(429);
      expect(((await locked.json()) as { type: string }).type).toBe('rate-limited');
    } finally {
      await gw.close();
    }
  });
});
