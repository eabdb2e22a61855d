/**
 * Bank-transaction metrics (spec 2.14, row 16) and exchange rates, through the gateway, against
 * hand-computed values. Transactions and unapproved payments are written straight into the
 * cash-app tables so each category of 2.14 gets exactly the rows it needs; the approved payments
 * with posting errors are made through the API as a client would: invoices pushed by the
 * middleware, the payment created and approved (which queues it for the ERP), and the middleware's
 * `failed` answer (then, for one, a retry that the middleware reports `posted`). The business-unit
 * case is set up through the API only (SQL reads the pushed invoices' ids).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
const accounts = { eur: randomUUID(), usd: randomUUID(), gbp: randomUUID(), chf: randomUUID() };

async function bankAccount(org: Org, id: string, currency: string) {
  await stack.sql(`INSERT INTO cash_app.bank_accounts (id, organization_id, account_identifier, currency) VALUES ($1, $2, $3, $4)`, [id, org.organizationId, `ACC-${id}`, currency]);
  const statement = randomUUID();
  await stack.sql(`INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, currency) VALUES ($1, $2, $3, 'json', 'ready', $4)`, [
    statement,
    org.organizationId,
    id,
    currency,
  ]);
  return statement;
}

let seq = 0;
async function transaction(org: Org, statement: string, account: string, amount: string, currency: string, date: string, opts: { isPayment?: boolean; valueDateOnly?: boolean } = {}) {
  const id = randomUUID();
  seq++;
  await stack.sql(
    `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, bank_account_id, unique_import_id, sequence, amount, currency, is_payment, booking_date, value_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [id, org.organizationId, statement, account, `imp-${id}`, seq, amount, currency, opts.isPayment ?? null, opts.valueDateOnly ? null : date, date],
  );
  return id;
}

async function payment(org: Org, txId: string, amount: string, currency: string, status: 'unapproved' | 'approved', allocated: string[]) {
  const id = randomUUID();
  await stack.sql(`INSERT INTO cash_app.payments (id, organization_id, bank_transaction_id, status, amount, currency) VALUES ($1, $2, $3, $4, $5, $6)`, [
    id,
    org.organizationId,
    txId,
    status,
    amount,
    currency,
  ]);
  for (const paid of allocated) {
    await stack.sql(`INSERT INTO cash_app.payment_allocations (id, organization_id, payment_id, invoice_id, amount_paid) VALUES ($1, $2, $3, $4, $5)`, [
      randomUUID(),
      org.organizationId,
      id,
      randomUUID(),
      paid,
    ]);
  }
  return id;
}

async function waitForPayment(org: Org, id: string, postingStatus: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await stack.request('GET', `/v2/payments/${id}`, { token: org.token });
    if (res.body.posting_status === postingStatus) return res.body;
    if (Date.now() > deadline) throw new Error(`payment ${id} did not become ${postingStatus}: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The middleware's answer to the payment's queued posting (waits until it is queued). */
async function middlewareAnswers(org: Org, paymentId: string, answer: { error: string } | { erp_document_number: string }) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const queue = await stack.request('GET', '/v2/integrations/providers/middleware/payments?status=ready_to_post', { token: org.apiKey });
    if (queue.body.data.some((e: { id: string }) => e.id === paymentId)) break;
    if (Date.now() > deadline) throw new Error(`payment ${paymentId} was not queued for the middleware`);
    await new Promise((r) => setTimeout(r, 150));
  }
  const verb = 'error' in answer ? 'failed' : 'posted';
  const res = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${paymentId}/${verb}`, { token: org.apiKey, body: answer });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return waitForPayment(org, paymentId, verb);
}

/** An approved payment of the deposit whose ERP posting was refused (the middleware reported `failed`). */
async function approvedWithPostingError(org: Org, txId: string, invoiceNumber: string, amount: string, error: string) {
  const invoiceId = (await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, invoiceNumber]))[0].id;
  const created = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoiceId, amount_paid: amount }] } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  expect((await stack.request('POST', `/v2/payments/${created.body.id}/approve`, { token: org.token })).status).toBe(200);
  const failed = await middlewareAnswers(org, created.body.id, { error });
  expect(failed).toMatchObject({ status: 'approved', posting_error: error, posted_at: null });
  return created.body.id as string;
}

function metrics(org: Org, query = '') {
  return stack.request('GET', `/v2/analytics/bank-transactions${query}`, { token: org.token });
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app', 'integrations'] });
  orgA = await stack.onboard('Metrics A');
  orgB = await stack.onboard('Metrics B');
  const eur = await bankAccount(orgA, accounts.eur, 'EUR');
  const t1 = await transaction(orgA, eur, accounts.eur, '100.00', 'EUR', '2026-10-01'); // potential
  await transaction(orgA, eur, accounts.eur, '200.00', 'EUR', '2026-10-02', { isPayment: false }); // not a payment
  const t3 = await transaction(orgA, eur, accounts.eur, '300.00', 'EUR', '2026-10-03'); // ready to post
  const t4 = await transaction(orgA, eur, accounts.eur, '400.50', 'EUR', '2026-10-04'); // needs allocation
  const t5 = await transaction(orgA, eur, accounts.eur, '500.00', 'EUR', '2026-10-05'); // approved, posting error
  await transaction(orgA, eur, accounts.eur, '-50.00', 'EUR', '2026-10-03'); // withdrawal: not a deposit
  await transaction(orgA, eur, accounts.eur, '600.00', 'EUR', '2026-11-01', { valueDateOnly: true }); // potential, dated by value date
  const t8 = await transaction(orgA, eur, accounts.eur, '75.00', 'EUR', '2026-10-06'); // approved and posted despite an old error
  expect(t1).toBeTruthy();
  await payment(orgA, t3, '300.00', 'EUR', 'unapproved', ['100.00', '200.00']);
  await payment(orgA, t4, '400.50', 'EUR', 'unapproved', ['100.00']);
  // approved, posting refused by the ERP (through the payments API and the middleware posting queue)
  await pushCustomers(stack, orgA.apiKey, [customerRecord({ customer_code: 'C-M' })]);
  const pushed = await pushInvoices(stack, orgA.apiKey, [
    invoiceRecord({ document_number: 'M-500', customer_code: 'C-M', amount_in_document_currency: 500 }),
    invoiceRecord({ document_number: 'M-75', customer_code: 'C-M', amount_in_document_currency: 75 }),
  ]);
  expect(pushed.body.results.every((r) => r.success)).toBe(true);
  await approvedWithPostingError(orgA, t5, 'M-500', '500.00', 'ERP rejected the posting: period closed');
  // approved and posted despite an earlier error: refused once, retried (POST …/post) and posted
  const p8 = await approvedWithPostingError(orgA, t8, 'M-75', '75.00', 'timeout');
  expect((await stack.request('POST', `/v2/payments/${p8}/post`, { token: orgA.token })).status).toBe(200);
  const posted = await middlewareAnswers(orgA, p8, { erp_document_number: '1400000075' });
  expect(posted).toMatchObject({ posting_error: null, erp_document_number: '1400000075' });
});

afterAll(async () => {
  await stack?.close();
});

describe('single currency', () => {
  it('computes every 2.14 definition over all transactions', async () => {
    const res = await metrics(orgA);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_count: 7,
      potential_payments: { count: 2, total_amount: '700.00' },
      needs_allocation: { count: 1, total_amount: '400.50' },
      ready_to_post: { count: 1, total_amount: '300.00' },
      posting_errors_count: 1,
      is_multi_currency: false,
      currency: 'EUR',
    });
  });

  it('filters by an inclusive date range', async () => {
    const res = await metrics(orgA, '?start_date=2026-10-02&end_date=2026-10-04');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      total_count: 3,
      potential_payments: { count: 0, total_amount: '0.00' },
      needs_allocation: { count: 1, total_amount: '400.50' },
      ready_to_post: { count: 1, total_amount: '300.00' },
      posting_errors_count: 0,
    });
    const late = await metrics(orgA, '?start_date=2026-10-05');
    expect(late.body).toMatchObject({ total_count: 3, potential_payments: { count: 1, total_amount: '600.00' }, posting_errors_count: 1 });
  });

  it('filters by bank account', async () => {
    const other = await metrics(orgA, `?bank_account_id=${randomUUID()}`);
    expect(other.body).toMatchObject({ total_count: 0, potential_payments: { count: 0, total_amount: '0.00' }, currency: 'EUR', is_multi_currency: false });
    const eur = await metrics(orgA, `?bank_account_id=${accounts.eur}`);
    expect(eur.body.total_count).toBe(7);
  });

  it('validates the query', async () => {
    const bad = await metrics(orgA, '?start_date=2026-13-01&bank_account_id=nope');
    expect(bad.status).toBe(422);
    expect(bad.body.type).toBe('request-validation');
    expect(bad.body.errors.map((e: { loc: unknown[] }) => e.loc)).toEqual(expect.arrayContaining([['query', 'start_date'], ['query', 'bank_account_id']]));
    const reversed = await metrics(orgA, '?start_date=2026-10-05&end_date=2026-10-01');
    expect(reversed.status).toBe(422);
    expect(reversed.body.errors[0].loc).toEqual(['query', 'end_date']);
  });

  it('is isolated per organization', async () => {
    const res = await metrics(orgB);
    expect(res.body).toEqual({
      total_count: 0,
      potential_payments: { count: 0, total_amount: '0.00' },
      needs_allocation: { count: 0, total_amount: '0.00' },
      ready_to_post: { count: 0, total_amount: '0.00' },
      posting_errors_count: 0,
      is_multi_currency: false,
      currency: 'EUR',
    });
    expect((await metrics(orgB, `?bank_account_id=${accounts.eur}`)).body.total_count).toBe(0);
  });
});

describe('exchange rates', () => {
  it('loads a batch idempotently and lists it with filters', async () => {
    const batch = [
      { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-01', rate: '1.10' },
      { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-20', rate: 1.25 },
      { base_currency: 'EUR', quote_currency: 'GBP', rate_date: '2026-09-28', rate: '0.85' },
      { base_currency: 'EUR', quote_currency: 'GBP', rate_date: '2026-10-10', rate: '0.80' },
    ];
    const put = await stack.request('PUT', '/v2/exchange-rates', { token: orgA.token, body: batch });
    expect(put.status).toBe(200);
    expect(put.body.data.map((r: { rate: string }) => r.rate)).toEqual(['1.1', '1.25', '0.85', '0.8']);
    expect(put.body.data[0]).toMatchObject({ object: 'exchange_rate', base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-01' });
    const again = await stack.request('PUT', '/v2/exchange-rates', { token: orgA.token, body: batch });
    expect(again.body.data.map((r: { id: string }) => r.id)).toEqual(put.body.data.map((r: { id: string }) => r.id));

    const all = await stack.request('GET', '/v2/exchange-rates', { token: orgA.token });
    expect(all.body.total_records).toBe(4);
    expect(all.body.data.map((r: { rate_date: string }) => r.rate_date)).toEqual(['2026-10-20', '2026-10-10', '2026-10-01', '2026-09-28']);
    const gbp = await stack.request('GET', '/v2/exchange-rates?quote_currency=GBP&end_date=2026-10-01&page_size=1', { token: orgA.token });
    expect(gbp.body).toMatchObject({ total_records: 1, next_page: null, data: [{ rate: '0.85', rate_date: '2026-09-28' }] });
    expect((await stack.request('GET', '/v2/exchange-rates', { token: orgB.token })).body.total_records).toBe(0);
  });

  it('rejects invalid rates with the index in loc', async () => {
    const res = await stack.request('PUT', '/v2/exchange-rates', {
      token: orgA.token,
      body: [
        { base_currency: 'EUR', quote_currency: 'XYZ', rate_date: '2026-10-01', rate: '1' },
        { base_currency: 'EUR', quote_currency: 'EUR', rate_date: '2026-10-01', rate: '1' },
        { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-01', rate: '0' },
      ],
    });
    expect(res.status).toBe(422);
    const locs = res.body.errors.map((e: { loc: unknown[] }) => e.loc);
    expect(locs).toEqual(expect.arrayContaining([['body', 0, 'quote_currency'], ['body', 1, 'quote_currency'], ['body', 2, 'rate']]));
    const dup = await stack.request('PUT', '/v2/exchange-rates', {
      token: orgA.token,
      body: [
        { base_currency: 'EUR', quote_currency: 'CHF', rate_date: '2026-10-01', rate: '0.95' },
        { base_currency: 'EUR', quote_currency: 'CHF', rate_date: '2026-10-01', rate: '0.96' },
      ],
    });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0].loc).toEqual(['body', 1, 'rate_date']);
    expect((await stack.request('GET', '/v2/exchange-rates?quote_currency=CHF', { token: orgA.token })).body.total_records).toBe(0);
  });
});

describe('multi-currency', () => {
  it('converts to the base currency with the latest rate on or before each transaction date', async () => {
    const usd = await bankAccount(orgA, accounts.usd, 'USD');
    const gbp = await bankAccount(orgA, accounts.gbp, 'GBP');
    // 110 USD on 2026-10-03: EUR/USD 1.10 of 2026-10-01 (not the later 1.25) → 100.00 EUR
    await transaction(orgA, usd, accounts.usd, '110.00', 'USD', '2026-10-03');
    // 85 GBP on 2026-10-04: EUR/GBP 0.85 of 2026-09-28 (not 0.80 of 2026-10-10) → 100.00 EUR
    const tGbp = await transaction(orgA, gbp, accounts.gbp, '85.00', 'GBP', '2026-10-04');
    // ready to post: 42.50 GBP → 50.00 EUR
    const tGbp2 = await transaction(orgA, gbp, accounts.gbp, '42.50', 'GBP', '2026-10-04');
    await payment(orgA, tGbp2, '42.50', 'GBP', 'unapproved', ['42.50']);
    expect(tGbp).toBeTruthy();

    const res = await metrics(orgA);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_count: 10,
      potential_payments: { count: 4, total_amount: '900.00' }, // 100 + 600 EUR + 100 (USD) + 100 (GBP)
      needs_allocation: { count: 1, total_amount: '400.50' },
      ready_to_post: { count: 2, total_amount: '350.00' }, // 300 EUR + 50 (GBP)
      posting_errors_count: 1,
      is_multi_currency: true,
      currency: 'EUR',
    });

    // one currency again when filtered to the GBP account: original currency, no conversion
    const onlyGbp = await metrics(orgA, `?bank_account_id=${accounts.gbp}`);
    expect(onlyGbp.body).toMatchObject({ total_count: 2, potential_payments: { count: 1, total_amount: '85.00' }, ready_to_post: { count: 1, total_amount: '42.50' }, is_multi_currency: false, currency: 'GBP' });
  });

  it('uses the inverse pair when only base→quote or quote→base is stored', async () => {
    // a CHF deposit with only a CHF/EUR rate (1 CHF = 1.05 EUR): 20 CHF → 21.00 EUR
    const chf = await bankAccount(orgA, accounts.chf, 'CHF');
    await transaction(orgA, chf, accounts.chf, '20.00', 'CHF', '2026-10-07');
    const put = await stack.request('PUT', '/v2/exchange-rates', { token: orgA.token, body: [{ base_currency: 'CHF', quote_currency: 'EUR', rate_date: '2026-10-07', rate: '1.05' }] });
    expect(put.status).toBe(200);
    const res = await metrics(orgA);
    expect(res.body.potential_payments).toEqual({ count: 5, total_amount: '921.00' });
  });

  it('refuses with a clear error when a rate is missing', async () => {
    // a CHF deposit before the only CHF rate
    const statement = (await stack.sql(`SELECT id FROM cash_app.bank_statements WHERE bank_account_id = $1`, [accounts.chf]))[0].id;
    await transaction(orgA, statement, accounts.chf, '10.00', 'CHF', '2026-10-06');
    const res = await metrics(orgA);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'missing-exchange-rate', status: 422, title: 'Exchange rate missing' });
    expect(res.body.detail).toContain('CHF/EUR');
    expect(res.body.detail).toContain('2026-10-06');
    // the range that avoids it works
    const ok = await metrics(orgA, '?start_date=2026-10-07');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ total_count: 2, potential_payments: { count: 2, total_amount: '621.00' }, is_multi_currency: true });
  });
});

describe('business units', () => {
  // Everything through the API: units, a member of one unit, customers of each unit and their invoices,
  // a statement of deposits from unknown payers, and payments allocated to one unit's invoice each.
  it('a member\'s metrics leave out transactions whose payments belong to customers of other units', async () => {
    const org = await stack.onboard('Metrics units');
    const unit = async (name: string) => (await stack.request('POST', '/v2/business-units', { token: org.token, body: { name } })).body.id as string;
    const [north, south] = [await unit('North'), await unit('South')];
    const user = await stack.request('POST', '/v2/users', { token: org.token, body: { email: 'south@metrics.example', name: 'South', role: 'member', business_unit_ids: [south], permissions: [] } });
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const member = { ...org, token: ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', user.body.id], stack.env)) as { token: string }).token };

    const customers = await pushCustomers(stack, org.apiKey, [
      { ...customerRecord({ customer_code: 'C-N', name1: 'Nord GmbH', smtp_addr: 'ap@nord.example' }), business_unit_id: north },
      { ...customerRecord({ customer_code: 'C-S', name1: 'Sued GmbH', smtp_addr: 'ap@sued.example' }), business_unit_id: south },
    ]);
    expect(customers.body.results.every((r) => r.success), JSON.stringify(customers.body)).toBe(true);
    const pushed = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: 'N-1', customer_code: 'C-N', amount_in_document_currency: 5000 }),
      invoiceRecord({ document_number: 'S-1', customer_code: 'C-S', amount_in_document_currency: 5000 }),
    ]);
    expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
    const inv = Object.fromEntries((await stack.sql('SELECT id, document_number FROM integrations.documents WHERE organization_id = $1', [org.organizationId])).map((r) => [r.document_number, r.id]));

    const upload = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE02120300000000202051',
        currency: 'EUR',
        transactions: ['1111.13', '222.17', '33.19'].map((amount, i) => ({ amount, booking_date: '2026-10-15', counterparty_name: `Unbekannt ${i}`, bank_reference: `BU-${i}` })),
      },
    });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    const { waitForStatement } = await import('./support/cash.js');
    const txs = (await waitForStatement(stack, org.token, upload.body.id, { timeoutMs: 60_000 })).transactions as { id: string; amount: string; payments: unknown[] }[];
    expect(txs.every((t) => t.payments.length === 0)).toBe(true);
    const tx = (amount: string) => txs.find((t) => t.amount === amount)!.id;
    const pay = async (txId: string, invoice: string, paid: string) => {
      const res = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoice, amount_paid: paid }] } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await pay(tx('1111.13'), inv['N-1'], '1111.13'); // North: ready to post
    await pay(tx('222.17'), inv['S-1'], '200.00'); // South: needs allocation

    const admin = await metrics(org);
    expect(admin.body).toMatchObject({
      total_count: 3,
      potential_payments: { count: 1, total_amount: '33.19' },
      needs_allocation: { count: 1, total_amount: '222.17' },
      ready_to_post: { count: 1, total_amount: '1111.13' },
    });
    const seen = await metrics(member);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({
      total_count: 2,
      potential_payments: { count: 1, total_amount: '33.19' },
      needs_allocation: { count: 1, total_amount: '222.17' },
      ready_to_post: { count: 0, total_amount: '0.00' },
      currency: 'EUR',
    });
  });
});
