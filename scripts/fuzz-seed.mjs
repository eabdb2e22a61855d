// Seeds a little data through the API (as a client would) so the fuzzer's valid requests meet real
// records: a business unit, customers and invoices pushed with the API key, a ledger account and an
// adjustment, exchange rates, a remittance and a JSON bank statement whose deposits become payments
// (one approved, so the middleware posting queue has an entry).
// Usage: node scripts/fuzz-seed.mjs <gateway-url> <user-token> <api-key>
const [base, token, apiKey] = process.argv.slice(2);
if (!base || !token || !apiKey) {
  process.stderr.write('usage: fuzz-seed.mjs <gateway-url> <user-token> <api-key>\n');
  process.exit(2);
}

async function call(method, path, body, credential = token) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const unit = await call('POST', '/v2/business-units', { name: 'Fuzz North', description: 'seeded by scripts/fuzz-seed.mjs' });
await call(
  'POST',
  '/v2/integrations/providers/middleware/customers',
  [
    { customer_code: 'C-100', name1: 'Acme Trading GmbH', smtp_addr: 'ap@acme.example', business_unit_id: unit.id },
    { customer_code: 'C-200', name1: 'Globex AG', city1: 'Berlin', country: 'DE' },
  ],
  apiKey,
);
const invoice = (n, customer, amount) => ({
  document_number: n,
  company_code: '1000',
  fiscal_year: '2026',
  customer_code: customer,
  currency: 'EUR',
  document_date: '2026-01-15',
  net_due_date: '2026-02-14',
  amount_in_document_currency: amount,
  status_open: true,
  debit_credit_indicator: 'S',
});
await call('POST', '/v2/integrations/providers/middleware/invoices', [invoice('INV-1001', 'C-100', 1190), invoice('INV-1002', 'C-200', 250.5), invoice('INV-1003', 'C-100', 99.99)], apiKey);
const account = await call('POST', '/v2/adjustments/ledger-accounts', { name: 'Bank fees', number: '6855', classification: 'expense' });
await call('POST', '/v2/adjustments', { name: 'Bank fee', description: 'Fees the bank deducted', ledger_account_id: account.id });
await call('PUT', '/v2/exchange-rates', [{ base_currency: 'USD', quote_currency: 'EUR', rate_date: '2026-01-31', rate: '0.92' }]);
await call('POST', '/v1/remittances', {
  payer_name: 'Acme Trading GmbH',
  currency: 'EUR',
  transaction_date: '2026-02-10',
  allocations: [{ invoice_number: 'INV-1001', amount_paid: 1190 }],
});
const statement = await call('POST', '/v2/bank-statements', {
  account: 'DE89370400440532013000',
  currency: 'EUR',
  statement_number: 'FUZZ-1',
  transactions: [
    { amount: '1190.00', booking_date: '2026-02-10', counterparty_name: 'Acme Trading GmbH', remittance_information: 'INV-1001', bank_reference: 'FZ-1' },
    { amount: '250.50', booking_date: '2026-02-11', counterparty_name: 'Globex AG', remittance_information: 'Invoice INV-1002', bank_reference: 'FZ-2' },
    { amount: '-12.00', booking_date: '2026-02-11', remittance_information: 'Account fee', bank_reference: 'FZ-3' },
  ],
});
// wait (briefly) for the statement's workflow to store the transactions and propose payments
for (let i = 0; i < 60; i++) {
  const s = await call('GET', `/v2/bank-statements/${statement.id}`);
  if (s.status !== 'uploaded' && s.status !== 'processing') break;
  await new Promise((r) => setTimeout(r, 500));
}
const payments = await call('GET', '/v2/payments');
// approve the allocated one: its posting to the middleware ERP queues it for GET …/middleware/payments
const allocated = payments.data.find((p) => p.allocations?.length);
if (allocated) await call('POST', `/v2/payments/${allocated.id}/approve`);
process.stdout.write(`seeded: business unit, 2 customers, 3 invoices, ledger account, adjustment, exchange rate, remittance, statement with ${payments.total_records} payment(s)\n`);
