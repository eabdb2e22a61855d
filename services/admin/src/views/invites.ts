/** A user invite as the API shows it, its status derived from its dates. */
import { isoTime } from '@rp/platform';
import { inviteStatus, type InviteRow } from '../store/invites.js';

/** The invite as the API shows it: never the token nor its hash. */
export function inviteView(row: InviteRow) {
  return {
    object: 'user_invite' as const,
    id: row.id,
    email: row.email,
    role: row.role,
    business_unit_ids: row.business_unit_ids ?? [],
    status: inviteStatus(row),
    invited_by_id: row.invited_by_id,
    expires_at: isoTime(row.expires_at)!,
    accepted_at: isoTime(row.accepted_at),
    revoked_at: isoTime(row.revoked_at),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
