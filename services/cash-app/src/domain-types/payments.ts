/** Payment types shared by the domain rules and the store. */

/** One allocation of a payment as a user (or matching) gives it: exact decimal strings. */
export interface AllocationDraft {
  invoice_id: string;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
  adjustment_id: string | null;
  adjustment_amount: string;
}

/** What a group of allocations relieves an invoice of (open-amount rule, domain/open-amounts.ts). */
export interface ReliefRow {
  invoice_id: string;
  /** the payments' posted_at (rows are grouped by invoice and posted_at) */
  posted_at: Date | null;
  /** decimal string */
  relieved: string;
}
