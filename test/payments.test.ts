/**
 * Automatic matching and the payments API, end to end: ledger data pushed through the middleware
 * push endpoints, deposits matched by the proposePayments activity against the real database, and
 * the payments read, re-allocated and approved through the gateway.
 */
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '@rp/platform';
import { createMatchingActivities } from '../services/cash-app/src/activities/matching.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let db: Db;
const ACME_IBAN = 'DE89370400440532013000';

async function seedLedger(org: Org) {
  const customers = await pushCustomers(stack, org.apiKey, [
    customerRecord({ customer_code: 'C-100', name1: 'Acme Handels GmbH' }),
    customerRecord({ customer_code: 'C-200', name1: 'Beta Logistics Ltd', smtp_addr: 'ap@beta.example' }),
    customerRecord({ customer_code: 'C-300', name1: 'Gamma Foods Inc', smtp_addr: 'ap@gamma.example' }),
  ]);
  expect(customers.status).toBe(200);
  expect(customers.body.results.every((r) => r.success)).toBe(true);
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '9000001', reference: 'INV-9000001', customer_code: 'C-100', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '9000002', reference: 'INV-9000002', customer_code: 'C-100', amount_in_document_currency: 500, net_due_date: '2026-10-05' }),
    invoiceRecord({ document_number: '9000003', reference: 'INV-9000003', customer_code: 'C-100', amount_in_document_currency: 250, net_due_date: '2026-10-06' }),
    invoiceRecord({ document_number: '9000004', reference: 'INV-9000004', customer_code: 'C-100', amount_in_document_currency: 700, net_due_date: '2026-10-07' }),
    invoiceRecord({ document_number: '9000010', reference: 'INV-9000010', customer_code: 'C-200', amount_in_document_currency: 1000 }),
    invoiceRecord({ document_number: '9000020', reference: 'INV-9000020', customer_code: 'C-300', amount_in_document_currency: 300 }),
    invoiceRecord({ document_number: '9000030', reference: 'INV-9000030', customer_code: 'C-300', amount_in_document_currency: 80, status_open: false, clearing_date: '2026-10-01' }),
  ]);
  expect(invoices.status).toBe(200);
  expect(invoices.body.results.every((r) => r.success)).toBe(true);
}

async function invoiceId(org: Org, number: string): Promise<string> {
  const rows = await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, number]);
  return rows[0].id as string;
}

async function partnerId(org: Org, code: string): Promise<string> {
  const rows = await stack.sql(`SELECT id FROM integrations.partners WHERE organization_id = $1 AND remote_id = $2`, [org.organizationId, code]);
  return rows[0].id as string;
}

interface Tx {
  amount: string;
  remittance_information?: string;
  counterparty_name?: string;
  counterparty_iban?: string;
  bank_reference?: string;
}

/**
 * Upload a JSON bank statement through the gateway and wait for its processing workflow (store →
 * classify → proposePayments → ready). Returns the statement and its transaction ids in order.
 */
async function statement(org: Org, txs: Tx[]): Promise<{ statementId: string; txIds: string[] }> {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: txs.map((t) => ({
        amount: t.amount,
        booking_date: '2026-10-15',
        value_date: '2026-10-15',
        counterparty_name: t.counterparty_name ?? null,
        counterparty_account: t.counterparty_iban ?? null,
        remittance_information: t.remittance_information ?? null,
        bank_reference: t.bank_reference ?? null,
      })),
    },
  });
  expect(res.status).toBe(200);
  const statementId = res.body.id as string;
  const ready = await waitForStatement(stack, org.token, statementId);
  const txIds = (ready.transactions as { id: string; sequence: number }[]).sort((a, b) => a.sequence - b.sequence).map((t) => t.id);
  expect(txIds).toHaveLength(txs.length);
  return { statementId, txIds };
}

const activities = () => createMatchingActivities({ db, config: { MATCH_TOLERANCE_AMOUNT: '5.00', MATCH_TOLERANCE_PERCENT: '0', MATCH_TOLERANCE_ADJUSTMENT: 'short_pay_write_off' } });

async function paymentOf(org: Org, txId: string) {
  const res = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

let first: { statementId: string; txIds: string[] };

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
  orgA = await stack.onboard('Payments A');
  orgB = await stack.onboard('Payments B');
  await seedLedger(orgA);
  await seedLedger(orgB);
  first = await statement(orgA, [
    { amount: '1190.00', remittance_information: 'Rechnung 9000001', counterparty_name: 'ACME HANDELS GMBH', counterparty_iban: 'DE89 3704 0044 0532 0130 00' },
    { amount: '750.00', remittance_information: 'RE INV-9000002 / INV-9000003', counterparty_name: 'Acme Handels' },
    { amount: '997.50', remittance_information: 'Invoice 9000010 less charges', counterparty_name: 'Beta Logistics' },
    { amount: '100.00', counterparty_name: 'Gamma Foods' },
    { amount: '-50.00', remittance_information: 'Bank fee 9000020' },
    { amount: '300.00', remittance_information: 'Credit interest 9000020' }, // classified as not a payment
  ]);
});

afterAll(async () => {
  await db?.destroy();
  await stack?.close();
});

describe('automatic matching', () => {
  it('the statement workflow proposes payments for matched deposits; proposing again is idempotent', async () => {
    const rows = await stack.sql(`SELECT bank_transaction_id FROM cash_app.payments WHERE organization_id = $1`, [orgA.organizationId]);
    expect(rows.map((r) => r.bank_transaction_id).sort()).toEqual([first.txIds[0], first.txIds[1], first.txIds[2]].sort());
    const flags = await stack.sql(`SELECT is_payment FROM cash_app.bank_transactions WHERE statement_id = $1 ORDER BY sequence`, [first.statementId]);
    expect(flags.map((f) => f.is_payment)).toEqual([true, true, true, true, false, false]);
    const again = await activities().proposePayments({ organizationId: orgA.organizationId, statementId: first.statementId });
    expect(again).toEqual({ proposed: 0, unmatched: 1 });
    expect(await stack.sql(`SELECT id FROM cash_app.payments WHERE organization_id = $1`, [orgA.organizationId])).toHaveLength(3);
    // another organization's statement id does nothing
    expect(await activities().proposePayments({ organizationId: orgB.organizationId, statementId: first.statementId })).toEqual({ proposed: 0, unmatched: 0 });
  });

  it('matches a single invoice by number and amount', async () => {
    const p = await paymentOf(orgA, first.txIds[0]!);
    expect(p).toMatchObject({
      object: 'payment',
      status: 'unapproved',
      amount: '1190.00',
      currency: 'EUR',
      allocated_amount: '1190.00',
      unallocated_amount: '0.00',
      partner_id: await partnerId(orgA, 'C-100'),
      payment_date: '2026-10-15',
      statement_id: first.statementId,
    });
    expect(p.allocations).toHaveLength(1);
    expect(p.allocations[0]).toMatchObject({ object: 'payment_allocation', invoice_id: await invoiceId(orgA, '9000001'), invoice_number: '9000001', amount_paid: '1190.00', amount_discount: '0.00', adjustment_id: null });
    expect(p.match_reasons.map((r: { rule: string }) => r.rule)).toEqual(['invoice_number', 'name', 'amount_exact']);
    expect(p.match_reasons[0]).toMatchObject({ value: '9000001' });
    expect(p.match_score).toBeGreaterThan(0.9);
    expect(p.transaction).toMatchObject({ id: first.txIds[0], amount: '1190.00', counterparty_name: 'ACME HANDELS GMBH', remittance_information: 'Rechnung 9000001' });
  });

  it('matches a multi-invoice deposit', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    expect(p.allocations.map((a: { invoice_number: string; amount_paid: string }) => [a.invoice_number, a.amount_paid])).toEqual([
      ['9000002', '500.00'],
      ['9000003', '250.00'],
    ]);
    expect(p.match_reasons.map((r: { rule: string }) => r.rule)).toEqual(['invoice_number', 'invoice_number', 'name', 'amount_combination']);
  });

  it('proposes a short payment within tolerance with the short-pay write-off', async () => {
    const p = await paymentOf(orgA, first.txIds[2]!);
    const writeOff = (await stack.sql(`SELECT id FROM cash_app.adjustments WHERE organization_id = $1 AND system_key = 'short_pay_write_off'`, [orgA.organizationId]))[0].id;
    expect(p.allocations).toEqual([
      expect.objectContaining({ invoice_number: '9000010', amount_paid: '997.50', adjustment_id: writeOff, adjustment_amount: '2.50' }),
    ]);
    expect(p.match_reasons.at(-1)).toEqual({ rule: 'amount_within_tolerance', shortfall: '2.5000', adjustment_id: writeOff });
  });

  it('leaves unmatched deposits, withdrawals and non-payments without a payment', async () => {
    for (const tx of first.txIds.slice(3)) expect(await paymentOf(orgA, tx)).toBeUndefined();
  });
});

describe('payments API', () => {
  it('lists with filters and pagination', async () => {
    const all = await stack.request('GET', '/v2/payments?page_size=2', { token: orgA.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_records: 3, current_page: 0, next_page: 1 });
    expect(all.body.data).toHaveLength(2);
    const byStatement = await stack.request('GET', `/v2/payments?statement_id=${first.statementId}&status=unapproved`, { token: orgA.token });
    expect(byStatement.body.total_records).toBe(3);
    const byPartner = await stack.request('GET', `/v2/payments?partner_id=${await partnerId(orgA, 'C-200')}`, { token: orgA.token });
    expect(byPartner.body.data.map((p: { bank_transaction_id: string }) => p.bank_transaction_id)).toEqual([first.txIds[2]]);
    expect((await stack.request('GET', '/v2/payments?start_date=2026-10-16', { token: orgA.token })).body.total_records).toBe(0);
    expect((await stack.request('GET', '/v2/payments?end_date=2026-10-15&start_date=2026-10-15', { token: orgA.token })).body.total_records).toBe(3);
    const bad = await stack.request('GET', '/v2/payments?status=posted&partner_id=x', { token: orgA.token });
    expect(bad.status).toBe(422);
  });

  it('gets one payment; other organizations see nothing', async () => {
    const p = await paymentOf(orgA, first.txIds[0]!);
    const one = await stack.request('GET', `/v2/payments/${p.id}`, { token: orgA.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(p);
    for (const [method, path, body] of [
      ['GET', `/v2/payments/${p.id}`, undefined],
      ['PATCH', `/v2/payments/${p.id}`, { allocations: [] }],
      ['POST', `/v2/payments/${p.id}/approve`, undefined],
    ] as const) {
      const res = await stack.request(method, path, { token: orgB.token, body });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    expect((await stack.request('GET', '/v2/payments', { token: orgB.token })).body.total_records).toBe(0);
    expect((await stack.request('GET', `/v2/payments/${randomUUID()}`, { token: orgA.token })).status).toBe(404);
    expect((await stack.request('GET', '/v2/payments/not-a-uuid', { token: orgA.token })).status).toBe(422); // ids are validated as ids
  });

  it('replaces allocations with a partial payment', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    const res = await stack.request('PATCH', `/v2/payments/${p.id}`, {
      token: orgA.token,
      body: { allocations: [{ invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '400.00' }, { invoice_id: await invoiceId(orgA, '9000003'), amount_paid: 250, amount_discount: '0' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'unapproved', allocated_amount: '650.00', unallocated_amount: '100.00', partner_id: await partnerId(orgA, 'C-100') });
    expect(res.body.allocations.map((a: { invoice_number: string; amount_paid: string }) => [a.invoice_number, a.amount_paid])).toEqual([
      ['9000002', '400.00'],
      ['9000003', '250.00'],
    ]);
  });

  it('refuses allocations beyond the open amount or the transaction amount, and foreign or closed invoices', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    const patch = async (allocations: unknown[]) => stack.request('PATCH', `/v2/payments/${p.id}`, { token: orgA.token, body: { allocations } });

    const overOpen = await patch([{ invoice_id: await invoiceId(orgA, '9000003'), amount_paid: '200.00', amount_discount: '60.00' }]);
    expect(overOpen.status).toBe(422);
    expect(overOpen.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.exceeds_open_amount' })]);

    const overTx = await patch([
      { invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '500.00' },
      { invoice_id: await invoiceId(orgA, '9000010'), amount_paid: '300.00' },
    ]);
    expect(overTx.status).toBe(422);
    expect(overTx.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'allocations', 1, 'amount_paid'], type: 'value_error.exceeds_transaction_amount' })]);

    const foreign = await patch([
      { invoice_id: await invoiceId(orgB, '9000002'), amount_paid: '10.00' },
      { invoice_id: await invoiceId(orgA, '9000030'), amount_paid: '10.00' },
      { invoice_id: randomUUID(), amount_paid: '10.00' },
    ]);
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors.map((e: { loc: unknown[] }) => e.loc)).toEqual([
      ['body', 'allocations', 0, 'invoice_id'],
      ['body', 'allocations', 1, 'invoice_id'],
      ['body', 'allocations', 2, 'invoice_id'],
    ]);

    const badShape = await patch([{ invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '-1' }]);
    expect(badShape.status).toBe(422);
    expect(badShape.body.errors[0].loc).toEqual(['body', 'allocations', 0, 'amount_paid']);

    const adj = await patch([{ invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '10.00', adjustment_amount: '1.00' }]);
    expect(adj.body.errors[0].loc).toEqual(['body', 'allocations', 0, 'adjustment_amount']);

    // nothing changed
    expect((await paymentOf(orgA, first.txIds[1]!)).allocated_amount).toBe('650.00');
  });

  it('approves, learns the payer account, then refuses changes', async () => {
    const p = await paymentOf(orgA, first.txIds[0]!);
    const res = await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: orgA.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', approved_by: orgA.userId });
    expect(res.body.approved_at).toMatch(/Z$/);
    const learned = await stack.sql(`SELECT partner_id, account_identifier FROM cash_app.partner_bank_accounts WHERE organization_id = $1`, [orgA.organizationId]);
    expect(learned).toEqual([{ partner_id: await partnerId(orgA, 'C-100'), account_identifier: ACME_IBAN }]);

    const again = await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: orgA.token });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('conflict');
    const change = await stack.request('PATCH', `/v2/payments/${p.id}`, { token: orgA.token, body: { allocations: [] } });
    expect(change.status).toBe(409);
  });

  it('approves a partial payment; the invoice keeps the rest open', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    expect((await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: orgA.token })).status).toBe(200);
    // 9000002 has 100.00 open now: another payment may not allocate 150.00 to it
    const beta = await paymentOf(orgA, first.txIds[2]!);
    const res = await stack.request('PATCH', `/v2/payments/${beta.id}`, {
      token: orgA.token,
      body: { allocations: [{ invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '150.00' }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].msg).toContain('(100.00)');
    const ok = await stack.request('PATCH', `/v2/payments/${beta.id}`, {
      token: orgA.token,
      body: { allocations: [{ invoice_id: await invoiceId(orgA, '9000002'), amount_paid: '100.00' }] },
    });
    expect(ok.status).toBe(200);
  });

  it('refuses to approve a payment without allocations', async () => {
    const beta = await paymentOf(orgA, first.txIds[2]!);
    expect((await stack.request('PATCH', `/v2/payments/${beta.id}`, { token: orgA.token, body: { allocations: [] } })).status).toBe(200);
    const res = await stack.request('POST', `/v2/payments/${beta.id}/approve`, { token: orgA.token });
    expect(res.status).toBe(409);
  });
});

describe('learned accounts and remittances', () => {
  it('identifies the payer by the learned IBAN before the name', async () => {
    const s = await statement(orgA, [{ amount: '700.00', counterparty_name: 'Gamma Foods Inc', counterparty_iban: ACME_IBAN }]);
    const p = await paymentOf(orgA, s.txIds[0]!);
    expect(p.partner_id).toBe(await partnerId(orgA, 'C-100'));
    expect(p.allocations.map((a: { invoice_number: string }) => a.invoice_number)).toEqual(['9000004']);
    expect(p.match_reasons[0]).toEqual({ rule: 'iban', partner_id: await partnerId(orgA, 'C-100'), value: ACME_IBAN });
  });

  it('allocates a deposit as its remittance advice says', async () => {
    const created = await stack.request('POST', '/v1/remittances', {
      token: orgA.token,
      body: {
        payer_name: 'Gamma Foods Inc',
        transaction_number: 'PAY-77123',
        transaction_date: '2026-10-14',
        currency: 'EUR',
        transaction_amount: 290,
        allocations: [{ invoice_number: '9000020', amount_paid: 290, amount_discount: 10 }],
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe('submitted');
    const remittanceId = created.body.id as string;
    const s = await statement(orgA, [{ amount: '290.00', remittance_information: 'Payment PAY-77123', counterparty_name: 'Somebody' }]);
    const p = await paymentOf(orgA, s.txIds[0]!);
    expect(p).toMatchObject({ remittance_id: remittanceId, partner_id: await partnerId(orgA, 'C-300'), allocated_amount: '290.00' });
    expect(p.allocations).toEqual([expect.objectContaining({ invoice_number: '9000020', amount_paid: '290.00', amount_discount: '10.00' })]);
    expect(p.match_reasons[0]).toEqual({ rule: 'remittance', remittance_id: remittanceId, matched_by: 'transaction_number', value: 'PAY-77123' });
    const used = await stack.sql(`SELECT bank_transaction_id FROM cash_app.remittances WHERE id = $1`, [remittanceId]);
    expect(used[0].bank_transaction_id).toBe(s.txIds[0]);
    expect((await stack.request('GET', `/v1/remittances/${remittanceId}`, { token: orgA.token })).body.status).toBe('applied');
    // used once: the same reference on another deposit does not apply it again
    const s2 = await statement(orgA, [{ amount: '290.00', remittance_information: 'Payment PAY-77123 again', counterparty_name: 'Somebody' }]);
    expect(await paymentOf(orgA, s2.txIds[0]!)).toBeUndefined();
  });
});

describe('metrics over matched statements', () => {
  it('reflect the payments states', async () => {
    // statement 1: 1190 and 750 approved, 997.50 unapproved without allocations, 100 unmatched,
    // -50 a withdrawal, 300 interest (not a payment); 700 (IBAN) and 290 (remittance) proposed in full;
    // a second 290 quoting the used remittance is unmatched
    const res = await stack.request('GET', '/v2/analytics/bank-transactions?start_date=2026-10-15&end_date=2026-10-15', { token: orgA.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_count: 8,
      potential_payments: { count: 2, total_amount: '390.00' },
      needs_allocation: { count: 1, total_amount: '997.50' },
      ready_to_post: { count: 2, total_amount: '990.00' },
      posting_errors_count: 0,
      is_multi_currency: false,
      currency: 'EUR',
    });
    expect((await stack.request('GET', '/v2/analytics/bank-transactions?end_date=2026-10-14', { token: orgA.token })).body.total_count).toBe(0);
  });
});

describe('proposePayments activity', () => {
  /** A statement still processing, with deposits stored but not yet matched (written straight to the tables). */
  async function storedStatement(org: Org, deposits: { amount: string; info: string }[]) {
    const statementId = randomUUID();
    await stack.sql(`INSERT INTO cash_app.bank_statements (id, organization_id, format, status, currency) VALUES ($1, $2, 'json', 'processing', 'EUR')`, [statementId, org.organizationId]);
    for (const [i, d] of deposits.entries()) {
      await stack.sql(
        `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, unique_import_id, sequence, amount, currency, is_payment, booking_date, remittance_information)
         VALUES ($1, $2, $3, $4, $5, $6, 'EUR', true, '2026-10-20', $7)`,
        [randomUUID(), org.organizationId, statementId, `imp-${randomUUID()}`, i + 1, d.amount, d.info],
      );
    }
    return statementId;
  }

  it('heartbeats its progress, stops when cancelled, and resumes without duplicates', async () => {
    const statementId = await storedStatement(orgB, [
      { amount: '1190.00', info: 'Invoice 9000001' },
      { amount: '1000.00', info: 'Invoice 9000010' },
      { amount: '12.34', info: 'nothing to find' },
    ]);
    const cancelled = new MockActivityEnvironment();
    const beats: unknown[] = [];
    cancelled.on('heartbeat', (d: unknown) => beats.push(d));
    cancelled.cancel('CANCELLED');
    await expect(cancelled.run(activities().proposePayments, { organizationId: orgB.organizationId, statementId })).rejects.toBeInstanceOf(CancelledFailure);
    expect(beats).toEqual([{ done: 3, total: 3 }]);
    // the chunk finished before the cancellation was seen is kept; a rerun adds nothing twice
    expect(await stack.sql(`SELECT p.id FROM cash_app.payments p JOIN cash_app.bank_transactions t ON t.id = p.bank_transaction_id WHERE t.statement_id = $1`, [statementId])).toHaveLength(2);
    const env = new MockActivityEnvironment();
    expect(await env.run(activities().proposePayments, { organizationId: orgB.organizationId, statementId })).toEqual({ proposed: 0, unmatched: 1 });
    expect(await stack.sql(`SELECT p.id FROM cash_app.payments p JOIN cash_app.bank_transactions t ON t.id = p.bank_transaction_id WHERE t.statement_id = $1`, [statementId])).toHaveLength(2);
  });
});

describe('manual payments', () => {
  it('creates a payment for an unmatched deposit, once', async () => {
    const create = (body: unknown) => stack.request('POST', '/v2/payments', { token: orgA.token, body });
    const unknown = await create({ bank_transaction_id: randomUUID() });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].loc).toEqual(['body', 'bank_transaction_id']);
    const withdrawal = await create({ bank_transaction_id: first.txIds[4] });
    expect(withdrawal.status).toBe(422);
    expect((await create({ bank_transaction_id: first.txIds[0] })).status).toBe(409);
    // another organization cannot use this deposit
    expect((await stack.request('POST', '/v2/payments', { token: orgB.token, body: { bank_transaction_id: first.txIds[3] } })).status).toBe(422);

    const tooMuch = await create({ bank_transaction_id: first.txIds[3], allocations: [{ invoice_id: await invoiceId(orgA, '9000020'), amount_paid: '100.01' }] });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.errors[0]).toMatchObject({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.exceeds_transaction_amount' });
    expect(await paymentOf(orgA, first.txIds[3]!)).toBeUndefined(); // nothing left behind

    const res = await create({ bank_transaction_id: first.txIds[3], allocations: [{ invoice_id: await invoiceId(orgA, '9000020'), amount_paid: '100.00' }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'payment',
      status: 'unapproved',
      bank_transaction_id: first.txIds[3],
      partner_id: await partnerId(orgA, 'C-300'),
      amount: '100.00',
      allocated_amount: '100.00',
      match_score: null,
      match_reasons: [],
    });
    expect((await create({ bank_transaction_id: first.txIds[3] })).status).toBe(409);
  });
});

describe('matching: amounts, dates and a disagreeing payer', () => {
  it('does not take the amount or the date in the remittance text for an invoice number', async () => {
    const c = await pushCustomers(stack, orgA.apiKey, [customerRecord({ customer_code: 'C-400', name1: 'Delta Supplies SE' })]);
    expect(c.body.results[0].success).toBe(true);
    const pushed = await pushInvoices(stack, orgA.apiKey, [
      invoiceRecord({ document_number: '1190', reference: '', customer_code: 'C-400', amount_in_document_currency: 1190 }),
      invoiceRecord({ document_number: '15102026', reference: '', customer_code: 'C-400', amount_in_document_currency: 1190 }),
    ]);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
    // Before: "1.190,00" gave the token 1190 and "15.10.2026" the token 15102026, and this deposit of
    // somebody else was proposed against Delta's invoice 1190.
    const s = await statement(orgA, [
      { amount: '1190.00', remittance_information: 'Zahlung 1.190,00 EUR vom 15.10.2026', counterparty_name: 'Omega Unknown Trading' },
      { amount: '1190.00', remittance_information: 'Payment 1,190.00 of 2026-10-15', counterparty_name: 'Omega Unknown Trading' },
    ]);
    for (const tx of s.txIds) expect(await paymentOf(orgA, tx)).toBeUndefined();
  });

  it('records the conflict and scores lower when the payer known by IBAN is not the invoices\' partner', async () => {
    // ACME_IBAN was learned for Acme (C-100) when its payment was approved; this deposit from it quotes Beta's invoice.
    const s = await statement(orgA, [{ amount: '1000.00', remittance_information: 'Invoice 9000010', counterparty_name: 'Acme Handels GmbH', counterparty_iban: ACME_IBAN }]);
    const p = await paymentOf(orgA, s.txIds[0]!);
    // the payment is the payer's (Acme paid, known by its IBAN), allocated to the invoice it quotes
    expect(p.partner_id).toBe(await partnerId(orgA, 'C-100'));
    expect(p.allocations.map((a: { invoice_number: string }) => a.invoice_number)).toEqual(['9000010']);
    expect(p.match_reasons).toContainEqual({
      rule: 'payer_conflict',
      payer_rule: 'iban',
      payer_partner_id: await partnerId(orgA, 'C-100'),
      partner_id: await partnerId(orgA, 'C-200'),
      value: ACME_IBAN,
    });
    expect(p.match_score).toBe(0.5); // number 0.5 + exact amount 0.3 − the disagreeing payer 0.3
  });
});

describe('matching across statements', () => {
  it('matches an earlier statement\'s open deposit when a later statement arrives after its invoice was pushed', async () => {
    const c = await pushCustomers(stack, orgB.apiKey, [customerRecord({ customer_code: 'C-500', name1: 'Epsilon Tools GmbH' })]);
    expect(c.body.results[0].success).toBe(true);
    const early = await statement(orgB, [{ amount: '640.00', remittance_information: 'Invoice 9000500', counterparty_name: 'Epsilon Tools' }]);
    expect(await paymentOf(orgB, early.txIds[0]!)).toBeUndefined(); // the invoice is not in the ledger yet
    const pushed = await pushInvoices(stack, orgB.apiKey, [invoiceRecord({ document_number: '9000500', reference: '', customer_code: 'C-500', amount_in_document_currency: 640 })]);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
    await statement(orgB, [{ amount: '12.00', remittance_information: 'nothing to find here' }]);
    const p = await paymentOf(orgB, early.txIds[0]!);
    expect(p.partner_id).toBe(await partnerId(orgB, 'C-500'));
    expect(p.allocations.map((a: { invoice_number: string; amount_paid: string }) => [a.invoice_number, a.amount_paid])).toEqual([['9000500', '640.00']]);
  });
});

describe('allocation amounts in the currency\'s minor units', () => {
  /** A deposit in `currency` that matching leaves alone (no payer, no numbers), through the gateway. */
  async function deposit(currency: string, account: string, amount: string): Promise<string> {
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: orgB.token,
      body: {
        account,
        currency,
        statement_number: `S-${randomUUID()}`,
        transactions: [{ amount, booking_date: '2026-11-02', value_date: '2026-11-02', counterparty_name: 'Nobody Known', remittance_information: 'Sammelzahlung' }],
      },
    });
    expect(res.status).toBe(200);
    return (await waitForStatement(stack, orgB.token, res.body.id)).transactions[0].id as string;
  }

  let jpyPaymentId: string;

  it('JPY (no decimals): refuses 1190.5 naming the field, answers amounts without decimals', async () => {
    const pushed = await pushInvoices(stack, orgB.apiKey, [invoiceRecord({ document_number: 'JP-1', reference: '', customer_code: 'C-100', currency: 'JPY', amount_in_document_currency: 3000, amount_in_local_currency: 18.5 })]);
    expect(pushed.body.results[0]).toMatchObject({ success: true });
    const txId = await deposit('JPY', 'DE02100100100006820101', '5000');
    const invoice = await invoiceId(orgB, 'JP-1');
    const bad = await stack.request('POST', '/v2/payments', { token: orgB.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoice, amount_paid: '1190.5', amount_discount: 0.5 }] } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect(bad.body.errors).toEqual([
      expect.objectContaining({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.decimal_places', msg: 'has more decimals than JPY allows (no decimals)' }),
      expect.objectContaining({ loc: ['body', 'allocations', 0, 'amount_discount'], type: 'value_error.decimal_places' }),
    ]);
    expect(await paymentOf(orgB, txId)).toBeUndefined(); // nothing written

    const ok = await stack.request('POST', '/v2/payments', { token: orgB.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoice, amount_paid: '1190' }] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ currency: 'JPY', amount: '5000', allocated_amount: '1190', unallocated_amount: '3810', transaction: { amount: '5000' } });
    expect(ok.body.allocations[0]).toMatchObject({ amount_paid: '1190', amount_discount: '0', amount_withheld: '0', adjustment_amount: '0' });
    jpyPaymentId = ok.body.id;

    const patched = await stack.request('PATCH', `/v2/payments/${jpyPaymentId}`, { token: orgB.token, body: { allocations: [{ invoice_id: invoice, amount_paid: 1190.25 }] } });
    expect(patched.status).toBe(422);
    expect(patched.body.errors[0]).toMatchObject({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.decimal_places' });
    expect((await stack.request('GET', `/v2/payments/${jpyPaymentId}`, { token: orgB.token })).body.allocated_amount).toBe('1190');
  });

  it('KWD (3 decimals): keeps fils exact in and out, refuses a fourth decimal', async () => {
    const pushed = await pushInvoices(stack, orgB.apiKey, [
      invoiceRecord({ document_number: 'KW-1', reference: '', customer_code: 'C-100', currency: 'KWD', amount_in_document_currency: 1500.125, amount_in_local_currency: 4500.38 }),
    ]);
    expect(pushed.body.results[0]).toMatchObject({ success: true });
    const txId = await deposit('KWD', 'KW81CBKU0000000000001234560101', '2000.000');
    const invoice = await invoiceId(orgB, 'KW-1');
    const bad = await stack.request('POST', '/v2/payments', { token: orgB.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoice, amount_paid: '1190.1255' }] } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ loc: ['body', 'allocations', 0, 'amount_paid'], type: 'value_error.decimal_places', msg: 'has more decimals than KWD allows (at most 3)' });
    const ok = await stack.request('POST', '/v2/payments', { token: orgB.token, body: { bank_transaction_id: txId, allocations: [{ invoice_id: invoice, amount_paid: '1190.125' }] } });
    expect(ok.status).toBe(200);
    // Before: every amount was written with 2 decimals ("1190.13", "2000.00")
    expect(ok.body).toMatchObject({ currency: 'KWD', amount: '2000.000', allocated_amount: '1190.125', unallocated_amount: '809.875' });
    expect(ok.body.allocations[0]).toMatchObject({ amount_paid: '1190.125', amount_discount: '0.000' });
  });

  it('the database refuses an allocation with more decimals than its payment\'s currency, whoever writes it', async () => {
    const insert = (amount: string) =>
      stack.sql(
        `INSERT INTO cash_app.payment_allocations (id, organization_id, payment_id, invoice_id, amount_paid) VALUES (gen_random_uuid(), $1, $2, $3, $4)`,
        [orgB.organizationId, jpyPaymentId, randomUUID(), amount],
      );
    await expect(insert('0.5')).rejects.toThrow(/more decimals than JPY allows/);
    await insert('7'); // whole yen are fine
    await stack.sql(`DELETE FROM cash_app.payment_allocations WHERE payment_id = $1 AND amount_paid = 7`, [jpyPaymentId]);
    await expect(stack.sql(`UPDATE cash_app.payment_allocations SET amount_discount = 0.01 WHERE payment_id = $1`, [jpyPaymentId])).rejects.toThrow(
      /payment allocation .* more decimals than JPY allows \(0\)/,
    );
    const [{ digits }] = await stack.sql(`SELECT cash_app.currency_minor_units('KWD') AS digits`);
    expect(digits).toBe(3);
    expect((await stack.request('GET', `/v2/payments/${jpyPaymentId}`, { token: orgB.token })).body.allocations).toHaveLength(1);
  });
});
