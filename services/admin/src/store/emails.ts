/** SQL of the outbound-email records (welcome and invite emails): the kernel's RecordedEmailStore for this schema. */
import { newId, type Db, type RecordedEmailStore } from '@rp/platform';

export interface OutboundEmailRow {
  id: string;
  organization_id: string;
  idempotency_key: string;
  kind: string;
  to_address: string;
  subject: string;
  status: 'sending' | 'sent' | 'failed';
  message_id: string | null;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
}

/** Claim the email for this idempotency key: creates it, or returns the existing record. */
export async function claimEmail(
  db: Db,
  input: { organizationId: string; idempotencyKey: string; kind: string; to: string; subject: string },
): Promise<OutboundEmailRow> {
  await db.raw(
    `INSERT INTO outbound_emails (id, organization_id, idempotency_key, kind, to_address, subject, status)
     VALUES (?, ?, ?, ?, ?, ?, 'sending') ON CONFLICT (idempotency_key) DO NOTHING`,
    [newId(), input.organizationId, input.idempotencyKey, input.kind, input.to, input.subject],
  );
  const row = await db<OutboundEmailRow>('outbound_emails').where({ idempotency_key: input.idempotencyKey }).first();
  return row!;
}

export async function getEmail(db: Db, id: string): Promise<OutboundEmailRow | undefined> {
  return db<OutboundEmailRow>('outbound_emails').where({ id }).first();
}

/**
 * Right before an SMTP call (the kernel's RecordedEmailStore.beginAttempt): counts the attempt unless
 * the email is already recorded sent, in one statement; then answers with the recorded Message-ID.
 */
export async function beginEmailAttempt(db: Db, id: string): Promise<{ sent: false } | { sent: true; messageId: string | null }> {
  const counted = await db('outbound_emails').where({ id }).whereNot({ status: 'sent' }).update({ attempts: db.raw('attempts + 1'), modified_at: db.fn.now() }, ['id']);
  if (counted.length) return { sent: false };
  const row = await getEmail(db, id);
  if (!row) throw new Error(`outbound email ${id} does not exist`);
  return { sent: true, messageId: row.message_id };
}

/**
 * After the SMTP server accepted the message: at once in the delivery activity (best effort), and for
 * sure in the record activity (a failure there never resends). Idempotent.
 */
export async function markSent(db: Db, id: string, messageId: string): Promise<void> {
  await db('outbound_emails').where({ id }).update({ status: 'sent', message_id: messageId, sent_at: db.raw('coalesce(sent_at, now())'), last_error: null, modified_at: db.fn.now() });
}

export async function markError(db: Db, id: string, error: string): Promise<void> {
  await db('outbound_emails').where({ id }).update({ last_error: error.slice(0, 2000), modified_at: db.fn.now() });
}

/** The outbound-email row `id` as the kernel's sendRecordedEmail sees it. */
export function outboundEmailIntent(db: Db, id: string): RecordedEmailStore {
  return { beginAttempt: () => beginEmailAttempt(db, id), markSent: (messageId) => markSent(db, id, messageId) };
}
