/** What automatic matching reads and proposes, shared by the matching rules (domain/matching/) and the store. */
import type { AllocationDraft } from './payments.js';

export interface MatchTransaction {
  id: string;
  amount: string;
  currency: string;
  counterparty_name: string | null;
  counterparty_account: string | null;
  counterparty_iban: string | null;
  remittance_information: string | null;
  bank_reference: string | null;
  end_to_end_id: string | null;
  /** the bank's transaction code as parsed (camt BkTxCd domain/family/sub-family or proprietary code, BAI2 type code, MT940 :61: code) */
  transaction_code?: string | null;
  booking_date?: string | null;
  value_date?: string | null;
}

export interface MatchInvoice {
  id: string;
  partner_id: string | null;
  document_number: string;
  reference: string | null;
  currency: string;
  /** open amount available for new proposals (ledger open minus what cash application already allocated) */
  open_amount: string;
  net_due_date: string | null;
  /** a credit memo's open_amount is the credit still available (positive); absent = invoice */
  kind?: 'invoice' | 'credit_memo';
  document_date?: string | null;
  /** early-payment discounts of the invoice's payment terms, earliest first; absent or [] = none */
  discount_terms?: DiscountTerm[];
}

/** An early-payment discount: paying by `due_date` (inclusive) may deduct `percent` of the amount. */
export interface DiscountTerm {
  due_date: string;
  /** decimal string, e.g. "2" or "2.5" */
  percent: string;
}

export interface MatchPartner {
  id: string;
  name: string;
  legal_name: string | null;
}

export interface KnownAccount {
  account_identifier: string;
  partner_id: string;
  /** learned from an approved payment, or given by the customer master data (push or sync); absent = learned */
  source?: 'learned' | 'master_data';
}

export interface MatchRemittance {
  id: string;
  partner_id: string | null;
  transaction_amount: string | null;
  transaction_number: string | null;
  currency: string | null;
  payer_iban: string | null;
  payer_account: string | null;
  /** the deposit the advice was sent for (a reply to a remittance request): it applies to that deposit only */
  bank_transaction_id?: string | null;
  allocations: { invoice_id: string | null; amount_paid: string; amount_discount: string; amount_withheld: string }[];
}

export type MatchReason = Record<string, string | number | boolean | null> & { rule: string };

/** An allocation as matching proposes it: the same shape a user edits (domain/payments.ts). */
export type ProposedAllocation = AllocationDraft;

/** Why a proposal relieves the invoices by more than the deposit: said explicitly, never a silent partial. */
export interface Shortfall {
  /** decimal string in the deposit's currency */
  amount: string;
  reason: 'fee' | 'discount' | 'deduction' | 'partial';
}

export interface Proposal {
  transaction_id: string;
  partner_id: string | null;
  remittance_id: string | null;
  score: number;
  reasons: MatchReason[];
  allocations: ProposedAllocation[];
  /** null or absent: the allocations' cash equals the deposit */
  shortfall?: Shortfall | null;
}

/** What matching decides for one deposit: a proposal, not a customer payment at all, or nothing (left for a person). */
export type MatchOutcome =
  | { outcome: 'proposed'; proposal: Proposal }
  | { outcome: 'not_a_payment'; transaction_id: string; reasons: MatchReason[] }
  | { outcome: 'unmatched'; transaction_id: string; reasons: MatchReason[] };

/** A bank transaction's matching state (bank_transactions.match_status). */
export type MatchStatus = 'unmatched' | 'proposed' | 'approved' | 'not_a_payment';
