/**
 * Inbox messages for tests: raw messages composed with nodemailer's MailComposer (the MIME a real
 * client sends) or written by hand (charsets, DSNs), and their delivery into an organization's
 * inbox the way intake accepts a message: the raw bytes stored in object storage first
 * (`inbox/<org>/<id>/raw.eml`), then the inbox_messages row, then the inbox workflow started with
 * its business id. Reading goes through the gateway (GET /v2/inbox/messages/{id}).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import PostalMime from 'postal-mime';
import { connectTemporal, newId, ObjectStorage, storageConfigFrom } from '@rp/platform';
import { INBOX_MESSAGE_WORKFLOW, INBOX_TASK_QUEUE, inboxMessageWorkflowId } from '@rp/workflows';
import type { Org, TestStack } from './stack.js';

/** A raw RFC 5322 message as nodemailer builds it. */
export function compose(mail: Mail.Options): Promise<Buffer> {
  return new MailComposer(mail).compile().build();
}

/** A raw message from header lines and a body (CRLF line ends). */
export function rawMessage(headers: string[], body: string): Buffer {
  return Buffer.from([...headers, '', body].join('\r\n').replace(/\r?\n/g, '\r\n'), 'latin1');
}

/** Stores and records a received message as intake does, and starts its workflow; answers the inbox message id. */
export async function deliver(stack: TestStack, org: Org, raw: Buffer): Promise<string> {
  const email = await PostalMime.parse(raw);
  const sha = createHash('sha256').update(raw).digest('hex');
  const messageId = email.messageId ?? `<${sha}@inbound.invalid>`;
  const refs = (email.references ?? '').match(/<[^<>\s]+>/g) ?? [];
  const inReplyTo = (email.inReplyTo ?? '').match(/<[^<>\s]+>/)?.[0] ?? null;
  const id = newId();
  const key = `inbox/${org.organizationId}/${id}/raw.eml`;
  const storage = new ObjectStorage(storageConfigFrom(stack.env as never));
  const dir = await mkdtemp(join(tmpdir(), 'inbox-test-'));
  try {
    await writeFile(join(dir, 'raw.eml'), raw);
    await storage.putFile({ key, path: join(dir, 'raw.eml'), contentType: 'message/rfc822' });
  } finally {
    await rm(dir, { recursive: true, force: true });
    storage.close();
  }
  const from = email.from && !email.from.group ? email.from : null;
  await stack.sql(
    `INSERT INTO admin.inbox_messages (id, organization_id, message_id, thread_id, transport, envelope_to, raw_object_key, raw_size, raw_sha256,
       in_reply_to_header, references_header, from_address, from_name, subject)
     VALUES ($1, $2, $3, $4, 'smtp', $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [id, org.organizationId, messageId, refs[0] ?? inReplyTo ?? messageId, ['ar@inbound.example'], key, raw.length, sha, inReplyTo, refs, from?.address?.toLowerCase() ?? null, from?.name || null, email.subject ?? null],
  );
  const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS!, namespace: stack.namespace });
  try {
    await t.client.workflow.start(INBOX_MESSAGE_WORKFLOW, {
      taskQueue: INBOX_TASK_QUEUE,
      workflowId: inboxMessageWorkflowId(id),
      args: [{ organizationId: org.organizationId, inboxMessageId: id }],
    });
  } finally {
    await t.close();
  }
  return id;
}

/** The message once the inbox workflow has read it (processed or failed). */
export async function processed(stack: TestStack, token: string, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await stack.request('GET', `/v2/inbox/messages/${id}`, { token });
    if (r.status === 200 && r.body.processing_state !== 'received') return r.body;
    if (Date.now() > deadline) throw new Error(`inbox message ${id} not processed: ${r.text}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Delivers and waits until read. */
export async function receive(stack: TestStack, org: Org, raw: Buffer): Promise<any> {
  return processed(stack, org.token, await deliver(stack, org, raw));
}
