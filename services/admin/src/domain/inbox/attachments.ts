/**
 * The parse stage's attachments: each stored as its own object (`inbox/<org>/<message>/attachments/<position>`,
 * overwritten by a retried parse) with its inbox_attachments row, and read as text by the kernel's
 * attachmentText (PDF, CSV, XLSX, HTML, text; TNEF and unreadable files are reported unsupported).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachmentText, type Db, type ObjectStorage } from '@rp/platform';
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
      await upsertAttachment(deps.db, {
        organization_id: organizationId,
        inbox_message_id: inboxMessageId,
        position: a.position,
        name: a.name,
        mime_type: a.mime_type,
        size: a.bytes.byteLength,
        object_key: key,
        content_id: a.content_id,
        disposition: a.disposition,
        sha256: a.sha256,
      });
      const read = await attachmentText(a.bytes, a.mime_type, a.name);
      if (read.kind === null && read.unsupported !== 'type') unsupported.push({ kind: read.unsupported, detail: `${a.name}: ${read.detail}` });
      parsed.push({
        position: a.position,
        name: a.name,
        mime_type: a.mime_type,
        size: a.bytes.byteLength,
        object_key: key,
        content_id: a.content_id,
        disposition: a.disposition,
        text: read.kind === null ? null : read.text,
        rows: read.kind === null ? null : read.rows,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { parsed, unsupported };
}
