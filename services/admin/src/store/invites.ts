/** SQL of user invites (admin schema), and an invite's status derived from its dates. */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { Role } from './users.js';

type Conn = Db | Knex.Transaction;

export interface InviteRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  business_unit_ids: string[];
  token_hash: string;
  token_nonce: string;
  expires_at: Date;
  invited_by_id: string | null;
  revoked_at: Date | null;
  revoked_reason: 'revoked' | 'resent' | null;
  accepted_at: Date | null;
  accepted_user_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export function inviteStatus(row: InviteRow, now = Date.now()): InviteStatus {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  if (new Date(row.expires_at).getTime() <= now) return 'expired';
  return 'pending';
}

/** Serializes invites of one email in one organization until the transaction ends. */
export async function lockInviteEmail(trx: Knex.Transaction, organizationId: string, email: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('rp-invite:' || ?::text || ':' || lower(?::text)))`, [organizationId, email]);
}

export async function emailIsUser(db: Conn, organizationId: string, email: string): Promise<boolean> {
  const row = await db('users').select('id').where({ organization_id: organizationId }).whereRaw('lower(email) = lower(?)', [email]).first();
  return Boolean(row);
}

/** The not yet revoked nor accepted invite of the email (pending or expired), locked. */
export async function openInviteByEmail(trx: Knex.Transaction, organizationId: string, email: string): Promise<InviteRow | undefined> {
  return trx<InviteRow>('user_invites')
    .where({ organization_id: organizationId })
    .whereRaw('lower(email) = lower(?)', [email])
    .whereNull('revoked_at')
    .whereNull('accepted_at')
    .forUpdate()
    .first();
}

export async function revokeInvite(trx: Knex.Transaction, id: string, reason: 'revoked' | 'resent'): Promise<InviteRow> {
  const [row] = await trx<InviteRow>('user_invites')
    .where({ id })
    .update({ revoked_at: trx.fn.now() as unknown as Date, revoked_reason: reason, modified_at: trx.fn.now() as unknown as Date })
    .returning('*');
  return row;
}

export async function insertInvite(
  trx: Knex.Transaction,
  input: { id: string; organizationId: string; email: string; role: Role; businessUnitIds: string[]; tokenHash: string; tokenNonce: string; ttlSeconds: number; invitedById: string | null },
): Promise<InviteRow> {
  const [row] = await trx<InviteRow>('user_invites')
    .insert({
      id: input.id,
      organization_id: input.organizationId,
      email: input.email,
      role: input.role,
      business_unit_ids: input.businessUnitIds,
      token_hash: input.tokenHash,
      token_nonce: input.tokenNonce,
      expires_at: trx.raw(`now() + make_interval(secs => ?)`, [input.ttlSeconds]) as unknown as Date,
      invited_by_id: input.invitedById,
    })
    .returning('*');
  return row;
}

export function newInviteId(): string {
  return newId();
}

const pending = (db: Conn, organizationId: string) =>
  db<InviteRow>('user_invites').where({ organization_id: organizationId }).whereNull('revoked_at').whereNull('accepted_at').where('expires_at', '>', db.fn.now());

export async function listPendingInvites(db: Db, organizationId: string, offset: number, limit: number) {
  const [rows, [{ count }]] = await Promise.all([
    pending(db, organizationId).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit),
    pending(db, organizationId).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as InviteRow[], total: Number(count) };
}

/** The pending (not revoked, accepted or expired) invite of the email, locked. */
export async function pendingInviteByEmail(trx: Knex.Transaction, organizationId: string, email: string): Promise<InviteRow | undefined> {
  return pending(trx, organizationId).whereRaw('lower(email) = lower(?)', [email]).forUpdate().first();
}

export async function getInvite(db: Conn, organizationId: string, id: string): Promise<InviteRow | undefined> {
  return db<InviteRow>('user_invites').where({ organization_id: organizationId, id }).first();
}

/** The invite whose token hashes to `hash`, locked (any status; the caller checks it), with whether it is pending on the database clock. */
export async function inviteByTokenHash(trx: Knex.Transaction, hash: string): Promise<(InviteRow & { pending_now: boolean }) | undefined> {
  return trx('user_invites')
    .select('*', trx.raw('(revoked_at IS NULL AND accepted_at IS NULL AND expires_at > now()) AS pending_now'))
    .where({ token_hash: hash })
    .forUpdate()
    .first();
}

export async function markInviteAccepted(trx: Knex.Transaction, id: string, userId: string): Promise<void> {
  await trx('user_invites').where({ id }).update({ accepted_at: trx.fn.now(), accepted_user_id: userId, modified_at: trx.fn.now() });
}

/** Whether the invite is still pending on the database clock (the email activity checks before sending). */
export async function isInvitePending(db: Conn, organizationId: string, id: string): Promise<boolean> {
  const row = await pending(db, organizationId).andWhere({ id }).select('id').first();
  return Boolean(row);
}
