/**
 * Cross-service contract of the onboarding extraction (issue 15 part 2, `extraction_type: onboarding`).
 *
 * The payment method, remittance and deduction habits of a customer live in cash-app's tables, which
 * the knowledge service does not read (no service reads another's schema). The playbook-extraction
 * workflow (knowledge task queue) therefore calls `customerPaymentHabits`, implemented by
 * services/cash-app on the cash-app task queue, page by page, and hands the aggregates to the
 * extracting activity, which merges them with the ledger's figures (days paid after due) into the
 * pipeline's CustomerPaymentStats.
 *
 * Aggregates only (about 200 bytes per customer), at most CUSTOMER_HABITS_PAGE_SIZE customers per
 * call; only customers with cash-app activity in the window are returned.
 */
import { TASK_QUEUES } from '../task-queues.js';

export const CUSTOMER_HABITS_TASK_QUEUE = TASK_QUEUES.cashApp;

/** Customers per customerPaymentHabits call (a page is ~100 KB, far below Temporal's 2 MB payload limit). */
export const CUSTOMER_HABITS_PAGE_SIZE = 500;

/** Days of history the habits cover: [today − 365 days, today] (UTC dates). */
export const CUSTOMER_HABITS_WINDOW_DAYS = 365;

export interface CustomerPaymentHabitsInput {
  organizationId: string;
  /** last day of the window (YYYY-MM-DD); the workflow passes the job's start date so a retry or replay asks for the same window */
  windowEnd: string;
  /** page after this partner id (ascending order); null for the first page */
  afterPartnerId: string | null;
  /** customers per page (≤ CUSTOMER_HABITS_PAGE_SIZE) */
  limit: number;
}

/** One customer's cash-app figures (field meanings as in services/knowledge/src/extraction/types.ts CustomerPaymentStats). */
export interface CustomerCashHabits {
  partner_id: string;
  /** first and last day (YYYY-MM-DD) on which a counted payment or remittance of the customer was dated */
  first_date: string;
  last_date: string;
  payment_count: number;
  usual_payment_method: string | null;
  usual_payment_method_share: number | null;
  remittance_count: number;
  remittances_with_invoice_numbers_share: number | null;
  deduction_count: number;
  /** decimal string in `currency` (the organization's base currency) */
  deduction_total: string;
  currency: string;
  top_deduction_reasons: { reason: string; count: number }[];
}

export interface CustomerPaymentHabitsPage {
  window_start: string;
  window_end: string;
  customers: CustomerCashHabits[];
  /** pass as afterPartnerId for the next page; null when this was the last */
  next_after: string | null;
}

/** Implemented by services/cash-app (activities/customer-habits.ts). */
export interface CustomerHabitsActivities {
  customerPaymentHabits(input: CustomerPaymentHabitsInput): Promise<CustomerPaymentHabitsPage>;
}
