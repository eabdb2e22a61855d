/** The organization as the API shows it. */
import { isoTime } from '@rp/platform';
import type { OrganizationRow } from '../store/organizations.js';

export function organizationView(row: OrganizationRow) {
  return {
    object: 'organization' as const,
    id: row.id,
    name: row.name,
    base_currency: row.base_currency,
    timezone: row.timezone,
    auto_approve_threshold: row.auto_approve_threshold === null ? null : Number(row.auto_approve_threshold),
    collections_run_time: row.collections_run_time,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
