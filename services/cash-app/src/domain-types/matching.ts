/** What automatic matching reads and proposes, shared by the matching rules (domain/matching.ts) and the store. */
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
}

export interface MatchPartner {
  id: string;
  name: string;
  legal_name: string | null;
}

export interface KnownAccount {
  account_identifier: string;
  partner_id: string;
}

export interface MatchRemittance {
  id: string;
  partner_id: string | null;
  transaction_amount: string | null;
  transaction_number: string | null;
  currency: string | null;
  payer_iban: string | null;
  payer_account: string | null;
  allocations: { invoice_id: string | null; amount_paid: string; amount_discount: string; amount_withheld: string }[];
}

export type MatchReason = Record<string, string | number | boolean | null> & { rule: string };

/** An allocation as matching proposes it: the same shape a user edits (domain/payments.ts). */
export type ProposedAllocation = AllocationDraft;

export interface Proposal {
  transaction_id: string;
  partner_id: string | null;
  remittance_id: string | null;
  score: number;
  reasons: MatchReason[];
  allocations: ProposedAllocation[];
}
