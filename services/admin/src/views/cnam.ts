/** The caller-ID name registration as the API shows it (spec 2.18): its fields in the order they are written, then its state. */
import { isoTime } from '@rp/platform';
import { CNAM_FIELDS, type CnamFields } from '../domain-types/cnam.js';
import type { CnamRegistrationRow } from '../store/cnam.js';

export function cnamRegistrationView(row: CnamRegistrationRow) {
  const fields = Object.fromEntries(CNAM_FIELDS.map((f) => [f, row[f]])) as CnamFields;
  return {
    object: 'cnam_registration' as const,
    id: row.id,
    status: row.status,
    status_detail: row.status_detail,
    ...fields,
    user_id: row.user_id,
    submitted_at: isoTime(row.submitted_at),
    approved_at: isoTime(row.approved_at),
    error_message: row.error_message,
    submission_id: row.current_submission_id,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
