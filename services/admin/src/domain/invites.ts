/**
 * User invites (endpoint row 23): creation, listing, revocation and acceptance. The invite token is single-use and random: `rpi_` + HMAC-SHA256 over the
 * invite id and a random 32-byte nonce, keyed by a key of the admin service (HKDF of
 * IDENTITY_SECRET, info `rp-user-invite-v1`). Only its SHA-256 is stored (`token_hash`, looked up on
 * accept); the email activity re-derives the token from the nonce, so the token is never stored,
 * logged, nor carried in a workflow's input or history. A new invite for the same email gets a new
 * nonce and id, so the old token is dead.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  ConflictError,
  hashToken,
  NotFoundError,
  UnauthorizedError,
  type Db,
  type Identity,
  withTemporalDeadline,
} from '@rp/platform';
import { businessSearchAttributes, TASK_QUEUES, userInvite, userInviteWorkflowId } from '@rp/workflows';
import {
  emailIsUser,
  inviteByTokenHash,
  insertInvite,
  listPendingInvites,
  lockInviteEmail,
  markInviteAccepted,
  newInviteId,
  openInviteByEmail,
  pendingInviteByEmail,
  revokeInvite,
  type InviteRow,
} from '../store/invites.js';
import { insertUser, type Role, type UserRow } from '../store/users.js';
import { unknownBusinessUnits } from '../store/business-units.js';
import { issueCredential, type CredentialRow } from '../store/credentials.js';
import type { OrganizationRow } from '../store/organizations.js';
import { checkBusinessUnits } from './accounts.js';

/** The key invite tokens are derived with, from IDENTITY_SECRET. */
export function inviteTokenKey(identitySecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', identitySecret, 'rp-user-invite-v1', 'user-invite-token', 32));
}

export function inviteToken(key: Buffer, inviteId: string, nonce: string): string {
  return 'rpi_' + createHmac('sha256', key).update(`${inviteId}:${nonce}`).digest('base64url');
}

export interface InviteDeps {
  db: Db;
  temporal: Client;
  /** key the invite tokens are derived with (inviteTokenKey) */
  inviteTokenKey: Buffer;
  config: { USER_INVITE_TTL_SECONDS: number };
}

export interface NewInvite {
  email: string;
  role: Role;
  business_unit_ids: string[];
}

/**
 * Invite an email (admin only; the route says so). 409 when it is already a user of the
 * organization; an open invite of the email (pending or expired) is replaced: revoked as `resent`
 * and a new invite with a new token is sent. The workflow is started inside the transaction: if
 * Temporal refuses, nothing is written; if the commit fails, the activity finds no invite and skips.
 */
export async function createInvite(deps: InviteDeps, identity: Identity, input: NewInvite, requestId?: string): Promise<{ invite: InviteRow; replaced: InviteRow | null }> {
  return deps.db.transaction(async (trx) => {
    const unitIds = await checkBusinessUnits(trx, identity.org, input.business_unit_ids);
    await lockInviteEmail(trx, identity.org, input.email);
    if (await emailIsUser(trx, identity.org, input.email)) throw new ConflictError(`${input.email} is already a user of this organization.`);
    const open = await openInviteByEmail(trx, identity.org, input.email);
    const replaced = open ? await revokeInvite(trx, open.id, 'resent') : null;
    const id = newInviteId();
    const nonce = randomBytes(32).toString('base64url');
    const invite = await insertInvite(trx, {
      id,
      organizationId: identity.org,
      email: input.email,
      role: input.role,
      businessUnitIds: unitIds,
      tokenHash: hashToken(inviteToken(deps.inviteTokenKey, id, nonce)),
      tokenNonce: nonce,
      ttlSeconds: deps.config.USER_INVITE_TTL_SECONDS,
      invitedById: identity.sub,
    });
    await withTemporalDeadline(deps.temporal, () =>
      deps.temporal.workflow.start(userInvite, {
        taskQueue: TASK_QUEUES.admin,
        workflowId: userInviteWorkflowId(id),
        args: [{ organizationId: identity.org, inviteId: id, retryWindowMinutes: activityRetryWindowMinutes(), ...(requestId ? { requestId } : {}) }],
        typedSearchAttributes: businessSearchAttributes(identity.org, id),
      }),
    );
    return { invite, replaced };
  });
}

/** A page of the organization's pending invites. */
export async function pendingInvites({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listPendingInvites(db, organizationId, page.offset, page.pageSize);
}

/** Revoke the email's pending invite (matched case-insensitively); 404 when there is none. */
export async function revokeInviteByEmail({ db }: { db: Db }, organizationId: string, email: string): Promise<InviteRow> {
  return db.transaction(async (trx) => {
    await lockInviteEmail(trx, organizationId, email);
    const invite = await pendingInviteByEmail(trx, organizationId, email);
    if (!invite) throw new NotFoundError(`No pending invite for ${email}.`);
    return revokeInvite(trx, invite.id, 'revoked');
  });
}

export interface Accepted {
  user: UserRow;
  credential: CredentialRow;
  token: string;
}

/**
 * Accept an invite with its token (no bearer token: the gateway lets exactly this route through and
 * rate-limits it per client address). Creates the user with the invited role and the invited units
 * that still exist, marks the invite used and issues the user's first access token, atomically.
 * Unknown, revoked (or replaced), expired or used token: 401. The email became a user meanwhile: 409.
 * No welcome email: the invitation was the welcome.
 */
export async function acceptInvite({ db }: { db: Db }, input: { token: string; name: string }): Promise<Accepted> {
  return db.transaction(async (trx) => {
    const invite = await inviteByTokenHash(trx, hashToken(input.token));
    if (!invite || !invite.pending_now) {
      throw new UnauthorizedError('The invite token is not valid: unknown, revoked, expired or already used.');
    }
    const unknown = new Set(await unknownBusinessUnits(trx, invite.organization_id, invite.business_unit_ids));
    const user = await insertUser(trx, invite.organization_id, {
      email: invite.email,
      name: input.name,
      role: invite.role,
      business_unit_ids: invite.business_unit_ids.filter((id) => !unknown.has(id)),
      permissions: [],
    });
    if (!user) throw new ConflictError(`${invite.email} is already a user of this organization.`);
    await markInviteAccepted(trx, invite.id, user.id);
    const { row, token } = await issueCredential(trx, { organizationId: invite.organization_id, kind: 'user', userId: user.id, name: 'first access token (invite)' });
    return { user, credential: row, token };
  });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderInviteEmail(input: { invite: InviteRow; organization: OrganizationRow; token: string; publicBaseUrl: string }) {
  const { invite, organization, token, publicBaseUrl } = input;
  const subject = `You are invited to ${organization.name} on the Receivables Platform`;
  const expires = new Date(invite.expires_at).toISOString();
  const roleLine = invite.role === 'admin' ? 'You are invited as an organization admin.' : 'You are invited as a member of the organization.';
  const accept = `curl -s -H 'content-type: application/json' -d '{"token":"${token}","name":"<your name>"}' ${publicBaseUrl}/v1/user-invites/accept`;
  const text = [
    'Hello,',
    '',
    `${organization.name} invites you (${invite.email}) to the Receivables Platform. ${roleLine}`,
    '',
    `Your invitation token (single use, valid until ${expires}):`,
    token,
    '',
    'Accept it with your name; the answer carries your first access token (shown once):',
    accept,
  ].join('\n');
  const html = `<p>Hello,</p>
<p><strong>${escapeHtml(organization.name)}</strong> invites you (${escapeHtml(invite.email)}) to the Receivables Platform. ${roleLine}</p>
<p>Your invitation token (single use, valid until ${expires}):</p>
<pre>${escapeHtml(token)}</pre>
<p>Accept it with your name; the answer carries your first access token (shown once):</p>
<pre>${escapeHtml(accept)}</pre>`;
  return { subject, text, html };
}
