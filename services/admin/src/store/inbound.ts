/** SQL of mail intake (admin schema): inbound secrets, recipient hosts, refusals and the intake row of inbox_messages. */
import type { Knex } from 'knex';
import type { Db } from '@rp/platform';

type Conn = Db | Knex.Transaction;

/** The organization's inbound secret hash (null: none issued yet); undefined when the organization does not exist. */
export async function getInboundSecretHash(db: Conn, organizationId: string): Promise<Buffer | null | undefined> {
  const row = await db('organizations').where({ id: organizationId }).first<{ inbound_secret_hash: Buffer | null } | undefined>('inbound_secret_hash');
  return row ? row.inbound_secret_hash : undefined;
}

/** Replaces the organization's inbound secret hash; null when the organization does not exist. */
export async function setInboundSecretHash(db: Conn, organizationId: string, hash: Buffer): Promise<{ inbound_secret_rotated_at: Date } | null> {
  const [row] = await db('organizations')
    .where({ id: organizationId })
    .update({ inbound_secret_hash: hash, inbound_secret_rotated_at: db.fn.now(), modified_at: db.fn.now() })
    .returning(['inbound_secret_rotated_at']);
  return (row as { inbound_secret_rotated_at: Date } | undefined) ?? null;
}

export async function organizationExists(db: Conn, organizationId: string): Promise<boolean> {
  return Boolean(await db('organizations').where({ id: organizationId }).first('id'));
}

/** The organization whose mailbox settings name this custom inbound host (stored lower case). */
export async function organizationByInboundHost(db: Conn, host: string): Promise<string | null> {
  const row = await db('mailbox_settings').where({ inbound_parse_hostname: host.toLowerCase() }).first<{ organization_id: string } | undefined>('organization_id');
  return row?.organization_id ?? null;
}

export interface RefusalWrite {
  id: string;
  organization_id: string | null;
  transport: 'smtp' | 'http';
  reason: 'too_large' | 'too_many_attachments';
  envelope_from: string | null;
  envelope_to: string[];
  message_id: string | null;
  size: number | null;
  attachment_count: number | null;
  detail: string;
}

export async function insertRefusal(db: Conn, row: RefusalWrite): Promise<void> {
  await db('inbound_refusals').insert(row);
}

export interface IntakeRowWrite {
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
  to_addresses: { address: string; name: string | null }[];
  cc_addresses: { address: string; name: string | null }[];
  subject: string | null;
  sent_at: string | null;
}

/** The id of the organization's message with this Message-ID, if one was received. */
export async function findInboxMessageId(db: Conn, organizationId: string, messageId: string): Promise<string | null> {
  const row = await db('inbox_messages').where({ organization_id: organizationId, message_id: messageId }).first<{ id: string } | undefined>('id');
  return row?.id ?? null;
}

/** Inserts the intake row; false when the organization already has a message with this Message-ID (a concurrent delivery won). */
export async function insertIntakeRow(db: Conn, row: IntakeRowWrite): Promise<boolean> {
  const inserted = await db('inbox_messages')
    .insert({ ...row, to_addresses: JSON.stringify(row.to_addresses), cc_addresses: JSON.stringify(row.cc_addresses), processing_state: 'received' })
    .onConflict(['organization_id', 'message_id'])
    .ignore()
    .returning('id');
  return inserted.length === 1;
}
