/** The system adjustments every organization has, created on its first access to adjustments. */
import type { Db } from '@rp/platform';
import type { SystemAdjustmentDef } from '../domain-types/adjustments.js';
import { insertSystemAdjustments, systemAdjustmentKeys } from '../store/adjustments.js';

/**
 * The adjustments every organization has. They are created on the organization's first access to
 * adjustments, with their ledger accounts; they cannot be deleted, only deactivated.
 */
export const SYSTEM_ADJUSTMENTS: readonly SystemAdjustmentDef[] = [
  {
    key: 'bank_fee',
    name: 'Bank fee',
    description: 'Fees the bank deducted from a received payment.',
    automated: true,
    ledgerAccount: { number: '6850', name: 'Bank charges', classification: 'expense' },
  },
  {
    key: 'early_payment_discount',
    name: 'Early-payment discount',
    description: 'Discount the customer took for paying before the due date.',
    automated: false,
    ledgerAccount: { number: '4900', name: 'Sales discounts', classification: 'expense' },
  },
  {
    key: 'short_pay_write_off',
    name: 'Short-pay write-off',
    description: 'Small remaining balance of a short payment, written off instead of pursued.',
    automated: false,
    ledgerAccount: { number: '6900', name: 'Bad debt write-offs', classification: 'expense' },
  },
  {
    key: 'fx_difference',
    name: 'FX difference',
    description: 'Difference from exchange-rate movements between invoicing and payment.',
    automated: true,
    ledgerAccount: { number: '7900', name: 'Exchange rate differences', classification: 'expense' },
  },
];

/**
 * Make sure the organization has every system adjustment (idempotent, safe under concurrent calls):
 * a cheap read when they all exist, else one transaction inserting what is missing.
 */
export async function ensureSystemAdjustments(db: Db, organizationId: string): Promise<void> {
  const present = new Set(await systemAdjustmentKeys(db, organizationId));
  if (SYSTEM_ADJUSTMENTS.every((def) => present.has(def.key))) return;
  await db.transaction((trx) => insertSystemAdjustments(trx, organizationId, SYSTEM_ADJUSTMENTS));
}
