/**
 * Remittance types shared by the domain rules and the store: the statuses and one line of an
 * advice as stored (exact decimal strings).
 */

/** Remittance statuses: `submitted` on creation; `applied` once a payment has used it (set by matching). */
export const REMITTANCE_STATUSES = ['submitted', 'applied'] as const;
export type RemittanceStatus = (typeof REMITTANCE_STATUSES)[number];

export interface RemittanceLine {
  invoice_number: string;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
}
