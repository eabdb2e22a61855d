/**
 * Where the AR ledger and the organization records other services read live: table names and the
 * columns of a partner and a document as the ledger read module returns them. Integrations owns and
 * writes the ledger; admin owns organizations and business units; every read here is read-only.
 */

export const LEDGER_TABLES = {
  partners: 'integrations.partners',
  documents: 'integrations.documents',
  lineItems: 'integrations.line_items',
  masterBankAccounts: 'integrations.partner_master_bank_accounts',
} as const;

export const ORGANIZATIONS_TABLE = 'admin.organizations';

export interface LedgerPartner {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  origin: string;
  remote_id: string;
  account_number: string | null;
  name: string;
  legal_name: string | null;
  email: string | null;
  phone: string | null;
  currency: string | null;
  company_code: string | null;
  parent_id: string | null;
  assignee_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface LedgerDocument {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  kind: 'invoice' | 'credit_memo';
  partner_id: string | null;
  customer_code: string | null;
  company_code: string;
  fiscal_year: string;
  document_number: string;
  reference: string | null;
  currency: string;
  document_date: string | null;
  net_due_date: string | null;
  posting_date: string | null;
  clearing_date: string | null;
  amount_in_document_currency: string;
  amount_in_local_currency: string | null;
  amount_open: string;
  status_open: boolean;
  created_at: Date;
  modified_at: Date;
}

export const PARTNER_COLUMNS = [
  'id', 'organization_id', 'business_unit_id', 'origin', 'remote_id', 'account_number', 'name', 'legal_name', 'email', 'phone',
  'currency', 'company_code', 'parent_id', 'assignee_id', 'created_at', 'modified_at',
];
export const DOCUMENT_COLUMNS = [
  'id', 'organization_id', 'business_unit_id', 'kind', 'partner_id', 'customer_code', 'company_code', 'fiscal_year', 'document_number',
  'reference', 'currency', 'document_date', 'net_due_date', 'posting_date', 'clearing_date', 'amount_in_document_currency',
  'amount_in_local_currency', 'amount_open', 'status_open', 'created_at', 'modified_at',
];

// ---------------------------------------------------------------- business-unit scope

export const BUSINESS_UNITS_TABLE = 'admin.business_units';

/**
 * An open invoice's open amount in local currency, in cents (bigint), or NULL when not convertible:
 * the stored `open_lc_cents` when the document gives its own rate (integrations migration 008),
 * else `open_unconverted_amount` times the factor of its currency (`converted_cents`).
 * Bindings: the factors, then the currencies.
 */
export const OPEN_LC_CENTS_SQL = `coalesce(open_lc_cents,
  integrations.converted_cents(open_unconverted_amount, (?::numeric[])[array_position(?::text[], open_unconverted_currency::text)]))`;
