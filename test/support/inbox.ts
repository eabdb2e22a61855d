/**
 * Inbox messages for tests: raw messages composed with nodemailer's MailComposer (the MIME a real
 * client sends) or written by hand (charsets, DSNs), delivered as real mail arrives — over SMTP
 * (nodemailer as the sending client) to the stack's inbound SMTP listener, addressed to the
 * organization's inbound host — and read back through the gateway (GET /v2/inbox/messages).
 */
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import PostalMime from 'postal-mime';
import type { Org, TestStack } from './stack.js';

/** The platform's default inbound host of an organization (`<org id>.<MAIL_INBOUND_DOMAIN>`). */
export const inboundAddress = (org: Org) => `ar@${org.organizationId}.inbound.receivables.local`;

/** A raw RFC 5322 message as nodemailer builds it. */
export function compose(mail: Mail.Options): Promise<Buffer> {
  return new MailComposer(mail).compile().build();
}

/** A raw message from header lines and a body (CRLF line ends). */
export function rawMessage(headers: string[], body: string): Buffer {
  return Buffer.from([...headers, '', body].join('\r\n').replace(/\r?\n/g, '\r\n'), 'latin1');
}

/** Sends the raw message over SMTP to the organization's inbound host; answers the inbox message id once listed. */
export async function deliver(stack: TestStack, org: Org, raw: Buffer, timeoutMs = 30_000): Promise<string> {
  const messageId = (await PostalMime.parse(raw)).messageId;
  if (!messageId) throw new Error('test messages carry a Message-ID (it finds them in the inbox)');
  const transport = nodemailer.createTransport({ host: stack.inboundSmtp.host, port: stack.inboundSmtp.port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from: 'sender@customer.example', to: [inboundAddress(org)] }, raw });
    if (!/^250 /.test(info.response)) throw new Error(`inbound SMTP answered ${info.response}`);
  } finally {
    transport.close();
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await stack.request('GET', '/v2/inbox/messages?page_size=200', { token: org.token });
    const found = (r.body?.data ?? []).find((m: { message_id: string }) => m.message_id === messageId);
    if (found) return found.id as string;
    if (Date.now() > deadline) throw new Error(`message ${messageId} not in the inbox: ${r.text}`);
    await new Promise((res) => setTimeout(res, 100));
  }
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
export async function receive(stack: TestStack, org: Org, raw: Buffer, timeoutMs = 60_000): Promise<any> {
  return processed(stack, org.token, await deliver(stack, org, raw), timeoutMs);
}
