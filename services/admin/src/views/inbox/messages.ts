/**
 * Inbox messages as the API shows them. Attachments have the spec's Attachment shape (2.5) with a
 * fresh presigned GET (signed locally), or nulls when object storage is not configured (and in
 * event payloads, where a URL would expire in the log).
 */
import { downloadUrl, fileCategory, isoTime, uploadPolicy, type ObjectStorage } from '@rp/platform';
import type { InboxAttachmentRow, InboxMessageRow } from '../../store/inbox/messages.js';

const DOWNLOADS = uploadPolicy();

export async function inboxAttachmentView(storage: ObjectStorage | null, a: InboxAttachmentRow) {
  const get = await downloadUrl(storage, DOWNLOADS, { key: a.object_key, name: a.name });
  return {
    object: 'attachment' as const,
    id: a.id,
    name: a.name,
    mime_type: a.mime_type,
    organization_id: a.organization_id,
    content_id: a.content_id,
    disposition: a.disposition,
    purpose: 'inbox_message',
    remote_id: null,
    user_id: null,
    presigned_url: get?.url ?? null,
    presigned_url_expires_at: get ? get.expires_at.toISOString() : null,
    file_type: fileCategory(a.mime_type),
    is_verified: true,
    size: a.size,
    src: null,
    created_at: isoTime(a.created_at)!,
    modified_at: isoTime(a.modified_at)!,
  };
}

export async function inboxMessageView(storage: ObjectStorage | null, r: InboxMessageRow, attachments: readonly InboxAttachmentRow[]) {
  return {
    object: 'inbox_message' as const,
    id: r.id,
    message_id: r.message_id,
    thread_id: r.thread_id,
    from: r.from_address ? { address: r.from_address, name: r.from_name } : null,
    to: r.to_addresses,
    cc: r.cc_addresses,
    subject: r.subject,
    received_at: isoTime(r.received_at)!,
    text: r.text_body,
    attachments: await Promise.all(attachments.map((a) => inboxAttachmentView(storage, a))),
    partner_id: r.partner_id,
    match_confidence: r.match_confidence,
    match_reasons: r.match_reasons,
    assignee_id: r.assignee_id,
    category: r.category,
    category_confidence: r.category_confidence,
    category_reasons: r.category_reasons,
    in_reply_to: r.in_reply_to_object && r.in_reply_to_id ? { object: r.in_reply_to_object, id: r.in_reply_to_id } : null,
    status: r.status,
    processing_state: r.processing_state,
    processing_error: r.processing_error,
    suggestions: r.suggestions,
    results: r.results,
    unsupported: r.unsupported,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
