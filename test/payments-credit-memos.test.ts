/**
 * Credit memos in payments, end to end through the gateway: a payment applies an open credit memo
 * of its payer next to the invoices it pays (PATCH /v2/payments/{id}), its cash is the invoices'
 * amount_paid less the memos' credit, approval relieves the invoice and the memo, and every
 * violation is a 422 in the spec's shape that changes nothing. Ledger data is pushed, statements
 * uploaded; the only SQL writes are the last test's, which check that the database itself refuses
 * what no endpoint lets through (a memo allocation with a discount, cash above the deposit).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '@rp/platform';
import { loadMatchContext } from '../services/cash-app/src/activities/matching.js';
import { insertProposals, type DepositRow } from '../services/cash-app/src/store/matching.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let db: Db;
const ids: Record<string, string> = {};
const KAPPA_IBAN = 'DE89370400440532013000';
const MATCH_CONFIG = { MATCH_TOLERANCE_AMOUNT: '5.00', MATCH_TOLERANCE_PERCENT: '0', MATCH_TOLERANCE_ADJUSTMENT: 'short_pay_write_off' } as const;

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
  org = await stack.onboard('Credit memo payments');
  const customers = await pushCustomers(stack, org.apiKey, [
    customerRecord({ customer_code: 'K-1', name1: 'Kappa Werkzeuge GmbH', bank_accounts: [{ iban: KAPPA_IBAN }] }),
    customerRecord({ customer_code: 'L-1', name1: 'Lambda Tools Ltd' }),
  ]);
  expect(customers.body.results.every((r) => r.success)).toBe(true);
  ids.kappa = customers.body.results[0]!.service_id!;
  const docs = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: 'K-INV-1', customer_code: 'K-1', amount_in_document_currency: 1000, amount_in_local_currency: 1000 }),
    invoiceRecord({ document_number: 'K-INV-2', customer_code: 'K-1', amount_in_document_currency: 400, amount_in_local_currency: 400 }),
    invoiceRecord({ document_number: 'K-CM-1', customer_code: 'K-1', debit_credit_indicator: 'H', amount_in_document_currency: 100, amount_in_local_currency: 100 }),
    invoiceRecord({ document_number: 'L-CM-1', customer_code: 'L-1', debit_credit_indicator: 'H', amount_in_document_currency: 50, amount_in_local_currency: 50 }),
  ]);
  expect(docs.body.results.every((r) => r.success)).toBe(true);
  [ids.inv1, ids.inv2, ids.memo, ids.otherMemo] = docs.body.results.map((r) => r.service_id!);
});
afterAll(async () => {
  await db?.destroy();
  await stack?.close();
});

/** A deposit on a new statement (no reference, no known payer), processed; its transaction id. */
async function depositTx(amount: string): Promise<string> {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount, booking_date: '2026-10-15', value_date: '2026-10-15', counterparty_name: 'Unknown sender', remittance_information: 'Payment' }],
    },
  });
  expect(res.status).toBe(200);
  const ready = await waitForStatement(stack, org.token, res.body.id);
  return ready.transactions[0].id as string;
}

/** A deposit and an unapproved payment for it. */
async function depositPayment(amount: string): Promise<string> {
  const txId = await depositTx(amount);
  const existing = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
  if (existing.body.data.length > 0) return existing.body.data[0].id as string;
  const created = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId } });
  expect(created.status).toBe(200);
  return created.body.id as string;
}

const patch = (paymentId: string, allocations: unknown[], extra: Record<string, unknown> = {}) =>
  stack.request('PATCH', `/v2/payments/${paymentId}`, { token: org.token, body: { allocations, ...extra } });

describe('credit memos in a payment', () => {
  it('settles an invoice net of a memo: the cash is the invoice less the credit; approval relieves both', async () => {
    const paymentId = await depositPayment('900.00');
    const res = await patch(paymentId, [
      { invoice_id: ids.inv1, amount_paid: '1000.00' },
      { invoice_id: ids.memo, amount_paid: '100.00' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ partner_id: ids.kappa, amount: '900.00', allocated_amount: '900.00', unallocated_amount: '0.00' });
    expect(res.body.allocations.map((a: any) => [a.invoice_number, a.document_kind, a.amount_paid])).toEqual([
      ['K-INV-1', 'invoice', '1000.00'],
      ['K-CM-1', 'credit_memo', '100.00'],
    ]);
    const approved = await stack.request('POST', `/v2/payments/${paymentId}/approve`, { token: org.token, body: {} });
    expect(approved.status).toBe(200);

    // The memo's credit and the invoice are used up: another payment can apply neither.
    const next = await depositPayment('300.00');
    const again = await patch(next, [
      { invoice_id: ids.inv2, amount_paid: '400.00' },
      { invoice_id: ids.memo, amount_paid: '100.00' },
    ]);
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual([
      { loc: ['body', 'allocations', 1, 'amount_paid'], msg: 'the credit applied (100.00) exceeds the open credit of credit memo K-CM-1 (0.00)', type: 'value_error.exceeds_open_amount' },
    ]);
    const invoiceAgain = await patch(next, [{ invoice_id: ids.inv1, amount_paid: '1.00' }]);
    expect(invoiceAgain.status).toBe(422);
    expect(invoiceAgain.body.errors[0]).toMatchObject({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.exceeds_open_amount' });
  });

  it('refuses over-applying a memo, another customer\'s memo, a memo with a discount, credit above the invoices and cash above the deposit; nothing changes', async () => {
    const paymentId = await depositPayment('350.00');
    const good = await patch(paymentId, [{ invoice_id: ids.inv2, amount_paid: '350.00' }]);
    expect(good.status).toBe(200);
    const before = good.body.allocations;

    const cases: [unknown[], { loc: unknown[]; type: string }[]][] = [
      // memo K-CM-1 has no credit left after the first test's approval; push a fresh one below instead
      [[{ invoice_id: ids.inv2, amount_paid: '400.00' }, { invoice_id: ids.otherMemo, amount_paid: '50.00' }], [{ loc: ['body', 'allocations', 1, 'invoice_id'], type: 'value_error.credit_memo_partner' }]],
    ];
    for (const [allocations, errors] of cases) {
      const res = await patch(paymentId, allocations);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ type: 'request-validation', status: 422, title: expect.any(String) });
      expect(res.body.errors.map((e: any) => ({ loc: e.loc, type: e.type }))).toEqual(errors);
    }

    const fresh = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: 'K-CM-2', customer_code: 'K-1', debit_credit_indicator: 'H', amount_in_document_currency: 60, amount_in_local_currency: 60 })]);
    const memo2 = fresh.body.results[0]!.service_id!;
    const refused: [string, unknown[], { loc: unknown[]; type: string }[]][] = [
      ['over-applied', [{ invoice_id: ids.inv2, amount_paid: '400.00' }, { invoice_id: memo2, amount_paid: '60.01' }], [{ loc: ['body', 'allocations', 1, 'amount_paid'], type: 'value_error.exceeds_open_amount' }]],
      [
        'with a discount',
        [{ invoice_id: ids.inv2, amount_paid: '400.00' }, { invoice_id: memo2, amount_paid: '50.00', amount_discount: '10.00' }],
        [{ loc: ['body', 'allocations', 1, 'amount_discount'], type: 'value_error.credit_memo' }],
      ],
      ['credit above the invoices', [{ invoice_id: ids.inv2, amount_paid: '40.00' }, { invoice_id: memo2, amount_paid: '50.00' }], [{ loc: ['body', 'allocations', 1, 'amount_paid'], type: 'value_error.credit_exceeds_invoices' }]],
      ['cash above the deposit', [{ invoice_id: memo2, amount_paid: '40.00' }, { invoice_id: ids.inv2, amount_paid: '400.00' }], [{ loc: ['body', 'allocations', 1, 'amount_paid'], type: 'value_error.exceeds_transaction_amount' }]],
    ];
    for (const [label, allocations, errors] of refused) {
      const res = await patch(paymentId, allocations);
      expect(res.status, label).toBe(422);
      expect(res.body.type, label).toBe('request-validation');
      expect(res.body.errors.map((e: any) => ({ loc: e.loc, type: e.type })), label).toEqual(errors);
    }
    const after = await stack.request('GET', `/v2/payments/${paymentId}`, { token: org.token });
    expect(after.body.allocations).toEqual(before);
    expect(after.body.allocated_amount).toBe('350.00');

    // within every limit: 400 paid less 50 credit = the deposit of 350
    const ok = await patch(paymentId, [{ invoice_id: ids.inv2, amount_paid: '400.00' }, { invoice_id: memo2, amount_paid: '50.00' }]);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ allocated_amount: '350.00', unallocated_amount: '0.00' });
  });

  it('the database refuses a memo allocation with a discount and cash outside 0 .. the deposit, whoever writes it', async () => {
    const paymentId = await depositPayment('10.00');
    const insert = (kind: string, paid: string, discount = '0') =>
      stack.sql(
        `INSERT INTO cash_app.payment_allocations (id, organization_id, payment_id, invoice_id, amount_paid, amount_discount, document_kind) VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6)`,
        [org.organizationId, paymentId, randomUUID(), paid, discount, kind],
      );
    await expect(insert('credit_memo', '1.00', '1.00')).rejects.toThrow(/payment_allocations_credit_memo_check/);
    await expect(insert('invoice', '10.01')).rejects.toThrow(/outside 0 .. its amount/);
    await expect(insert('credit_memo', '1.00')).rejects.toThrow(/outside 0 .. its amount/);
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.payment_allocations WHERE payment_id = $1`, [paymentId]);
    expect(n).toBe(0);
  });

  it('the matching context offers open memos with their remaining credit and the customers\' master-data accounts; a used-up memo is not offered', async () => {
    const ctx = await loadMatchContext(db, org.organizationId, ['EUR'], MATCH_CONFIG);
    const byNumber = new Map(ctx.invoices.map((i) => [i.document_number, i]));
    // K-CM-1's 100 were applied by the approved payment of the first test: nothing left to offer
    expect(byNumber.has('K-CM-1')).toBe(false);
    expect(byNumber.get('L-CM-1')).toMatchObject({ id: ids.otherMemo, kind: 'credit_memo', open_amount: '50.0000', discount_terms: [] });
    expect(byNumber.get('K-INV-1')).toBeUndefined(); // paid in full by that payment
    expect(ctx.knownAccounts).toContainEqual({ account_identifier: KAPPA_IBAN, partner_id: ids.kappa, source: 'master_data' });
  });

  it('matching proposals may apply a memo; one whose cash would be negative or above its deposit is left for a person, the others are written', async () => {
    // deposits nothing in the ledger matches, so they are left without a payment
    const [txA, txB] = [await depositTx('1.00'), await depositTx('2.00')];
    for (const tx of [txA, txB]) expect((await stack.request('GET', `/v2/payments?bank_transaction_id=${tx}`, { token: org.token })).body.data).toEqual([]);
    const fresh = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: 'K-INV-9', customer_code: 'K-1', amount_in_document_currency: 11, amount_in_local_currency: 11 }),
      invoiceRecord({ document_number: 'K-CM-9', customer_code: 'K-1', debit_credit_indicator: 'H', amount_in_document_currency: 10, amount_in_local_currency: 10 }),
    ]);
    const [inv9, memo9] = fresh.body.results.map((r) => r.service_id!);
    const deposit = (id: string, amount: string): DepositRow =>
      ({ id, amount, currency: 'EUR', counterparty_name: null, counterparty_account: null, counterparty_iban: null, remittance_information: null, bank_reference: null, end_to_end_id: null, booking_date: '2026-10-15', value_date: '2026-10-15' });
    const alloc = (invoice_id: string, amount_paid: string) => ({ invoice_id, amount_paid, amount_discount: '0', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0' });
    const written = await insertProposals(
      db,
      org.organizationId,
      [
        { transaction_id: txA, partner_id: ids.kappa, remittance_id: null, score: 0.9, reasons: [{ rule: 'test' }], allocations: [alloc(inv9!, '11.00'), alloc(memo9!, '10.00')] },
        { transaction_id: txB, partner_id: ids.kappa, remittance_id: null, score: 0.9, reasons: [{ rule: 'test' }], allocations: [alloc(memo9!, '2.00')] },
      ],
      new Map([[txA, deposit(txA, '1.00')], [txB, deposit(txB, '2.00')]]),
    );
    expect(written).toBe(1);
    const proposed = await stack.request('GET', `/v2/payments?bank_transaction_id=${txA}`, { token: org.token });
    expect(proposed.body.data[0]).toMatchObject({ allocated_amount: '1.00', unallocated_amount: '0.00' });
    expect(proposed.body.data[0].allocations.map((x: any) => [x.invoice_number, x.document_kind])).toEqual([
      ['K-INV-9', 'invoice'],
      ['K-CM-9', 'credit_memo'],
    ]);
    expect((await stack.request('GET', `/v2/payments?bank_transaction_id=${txB}`, { token: org.token })).body.data).toEqual([]);
  });
});
