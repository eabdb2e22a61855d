/**
 * The parse stage of the AR inbox: a raw RFC 5322 message (as accepted and stored) → what the
 * readers read (ParsedInboundMessage) and the attachments' bytes to store. postal-mime decodes
 * charsets, quoted-printable and base64 and walks nested multiparts; on top of it:
 *
 * - An HTML-only body becomes text with the kernel's htmlToText (tables as aligned rows), so every
 *   message is read the same way whatever its sender's client.
 * - A forwarded message is part of the text: an inline message/rfc822 part is already (postal-mime),
 *   one forwarded as an attachment is parsed and its headers and text appended under a
 *   "Forwarded message" line; inline "Forwarded message" blocks are plain text already.
 * - A delivery-status notification (RFC 3464 message/delivery-status) becomes `deliveryStatus`; the
 *   report part itself is not stored as an attachment.
 * - Every other non-text part is an attachment, in message order (position 0..).
 */
import { createHash } from 'node:crypto';
import PostalMime, { type Address, type Email } from 'postal-mime';
import { cleanText, htmlToText } from '@rp/platform';
import type { DeliveryStatus, MailAddress, ParsedInboundMessage } from '../../domain-types/inbox.js';

export interface RawAttachment {
  position: number;
  name: string;
  mime_type: string;
  content_id: string | null;
  disposition: string | null;
  bytes: Uint8Array;
  sha256: string;
}

export interface MimeParse {
  message: Omit<ParsedInboundMessage, 'attachments'>;
  attachments: RawAttachment[];
}

/** Text kept of a message body (longer bodies are cut; the raw message stays whole in storage). */
export const MAX_TEXT_CHARS = 512 * 1024;

function mailboxes(list: Address[] | Address | undefined): MailAddress[] {
  const arr = list === undefined ? [] : Array.isArray(list) ? list : [list];
  return arr.flatMap((a) => (a.group ? a.group : [a])).filter((m) => m.address).map((m) => ({ address: m.address!.toLowerCase(), name: m.name || null }));
}

function headerMap(email: Email): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of email.headers) out[h.key] = out[h.key] === undefined ? h.value : `${out[h.key]}\n${h.value}`;
  return out;
}

/** `<a@b> <c@d>` → ['<a@b>', '<c@d>'] (ids without brackets get them). */
export function messageIdList(value: string | undefined | null): string[] {
  if (!value) return [];
  const bracketed = value.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  return value.split(/[\s,]+/).filter(Boolean).map((v) => `<${v}>`);
}

function isoDate(value: string | undefined): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** RFC 3464 fields: a per-message block, then one block per recipient (blank lines between). */
export function parseDeliveryStatus(text: string): DeliveryStatus {
  const blocks = text.replace(/\r\n?/g, '\n').replace(/\n[ \t]+/g, ' ').split(/\n\s*\n/);
  const fields = (block: string) => {
    const out: Record<string, string> = {};
    for (const line of block.split('\n')) {
      const m = line.match(/^([A-Za-z-]+)\s*:\s*(.*)$/);
      if (m) out[m[1]!.toLowerCase()] = m[2]!.trim();
    }
    return out;
  };
  const typed = (v: string | undefined) => (v ? v.replace(/^[a-z0-9-]+\s*;\s*/i, '').trim() : null);
  let reportingMta: string | null = null;
  const recipients: DeliveryStatus['recipients'] = [];
  for (const block of blocks) {
    const f = fields(block);
    if (f['reporting-mta']) reportingMta = typed(f['reporting-mta']);
    const address = typed(f['final-recipient'] ?? f['original-recipient']);
    if (address && f['action']) {
      recipients.push({ address: address.replace(/^<|>$/g, '').toLowerCase(), action: f['action'].toLowerCase(), status: f['status'] ?? null, diagnostic: typed(f['diagnostic-code']) });
    }
  }
  return { reportingMta, recipients };
}

function bytesOf(content: ArrayBuffer | Uint8Array | string): Uint8Array {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}

/** Whether the message (or a part) declares a text/plain body: otherwise its text comes from the HTML. */
function hasPlainPart(raw: Uint8Array): boolean {
  const head = new TextDecoder('latin1').decode(raw.subarray(0, Math.min(raw.length, 2 * 1024 * 1024)));
  if (/^content-type:\s*text\/plain/im.test(head)) return true;
  const headerEnd = head.search(/\r?\n\r?\n/);
  // a message without any Content-Type header is text/plain (RFC 2045 §5.2)
  return !/^content-type:/im.test(headerEnd >= 0 ? head.slice(0, headerEnd) : head);
}

async function forwardedText(bytes: Uint8Array): Promise<string> {
  const inner = await PostalMime.parse(bytes);
  const from = mailboxes(inner.from)[0];
  const body = inner.text ? inner.text : inner.html ? htmlToText(inner.html) : '';
  return [
    '---------- Forwarded message ----------',
    from ? `From: ${from.name ? `${from.name} <${from.address}>` : from.address}` : null,
    inner.date ? `Date: ${inner.date}` : null,
    inner.subject ? `Subject: ${inner.subject}` : null,
    '',
    cleanText(body),
  ]
    .filter((l) => l !== null)
    .join('\n');
}

/** Parses a raw message; `messageId` is the one intake recorded (the header's, or a content hash when it has none). */
export async function parseMime(raw: Uint8Array, messageId: string): Promise<MimeParse> {
  const email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  let text = email.html && !hasPlainPart(raw) ? htmlToText(email.html) : cleanText(email.text ?? '');
  let deliveryStatus: DeliveryStatus | null = null;
  const attachments: RawAttachment[] = [];
  const forwards: string[] = [];
  const isReport = email.attachments.some((a) => a.mimeType === 'message/delivery-status');
  for (const a of email.attachments) {
    const bytes = bytesOf(a.content);
    if (a.mimeType === 'message/delivery-status' || a.mimeType === 'message/global-delivery-status') {
      deliveryStatus = parseDeliveryStatus(new TextDecoder('utf-8').decode(bytes));
      continue;
    }
    if (a.mimeType === 'message/rfc822' && !isReport) {
      forwards.push(await forwardedText(bytes).catch(() => ''));
    }
    const position = attachments.length;
    const fallback = a.mimeType === 'message/rfc822' ? 'message.eml' : a.mimeType === 'text/rfc822-headers' ? 'headers.txt' : `attachment-${position + 1}`;
    attachments.push({
      position,
      name: (a.filename ?? '').trim().slice(0, 255) || fallback,
      mime_type: a.mimeType,
      content_id: a.contentId ?? null,
      disposition: a.disposition,
      bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  }
  if (forwards.length) text = [text, ...forwards.filter(Boolean)].filter(Boolean).join('\n\n');
  return {
    message: {
      messageId,
      inReplyTo: messageIdList(email.inReplyTo)[0] ?? null,
      references: messageIdList(email.references),
      from: mailboxes(email.from)[0] ?? null,
      to: mailboxes(email.to),
      cc: mailboxes(email.cc),
      subject: email.subject ?? null,
      date: isoDate(email.date),
      headers: headerMap(email),
      text: text.slice(0, MAX_TEXT_CHARS),
      html: email.html ?? null,
      deliveryStatus,
      unsupported: [],
    },
    attachments,
  };
}
