/** The API shape of an adjustment and of a ledger account. */
import { isoTime } from '@rp/platform';
import type { AdjustmentRow, LedgerAccountRow } from '../store/adjustments.js';

export function ledgerAccountView(row: LedgerAccountRow) {
  return {
    object: 'ledger_account' as const,
    id: row.id,
    name: row.name,
    number: row.number,
    classification: row.classification,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}

export function adjustmentView(row: AdjustmentRow) {
  return {
    object: 'adjustment' as const,
    id: row.id,
    name: row.name,
    description: row.description,
    is_active: row.is_active,
    is_system: row.is_system,
    automated: row.automated,
    ledger_account_id: row.ledger_account_id,
    ledger_account: {
      object: 'ledger_account' as const,
      id: row.ledger_account_id,
      name: row.la_name,
      number: row.la_number,
      classification: row.la_classification,
      created_at: isoTime(row.la_created_at)!,
      modified_at: isoTime(row.la_modified_at)!,
    },
    can_delete: !row.is_system && !row.in_use,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
