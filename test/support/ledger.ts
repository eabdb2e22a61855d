/**
 * Ledger fixtures for end-to-end tests: SAP-style invoice and customer records as the integration
 * middleware pushes them (spec 4.3 rules 16 and 17), sent through the gateway's push endpoints with
 * an organization API key, exactly as the middleware does.
 */
import type { HttpResult, TestStack } from './stack.js';

export interface InvoiceRecord {
  document_number: string;
  company_code: string;
  customer_code: string;
  currency: string;
  document_type: string;
  invoice_doc_type: string;
  fiscal_year: string;
  exchange_rate: string;
  reference: string;
  assignment: string;
  text: string;
  reason_code: string;
  clearing_document_number: string;
  document_date: string;
  net_due_date: string;
  posting_date: string;
  clearing_date: string | null;
  amount_in_document_currency: number;
  amount_in_local_currency: number;
  status_open: boolean;
  /** `S` (invoice) or `H` (credit memo); any other string exercises the validation. */
  debit_credit_indicator: string;
  line_items: { line_number: number; description: string; quantity: number; unit_amount: number; total_amount: number }[];
  [extra: string]: unknown;
}

export function invoiceRecord(overrides: Partial<InvoiceRecord> = {}): InvoiceRecord {
  const amount = overrides.amount_in_document_currency ?? 1190;
  return {
    document_number: '9000001',
    company_code: '1000',
    customer_code: 'C-100',
    currency: 'EUR',
    document_type: 'RV',
    invoice_doc_type: 'F2',
    fiscal_year: '2026',
    exchange_rate: '1.00000',
    reference: 'INV-9000001',
    assignment: '',
    text: 'Goods delivered',
    reason_code: '',
    clearing_document_number: '',
    document_date: '2026-09-01',
    net_due_date: '2026-10-01',
    posting_date: '2026-09-01',
    clearing_date: null,
    amount_in_document_currency: amount,
    amount_in_local_currency: amount,
    status_open: true,
    debit_credit_indicator: 'S',
    line_items: [{ line_number: 1, description: 'Widgets', quantity: 10, unit_amount: amount / 10, total_amount: amount }],
    ...overrides,
  };
}

export interface CustomerRecord {
  customer_code: string;
  name1: string;
  name2: string;
  name3: string;
  street: string;
  house_num1: string;
  house_num2: string;
  post_code1: string;
  city1: string;
  city2: string;
  region: string;
  country: string;
  accounting_clerk: string;
  accounting_clerk_name: string;
  smtp_addr: string;
  tel_number: string;
  telnr_long: string;
  tax_jurisdiction: string;
  payment_method: string;
  search_term: string;
  vendor_account_number: string;
  company_code: string;
  [extra: string]: unknown;
}

export function customerRecord(overrides: Partial<CustomerRecord> = {}): CustomerRecord {
  return {
    customer_code: 'C-100',
    name1: 'Acme Handels GmbH',
    name2: '',
    name3: '',
    street: 'Hauptstrasse',
    house_num1: '12',
    house_num2: '',
    post_code1: '10115',
    city1: 'Berlin',
    city2: '',
    region: 'BE',
    country: 'DE',
    accounting_clerk: '01',
    accounting_clerk_name: 'Ben Clerk',
    smtp_addr: 'ap@acme.example',
    tel_number: '+49 30 1234567',
    telnr_long: '+49301234567',
    tax_jurisdiction: '',
    payment_method: 'T',
    search_term: 'ACME',
    vendor_account_number: '',
    company_code: '1000',
    ...overrides,
  };
}

export interface PushResult {
  received_at: string;
  results: { remote_id: string | null; success: boolean; service_id: string | null; error_code: string | null; message: string | null }[];
}

export function pushInvoices(stack: TestStack, apiKey: string, records: unknown): Promise<HttpResult<PushResult>> {
  return stack.request<PushResult>('POST', '/v2/integrations/providers/middleware/invoices', { token: apiKey, body: records });
}

export function pushCustomers(stack: TestStack, apiKey: string, records: unknown): Promise<HttpResult<PushResult>> {
  return stack.request<PushResult>('POST', '/v2/integrations/providers/middleware/customers', { token: apiKey, body: records });
}
