/**
 * Types and value lists shared by domain, store, adapters and views: connection health (spec 2.2
 * "Health"), sync-run statuses (spec 2.2 "Sync run") and the ledger rows written by pushes and pull
 * syncs, kept here so that no layer imports another for them.
 */
/**
 * Connection health (spec 2.2 "Health"). `status_code` values:
 *
 * | status_code             | healthy | authentication_required | when |
 * |-------------------------|---------|-------------------------|------|
 * | `healthy`               | true    | false | the provider answered an authenticated call (or, for the push-based middleware, nothing has to be called) |
 * | `authentication_required` | false | true  | no credentials yet, the provider refused them (401/403), or a token refresh was refused |
 * | `unreachable`           | false   | false | the provider's API could not be reached (DNS, connection refused, timeout) |
 * | `misconfigured`         | false   | false | required settings are missing, or no OAuth client is configured on this platform for the provider |
 * | `rate_limited`          | false   | false | the provider answered 429 |
 * | `provider_error`        | false   | false | the provider answered 5xx or an unexpected status |
 * | `unsupported_provider`  | false   | false | this platform has no adapter for the provider (its credentials may have been verified; nothing syncs) |
 */
export const HEALTH_STATUS_CODES = [
  'healthy',
  'authentication_required',
  'unreachable',
  'misconfigured',
  'rate_limited',
  'provider_error',
  'unsupported_provider',
] as const;
export type HealthStatusCode = (typeof HEALTH_STATUS_CODES)[number];

export interface Health {
  healthy: boolean;
  authentication_required: boolean;
  status_code: HealthStatusCode;
  message: string;
  suggested_resolution: string;
  timestamp: string;
}

/** A sync run's status (spec 2.2 "Sync run"). */
export const SYNC_RUN_STATUSES = ['scheduled', 'running', 'completed', 'failed', 'cancelled'] as const;
export type SyncRunStatus = (typeof SYNC_RUN_STATUSES)[number];

export interface PartnerUpsert {
  /** The partner's id in the source system; unique per (organization, origin). */
  remote_id: string;
  name: string;
  legal_name?: string | null;
  account_number?: string | null;
  email?: string | null;
  phone?: string | null;
  currency?: string | null;
  company_code?: string | null;
  search_term?: string | null;
  /** A business unit of the organization (the caller checks it); null/absent keeps the partner's current unit. */
  business_unit_id?: string | null;
  address?: Record<string, unknown>;
  attributes?: Record<string, unknown>;
  /** The customer master's bank accounts. Absent: the partner's stored ones are left as they are; an array (maybe empty) replaces them as a set. */
  bank_accounts?: MasterBankAccountUpsert[];
}

/** A bank account of the customer master: an IBAN (`bank_code` null) or a domestic account number with its bank code, normalized. */
export interface MasterBankAccountUpsert {
  /** IBAN upper case without spaces, or the account number (letters and digits, upper case) */
  account_identifier: string;
  bank_code: string | null;
}

/** An early-payment discount of an invoice's payment terms: paying by `due_date` (inclusive) may deduct `percent`. */
export interface DiscountTermUpsert {
  /** 'YYYY-MM-DD' */
  due_date: string;
  /** decimal string, 0 < percent < 100 */
  percent: string;
}

export interface LineItemUpsert {
  line_number: number;
  description?: string | null;
  /** Decimal strings. */
  quantity?: string | null;
  unit_amount?: string | null;
  total_amount?: string | null;
}

export interface DocumentUpsert {
  kind: 'invoice' | 'credit_memo';
  company_code: string;
  fiscal_year: string;
  document_number: string;
  remote_id?: string | null;
  /** The customer's remote id; links the document to the partner of the same origin with that remote_id. */
  customer_code?: string | null;
  /** An explicit partner; when absent the partner is looked up by customer_code (null if there is none yet). */
  partner_id?: string | null;
  /** Explicit business unit; when absent the partner's. */
  business_unit_id?: string | null;
  currency: string;
  document_type?: string | null;
  invoice_doc_type?: string | null;
  exchange_rate?: string | null;
  reference?: string | null;
  assignment?: string | null;
  text?: string | null;
  reason_code?: string | null;
  clearing_document_number?: string | null;
  /** 'YYYY-MM-DD'. */
  document_date?: string | null;
  net_due_date?: string | null;
  posting_date?: string | null;
  clearing_date?: string | null;
  /** Decimal strings. */
  amount_in_document_currency: string;
  amount_in_local_currency?: string | null;
  amount_open: string;
  status_open: boolean;
  /** Absent: the document's line items are left as they are. An array (maybe empty): they are replaced as a set. */
  line_items?: LineItemUpsert[];
  /** Early-payment discounts, earliest first; absent = none (a write states the document's whole terms, as it does every other field). */
  discount_terms?: DiscountTermUpsert[];
}
