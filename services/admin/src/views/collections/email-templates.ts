/**
 * Email template folders, templates and attachments as the API shows them (spec 2.5). Every
 * attachment carries a fresh presigned GET (signed locally, no call to the object store), or nulls
 * when object storage is not configured.
 */
import { downloadUrl, fileCategory, isoTime, type ObjectStorage } from '@rp/platform';
import { ATTACHMENT_UPLOADS, type FolderRecord, type TemplateRecord } from '../../domain/collections/email-templates.js';
import type { AttachmentRow, FolderRow } from '../../store/collections/email-templates.js';

function folderBrief(f: FolderRow) {
  return { object: 'email_template_folder' as const, id: f.id, name: f.name, created_at: isoTime(f.created_at)!, modified_at: isoTime(f.modified_at)! };
}

export async function attachmentView(storage: ObjectStorage | null, a: AttachmentRow) {
  const get = await downloadUrl(storage, ATTACHMENT_UPLOADS, { key: a.object_key, name: a.name });
  return {
    object: 'email_template_attachment' as const,
    id: a.id,
    name: a.name,
    mime_type: a.mime_type,
    organization_id: a.organization_id,
    content_id: null,
    disposition: 'attachment',
    purpose: 'email_template',
    remote_id: null,
    user_id: a.user_id,
    presigned_url: get?.url ?? null,
    presigned_url_expires_at: get ? get.expires_at.toISOString() : null,
    file_type: fileCategory(a.mime_type),
    is_verified: a.is_verified,
    size: a.size,
    src: null,
    created_at: isoTime(a.created_at)!,
    modified_at: isoTime(a.modified_at)!,
  };
}

/** A new attachment with the presigned PUT its bytes go to. */
export async function newAttachmentView(
  storage: ObjectStorage | null,
  created: { attachment: AttachmentRow; upload: { url: string; headers: Record<string, string>; expires_at: Date } },
) {
  const { upload } = created;
  return {
    ...(await attachmentView(storage, created.attachment)),
    upload: { method: 'PUT' as const, url: upload.url, headers: upload.headers, expires_at: upload.expires_at.toISOString() },
  };
}

/** An attachment after the check of its uploaded bytes, with why they were refused (or null). */
export async function verifiedAttachmentView(storage: ObjectStorage | null, checked: { attachment: AttachmentRow; verificationError: string | null }) {
  return { ...(await attachmentView(storage, checked.attachment)), verification_error: checked.verificationError };
}

export async function templateView(storage: ObjectStorage | null, r: TemplateRecord) {
  const t = r.template;
  return {
    object: 'email_template' as const,
    id: t.id,
    name: t.name,
    subject: t.subject,
    body: t.body,
    cc: t.cc,
    auto_correct: t.auto_correct,
    is_default: t.is_default,
    folder_id: t.folder_id,
    folder: folderBrief(r.folder),
    attachments: await Promise.all(r.attachments.map((a) => attachmentView(storage, a))),
    preview_subject: r.preview?.subject ?? null,
    preview_body: r.preview?.body ?? null,
    created_at: isoTime(t.created_at)!,
    modified_at: isoTime(t.modified_at)!,
  };
}

export async function folderView(storage: ObjectStorage | null, r: FolderRecord) {
  return {
    ...folderBrief(r.folder),
    template_count: r.templateCount,
    templates: await Promise.all(r.templates.map((t) => templateView(storage, t))),
  };
}
