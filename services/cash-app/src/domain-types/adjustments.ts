/** Adjustment and ledger-account types shared by the domain rules and the store. */

/** Classifications of a general-ledger account. */
export const LEDGER_CLASSIFICATIONS = ['asset', 'liability', 'equity', 'revenue', 'expense'] as const;
export type LedgerClassification = (typeof LEDGER_CLASSIFICATIONS)[number];

/** A system adjustment every organization has, with the ledger account it books to. */
export interface SystemAdjustmentDef {
  /** Stable key of the system adjustment within an organization (adjustments.system_key). */
  key: string;
  name: string;
  description: string;
  /** Applied automatically during payment processing. */
  automated: boolean;
  ledgerAccount: { number: string; name: string; classification: LedgerClassification };
}
