/** Classifications of a general-ledger account. */
export const LEDGER_CLASSIFICATIONS = ['asset', 'liability', 'equity', 'revenue', 'expense'] as const;
export type LedgerClassification = (typeof LEDGER_CLASSIFICATIONS)[number];
