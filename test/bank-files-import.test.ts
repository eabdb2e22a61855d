/**
 * Bank files as banks really send them, end to end through the gateway: camt.053 entries that are not
 * booked are left out and counted, a previous closing balance (PRCD) opens a German statement, a
 * camt.053 inside a SWIFT MX envelope is read; MT940 with a blank before the transaction type and
 * ING's envelope on separate lines; a statement whose balances do not reconcile is imported with its
 * difference and approved only when that is acknowledged; amounts with more decimals than their
 * currency are refused; a file of several statements is parsed once, at the upload. Sample files are
 * under test/fixtures/bank-statements/, written from the published layouts.
 *
 * SQL set-up, for states no endpoint can produce: the stored file of an upload is replaced by bytes
 * that do not parse (to show that processing does not read the file again), and an approval without acknowledgement is
 * written directly (to show the database refuses it too). Other SQL only counts rows.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/bank-statements/${name}`, import.meta.url));

async function upload(content: Buffer | string, opts: { name?: string; format?: string; mapping?: unknown; token?: string } = {}) {
  const form = new FormData();
  if (opts.format) form.set('format', opts.format);
  if (opts.mapping) form.set('mapping', JSON.stringify(opts.mapping));
  form.set('file', new Blob([content]), opts.name ?? 'statement.sta');
  const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${opts.token ?? org.token}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function counts(organizationId = org.organizationId) {
  const [s] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [organizationId]);
  const [t] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE organization_id = $1`, [organizationId]);
  return { statements: s.n as number, transactions: t.n as number };
}

const brief = (t: any) => ({ amount: t.amount, booking_date: t.booking_date, name: t.counterparty_name, text: t.remittance_information });

beforeAll(async () => {
  // no worker yet: the first test changes a stored file before processing starts
  stack = await startStack({ workers: [] });
  org = await stack.onboard('Bank files import');
});
afterAll(async () => stack?.close());

describe('a file of several statements', () => {
  it('is parsed once, at the upload: processing stores each statement\'s lines without reading the file again', async () => {
    const res = await upload(fixture('mt940-ing-month.sta'));
    expect(res.status).toBe(200);
    expect(res.body.statements).toHaveLength(3);
    // The stored bytes no longer parse: processing that re-read the file would fail every statement.
    const ids = res.body.statements.map((s: any) => s.id);
    await stack.sql(`UPDATE cash_app.bank_statement_files SET content = $2, object_key = NULL WHERE organization_id = $1`, [org.organizationId, Buffer.from('not a statement')]);
    await stack.startWorker('cash-app');
    const done = await Promise.all(ids.map((id: string) => waitForStatement(stack, org.token, id, { timeoutMs: 60_000 })));
    expect(done.map((s) => [s.status, s.transaction_count])).toEqual([['ready', 2], ['ready', 1], ['ready', 0]]);
    expect(done[0].transactions.map(brief)).toEqual([
      { amount: '250.00', booking_date: '2026-11-02', name: 'Alpha BV', text: 'INV-1001 november' },
      { amount: '-12.50', booking_date: '2026-11-02', name: null, text: 'Kosten betalingsverkeer oktober' },
    ]);
  });
});

describe('camt.053 as banks send it', () => {
  it('imports only booked entries and counts the others; PRCD opens a statement without OPBD', async () => {
    const res = await upload(fixture('camt053-de-prcd-pending.xml'), { name: 'camt053.xml' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: 'camt053', opening_balance: '8000.00', closing_balance: '8725.40', skipped_entries: { not_booked: 2 }, balance_mismatch: null, warnings: [] });
    const s = await waitForStatement(stack, org.token, res.body.id, { timeoutMs: 60_000 });
    expect(s.skipped_entries).toEqual({ not_booked: 2 });
    expect(s.transactions.map(brief)).toEqual([
      { amount: '750.00', booking_date: '2026-11-10', name: 'Kilo Maschinenbau GmbH', text: 'Rechnung INV-7001' },
      { amount: '-24.60', booking_date: '2026-11-10', name: null, text: 'Kontofuehrungsentgelt Oktober' },
    ]);
    // the pending credit of 4100.00 is no payment to apply
    const payments = await stack.request('GET', '/v2/payments?page_size=200', { token: org.token });
    expect(payments.status).toBe(200);
    expect(payments.body.data.map((p: any) => p.amount)).not.toContain('4100.00');
  });

  it('reads a camt.053 inside a SWIFT MX envelope (detected without `format`)', async () => {
    const res = await upload(fixture('camt053-mx-envelope.xml'), { name: 'mx.xml' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: 'camt053', account_identifier: 'FR7630006000011234567890189', opening_balance: '2500.00', closing_balance: '3820.00', skipped_entries: { not_booked: 0 } });
    const s = await waitForStatement(stack, org.token, res.body.id, { timeoutMs: 60_000 });
    expect(s.transactions.map(brief)).toEqual([{ amount: '1320.00', booking_date: '2026-11-12', name: 'November Distribution SARL', text: 'Facture INV-8001' }]);
  });
});

describe('MT940 as banks export it', () => {
  it('reads a blank before the transaction type (German banks) and ING\'s envelope on separate lines', async () => {
    const de = await upload(fixture('mt940-de-blank-type.sta'));
    expect(de.status).toBe(200);
    const deLines = (await waitForStatement(stack, org.token, de.body.id, { timeoutMs: 60_000 })).transactions;
    expect(deLines.map((t: any) => [t.amount, t.transaction_code, t.counterparty_name])).toEqual([
      ['-12.35', 'NRTI', 'India Handel GmbH'],
      ['1500.00', 'NTRF', 'Juliett AG'],
    ]);
    const ing = await upload(fixture('mt940-ing-envelope.sta'));
    expect(ing.status).toBe(200);
    expect(ing.body).toMatchObject({ format: 'mt940', statement_number: '00106', closing_balance: '1730.00' });
    const ingLines = (await waitForStatement(stack, org.token, ing.body.id, { timeoutMs: 60_000 })).transactions;
    expect(ingLines.map((t: any) => [t.amount, t.end_to_end_id, t.counterparty_name])).toEqual([
      ['250.00', 'E2E-INV-5001', 'Hotel Kilo BV'],
      ['-20.00', null, null],
    ]);
  });
});

describe('balances that do not reconcile', () => {
  it('imports the statement with the difference in its currency; approval needs the mismatch acknowledged', async () => {
    const res = await upload(fixture('camt053-next-day-entry.xml'), { name: 'camt053-next-day.xml' });
    expect(res.status).toBe(200);
    expect(res.body.balance_mismatch).toEqual({ difference: '-27.00', currency: 'EUR', acknowledged_by: null, acknowledged_at: null });
    expect(res.body.warnings).toEqual([
      'the balances do not reconcile: opening balance 5000.00 EUR + 2 entries (1227.00 EUR) = 6227.00 EUR, but the closing balance is 6200.00 EUR: a difference of -27.00 EUR',
    ]);
    const id = res.body.id;
    const ready = await waitForStatement(stack, org.token, id, { timeoutMs: 60_000 });
    expect(ready.transaction_count).toBe(2);

    const bare = await stack.request('POST', `/v2/bank-statements/${id}/approve`, { token: org.token });
    expect(bare.status).toBe(409);
    expect(bare.body).toMatchObject({ type: expect.stringContaining('conflict'), status: 409 });
    expect(bare.body.detail).toContain('-27.00 EUR');
    expect(bare.body.detail).toContain('acknowledge_balance_mismatch');
    const no = await stack.request('POST', `/v2/bank-statements/${id}/approve`, { token: org.token, body: { acknowledge_balance_mismatch: false } });
    expect(no.status).toBe(409);
    const bad = await stack.request('POST', `/v2/bank-statements/${id}/approve`, { token: org.token, body: { acknowledge_balance_mismatch: 'yes' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'acknowledge_balance_mismatch']);
    expect((await stack.request('GET', `/v2/bank-statements/${id}?transactions=omit`, { token: org.token })).body.status).toBe('ready');

    // the database holds the same rule
    await expect(stack.sql(`UPDATE cash_app.bank_statements SET status = 'approved' WHERE id = $1`, [id])).rejects.toThrow(/bank_statements_mismatch_acknowledged_check/);

    const ok = await stack.request('POST', `/v2/bank-statements/${id}/approve`, { token: org.token, body: { acknowledge_balance_mismatch: true } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', approved_by: org.userId, balance_mismatch: { difference: '-27.00', currency: 'EUR', acknowledged_by: org.userId } });
    expect(ok.body.balance_mismatch.acknowledged_at).toMatch(/Z$/);
  });

  it('a JSON statement whose balances do not add up is imported the same way, and one that reconciles approves without a body', async () => {
    const json = JSON.parse(fixture('statement.json').toString());
    json.account = 'CH-MISMATCH-1';
    json.closing_balance = '1869.99';
    const res = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: json });
    expect(res.status).toBe(200);
    expect(res.body.balance_mismatch).toMatchObject({ difference: '-0.01', currency: 'CHF' });
    const fine = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: { ...json, account: 'CH-MISMATCH-2', closing_balance: '1870.00' } });
    expect(fine.body.balance_mismatch).toBeNull();
    await waitForStatement(stack, org.token, fine.body.id, { timeoutMs: 60_000 });
    expect((await stack.request('POST', `/v2/bank-statements/${fine.body.id}/approve`, { token: org.token })).status).toBe(200);
  });

  it('refuses balances in another currency than the account\'s, naming both currencies', async () => {
    const before = await counts();
    const camt = fixture('camt053-next-day-entry.xml').toString().replace('<Amt Ccy="EUR">6200.00</Amt>', '<Amt Ccy="SEK">6200.00</Amt>');
    const res = await upload(camt, { name: 'sek.xml' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].msg).toContain('the balance is in SEK, the statement\'s other balances in EUR');
    expect(await counts()).toEqual(before);
  });
});

describe('amounts are taken exactly as written', () => {
  it('refuses more decimals than the currency has and numbers that cannot be stored exactly (422 naming the field or line), storing nothing', async () => {
    const before = await counts();
    const body = (amount: string) => ({ account: 'US-EXACT-1', currency: 'USD', transactions: [{ amount: '1.00', booking_date: '2026-11-02' }, { amount, booking_date: '2026-11-02' }] });
    const third = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: body('0.305') });
    expect(third.status).toBe(422);
    expect(third.body.errors[0]).toMatchObject({ loc: ['body', 'transactions', 1, 'amount'], msg: expect.stringContaining('"0.305" has more decimals than USD has (2)') });
    const long = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: body('0.304999999999999999999999999999') });
    expect(long.status).toBe(422);
    expect(long.body.errors[0].loc).toEqual(['body', 'transactions', 1, 'amount']);
    const csv = fixture('statement-debit-credit.csv').toString().replace(',2500.00,', ',0.305,');
    const { CSV_DEBIT_CREDIT_MAPPING } = await import('./fixtures/bank-statements/csv-mappings.js');
    const csvRes = await upload(csv, { name: 'statement.csv', format: 'csv', mapping: CSV_DEBIT_CREDIT_MAPPING });
    expect(csvRes.status).toBe(422);
    expect(csvRes.body.errors[0]).toMatchObject({ loc: ['body', 'file', 'line 2'], msg: expect.stringContaining('"0.305" has more decimals than USD has (2)') });
    expect(await counts()).toEqual(before);
  });
});
