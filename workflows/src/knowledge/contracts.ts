/**
 * Cross-service contract of the onboarding extraction (`extraction_type: onboarding`).
 *
 * The payment method, remittance and deduction habits of a customer live in cash-app's tables, which
 * the knowledge service does not read (no service reads another's schema). The playbook-extraction
 * workflow (knowledge task queue) therefore calls `customerPaymentHabits`, implemented by
 * services/cash-app on the cash-app task queue. The activity reads the aggregates page by page
 * (CUSTOMER_HABITS_PAGE_SIZE customers per query) and streams them as JSON Lines (one
 * CustomerCashHabits per line) into object storage under customerHabitsObjectKey(org, job): only a
 * small reference (CustomerHabitsObject) passes through Temporal, so the workflow history stays
 * bounded for any number of customers (the aggregates of ~8,000 customers exceeded Temporal's 2 MB
 * payload limit when they travelled in the extracting activity's input). The extracting activity
 * reads the object (bounded by its recorded size, checked against its sha256) and merges the figures
 * with the ledger's (days paid after due) into the pipeline's CustomerPaymentStats.
 *
 * Lifecycle of the object: the key is derived from organization + job id, so a retried activity
 * overwrites the same object (idempotent); the knowledge service deletes it when the job ends,
 * complete or failed (completeExtraction / failExtraction). Only customers with cash-app activity in
 * the window are written.
 */
import { TASK_QUEUES } from '../task-queues.js';

export const CUSTOMER_HABITS_TASK_QUEUE = TASK_QUEUES.cashApp;

/** Customers per query while customerPaymentHabits writes the object (a page is ~100 KB in memory). */
export const CUSTOMER_HABITS_PAGE_SIZE = 500;

/** Days of history the habits cover: [today − 365 days, today] (UTC dates). */
export const CUSTOMER_HABITS_WINDOW_DAYS = 365;

/** Object key of an onboarding job's cash-app habits (JSON Lines): one per job, so a retry writes the same object. */
export function customerHabitsObjectKey(organizationId: string, jobId: string): string {
  return `knowledge/${organizationId}/extractions/${jobId}/cash-habits.jsonl`;
}

export const CUSTOMER_HABITS_CONTENT_TYPE = 'application/x-ndjson';

export interface CustomerPaymentHabitsInput {
  organizationId: string;
  /** the extraction job: names the object (customerHabitsObjectKey) */
  jobId: string;
  /** last day of the window (YYYY-MM-DD); the workflow passes the job's start date so a retry or replay asks for the same window */
  windowEnd: string;
}

/** One customer's cash-app figures over the window (the pipeline's CustomerPaymentStats takes these fields as they are). */
export interface CustomerCashHabits {
  partner_id: string;
  /** first and last day (YYYY-MM-DD) on which a counted payment or remittance of the customer was dated */
  first_date: string;
  last_date: string;
  /** payments received from the customer within the window */
  payment_count: number;
  /** the most frequent payment method of those payments (the ledger's method value, e.g. 'ach', 'wire', 'check', 'card', 'sepa_credit_transfer'); null when none recorded */
  usual_payment_method: string | null;
  /** share (0..1) of the payments made with usual_payment_method; null when payment_count is 0 */
  usual_payment_method_share: number | null;
  /** remittance advices received from the customer within the window */
  remittance_count: number;
  /** share (0..1) of those remittances naming at least one invoice number (a parsed allocation with a document number); null when remittance_count is 0 */
  remittances_with_invoice_numbers_share: number | null;
  /** deductions (short payments recorded as deductions) the customer took within the window */
  deduction_count: number;
  /** their total, decimal string in `currency` (the organization's base currency; "0.00" when none) */
  deduction_total: string;
  /** ISO 4217 code of deduction_total */
  currency: string;
  /** most frequent deduction reasons (reason code or category as stored), most frequent first, at most 3 */
  top_deduction_reasons: { reason: string; count: number }[];
}

/** Reference to the JSON Lines object of one job's habits (a few hundred bytes, whatever the number of customers). */
export interface CustomerHabitsObject {
  window_start: string;
  window_end: string;
  objectKey: string;
  /** lines (customers) in the object */
  customers: number;
  /** bytes of the object and their sha256 (hex): the reader checks both */
  size: number;
  sha256: string;
}

/** Implemented by services/cash-app (activities/customer-habits.ts). */
export interface CustomerHabitsActivities {
  customerPaymentHabits(input: CustomerPaymentHabitsInput): Promise<CustomerHabitsObject>;
}
