/**
 * Mail intake: what happens to a message the SMTP listener or the provider endpoint received for an
 * organization, before anything reads its meaning. In this order, so nothing accepted is ever lost
 * and nothing is half-written:
 *   1. limits: more than 25 MiB or more than 20 attachments is refused (SMTP 552 / HTTP 413) and
 *      recorded in inbound_refusals without its content;
 *   2. the same Message-ID already received by this organization is that message (its workflow is
 *      started again, which Temporal answers "already started" when it runs);
 *   3. the raw bytes go to object storage (`inbox/<org>/<inbox message id>/raw.eml`);
 *   4. the inbox_messages row, with the headers a list shows before processing;
 *   5. the inbox workflow (`inbox-message-<id>`), which parses, matches and acts.
 * A failure in 3 leaves no row (the sender retries); a failure in 5 leaves the row and answers an
 * error, so the sender's retry (a duplicate by step 2) starts the workflow.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PostalMime, { type Address, type Email } from 'postal-mime';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { AppError, newId, requireStorage, withTemporalDeadline, type Db, type ObjectStorage } from '@rp/platform';
import { businessSearchAttributes, INBOX_MESSAGE_WORKFLOW, INBOX_TASK_QUEUE, inboxMessageWorkflowId, type InboxMessageInput } from '@rp/workflows';
import { MAX_INBOUND_ATTACHMENTS, MAX_INBOUND_MESSAGE_BYTES, type MailAddress } from '../../domain-types/inbox.js';
import { findInboxMessageId, insertIntakeRow, insertRefusal, type IntakeRowWrite } from '../../store/inbound.js';

export interface IntakeDeps {
  db: Db;
  storage: ObjectStorage | null;
  temporal: Client;
}

export interface InboundMessageInput {
  organizationId: string;
  raw: Buffer;
  transport: 'smtp' | 'http';
  envelopeFrom?: string | null;
  envelopeTo?: string[];
}

export type RefusalReason = 'too_large' | 'too_many_attachments';

/** A message over the limits: recorded in inbound_refusals; 413 `payload-too-large` on HTTP, 552 on SMTP. */
export class InboundRefusedError extends AppError {
  constructor(
    readonly reason: RefusalReason,
    detail: string,
  ) {
    super({ status: 413, type: 'payload-too-large', title: 'Payload too large', detail });
  }
}

const MIB = 1024 * 1024;
export const TOO_LARGE_DETAIL = `The message exceeds the limit of ${MAX_INBOUND_MESSAGE_BYTES} bytes (${MAX_INBOUND_MESSAGE_BYTES / MIB} MiB); it was refused and recorded.`;
const tooManyDetail = (n: number) => `The message has ${n} attachments; at most ${MAX_INBOUND_ATTACHMENTS} are accepted. It was refused and recorded.`;

/** Text as PostgreSQL stores it (no NUL), bounded. */
function clean(value: string | null | undefined, max: number): string | null {
  if (value === null || value === undefined) return null;
  const s = value.replaceAll('\u0000', '').trim();
  return s ? s.slice(0, max) : null;
}

const MSG_ID = /<[^<>\s]{1,900}>/g;

/** The ids of a Message-ID / In-Reply-To / References header, with angle brackets. */
export function messageIds(header: string | null | undefined): string[] {
  return [...(header ?? '').replaceAll('\u0000', '').matchAll(MSG_ID)].map((m) => m[0]);
}

/** A Message-ID header's id with angle brackets; a bare `id@host` (no brackets, as some mailers write it) is bracketed. */
export function normalizeMessageId(header: string | null | undefined): string | null {
  const bracketed = messageIds(header)[0];
  if (bracketed) return bracketed;
  const bare = (header ?? '').replaceAll('\u0000', '').trim();
  return /^[^\s<>]{1,900}@[^\s<>]{1,255}$/.test(bare) ? `<${bare}>` : null;
}

function mailboxes(list: Address[] | Address | undefined): MailAddress[] {
  const all = list === undefined ? [] : Array.isArray(list) ? list : [list];
  return all
    .flatMap((a) => (a.group ? a.group : [a]))
    .map((m) => ({ address: clean(m.address, 320)?.toLowerCase() ?? '', name: clean(m.name, 500) }))
    .filter((m) => m.address.includes('@'))
    .slice(0, 200);
}

/** Everything intake needs from a message's headers and structure (one MIME parse). */
export interface InspectedMessage {
  messageId: string;
  threadId: string;
  inReplyTo: string | null;
  references: string[];
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  subject: string | null;
  sentAt: string | null;
  attachmentCount: number;
  sha256: string;
}

export async function inspectMessage(raw: Buffer): Promise<InspectedMessage> {
  const sha256 = createHash('sha256').update(raw).digest('hex');
  let email: Email | null = null;
  try {
    email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  } catch {
    // Unparseable structure (nesting or header limits): still accepted and stored; the parse stage reports it.
  }
  const messageId = normalizeMessageId(email?.messageId) ?? `<${sha256}@inbound.invalid>`;
  const references = messageIds(email?.references).slice(0, 100);
  const inReplyTo = normalizeMessageId(email?.inReplyTo);
  const date = email?.date ? new Date(email.date) : null;
  // PostgreSQL's timestamptz spans fewer years than a JS Date: a Date header outside 1..9999 is unreadable, not an error
  const year = date && !Number.isNaN(date.getTime()) ? date.getUTCFullYear() : null;
  return {
    messageId,
    threadId: references[0] ?? inReplyTo ?? messageId,
    inReplyTo,
    references,
    from: mailboxes(email?.from)[0] ?? null,
    to: mailboxes(email?.to),
    cc: mailboxes(email?.cc),
    subject: clean(email?.subject, 2000),
    sentAt: date && year !== null && year >= 1 && year <= 9999 ? date.toISOString() : null,
    attachmentCount: email?.attachments.length ?? 0,
    sha256,
  };
}

/** The Message-ID in the first bytes of a message (its head), for the record of a refused message whose rest was not kept. */
export function messageIdFromHead(head: Buffer): string | null {
  const text = head.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const unfolded = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const line = /^message-id:(.*)$/im.exec(unfolded);
  return line ? normalizeMessageId(line[1]) : null;
}

export interface RefusalInput {
  organizationId: string | null;
  transport: 'smtp' | 'http';
  reason: RefusalReason;
  envelopeFrom?: string | null;
  envelopeTo?: string[];
  messageId: string | null;
  size: number | null;
  attachmentCount: number | null;
  detail: string;
}

/** Records a refused message (no content, only what identifies it). */
export async function recordRefusal(deps: Pick<IntakeDeps, 'db'>, r: RefusalInput): Promise<void> {
  await insertRefusal(deps.db, {
    id: newId(),
    organization_id: r.organizationId,
    transport: r.transport,
    reason: r.reason,
    envelope_from: clean(r.envelopeFrom, 320)?.toLowerCase() ?? null,
    envelope_to: (r.envelopeTo ?? []).map((a) => a.slice(0, 320)),
    message_id: r.messageId,
    size: r.size,
    attachment_count: r.attachmentCount,
    detail: r.detail,
  });
}

/** The object key of a message's raw bytes. */
export function rawObjectKey(organizationId: string, inboxMessageId: string): string {
  return `inbox/${organizationId}/${inboxMessageId}/raw.eml`;
}

async function putRaw(storage: ObjectStorage, key: string, raw: Buffer): Promise<void> {
  // The kernel's storage uploads files with their exact length; a private temp directory holds the bytes meanwhile.
  const dir = await mkdtemp(path.join(tmpdir(), 'rp-inbound-'));
  try {
    const file = path.join(dir, 'raw.eml');
    await writeFile(file, raw, { mode: 0o600 });
    await storage.putFile({ key, path: file, contentType: 'message/rfc822' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts the message's workflow; "already started" is success (a redelivery of a message being processed). */
export async function startInboxWorkflow(temporal: Client, input: InboxMessageInput): Promise<void> {
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.workflow.start(INBOX_MESSAGE_WORKFLOW, {
        taskQueue: INBOX_TASK_QUEUE,
        workflowId: inboxMessageWorkflowId(input.inboxMessageId),
        args: [input],
        typedSearchAttributes: businessSearchAttributes(input.organizationId, input.inboxMessageId),
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Accepts one message for one organization (see the module comment for the order). Throws
 * InboundRefusedError (recorded) beyond the limits, StorageUnavailableError without object
 * storage, and whatever storage, database or Temporal throws (nothing is half-written).
 */
export async function acceptInboundMessage(deps: IntakeDeps, input: InboundMessageInput): Promise<{ id: string; duplicate: boolean }> {
  const { organizationId, raw, transport } = input;
  const envelopeTo = (input.envelopeTo ?? []).map((a) => clean(a, 320)?.toLowerCase()).filter((a): a is string => Boolean(a));
  const refusal = { organizationId, transport, envelopeFrom: input.envelopeFrom ?? null, envelopeTo };
  if (raw.length > MAX_INBOUND_MESSAGE_BYTES) {
    await recordRefusal(deps, { ...refusal, reason: 'too_large', messageId: messageIdFromHead(raw.subarray(0, 65_536)), size: raw.length, attachmentCount: null, detail: TOO_LARGE_DETAIL });
    throw new InboundRefusedError('too_large', TOO_LARGE_DETAIL);
  }
  const msg = await inspectMessage(raw);
  if (msg.attachmentCount > MAX_INBOUND_ATTACHMENTS) {
    const detail = tooManyDetail(msg.attachmentCount);
    await recordRefusal(deps, { ...refusal, reason: 'too_many_attachments', messageId: msg.messageId, size: raw.length, attachmentCount: msg.attachmentCount, detail });
    throw new InboundRefusedError('too_many_attachments', detail);
  }

  const existing = await findInboxMessageId(deps.db, organizationId, msg.messageId);
  if (existing) {
    await startInboxWorkflow(deps.temporal, { organizationId, inboxMessageId: existing });
    return { id: existing, duplicate: true };
  }

  const storage = requireStorage(deps.storage);
  const id = newId();
  const key = rawObjectKey(organizationId, id);
  await putRaw(storage, key, raw);
  const row: IntakeRowWrite = {
    id,
    organization_id: organizationId,
    message_id: msg.messageId,
    thread_id: msg.threadId,
    transport,
    envelope_from: clean(input.envelopeFrom, 320)?.toLowerCase() ?? null,
    envelope_to: envelopeTo,
    raw_object_key: key,
    raw_size: raw.length,
    raw_sha256: msg.sha256,
    in_reply_to_header: msg.inReplyTo,
    references_header: msg.references,
    from_address: msg.from?.address ?? null,
    from_name: msg.from?.name ?? null,
    to_addresses: msg.to,
    cc_addresses: msg.cc,
    subject: msg.subject,
    sent_at: msg.sentAt,
  };
  let inserted: boolean;
  try {
    inserted = await insertIntakeRow(deps.db, row);
  } catch (err) {
    // No row refers to the object: remove it so a failed write leaves nothing behind.
    await storage.deleteObject(key).catch(() => undefined);
    throw err;
  }
  if (!inserted) {
    // A concurrent delivery of the same Message-ID won: that row is the message.
    await storage.deleteObject(key).catch(() => undefined);
    const winner = await findInboxMessageId(deps.db, organizationId, msg.messageId);
    if (!winner) throw new Error(`inbox message ${msg.messageId} vanished after a conflicting insert`);
    await startInboxWorkflow(deps.temporal, { organizationId, inboxMessageId: winner });
    return { id: winner, duplicate: true };
  }
  await startInboxWorkflow(deps.temporal, { organizationId, inboxMessageId: id });
  return { id, duplicate: false };
}
