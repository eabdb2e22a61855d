/**
 * SQL of the AR inbox (admin schema, migration 016): messages, their attachments, known contacts.
 * Every statement is per organization. Business-unit scope uses the matched customer's unit copied
 * onto the message; a message without a customer is visible only to callers who see every unit.
 */
import type { Knex } from 'knex';
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { InboxCategory, InboxRef, InboxStatus, InboxSuggestion, MailAddress } from '../../domain-types/inbox.js';

type Q = Db | Knex.Transaction;

export interface MatchReason {
  rule: string;
  detail: string;
  weight?: number;
}

export interface InboxMessageRow {
  id: string;
  organization_id: string;
  message_id: string;
  thread_id: string;
  transport: 'smtp' | 'http';
  envelope_from: string | null;
  envelope_to: string[];
  raw_object_key: string;
  raw_size: number;
  raw_sha256: string;
  in_reply_to_header: string | null;
  references_header: string[];
  from_address: string | null;
  from_name: string | null;
  to_addresses: MailAddress[];
  cc_addresses: MailAddress[];
  subject: string | null;
  sent_at: Date | null;
  received_at: Date;
  text_body: string | null;
  processing_state: 'received' | 'processed' | 'failed';
  processing_error: string | null;
  unsupported: { kind: string; detail: string }[];
  partner_id: string | null;
  business_unit_id: string | null;
  match_confidence: number | null;
  match_reasons: MatchReason[];
  assignee_id: string | null;
  category: InboxCategory | null;
  category_confidence: number | null;
  category_reasons: string[];
  in_reply_to_object: string | null;
  in_reply_to_id: string | null;
  status: InboxStatus;
  suggestions: InboxSuggestion[];
  results: InboxRef[];
  created_at: Date;
  modified_at: Date;
}

export interface InboxAttachmentRow {
  id: string;
  organization_id: string;
  inbox_message_id: string;
  position: number;
  name: string;
  mime_type: string;
  size: number;
  object_key: string;
  content_id: string | null;
  disposition: string | null;
  sha256: string;
  created_at: Date;
  modified_at: Date;
}

/** Scope of a caller over messages: the matched customer's unit, or — without a customer — only callers who see every unit. */
function scoped(q: Knex.QueryBuilder, db: Q, organizationId: string, scope: BusinessUnitScope): Knex.QueryBuilder {
  if (scope === '*') return q;
  return q.andWhere((w) => {
    void w
      .whereIn('business_unit_id', [...scope])
      .orWhere((x) => {
        void x.whereNotNull('partner_id').whereNull('business_unit_id');
      })
      .orWhere((x) => {
        void x
          .whereNull('partner_id')
          .whereNotExists(db('business_units').select(db.raw('1')).where({ organization_id: organizationId }).whereNotIn('id', [...scope]));
      });
  });
}

export async function getInboxMessage(db: Q, organizationId: string, id: string, scope: BusinessUnitScope = '*', forUpdate = false): Promise<InboxMessageRow | undefined> {
  const q = scoped(db('inbox_messages').where({ organization_id: organizationId, id }), db, organizationId, scope);
  if (forUpdate) void q.forUpdate();
  return (await q.first()) as InboxMessageRow | undefined;
}

export interface InboxFilter {
  status?: InboxStatus;
  partner_id?: string;
  category?: InboxCategory;
  assignee_id?: string;
}

/** One page of messages, newest received first (ties by id, newest first). */
export async function listInboxMessages(db: Q, organizationId: string, scope: BusinessUnitScope, f: InboxFilter, offset: number, limit: number): Promise<{ rows: InboxMessageRow[]; total: number }> {
  const base = () => {
    const q = db('inbox_messages').where({ organization_id: organizationId });
    if (f.status) void q.andWhere({ status: f.status });
    if (f.partner_id) void q.andWhere({ partner_id: f.partner_id });
    if (f.category) void q.andWhere({ category: f.category });
    if (f.assignee_id) void q.andWhere({ assignee_id: f.assignee_id });
    return scoped(q, db, organizationId, scope);
  };
  const [rows, count] = await Promise.all([
    base().select('*').orderBy([{ column: 'received_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    base().count({ total: '*' }).first(),
  ]);
  return { rows: rows as InboxMessageRow[], total: Number((count as { total: string } | undefined)?.total ?? 0) };
}

export async function attachmentsOf(db: Q, organizationId: string, messageIds: readonly string[]): Promise<Map<string, InboxAttachmentRow[]>> {
  const out = new Map<string, InboxAttachmentRow[]>();
  if (!messageIds.length) return out;
  const rows = (await db('inbox_attachments').where({ organization_id: organizationId }).whereIn('inbox_message_id', [...messageIds]).orderBy(['inbox_message_id', 'position'])) as InboxAttachmentRow[];
  for (const r of rows) {
    const list = out.get(r.inbox_message_id) ?? [];
    list.push(r);
    out.set(r.inbox_message_id, list);
  }
  return out;
}

/** Records an attachment stored by the parse stage (a retried parse writes the same row again). */
export async function upsertAttachment(db: Q, a: Omit<InboxAttachmentRow, 'id' | 'created_at' | 'modified_at'>): Promise<void> {
  await db('inbox_attachments')
    .insert({ id: newId(), ...a })
    .onConflict(['inbox_message_id', 'position'])
    .merge(['name', 'mime_type', 'size', 'object_key', 'content_id', 'disposition', 'sha256', 'modified_at']);
}

export async function updateInboxMessage(db: Q, organizationId: string, id: string, patch: Partial<Omit<InboxMessageRow, 'id' | 'organization_id'>>): Promise<InboxMessageRow | undefined> {
  const json = ['match_reasons', 'category_reasons', 'suggestions', 'results', 'unsupported', 'to_addresses', 'cc_addresses'] as const;
  const values: Record<string, unknown> = { ...patch, modified_at: db.fn.now() };
  for (const k of json) if (k in patch) values[k] = JSON.stringify(patch[k]);
  const [row] = await db('inbox_messages').where({ organization_id: organizationId, id }).update(values).returning('*');
  return row as InboxMessageRow | undefined;
}

export async function knownContact(db: Q, organizationId: string, address: string): Promise<{ partner_id: string; source: string } | undefined> {
  return db('inbox_known_contacts').select('partner_id', 'source').where({ organization_id: organizationId, address: address.toLowerCase() }).first();
}

/** Teaches the matcher: the address belongs to the partner (one partner per address: the latest correction wins). */
export async function upsertKnownContact(db: Q, organizationId: string, address: string, partnerId: string, source: 'manual' | 'reply', createdBy: string | null): Promise<void> {
  await db('inbox_known_contacts')
    .insert({ organization_id: organizationId, address: address.toLowerCase(), partner_id: partnerId, source, created_by: createdBy })
    .onConflict(['organization_id', 'address'])
    .merge({ partner_id: partnerId, source, created_by: createdBy, modified_at: db.fn.now() });
}

/** Learns an address from a reply to our own email, unless the address is known already (a correction always wins). */
export async function addKnownContactFromReply(db: Q, organizationId: string, address: string, partnerId: string): Promise<void> {
  await db('inbox_known_contacts').insert({ organization_id: organizationId, address: address.toLowerCase(), partner_id: partnerId, source: 'reply', created_by: null }).onConflict(['organization_id', 'address']).ignore();
}

/** Earlier inbox messages with these Message-IDs that were matched to a customer (a thread the customer continues). */
export async function matchedInboxMessagesByMessageIds(db: Q, organizationId: string, messageIds: readonly string[]): Promise<{ id: string; message_id: string; partner_id: string; match_confidence: number }[]> {
  const ids = [...new Set(messageIds)].slice(0, 100);
  if (!ids.length) return [];
  return db('inbox_messages').select('id', 'message_id', 'partner_id', 'match_confidence').where({ organization_id: organizationId }).whereNotNull('partner_id').whereIn('message_id', ids);
}

/** Our own collection emails with these Message-IDs (sent ones), with the action and customer they were about. */
export async function collectionMessagesByMessageIds(db: Q, organizationId: string, messageIds: readonly string[]): Promise<{ message_id: string; action_id: string; partner_id: string }[]> {
  const ids = [...new Set(messageIds)].slice(0, 100);
  if (!ids.length) return [];
  return db('collection_messages').select('message_id', 'action_id', 'partner_id').where({ organization_id: organizationId, channel: 'email' }).whereIn('message_id', ids);
}

/** The organization's centralized-inbox settings (null: never configured) and timezone. */
export async function inboxSettings(db: Q, organizationId: string): Promise<{ timezone: string; centralized_inbox: { auto_assign: boolean; auto_assign_threshold: number; matching_guidelines: string | null } | null }> {
  const row = (await db('organizations as o')
    .leftJoin('mailbox_settings as m', 'm.organization_id', 'o.id')
    .where('o.id', organizationId)
    .first('o.timezone', 'm.centralized_inbox')) as { timezone: string; centralized_inbox: { auto_assign: boolean; auto_assign_threshold: number; matching_guidelines: string | null } | null } | undefined;
  return { timezone: row?.timezone ?? 'UTC', centralized_inbox: row?.centralized_inbox ?? null };
}

/** Inbox messages of one customer, for its timeline. */
export const INBOX_TIMELINE_SQL = `SELECT 'reply', i.received_at,
    'Email from ' || coalesce(nullif(i.from_name, '') || ' <' || i.from_address || '>', i.from_address, 'unknown sender') || ' — ' || coalesce(nullif(i.subject, ''), '(no subject)'),
    NULL::text, NULL::text, 'inbox_message', i.id::text
  FROM inbox_messages i WHERE i.organization_id = ? AND i.partner_id = ?`;
