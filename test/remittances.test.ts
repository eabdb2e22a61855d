import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
const ids: Record<string, string> = {};

/** A customer pushed like the integration middleware does; returns the partner id. */
async function partner(org: Org, code: string, name: string, email: string | null) {
  const res = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: name, smtp_addr: email ?? '' })]);
  expect(res.body.results[0].success).toBe(true);
  return res.body.results[0].service_id!;
}

/**
 * An invoice pushed like the middleware does (open for its whole amount, or closed). A partly paid
 * invoice (`open` below the amount) has its open balance set afterwards the way a ledger sync
 * reports a balance: push records carry no partial balance.
 */
async function invoice(org: Org, customerCode: string | null, number: string, amount: string, open: string, opts: { currency?: string; due?: string } = {}) {
  const closed = Number(open) === 0;
  const res = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({
      customer_code: customerCode ?? 'NO-SUCH-CUSTOMER',
      document_number: number,
      reference: `INV-${number}`,
      currency: opts.currency ?? 'EUR',
      net_due_date: opts.due ?? '2026-10-01',
      amount_in_document_currency: Number(amount),
      status_open: !closed,
      clearing_date: closed ? '2026-09-30' : null,
    }),
  ]);
  expect(res.body.results[0].success).toBe(true);
  const id = res.body.results[0].service_id!;
  if (!closed && open !== amount) await stack.sql('UPDATE integrations.documents SET amount_open = $2 WHERE id = $1', [id, open]);
  return id;
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  orgA = await stack.onboard('Remit A');
  orgB = await stack.onboard('Remit B');
  ids.acme = await partner(orgA, 'C-100', 'Acme Handels GmbH', 'ap@acme.example');
  ids.beta = await partner(orgA, 'C-200', 'Beta Retail AG', null);
  ids.inv1 = await invoice(orgA, 'C-100', '9000001', '1190.00', '1190.00', { due: '2026-10-01' });
  ids.inv2 = await invoice(orgA, 'C-100', '9000002', '595.00', '595.00', { due: '2026-10-15' });
  ids.inv3 = await invoice(orgA, 'C-100', '9000003', '1000.00', '400.00', { due: '2026-09-15' });
  ids.inv4 = await invoice(orgA, 'C-200', '9000004', '250.00', '250.00');
  ids.closed = await invoice(orgA, 'C-100', '9000005', '80.00', '0');
  // orgB has an invoice with the same number as one of orgA's: never linked across organizations.
  ids.otherOrgInvoice = await invoice(orgB, null, '9000001', '1190.00', '1190.00');
});
afterAll(async () => stack?.close());

const post = (org: Org, body: unknown) => stack.request('POST', '/v1/remittances', { token: org.token, body });
const postCsv = (org: Org, csv: string, query = '') =>
  stack.request('POST', `/v1/remittances/csv${query}`, { token: org.token, rawBody: csv, headers: { 'content-type': 'text/csv' } });

describe('remittances (v1)', () => {
  it('creates a fully matched remittance from JSON', async () => {
    const res = await post(orgA, {
      payer_name: 'ACME Handels GmbH',
      payer_email: 'ap@acme.example',
      transaction_amount: 1785,
      transaction_date: '2026-10-02',
      transaction_number: 'TRX-1',
      currency: 'EUR',
      payment_method: 'bank_transfer',
      payer_bank_details: { iban: 'DE89370400440532013000', bank_name: 'Commerzbank' },
      allocations: [
        { invoice_number: '9000001', amount_paid: 1190 },
        { invoice_number: '9000002', amount_paid: 595, amount_discount: 0, amount_withheld: 0 },
      ],
    });
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({
      object: 'remittance',
      status: 'submitted',
      agent_confidence_score: 1,
      agent_error_code: null,
      agent_uncertainties: [],
      currency: 'EUR',
      transaction_amount: 1785,
      transaction_date: '2026-10-02',
      transaction_number: 'TRX-1',
      payment_method: 'bank_transfer',
      payer_name: 'ACME Handels GmbH',
      payer_email: 'ap@acme.example',
      payer_bank_details: { iban: 'DE89370400440532013000', bank_name: 'Commerzbank', account_number: null, bank_number: null, branch_number: null, type: null },
      payee_bank_details: null,
      attachment: null,
      email: null,
      partner: { object: 'partner', id: ids.acme, name: 'Acme Handels GmbH', account_number: 'C-100', email: 'ap@acme.example' },
    });
    expect(r.agent_confidence_reason).toBe('2 of 2 allocations matched open invoices of Acme Handels GmbH exactly.');
    expect(r.allocations).toHaveLength(2);
    expect(r.allocations[0]).toMatchObject({
      object: 'remittance_allocation',
      remittance_id: r.id,
      invoice_number: '9000001',
      invoice_id: ids.inv1,
      amount_paid: 1190,
      amount_discount: 0,
      amount_withheld: 0,
      invoice: { id: ids.inv1, currency: 'EUR', amount_due: 1190, amount_paid: 0, due_date: '2026-10-01' },
    });
    expect(typeof r.allocations[0].amount_paid).toBe('number');
    expect(r.created_at).toMatch(/Z$/);
    const [row] = await stack.sql('SELECT transaction_amount::text AS amount, source FROM cash_app.remittances WHERE id = $1', [r.id]);
    expect(row).toEqual({ amount: '1785.0000', source: 'json' });

    const got = await stack.request('GET', `/v1/remittances/${r.id}`, { token: orgA.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r);
  });

  it('scores a partial match and lists what it is unsure about', async () => {
    const res = await post(orgA, {
      payer_name: 'Somebody Else',
      transaction_amount: 1700.5,
      currency: 'EUR',
      allocations: [
        { invoice_number: '9000003', amount_paid: 500 }, // open 400: exceeds
        { invoice_number: '7777777', amount_paid: 300.5 }, // unknown
        { invoice_number: '9000002', amount_paid: 595 }, // clean
      ],
    });
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r.agent_uncertainties).toEqual(['amount_exceeds_open: 9000003', 'invoice_not_found: 7777777', 'sum_mismatch']);
    // weights 500 / 300.5 / 595 → (250 + 0 + 595) / 1395.5, then ×0.8 for the sum (1395.5 ≠ 1700.5)
    expect(r.agent_confidence_score).toBe(Number(((845 / 1395.5) * 0.8).toFixed(4)));
    expect(r.agent_confidence_reason).toBe(
      '1 of 3 allocations matched open invoices of Acme Handels GmbH exactly, 1 matched with a problem, 1 did not match; ' +
        'the amounts paid add up to 1395.50, not the transaction amount 1700.50.',
    );
    expect(r.partner.id).toBe(ids.acme);
    expect(r.allocations.map((a: any) => [a.invoice_number, a.invoice_id, a.amount_paid])).toEqual([
      ['9000003', ids.inv3, 500],
      ['7777777', null, 300.5],
      ['9000002', ids.inv2, 595],
    ]);
    expect(r.allocations[0].invoice).toEqual({ id: ids.inv3, currency: 'EUR', amount_due: 1000, amount_paid: 600, due_date: '2026-09-15' });
    expect(r.allocations[1].invoice).toBeNull();
  });

  it('flags invoices of several customers, closed invoices, and nothing matched', async () => {
    const mixed = await post(orgA, {
      allocations: [
        { invoice_number: '9000001', amount_paid: 100 },
        { invoice_number: '9000004', amount_paid: 100 },
        { invoice_number: '9000005', amount_paid: 80 },
      ],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.agent_uncertainties).toEqual(['invoice_closed: 9000005', 'multiple_partners']);
    expect(mixed.body.partner).toBeNull();
    expect(mixed.body.transaction_amount).toBeNull();
    expect(mixed.body.currency).toBe('EUR');
    expect(mixed.body.agent_confidence_score).toBe(Number(((240 / 280) * 0.7).toFixed(4)));

    const none = await post(orgA, { payer_name: 'Beta Retail AG', currency: 'USD', allocations: [{ invoice_number: 'X-1', amount_paid: 10 }] });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ agent_confidence_score: 0, agent_error_code: 'no_invoice_matched', currency: 'USD', agent_uncertainties: ['invoice_not_found: X-1'] });
    // No invoice linked, but the payer name names exactly one customer.
    expect(none.body.partner.id).toBe(ids.beta);
    expect(none.body.agent_confidence_reason).toBe('None of the 1 invoice number matched a ledger invoice; the customer was identified by the payer name only.');
  });

  it('creates a remittance from a CSV advice', async () => {
    const csv = [
      'Invoice No.;Amount Paid;Discount;Withheld;Comment',
      '9000001;1166.20;23.80;;early payment',
      '"9000002";595.00;;0;',
      '9000004;240.00;0;10.00;wht',
      '',
    ].join('\r\n');
    const res = await postCsv(orgA, csv, '?payer_name=Acme%20Handels%20GmbH&transaction_amount=2001.20&transaction_date=2026-10-03&file_name=advice-0042.csv');
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r.allocations.map((a: any) => [a.invoice_number, a.amount_paid, a.amount_discount, a.amount_withheld, a.invoice_id])).toEqual([
      ['9000001', 1166.2, 23.8, 0, ids.inv1],
      ['9000002', 595, 0, 0, ids.inv2],
      ['9000004', 240, 0, 10, ids.inv4],
    ]);
    expect(r).toMatchObject({
      transaction_amount: 2001.2,
      transaction_date: '2026-10-03',
      currency: 'EUR',
      attachment: { object: 'attachment', file_name: 'advice-0042.csv', content_type: 'text/csv', size: Buffer.byteLength(csv) },
      agent_uncertainties: ['multiple_partners'],
      partner: null,
    });
    const [row] = await stack.sql('SELECT source, convert_from(attachment_content, $2) AS content FROM cash_app.remittances WHERE id = $1', [r.id, 'UTF8']);
    expect(row).toEqual({ source: 'csv', content: csv });
  });

  it('answers CSV and JSON validation errors in the v1 shape, storing nothing', async () => {
    const before = (await stack.sql('SELECT count(*)::int AS n FROM cash_app.remittances'))[0].n;
    const badLines = await postCsv(orgA, 'invoice_number,amount_paid,discount\n9000001,12.3.4,\n,5,abc\n');
    expect(badLines.status).toBe(422);
    expect(badLines.body).toEqual({
      detail: {
        body: {
          'line 2.amount_paid': [expect.stringContaining('"12.3.4"')],
          'line 3.invoice_number': ['The invoice number is empty.'],
          'line 3.amount_discount': [expect.stringContaining('"abc"')],
        },
      },
      message: 'The CSV remittance advice is not valid; see detail for each line.',
    });
    const noColumn = await postCsv(orgA, 'invoice,total\n9000001,5\n');
    expect(noColumn.status).toBe(422);
    expect(Object.keys(noColumn.body.detail.body)).toEqual(['line 1.amount_paid']);
    const badQuery = await postCsv(orgA, 'invoice,paid\n9000001,5\n', '?transaction_date=2026-13-01&currency=XXY');
    expect(badQuery.status).toBe(422);
    expect(Object.keys(badQuery.body.detail.query).sort()).toEqual(['currency', 'transaction_date']);
    const json = await stack.request('POST', '/v1/remittances/csv', { token: orgA.token, body: { invoice: 1 } });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ data: {}, error: 'unsupported-media-type' });

    const badJson = await post(orgA, { transaction_amount: -5, payer_email: 'nope', allocations: [{ invoice_number: '', amount_paid: 1.23456 }] });
    expect(badJson.status).toBe(422);
    expect(Object.keys(badJson.body).sort()).toEqual(['detail', 'message']);
    expect(Object.keys(badJson.body.detail.body).sort()).toEqual(['allocations.0.amount_paid', 'allocations.0.invoice_number', 'payer_email', 'transaction_amount']);
    const empty = await post(orgA, { allocations: [] });
    expect(empty.status).toBe(422);
    expect(Object.keys(empty.body.detail.body)).toEqual(['allocations']);
    expect((await stack.sql('SELECT count(*)::int AS n FROM cash_app.remittances'))[0].n).toBe(before);
  });

  it('lists with pagination and filters by status, partner and transaction date', async () => {
    const org = await stack.onboard('Remit lists');
    const p = await partner(org, 'L-1', 'Lister Ltd', null);
    await invoice(org, 'L-1', 'L-100', '100.00', '100.00');
    const make = (date: string, number: string) => post(org, { transaction_date: date, allocations: [{ invoice_number: number, amount_paid: 10 }] });
    const r1 = (await make('2026-10-01', 'L-100')).body;
    const r2 = (await make('2026-10-05', 'nope')).body;
    const r3 = (await make('2026-10-09', 'L-100')).body;
    await stack.sql(`UPDATE cash_app.remittances SET status = 'applied' WHERE id = $1`, [r3.id]);

    const all = await stack.request('GET', '/v1/remittances?page_size=2', { token: org.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ current_page: 0, total_records: 3, next_page: 1 });
    expect(all.body.data.map((r: any) => r.id)).toEqual([r3.id, r2.id]);
    expect(all.body.data[1].allocations).toHaveLength(1);
    const page1 = await stack.request('GET', '/v1/remittances?page=1&size=2', { token: org.token });
    expect(page1.body).toMatchObject({ current_page: 1, next_page: null });
    expect(page1.body.data.map((r: any) => r.id)).toEqual([r1.id]);

    const q = async (qs: string) => (await stack.request('GET', `/v1/remittances?${qs}`, { token: org.token })).body.data.map((r: any) => r.id);
    expect(await q('status=applied')).toEqual([r3.id]);
    expect(await q('status=submitted')).toEqual([r2.id, r1.id]);
    expect(await q(`partner_id=${p}`)).toEqual([r3.id, r1.id]);
    expect(await q('date_from=2026-10-05')).toEqual([r3.id, r2.id]);
    expect(await q('date_to=2026-10-05')).toEqual([r2.id, r1.id]);
    expect(await q('date_from=2026-10-02&date_to=2026-10-08')).toEqual([r2.id]);

    const bad = await stack.request('GET', '/v1/remittances?status=lost&date_from=yesterday&page_size=501', { token: org.token });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.detail.query).sort()).toEqual(['date_from', 'page_size', 'status']);
    expect(typeof bad.body.message).toBe('string');
  });

  it('is applied by matching when its deposit arrives: status applied, allocated as the remittance says', async () => {
    const org = await stack.onboard('Remit applied');
    await partner(org, 'M-1', 'Matched Mfg', null);
    const a = await invoice(org, 'M-1', 'M-501', '300.00', '300.00');
    const b = await invoice(org, 'M-1', 'M-502', '200.00', '200.00');
    const created = await post(org, {
      transaction_number: 'RA778899',
      transaction_amount: 490,
      currency: 'EUR',
      allocations: [
        { invoice_number: 'M-501', amount_paid: 290, amount_discount: 10 },
        { invoice_number: 'M-502', amount_paid: 200 },
      ],
    });
    expect(created.body).toMatchObject({ status: 'submitted', bank_transaction_id: null, agent_uncertainties: [] });
    const upload = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE44500105175407324931',
        currency: 'EUR',
        statement_number: 'S-RA',
        transactions: [{ amount: '490.00', booking_date: '2026-10-20', counterparty_name: 'Someone', remittance_information: 'Payment advice RA778899' }],
      },
    });
    expect(upload.status).toBe(200);
    const txId = (await waitForStatement(stack, org.token, upload.body.id)).transactions[0].id as string;
    const applied = await stack.request('GET', `/v1/remittances/${created.body.id}`, { token: org.token });
    expect(applied.body).toMatchObject({ status: 'applied', bank_transaction_id: txId });
    expect((await stack.request('GET', '/v1/remittances?status=applied', { token: org.token })).body.data.map((r: any) => r.id)).toEqual([created.body.id]);
    const payment = (await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token })).body.data[0];
    expect(
      payment.allocations.map((x: any) => [x.invoice_id, x.amount_paid, x.amount_discount]).sort(),
    ).toEqual([
      [a, '290.00', '10.00'],
      [b, '200.00', '0.00'],
    ].sort());
  });

  it('keeps organizations apart', async () => {
    const mine = (await post(orgA, { allocations: [{ invoice_number: '9000001', amount_paid: 1 }] })).body;
    const other = await stack.request('GET', `/v1/remittances/${mine.id}`, { token: orgB.token });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ data: {}, error: 'entity-not-found', message: `No remittance ${mine.id}.` });
    expect((await stack.request('GET', '/v1/remittances/not-a-uuid', { token: orgA.token })).status).toBe(422); // ids are validated as ids
    const listB = await stack.request('GET', '/v1/remittances', { token: orgB.token });
    expect(listB.body.data.map((r: any) => r.id)).not.toContain(mine.id);
    // orgB's 9000001 links to orgB's own invoice, never orgA's.
    const theirs = (await post(orgB, { allocations: [{ invoice_number: '9000001', amount_paid: 1 }] })).body;
    expect(theirs.allocations[0].invoice_id).toBe(ids.otherOrgInvoice);
    expect((await stack.request('GET', `/v1/remittances?partner_id=${ids.acme}`, { token: orgB.token })).body.total_records).toBe(0);
  });
});
