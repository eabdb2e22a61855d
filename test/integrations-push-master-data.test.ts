/**
 * Customer master data for cash matching, end to end through the gateway: the customer push's
 * `bank_accounts` and the invoice push's early-payment `discount_terms` (extensions of spec 4.3
 * rules 17 and 16), and the kernel's matching reads of them (open invoices and credit memos with
 * their kind, document date and discount terms; the master-data bank accounts). Every state is
 * reached through the push endpoints; SQL only reads what was stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, listMasterDataBankAccounts, listOpenInvoicesForMatching, listOpenInvoicesForMatchingPage, type Db } from '@rp/platform';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let org: Org;
let db: Db;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard();
  db = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 2 });
});
afterAll(async () => {
  await db?.destroy();
  await stack?.close();
});

let seq = 0;
const key = () => `M${Date.now().toString(36)}${(seq++).toString().padStart(4, '0')}`;

async function accountsOf(partnerId: string) {
  return stack.sql<{ account_identifier: string; bank_code: string | null }>(
    `SELECT account_identifier, bank_code FROM integrations.partner_master_bank_accounts WHERE partner_id = $1 ORDER BY account_identifier`,
    [partnerId],
  );
}

describe('customer push bank_accounts', () => {
  it('stores IBANs normalized and account numbers with their bank code; a re-push replaces them, an absent field keeps them, [] clears them', async () => {
    const code = key();
    const res = await pushCustomers(stack, org.apiKey, [
      customerRecord({
        customer_code: code,
        bank_accounts: [{ iban: 'de89 3704 0044 0532 0130 00' }, { account_number: '0001234-567', bank_code: '021000021' }, { iban: 'DE89370400440532013000' }],
      }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ success: true, error_code: null });
    const partnerId = res.body.results[0]!.service_id!;
    expect(await accountsOf(partnerId)).toEqual([
      { account_identifier: '0001234567', bank_code: '021000021' },
      { account_identifier: 'DE89370400440532013000', bank_code: null },
    ]);

    const replaced = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, bank_accounts: [{ iban: 'GB29 NWBK 6016 1331 9268 19' }] })]);
    expect(replaced.body.results[0]).toMatchObject({ success: true, service_id: partnerId });
    expect(await accountsOf(partnerId)).toEqual([{ account_identifier: 'GB29NWBK60161331926819', bank_code: null }]);

    const untouched = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: 'Renamed GmbH' })]);
    expect(untouched.body.results[0]!.success).toBe(true);
    expect(await accountsOf(partnerId)).toEqual([{ account_identifier: 'GB29NWBK60161331926819', bank_code: null }]);

    const cleared = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, bank_accounts: [] })]);
    expect(cleared.body.results[0]!.success).toBe(true);
    expect(await accountsOf(partnerId)).toEqual([]);
  });

  it('refuses a record with a bad IBAN (check digits), a half account or too many accounts per record; the others are stored and nothing of the bad ones', async () => {
    const [good, badIban, half, many, both] = [key(), key(), key(), key(), key()];
    const res = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: good, bank_accounts: [{ iban: 'NL91ABNA0417164300' }] }),
      customerRecord({ customer_code: badIban, bank_accounts: [{ iban: 'DE89370400440532013001' }] }),
      customerRecord({ customer_code: half, bank_accounts: [{ account_number: '12345678' }] }),
      customerRecord({ customer_code: many, bank_accounts: Array.from({ length: 21 }, (_, i) => ({ account_number: String(1000 + i), bank_code: '10020030' })) }),
      customerRecord({ customer_code: both, bank_accounts: [{ iban: 'NL91ABNA0417164300', account_number: '1', bank_code: '2' }] }),
      customerRecord({ customer_code: key(), bank_accounts: [{ iban: 'x'.repeat(43) }] }),
    ]);
    expect(res.status).toBe(200);
    const [ok, ...bad] = res.body.results;
    expect(ok).toMatchObject({ success: true, remote_id: good });
    expect(bad.map((r) => [r.success, r.error_code])).toEqual([
      [false, 'invalid_bank_account'],
      [false, 'invalid_bank_account'],
      [false, 'invalid_bank_account'],
      [false, 'invalid_bank_account'],
      [false, 'invalid_field'],
    ]);
    expect(bad[0]!.message).toContain('bank_accounts[0]');
    expect(bad[0]!.message).toContain('DE89370400440532013001');
    expect(bad[4]!.message).toContain('bank_accounts[0].iban');
    const stored = await stack.sql(`SELECT remote_id FROM integrations.partners WHERE organization_id = $1 AND remote_id = ANY($2)`, [
      org.organizationId,
      [badIban, half, many, both],
    ]);
    expect(stored).toEqual([]);
    expect(await accountsOf(ok!.service_id!)).toEqual([{ account_identifier: 'NL91ABNA0417164300', bank_code: null }]);
  });

  it('a bad re-push leaves the stored accounts as they were', async () => {
    const code = key();
    const first = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, bank_accounts: [{ iban: 'NL91ABNA0417164300' }] })]);
    const partnerId = first.body.results[0]!.service_id!;
    const bad = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, bank_accounts: [{ iban: 'NL92ABNA0417164300' }] })]);
    expect(bad.body.results[0]).toMatchObject({ success: false, error_code: 'invalid_bank_account', service_id: null });
    expect(await accountsOf(partnerId)).toEqual([{ account_identifier: 'NL91ABNA0417164300', bank_code: null }]);
  });
});

describe('invoice push discount_terms', () => {
  it('stores the terms earliest first with normalized percents; a re-push without them removes them', async () => {
    const number = key();
    const res = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({
        document_number: number,
        discount_terms: [
          { due_date: '2026-09-30', percent: '2.000' },
          { due_date: '2026-09-15', percent: 3 },
        ],
      }),
    ]);
    expect(res.body.results[0]).toMatchObject({ success: true });
    const [doc] = await stack.sql(`SELECT discount_terms FROM integrations.documents WHERE id = $1`, [res.body.results[0]!.service_id]);
    expect(doc.discount_terms).toEqual([
      { due_date: '2026-09-15', percent: '3' },
      { due_date: '2026-09-30', percent: '2' },
    ]);
    // the database holds the same rule, whoever writes
    const setTerms = (terms: unknown) => stack.sql(`UPDATE integrations.documents SET discount_terms = $2::jsonb WHERE id = $1`, [res.body.results[0]!.service_id, JSON.stringify(terms)]);
    await expect(setTerms([{ due_date: '2026-09-15', percent: '100' }])).rejects.toThrow(/documents_discount_terms_check/);
    await expect(setTerms([{ due_date: '2026-09-15', percent: 2 }])).rejects.toThrow(/documents_discount_terms_check/);
    await expect(setTerms([{ percent: '2' }])).rejects.toThrow(/documents_discount_terms_check/);
    await expect(setTerms({ due_date: '2026-09-15', percent: '2' })).rejects.toThrow(/documents_discount_terms_check/);
    await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: number })]);
    const [again] = await stack.sql(`SELECT discount_terms FROM integrations.documents WHERE id = $1`, [res.body.results[0]!.service_id]);
    expect(again.discount_terms).toEqual([]);
  });

  it.each([
    ['a percent of 0', [{ due_date: '2026-09-15', percent: '0' }], 'invalid_discount_term'],
    ['a percent of 100', [{ due_date: '2026-09-15', percent: 100 }], 'invalid_discount_term'],
    ['a negative percent', [{ due_date: '2026-09-15', percent: '-2' }], 'invalid_discount_term'],
    ['a percent with 5 decimals', [{ due_date: '2026-09-15', percent: '2.12345' }], 'invalid_discount_term'],
    ['a percent that is not a number', [{ due_date: '2026-09-15', percent: '2%' }], 'invalid_discount_term'],
    ['a due date that is no calendar day', [{ due_date: '2026-02-30', percent: '2' }], 'invalid_date'],
    ['a missing due date', [{ percent: '2' }], 'missing_field'],
    ['the same due date twice', [{ due_date: '2026-09-15', percent: '2' }, { due_date: '2026-09-15', percent: '3' }], 'invalid_discount_term'],
    ['four terms', ['01', '02', '03', '04'].map((d) => ({ due_date: `2026-09-${d}`, percent: '1' })), 'invalid_discount_term'],
    ['not an array', { due_date: '2026-09-15', percent: '2' }, 'invalid_field'],
  ])('refuses a record with %s (per record, nothing stored)', async (_label, terms, errorCode) => {
    const [good, bad] = [key(), key()];
    const res = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: good }), invoiceRecord({ document_number: bad, discount_terms: terms })]);
    expect(res.status).toBe(200);
    expect(res.body.results[0]!.success).toBe(true);
    expect(res.body.results[1]).toMatchObject({ success: false, error_code: errorCode, service_id: null });
    expect(res.body.results[1]!.message).toContain('discount_terms');
    expect(await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, bad])).toEqual([]);
  });

  it('refuses discount terms on a credit memo', async () => {
    const res = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: key(), debit_credit_indicator: 'H', discount_terms: [{ due_date: '2026-09-15', percent: '2' }] })]);
    expect(res.body.results[0]).toMatchObject({ success: false, error_code: 'invalid_discount_term' });
  });
});

describe('the kernel\'s matching reads', () => {
  it('returns open invoices and open credit memos (positive credit) with kind, document date and discount terms, and the master-data bank accounts', async () => {
    const other = await stack.onboard('Matching reads Org');
    const customer = key();
    const partner = await pushCustomers(stack, other.apiKey, [customerRecord({ customer_code: customer, bank_accounts: [{ iban: 'NL91ABNA0417164300' }, { account_number: '12345678', bank_code: '10020030' }] })]);
    const partnerId = partner.body.results[0]!.service_id!;
    const [inv, memo, negativeMemo, closedMemo, usd] = [key(), key(), key(), key(), key()];
    const pushed = await pushInvoices(stack, other.apiKey, [
      invoiceRecord({ document_number: inv, customer_code: customer, document_date: '2026-09-01', amount_in_document_currency: 1000, amount_in_local_currency: 1000, discount_terms: [{ due_date: '2026-09-15', percent: '2.5' }] }),
      invoiceRecord({ document_number: memo, customer_code: customer, document_date: '2026-09-05', debit_credit_indicator: 'H', amount_in_document_currency: 150, amount_in_local_currency: 150 }),
      invoiceRecord({ document_number: negativeMemo, customer_code: customer, debit_credit_indicator: 'H', amount_in_document_currency: -40, amount_in_local_currency: -40 }),
      invoiceRecord({ document_number: closedMemo, customer_code: customer, debit_credit_indicator: 'H', status_open: false, amount_in_document_currency: 70, amount_in_local_currency: 70 }),
      invoiceRecord({ document_number: usd, customer_code: customer, currency: 'USD' }),
    ]);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
    const [invId, memoId, negativeMemoId] = pushed.body.results.map((r) => r.service_id!);

    const all = await listOpenInvoicesForMatching(db, other.organizationId, ['EUR']);
    const byNumber = new Map(all.map((d) => [d.document_number, d]));
    expect([...byNumber.keys()].sort()).toEqual([inv, memo, negativeMemo].sort());
    expect(byNumber.get(inv)).toMatchObject({ id: invId, kind: 'invoice', partner_id: partnerId, document_date: '2026-09-01', discount_terms: [{ due_date: '2026-09-15', percent: '2.5' }] });
    expect(Number(byNumber.get(inv)!.amount_open)).toBe(1000);
    expect(byNumber.get(memo)).toMatchObject({ id: memoId, kind: 'credit_memo', partner_id: partnerId, document_date: '2026-09-05', discount_terms: [] });
    expect(Number(byNumber.get(memo)!.amount_open)).toBe(150);
    expect(byNumber.get(negativeMemo)).toMatchObject({ id: negativeMemoId, kind: 'credit_memo' });
    expect(Number(byNumber.get(negativeMemo)!.amount_open)).toBe(40);

    const first = await listOpenInvoicesForMatchingPage(db, other.organizationId, ['EUR'], null, 2);
    const rest = await listOpenInvoicesForMatchingPage(db, other.organizationId, ['EUR'], first[first.length - 1]!.id, 2);
    expect([...first, ...rest].map((d) => d.id).sort()).toEqual(all.map((d) => d.id).sort());

    expect(await listMasterDataBankAccounts(db, other.organizationId)).toEqual([
      { account_identifier: '12345678', partner_id: partnerId, bank_code: '10020030' },
      { account_identifier: 'NL91ABNA0417164300', partner_id: partnerId, bank_code: null },
    ]);
    expect(await listMasterDataBankAccounts(db, org.organizationId)).not.toContainEqual(expect.objectContaining({ partner_id: partnerId }));
  });
});
