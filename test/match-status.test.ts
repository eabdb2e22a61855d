/**
 * Where each deposit stands (`match_status`, `match_counts`), the shortfall a payment states, and the
 * organization's automatic approval, end to end through the gateway: ledger data pushed through the
 * middleware push endpoints, statements uploaded and processed by their workflow (matching by the
 * real engine), payments approved, edited and created through the API.
 *
 * Outside the API: the store functions matching's activity calls (insertProposals with a proposal
 * that states its shortfall, recordMatchOutcomes with a `not_a_payment` verdict) and the posting
 * outcomes the payment-posting workflow records (posted, then unposted: no ERP runs in this file)
 * are called directly, as the output they record; SQL reads ids and tries to write a match status by
 * hand (no endpoint can), which the database must refuse to keep.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, createDb, type Db, type TemporalHandle } from '@rp/platform';
import { ENTITY_ID, ORGANIZATION_ID, paymentPostingWorkflowId } from '@rp/workflows';
import { insertProposals, type DepositRow } from '../services/cash-app/src/store/matching.js';
import { recordMatchOutcomes } from '../services/cash-app/src/store/bank-transactions.js';
import { markUnpostingRequested, recordPostingOutcome } from '../services/cash-app/src/store/payment-posting.js';
import { createMatchingActivities } from '../services/cash-app/src/activities/matching.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let temporal: TemporalHandle;
let db: Db;
let orgA: Org;
let orgB: Org;

async function seedLedger(org: Org) {
  const customers = await pushCustomers(stack, org.apiKey, [
    customerRecord({ customer_code: 'C-100', name1: 'Acme Handels GmbH' }),
    customerRecord({ customer_code: 'C-200', name1: 'Beta Logistics Ltd' }),
    customerRecord({ customer_code: 'C-300', name1: 'Gamma Foods Inc' }),
  ]);
  expect(customers.body.results.every((r) => r.success)).toBe(true);
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '9000001', reference: 'INV-9000001', customer_code: 'C-100', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '9000002', reference: 'INV-9000002', customer_code: 'C-100', amount_in_document_currency: 500, net_due_date: '2026-10-05' }),
    invoiceRecord({ document_number: '9000010', reference: 'INV-9000010', customer_code: 'C-200', amount_in_document_currency: 1000 }),
    invoiceRecord({ document_number: '9000020', reference: 'INV-9000020', customer_code: 'C-300', amount_in_document_currency: 300 }),
    invoiceRecord({ document_number: '9000021', reference: 'INV-9000021', customer_code: 'C-300', amount_in_document_currency: 800 }),
  ]);
  expect(invoices.body.results.every((r) => r.success)).toBe(true);
}

async function invoiceId(org: Org, number: string): Promise<string> {
  return (await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, number]))[0].id as string;
}

interface Tx {
  amount: string;
  remittance_information?: string;
  counterparty_name?: string;
}

/** Upload a JSON statement and wait until it is processed; its transactions in file order. */
async function statement(org: Org, txs: Tx[]): Promise<{ statementId: string; txIds: string[]; body: any }> {
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
        remittance_information: t.remittance_information ?? null,
      })),
    },
  });
  expect(res.status).toBe(200);
  const body = await waitForStatement(stack, org.token, res.body.id as string);
  const txIds = (body.transactions as { id: string; sequence: number }[]).sort((a, b) => a.sequence - b.sequence).map((t) => t.id);
  return { statementId: res.body.id as string, txIds, body };
}

async function statusesOf(org: Org, statementId: string): Promise<(string | null)[]> {
  const res = await stack.request('GET', `/v2/bank-statements/${statementId}/transactions?page_size=500`, { token: org.token });
  expect(res.status).toBe(200);
  return (res.body.data as { match_status: string | null }[]).map((t) => t.match_status);
}

async function countsOf(org: Org, statementId: string) {
  const res = await stack.request('GET', `/v2/bank-statements/${statementId}?transactions=omit`, { token: org.token });
  expect(res.status).toBe(200);
  return res.body.match_counts;
}

async function paymentOf(org: Org, txId: string) {
  const res = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

let first: { statementId: string; txIds: string[]; body: any };

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
  orgA = await stack.onboard('Match status A');
  orgB = await stack.onboard('Match status B');
  await seedLedger(orgA);
  await seedLedger(orgB);
  first = await statement(orgA, [
    { amount: '1190.00', remittance_information: 'Rechnung 9000001', counterparty_name: 'ACME HANDELS GMBH' },
    { amount: '997.50', remittance_information: 'Invoice 9000010 less charges', counterparty_name: 'Beta Logistics' },
    { amount: '100.00', counterparty_name: 'Unknown Payer Ltd' },
    { amount: '-50.00', remittance_information: 'Bank fee' },
    { amount: '300.00', remittance_information: 'Credit interest' },
  ]);
});

afterAll(async () => {
  await temporal?.close();
  await db?.destroy();
  await stack?.close();
});

describe('match_status of bank transactions', () => {
  it('says after processing which deposits are proposed, unmatched or not a payment; debits have none', async () => {
    expect(first.body.transactions.map((t: { match_status: string | null }) => t.match_status)).toEqual(['proposed', 'proposed', 'unmatched', null, 'not_a_payment']);
    expect(first.body.match_counts).toEqual({ unmatched: 1, proposed: 2, approved: 0, not_a_payment: 1 });
    const list = await stack.request('GET', '/v2/bank-statements?page_size=200', { token: orgA.token });
    expect(list.body.data.find((s: { id: string }) => s.id === first.statementId).match_counts).toEqual({ unmatched: 1, proposed: 2, approved: 0, not_a_payment: 1 });
  });

  it('filters a statement\'s transactions by match status (repeated or comma-separated); an unknown status is 422', async () => {
    const url = `/v2/bank-statements/${first.statementId}/transactions`;
    const some = await stack.request('GET', `${url}?match_status=unmatched,not_a_payment`, { token: orgA.token });
    expect(some.status).toBe(200);
    expect(some.body.total_records).toBe(2);
    expect(some.body.data.map((t: { id: string }) => t.id)).toEqual([first.txIds[2], first.txIds[4]]);
    const repeated = await stack.request('GET', `${url}?match_status=not_a_payment&match_status=unmatched`, { token: orgA.token });
    expect(repeated.body.data.map((t: { id: string }) => t.id)).toEqual([first.txIds[2], first.txIds[4]]);
    const none = await stack.request('GET', `${url}?match_status=approved`, { token: orgA.token });
    expect(none.body).toMatchObject({ total_records: 0, data: [] });
    for (const bad of ['bogus', 'unmatched,bogus', '', 'x'.repeat(61), 'unmatched&match_status=bogus']) {
      const res = await stack.request('GET', `${url}?match_status=${bad}`, { token: orgA.token });
      expect(res.status, bad).toBe(422);
      expect(res.body.type).toBe('request-validation');
      expect(res.body.errors[0].loc.slice(0, 2)).toEqual(['query', 'match_status']);
    }
  });

  it('follows approval, a manual payment and a deletion', async () => {
    const s = await statement(orgA, [
      { amount: '500.00', remittance_information: 'INV-9000002', counterparty_name: 'Acme Handels GmbH' },
      { amount: '42.00', counterparty_name: 'Nobody Known' },
    ]);
    expect(await statusesOf(orgA, s.statementId)).toEqual(['proposed', 'unmatched']);
    const p = await paymentOf(orgA, s.txIds[0]!);
    const approved = await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: orgA.token });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', auto_approved: false, approved_by: orgA.userId });
    expect(await statusesOf(orgA, s.statementId)).toEqual(['approved', 'unmatched']);
    const created = await stack.request('POST', '/v2/payments', { token: orgA.token, body: { bank_transaction_id: s.txIds[1] } });
    expect(created.status).toBe(200);
    expect(await statusesOf(orgA, s.statementId)).toEqual(['approved', 'proposed']);
    expect(await countsOf(orgA, s.statementId)).toEqual({ unmatched: 0, proposed: 1, approved: 1, not_a_payment: 0 });

    // a statement whose payments are unapproved is deleted with them (the triggers follow the cascade)
    const gone = await statement(orgA, [{ amount: '300.00', remittance_information: 'Invoice 9000020', counterparty_name: 'Gamma Foods' }]);
    expect(await statusesOf(orgA, gone.statementId)).toEqual(['proposed']);
    expect((await stack.request('DELETE', `/v2/bank-statements/${gone.statementId}`, { token: orgA.token })).status).toBe(204);
    expect((await stack.request('GET', `/v2/bank-statements/${gone.statementId}`, { token: orgA.token })).status).toBe(404);
    expect(await stack.sql(`SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1`, [gone.statementId])).toHaveLength(0);
  });

  it('is derived by the database: a status written by hand is replaced by the true one, and a debit never gets one', async () => {
    await stack.sql(`UPDATE cash_app.bank_transactions SET match_status = 'approved' WHERE id = $1`, [first.txIds[2]]);
    await stack.sql(`UPDATE cash_app.bank_transactions SET match_status = 'unmatched' WHERE id = $1`, [first.txIds[3]]);
    const rows = await stack.sql(`SELECT id, match_status FROM cash_app.bank_transactions WHERE id = ANY($1) ORDER BY sequence`, [[first.txIds[2], first.txIds[3]]]);
    expect(rows.map((r) => r.match_status)).toEqual(['unmatched', null]);
    // lines written without their status, or with a wrong one, get the one the rule gives
    const inserted = await stack.sql(
      `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, unique_import_id, sequence, amount, currency, is_payment, match_status)
       VALUES ($1, $3, $4, $5 || ':a', 900, 12.00, 'EUR', false, NULL), ($2, $3, $4, $5 || ':b', 901, -12.00, 'EUR', false, 'unmatched')
       RETURNING match_status`,
      [randomUUID(), randomUUID(), orgA.organizationId, first.statementId, randomUUID()],
    );
    expect(inserted.map((r) => r.match_status)).toEqual(['not_a_payment', null]);
    await stack.sql(`DELETE FROM cash_app.bank_transactions WHERE statement_id = $1 AND sequence >= 900`, [first.statementId]);
  });

  it('records matching\'s not_a_payment verdict: the deposit is no customer payment and is not matched again', async () => {
    const s = await statement(orgA, [
      { amount: '77.00', counterparty_name: 'Card Acquirer Settlement' },
      { amount: '66.00', counterparty_name: 'Somebody Else' },
    ]);
    expect(await statusesOf(orgA, s.statementId)).toEqual(['unmatched', 'unmatched']);
    const changed = await recordMatchOutcomes(db, orgA.organizationId, [
      { outcome: 'not_a_payment', transaction_id: s.txIds[0]!, reasons: [{ rule: 'card_settlement' }] },
      { outcome: 'unmatched', transaction_id: s.txIds[1]!, reasons: [] },
    ]);
    expect(changed).toBe(1);
    // another organization's line is not touched
    expect(await recordMatchOutcomes(db, orgB.organizationId, [{ outcome: 'not_a_payment', transaction_id: s.txIds[1]!, reasons: [] }])).toBe(0);
    expect(await statusesOf(orgA, s.statementId)).toEqual(['not_a_payment', 'unmatched']);
    const line = (await stack.request('GET', `/v2/bank-statements/${s.statementId}/transactions?match_status=not_a_payment`, { token: orgA.token })).body.data[0];
    expect(line).toMatchObject({ id: s.txIds[0], is_payment: false, match_status: 'not_a_payment' });
    const again = await createMatchingActivities({ db, config: { MATCH_TOLERANCE_AMOUNT: '5.00', MATCH_TOLERANCE_PERCENT: '0', MATCH_TOLERANCE_ADJUSTMENT: 'short_pay_write_off' } }).proposePayments({
      organizationId: orgA.organizationId,
      statementId: s.statementId,
    });
    expect(again).toEqual({ proposed: 0, unmatched: 1 });
  });
});

describe('shortfall of payments', () => {
  it('a short payment within tolerance states its fee', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    expect(p.allocations).toEqual([expect.objectContaining({ invoice_number: '9000010', amount_paid: '997.50', adjustment_amount: '2.50' })]);
    expect(p.shortfall).toEqual({ amount: '2.50', reason: 'fee' });
  });

  it('is recomputed from the allocations a user gives (PATCH)', async () => {
    const p = await paymentOf(orgA, first.txIds[1]!);
    const inv = await invoiceId(orgA, '9000010');
    const patch = async (allocations: object[]) => {
      const res = await stack.request('PATCH', `/v2/payments/${p.id}`, { token: orgA.token, body: { allocations } });
      expect(res.status).toBe(200);
      return res.body.shortfall;
    };
    expect(await patch([{ invoice_id: inv, amount_paid: '997.50' }])).toEqual({ amount: '2.50', reason: 'partial' });
    expect(await patch([{ invoice_id: inv, amount_paid: '997.50', amount_discount: '2.50' }])).toEqual({ amount: '2.50', reason: 'discount' });
    expect(await patch([{ invoice_id: inv, amount_paid: '997.50', amount_withheld: '2.50' }])).toEqual({ amount: '2.50', reason: 'deduction' });
    expect(await patch([{ invoice_id: inv, amount_paid: '500.00', amount_discount: '20.00' }])).toEqual({ amount: '500.00', reason: 'partial' });
    expect(await patch([{ invoice_id: inv, amount_paid: '997.50', amount_discount: '2.50' }, { invoice_id: await invoiceId(orgA, '9000021'), amount_paid: '0.00', amount_withheld: '800.00' }])).toEqual({
      amount: '802.50',
      reason: 'deduction',
    });
    expect(await patch([])).toBeNull();
    const read = await stack.request('GET', `/v2/payments/${p.id}`, { token: orgA.token });
    expect(read.body.shortfall).toBeNull();
  });

  it('stores the shortfall matching states with a proposal, exact to the currency\'s minor units', async () => {
    const s = await statement(orgA, [{ amount: '600.00', counterparty_name: 'Payer Without Reference' }]);
    const deposit: DepositRow = {
      id: s.txIds[0]!, amount: '600.00', currency: 'EUR', counterparty_name: null, counterparty_account: null, counterparty_iban: null,
      remittance_information: null, bank_reference: null, end_to_end_id: null, booking_date: '2026-10-15', value_date: '2026-10-15',
    };
    const inv = await invoiceId(orgA, '9000021');
    const proposal = (shortfall: { amount: string; reason: 'partial' }) => ({
      transaction_id: s.txIds[0]!, partner_id: null, remittance_id: null, score: 0.4, reasons: [{ rule: 'amount_partial' }],
      allocations: [{ invoice_id: inv, amount_paid: '600.00', amount_discount: '0', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0' }],
      shortfall,
    });
    await expect(insertProposals(db, orgA.organizationId, [proposal({ amount: '200.005', reason: 'partial' })], new Map([[deposit.id, deposit]]))).rejects.toThrow(/payments_shortfall_amount_check/);
    expect(await insertProposals(db, orgA.organizationId, [proposal({ amount: '200.00', reason: 'partial' })], new Map([[deposit.id, deposit]]))).toBe(1);
    const p = await paymentOf(orgA, s.txIds[0]!);
    expect(p.shortfall).toEqual({ amount: '200.00', reason: 'partial' });
    expect(await statusesOf(orgA, s.statementId)).toEqual(['proposed']);
  });
});

describe('automatic approval (organization auto_approve_threshold)', () => {
  it('is off by default: nothing is approved without a user', async () => {
    const org = await stack.request('GET', '/v2/organization', { token: orgA.token });
    expect(org.body.auto_approve_threshold).toBeNull();
    const p = await paymentOf(orgA, first.txIds[0]!);
    expect(p.match_score).toBeGreaterThan(0.9);
    expect(p).toMatchObject({ status: 'unapproved', auto_approved: false });
  });

  it('refuses a threshold that is not a number 0..1 with at most 4 decimals (422), changing nothing', async () => {
    for (const bad of [-1, 2, 'x', 0.12345, true, {}]) {
      const res = await stack.request('PATCH', '/v2/organization', { token: orgB.token, body: { auto_approve_threshold: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.type).toBe('request-validation');
      expect(res.body.errors[0].loc).toEqual(['body', 'auto_approve_threshold']);
    }
    expect((await stack.request('PATCH', '/v2/organization', { token: orgB.token, body: {} })).status).toBe(422);
    expect((await stack.request('GET', '/v2/organization', { token: orgB.token })).body).toMatchObject({ auto_approve_threshold: null, timezone: 'Europe/Berlin' });
  });

  it('at 0.8 approves a high-score proposal as a user\'s approval does (ERP posting started), and leaves a low-score one', async () => {
    const set = await stack.request('PATCH', '/v2/organization', { token: orgB.token, body: { auto_approve_threshold: 0.8 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ auto_approve_threshold: 0.8, timezone: 'Europe/Berlin' });
    const s = await statement(orgB, [
      { amount: '1190.00', remittance_information: 'Rechnung 9000001', counterparty_name: 'ACME HANDELS GMBH' },
      { amount: '500.00', remittance_information: 'Zahlung', counterparty_name: 'Acme Handels' },
    ]);
    const high = await paymentOf(orgB, s.txIds[0]!);
    const low = await paymentOf(orgB, s.txIds[1]!);
    expect(high.match_score).toBeGreaterThanOrEqual(0.8);
    expect(low.match_score).toBeLessThan(0.8);
    expect(high).toMatchObject({ status: 'approved', auto_approved: true, approved_by: null, posting_status: 'pending' });
    expect(high.approved_at).not.toBeNull();
    expect(low).toMatchObject({ status: 'unapproved', auto_approved: false, approved_by: null, posting_status: 'not_posted' });
    expect(await statusesOf(orgB, s.statementId)).toEqual(['approved', 'proposed']);
    expect(s.body.match_counts).toEqual({ unmatched: 0, proposed: 1, approved: 1, not_a_payment: 0 });
    // the payer's account is learned as by a manual approval, and the ERP posting workflow runs as for one
    const manual = await stack.request('POST', `/v2/payments/${low.id}/approve`, { token: orgB.token });
    expect(manual.body).toMatchObject({ status: 'approved', auto_approved: false, approved_by: orgB.userId, posting_status: 'pending' });
    for (const id of [high.id, manual.body.id]) {
      const d = await temporal.client.workflow.getHandle(paymentPostingWorkflowId(id as string)).describe();
      expect(d.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgB.organizationId);
      expect(d.typedSearchAttributes.get(ENTITY_ID)).toBe(id);
    }
  });

  it('an automatic approval undone by an unposting leaves an unapproved proposal, no longer marked automatic', async () => {
    // what the posting workflow records through cash-app's activities (posted by an ERP that can take it back, then unposted)
    const s = (await stack.request('GET', '/v2/payments?status=approved&page_size=500', { token: orgB.token })).body.data.find((p: { auto_approved: boolean }) => p.auto_approved);
    expect(s).toBeDefined();
    const outcome = { postingId: randomUUID(), provider: 'quickbooks_online', canUnpost: true, erpPaymentId: 'QB-1', erpDocumentNumber: null, postedAt: new Date().toISOString() };
    expect(await recordPostingOutcome(db, orgB.organizationId, s.id, 'post', { status: 'posted', ...outcome })).toBe(1);
    expect(await markUnpostingRequested(db, orgB.organizationId, s.id)).toBe(true);
    expect(await recordPostingOutcome(db, orgB.organizationId, s.id, 'unpost', { status: 'unposted', postingId: outcome.postingId })).toBe(1);
    const after = (await stack.request('GET', `/v2/payments/${s.id}`, { token: orgB.token })).body;
    expect(after).toMatchObject({ status: 'unapproved', auto_approved: false, approved_by: null, posting_status: 'not_posted' });
    const line = (await stack.request('GET', `/v2/bank-statements/${after.statement_id}/transactions?match_status=proposed`, { token: orgB.token })).body.data;
    expect(line.map((t: { id: string }) => t.id)).toContain(after.bank_transaction_id);
  });

  it('null turns it off again', async () => {
    const off = await stack.request('PATCH', '/v2/organization', { token: orgB.token, body: { auto_approve_threshold: null } });
    expect(off.body.auto_approve_threshold).toBeNull();
    const s = await statement(orgB, [{ amount: '1000.00', remittance_information: 'Invoice 9000010', counterparty_name: 'Beta Logistics Ltd' }]);
    const p = await paymentOf(orgB, s.txIds[0]!);
    expect(p.match_score).toBeGreaterThan(0.8);
    expect(p).toMatchObject({ status: 'unapproved', auto_approved: false });
  });
});

describe('a statement of many write chunks', () => {
  it('proposes one payment per deposit, for the invoice its text names, with one payment.proposed event each', async () => {
    // 1,100 deposits: three chunks of proposals, written by the activity two at a time
    const org = await stack.onboard('Match status many chunks');
    expect((await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'C-900', name1: 'Many Chunks GmbH' })])).body.results.every((r) => r.success)).toBe(true);
    const n = 1100;
    const numbers = Array.from({ length: n }, (_, i) => String(9700000 + i));
    for (let i = 0; i < n; i += 100) {
      const batch = numbers.slice(i, i + 100).map((number, j) => invoiceRecord({ document_number: number, reference: `INV-${number}`, customer_code: 'C-900', amount_in_document_currency: 100 + i + j }));
      expect((await pushInvoices(stack, org.apiKey, batch)).body.results.every((r) => r.success)).toBe(true);
    }
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE44500105175407324931',
        currency: 'EUR',
        transactions: numbers.map((number, i) => ({ amount: `${100 + i}.00`, booking_date: '2026-10-15', counterparty_name: 'Many Chunks GmbH', remittance_information: `Invoice ${number}` })),
      },
    });
    expect(res.status).toBe(200);
    await waitForStatement(stack, org.token, res.body.id as string, { timeoutMs: 180_000 });
    expect(await countsOf(org, res.body.id as string)).toMatchObject({ proposed: n, unmatched: 0 });
    const rows = await stack.sql(
      `SELECT t.remittance_information AS text, count(DISTINCT p.id)::int AS payments, min(d.document_number) AS paid
         FROM cash_app.bank_transactions t
         LEFT JOIN cash_app.payments p ON p.bank_transaction_id = t.id
         LEFT JOIN cash_app.payment_allocations a ON a.payment_id = p.id
         LEFT JOIN integrations.documents d ON d.id = a.invoice_id
        WHERE t.statement_id = $1 GROUP BY t.id, t.remittance_information`,
      [res.body.id],
    );
    expect(rows).toHaveLength(n);
    expect(rows.filter((r) => r.payments !== 1 || r.text !== `Invoice ${r.paid}`)).toEqual([]);
    const [events] = await stack.sql(
      `SELECT count(*)::int AS n, count(DISTINCT resource_id)::int AS payments FROM cash_app.events WHERE organization_id = $1 AND type = 'payment.proposed'`,
      [org.organizationId],
    );
    expect(events).toEqual({ n, payments: n });
  });
});
