/** The user as the API shows it: business-unit access and permissions as sorted id lists, deactivation as `is_active`. */
import { isoTime } from '@rp/platform';
import type { UserRow } from '../store/users.js';
import type { UserDetail } from '../domain/accounts.js';
import { oooView } from './ooo.js';

export function userView(row: UserRow) {
  return {
    object: 'user' as const,
    id: row.id,
    organization_id: row.organization_id,
    email: row.email,
    name: row.name,
    role: row.role,
    business_unit_ids: row.business_unit_ids ?? [],
    permissions: row.permissions ?? [],
    is_active: row.deactivated_at === null,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

/** The user with the out-of-office in force today (or null) and the backup covering them today (or null). */
export function userDetailView(detail: UserDetail) {
  return { ...userView(detail.user), ooo: detail.ooo ? oooView(detail.ooo) : null, covered_by: detail.covered_by };
}
