/**
 * The parse stage's attachments: each stored as its own object (`inbox/<org>/<message>/attachments/<position>`,
 * overwritten by a retried parse) with its inbox_attachments row, and read as text by the kernel's
 * attachmentText (PDF, CSV, XLSX, HTML, text; TNEF and unreadable files are reported unsupported), on the
 * kernel's attachment threads so that a large file never holds the worker's event loop and its heartbeats.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachmentTextOffLoop, type Db, type ObjectStorage } from '@rp/platform';
import type { ParsedAttachment } from '../../domain-types/inbox.js';
import { upsertAttachment } from '../../store/inbox/messages.js';
import type { RawAttachment } from './parse.js';

export function attachmentObjectKey(organizationId: string, inboxMessageId: string, position: number): string {
  return `inbox/${organizationId}/${inboxMessageId}/attachments/${position}`;
}

/** Stores the attachments and reads their text; answers them as the readers see them, and what could not be read. */
export async function storeAttachments(
  deps: { db: Db; storage: ObjectStorage },
  organizationId: string,
  inboxMessageId: string,
  attachments: readonly RawAttachment[],
): Promise<{ parsed: ParsedAttachment[]; unsupported: { kind: string; detail: string }[] }> {
  const parsed: ParsedAttachment[] = [];
  const unsupported: { kind: string; detail: string }[] = [];
  if (!attachments.length) return { parsed, unsupported };
  // The kernel's storage uploads files from disk (streamed, exact length): each attachment passes through a private temp dir.
  const dir = await mkdtemp(join(tmpdir(), 'inbox-'));
  try {
    for (const a of attachments) {
      const key = attachmentObjectKey(organizationId, inboxMessageId, a.position);
      const path = join(dir, String(a.position));
      await writeFile(path, a.bytes);
      await deps.storage.putFile({ key, path, contentType: a.mime_type || 'application/octet-stream' });
      const stored = { position: a.position, name: a.name, mime_type: a.mime_type, size: a.bytes.byteLength, object_key: key, content_id: a.content_id, disposition: a.disposition };
      await upsertAttachment(deps.db, { organization_id: organizationId, inbox_message_id: inboxMessageId, ...stored, sha256: a.sha256 });
      const read = await attachmentTextOffLoop(a.bytes, a.mime_type, a.name);
      if (read.kind === null && read.unsupported !== 'type') unsupported.push({ kind: read.unsupported, detail: `${a.name}: ${read.detail}` });
      parsed.push({
        ...stored,
        text: read.kind === null ? null : read.text,
        rows: read.kind === null ? null : read.rows,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { parsed, unsupported };
}
