/** SQL of email template folders, templates and attachments (admin schema); every read is per organization. */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export interface FolderRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: Date;
  modified_at: Date;
}

export interface TemplateRow {
  id: string;
  organization_id: string;
  folder_id: string;
  name: string;
  subject: string;
  body: string;
  cc: string[];
  auto_correct: boolean;
  is_default: boolean;
  created_at: Date;
  modified_at: Date;
}

export interface AttachmentRow {
  id: string;
  organization_id: string;
  template_id: string;
  user_id: string | null;
  name: string;
  mime_type: string;
  size: number;
  object_key: string;
  is_verified: boolean;
  sha256: string | null;
  sniffed_mime_type: string | null;
  verification_error: string | null;
  verified_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

// ---------- folders

export async function listFolders(db: Q, org: string, offset: number, limit: number): Promise<{ rows: FolderRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db<FolderRow>('email_template_folders').where({ organization_id: org }).orderBy('created_at').orderBy('id').offset(offset).limit(limit),
    db('email_template_folders').where({ organization_id: org }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as FolderRow[], total: Number(count) };
}

export async function getFolder(db: Q, org: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<FolderRow | undefined> {
  const q = db<FolderRow>('email_template_folders').where({ organization_id: org, id }).first();
  return (opts.forUpdate ? q.forUpdate() : q) as Promise<FolderRow | undefined>;
}

export async function insertFolder(db: Q, org: string, name: string): Promise<FolderRow> {
  const [row] = await db<FolderRow>('email_template_folders').insert({ id: newId(), organization_id: org, name }).returning('*');
  return row as FolderRow;
}

export async function updateFolder(db: Q, org: string, id: string, name: string): Promise<FolderRow | undefined> {
  const [row] = await db<FolderRow>('email_template_folders').where({ organization_id: org, id }).update({ name, modified_at: db.fn.now() }).returning('*');
  return row as FolderRow | undefined;
}

export async function deleteFolder(db: Q, org: string, id: string): Promise<number> {
  return db('email_template_folders').where({ organization_id: org, id }).delete();
}

// ---------- templates

export async function templatesOfFolders(db: Q, org: string, folderIds: string[]): Promise<TemplateRow[]> {
  if (!folderIds.length) return [];
  return db<TemplateRow>('email_templates').where({ organization_id: org }).whereIn('folder_id', folderIds).orderBy('created_at').orderBy('id') as Promise<TemplateRow[]>;
}

/**
 * The first `perGroup` rows of each group (oldest first) of `table` grouped by `groupColumn`, in one
 * statement: a listing page loads a bounded number of rows however many its groups hold. `table` and
 * `groupColumn` are this module's constants, never input.
 */
async function firstRowsPerGroup<R>(db: Q, table: string, groupColumn: string, org: string, groupIds: string[], perGroup: number): Promise<R[]> {
  if (!groupIds.length) return [];
  const res = await db.raw(
    `SELECT * FROM ${table} WHERE id IN (
       SELECT id FROM (
         SELECT id, row_number() OVER (PARTITION BY ${groupColumn} ORDER BY created_at, id) AS rn
         FROM ${table} WHERE organization_id = ? AND ${groupColumn} = ANY(?::uuid[])
       ) ranked WHERE rn <= ?
     ) ORDER BY created_at, id`,
    [org, groupIds, perGroup],
  );
  return res.rows as R[];
}

/** The first `perFolder` templates of each folder (oldest first). */
export function firstTemplatesOfFolders(db: Q, org: string, folderIds: string[], perFolder: number): Promise<TemplateRow[]> {
  return firstRowsPerGroup<TemplateRow>(db, 'email_templates', 'folder_id', org, folderIds, perFolder);
}

/** How many templates each folder holds (folders without any are absent). */
export async function templateCountsOfFolders(db: Q, org: string, folderIds: string[]): Promise<Map<string, number>> {
  if (!folderIds.length) return new Map();
  const rows = (await db('email_templates').select('folder_id').count<{ folder_id: string; count: string }[]>({ count: '*' }).where({ organization_id: org }).whereIn('folder_id', folderIds).groupBy('folder_id'));
  return new Map(rows.map((r) => [r.folder_id, Number(r.count)]));
}

/** The ids of the folder's templates. */
export async function templateIdsOfFolder(db: Q, org: string, folderId: string): Promise<string[]> {
  return (await db('email_templates').where({ organization_id: org, folder_id: folderId }).pluck('id')) as string[];
}

export async function countTemplatesOfFolder(db: Q, org: string, folderId: string): Promise<number> {
  const [{ count }] = await db('email_templates').where({ organization_id: org, folder_id: folderId }).count<{ count: string }[]>({ count: '*' });
  return Number(count);
}

export async function getTemplate(db: Q, org: string, id: string): Promise<TemplateRow | undefined> {
  return db<TemplateRow>('email_templates').where({ organization_id: org, id }).first() as Promise<TemplateRow | undefined>;
}

/** The organization's default template of the first folder (oldest) named `folderName`. */
export async function defaultTemplateOfFolderNamed(db: Q, org: string, folderName: string): Promise<TemplateRow | undefined> {
  return db<TemplateRow>('email_templates as t')
    .join('email_template_folders as f', 'f.id', 't.folder_id')
    .where({ 't.organization_id': org, 't.is_default': true, 'f.name': folderName })
    .orderBy('f.created_at')
    .select('t.*')
    .first() as Promise<TemplateRow | undefined>;
}

/** Clear the default flag of the folder's other templates. */
export async function clearDefault(db: Q, org: string, folderId: string, exceptId: string | null): Promise<void> {
  const q = db('email_templates').where({ organization_id: org, folder_id: folderId, is_default: true });
  if (exceptId) q.whereNot({ id: exceptId });
  await q.update({ is_default: false, modified_at: db.fn.now() });
}

export async function insertTemplate(
  db: Q,
  org: string,
  t: { folder_id: string; name: string; subject: string; body: string; cc: string[]; auto_correct: boolean; is_default: boolean },
): Promise<TemplateRow> {
  const [row] = await db('email_templates')
    .insert({ id: newId(), organization_id: org, ...t, cc: JSON.stringify(t.cc) })
    .returning('*');
  return row as TemplateRow;
}

export async function updateTemplate(
  db: Q,
  org: string,
  id: string,
  patch: Partial<{ folder_id: string; name: string; subject: string; body: string; cc: string[]; auto_correct: boolean; is_default: boolean }>,
): Promise<TemplateRow | undefined> {
  const values: Record<string, unknown> = { ...patch, modified_at: db.fn.now() };
  if (patch.cc) values.cc = JSON.stringify(patch.cc);
  const [row] = await db('email_templates').where({ organization_id: org, id }).update(values).returning('*');
  return row as TemplateRow | undefined;
}

export async function deleteTemplate(db: Q, org: string, id: string): Promise<number> {
  return db('email_templates').where({ organization_id: org, id }).delete();
}

// ---------- attachments

export async function attachmentsOf(db: Q, org: string, templateIds: string[]): Promise<AttachmentRow[]> {
  if (!templateIds.length) return [];
  return db<AttachmentRow>('email_template_attachments').where({ organization_id: org }).whereIn('template_id', templateIds).orderBy('created_at').orderBy('id') as Promise<
    AttachmentRow[]
  >;
}

/** The first `perTemplate` attachments of each template (oldest first). */
export function firstAttachmentsOf(db: Q, org: string, templateIds: string[], perTemplate: number): Promise<AttachmentRow[]> {
  return firstRowsPerGroup<AttachmentRow>(db, 'email_template_attachments', 'template_id', org, templateIds, perTemplate);
}

export async function objectKeysOfFolder(db: Q, org: string, folderId: string): Promise<string[]> {
  return db('email_template_attachments as a')
    .join('email_templates as t', 't.id', 'a.template_id')
    .where({ 'a.organization_id': org, 't.folder_id': folderId })
    .pluck('a.object_key') as Promise<string[]>;
}

export async function getAttachment(db: Q, org: string, templateId: string, id: string): Promise<AttachmentRow | undefined> {
  return db<AttachmentRow>('email_template_attachments').where({ organization_id: org, template_id: templateId, id }).first() as Promise<AttachmentRow | undefined>;
}

export async function insertAttachment(
  db: Q,
  a: { id: string; organization_id: string; template_id: string; user_id: string | null; name: string; mime_type: string; size: number; object_key: string },
): Promise<AttachmentRow> {
  const [row] = await db('email_template_attachments').insert(a).returning('*');
  return row as AttachmentRow;
}

export async function recordVerification(
  db: Q,
  id: string,
  v: { is_verified: boolean; sha256: string | null; sniffed_mime_type: string | null; verification_error: string | null },
): Promise<AttachmentRow> {
  const [row] = await db('email_template_attachments')
    .where({ id })
    .update({ ...v, verified_at: db.fn.now(), modified_at: db.fn.now() })
    .returning('*');
  return row as AttachmentRow;
}

export async function deleteAttachment(db: Q, org: string, templateId: string, id: string): Promise<number> {
  return db('email_template_attachments').where({ organization_id: org, template_id: templateId, id }).delete();
}

// ---------- preview

const ATTACHMENT_COLUMNS = [
  'id', 'organization_id', 'template_id', 'user_id', 'name', 'mime_type', 'size', 'object_key', 'is_verified', 'sha256',
  'sniffed_mime_type', 'verification_error', 'verified_at', 'created_at', 'modified_at',
] as const;

/** Everything a preview reads from admin's own tables, fetched in one round trip. */
export interface PreviewSource {
  template: TemplateRow;
  folder: FolderRow;
  attachments: AttachmentRow[];
  organization: { name: string; base_currency: string; timezone: string } | null;
  /** the calling user (null for API keys, or a user no longer in the organization) */
  sender: { name: string; email: string } | null;
}

/**
 * The template with its folder and attachments, the organization's profile and the sending user,
 * in ONE query (a preview is the hot path of template editing: every round trip counts; see
 * bench/templates.ts). One row per attachment (at least one row); every join is per organization.
 */
const PREVIEW_SOURCE_SQL = `SELECT t.*, f.name AS f_name, f.created_at AS f_created_at, f.modified_at AS f_modified_at,
       o.name AS o_name, o.base_currency AS o_base_currency, o.timezone AS o_timezone,
       u.name AS u_name, u.email AS u_email, ${ATTACHMENT_COLUMNS.map((c) => `a.${c} AS a_${c}`).join(', ')}
  FROM email_templates t
  JOIN email_template_folders f ON f.id = t.folder_id AND f.organization_id = t.organization_id
  LEFT JOIN organizations o ON o.id = t.organization_id
  LEFT JOIN users u ON u.organization_id = t.organization_id AND u.id = $1::uuid
  LEFT JOIN email_template_attachments a ON a.organization_id = t.organization_id AND a.template_id = t.id
 WHERE t.organization_id = $2 AND t.id = $3
 ORDER BY a.created_at, a.id`;

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Run a named (prepared) statement on a pooled connection (or the transaction's): Postgres parses
 * and plans it once per connection, not once per preview, and knex's binding rewrite is skipped.
 */
async function prepared(db: Q, name: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
  const client = db.client as { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<unknown> };
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text, values })).rows;
  } finally {
    await client.releaseConnection(connection);
  }
}

export async function previewSource(db: Q, org: string, id: string, userId: string | null): Promise<PreviewSource | undefined> {
  const rows = await prepared(db, 'admin_email_template_preview_source_v1', PREVIEW_SOURCE_SQL, [userId, org, id]);
  const first = rows[0];
  if (!first) return undefined;
  const template: TemplateRow = {
    id: first.id as string,
    organization_id: first.organization_id as string,
    folder_id: first.folder_id as string,
    name: first.name as string,
    subject: first.subject as string,
    body: first.body as string,
    cc: first.cc as string[],
    auto_correct: first.auto_correct as boolean,
    is_default: first.is_default as boolean,
    created_at: first.created_at as Date,
    modified_at: first.modified_at as Date,
  };
  const folder: FolderRow = {
    id: template.folder_id,
    organization_id: org,
    name: first.f_name as string,
    created_at: first.f_created_at as Date,
    modified_at: first.f_modified_at as Date,
  };
  const attachments = rows
    .filter((r) => r.a_id !== null)
    .map((r) => Object.fromEntries(ATTACHMENT_COLUMNS.map((c) => [c, r[`a_${c}`]])) as unknown as AttachmentRow);
  return {
    template,
    folder,
    attachments,
    organization: first.o_name === null ? null : { name: first.o_name as string, base_currency: first.o_base_currency as string, timezone: first.o_timezone as string },
    sender: first.u_email === null ? null : { name: first.u_name as string, email: first.u_email as string },
  };
}
