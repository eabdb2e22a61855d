/**
 * What the matching engine is given: its tunable limits (MatchConfig) and one organization's
 * matching context (open documents, partners, known accounts, remittances, own accounts).
 */
import type { KnownAccount, MatchInvoice, MatchPartner, MatchRemittance } from '../../domain-types/matching.js';

export interface MatchConfig {
  /** absolute shortfall accepted as an adjustment */
  toleranceAmount: string;
  /** shortfall accepted as an adjustment, in percent of the invoices' open total */
  tolerancePercent: string;
  /**
   * largest unexplained shortfall read as a bank charge (in the deposit's currency): above the
   * tolerance it is still booked on the adjustment, but proposed for a person (score below 0.9)
   */
  feeCeilingAmount: string;
  /** minimum name similarity (0..1) for a fuzzy payer match */
  nameThreshold: number;
  /** two partners whose similarities differ by no more than this are a tie: rejected */
  nameTieMargin: number;
  /** most open invoices of one payer considered by the subset-sum search */
  maxCombinationInvoices: number;
  /** node budget of the subset-sum search */
  maxCombinationSteps: number;
}

export const DEFAULT_MATCH_CONFIG: MatchConfig = {
  toleranceAmount: '5.00',
  tolerancePercent: '0',
  feeCeilingAmount: '35.00',
  nameThreshold: 0.6,
  nameTieMargin: 0.05,
  maxCombinationInvoices: 20,
  maxCombinationSteps: 50_000,
};

export interface MatchContext {
  /** open invoices and open credit memos (kind 'credit_memo') */
  invoices: readonly MatchInvoice[];
  partners: readonly MatchPartner[];
  knownAccounts: readonly KnownAccount[];
  remittances: readonly MatchRemittance[];
  /** adjustment used for a shortfall within tolerance (null: none available → partial payment) */
  toleranceAdjustmentId: string | null;
  config: MatchConfig;
  /** the organization's own bank accounts (IBAN or account number): a credit from one is a transfer, not a payment */
  ownAccounts?: readonly string[];
}
