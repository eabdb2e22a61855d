import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  orgA = await stack.onboard('Adjusting A');
  orgB = await stack.onboard('Adjusting B');
});
afterAll(async () => stack?.close());

async function ledgerAccounts(org: Org) {
  const res = await stack.request('GET', '/v2/adjustments/ledger-accounts', { token: org.token });
  expect(res.status).toBe(200);
  return res.body;
}

/**
 * Make a payment allocation use the adjustment, the way a user does: the ledger gets an invoice
 * (push endpoint), a bank statement with a short deposit is uploaded and processed into a proposed
 * payment, and the payment's allocation is edited to book the shortfall to the adjustment.
 */
async function allocateWith(org: Org, adjustmentId: string) {
  const number = `95${Math.floor(Math.random() * 1e5)}`;
  const customer = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'C-ADJ', name1: 'Adjusted Customer AG' })]);
  expect(customer.body.results[0].success).toBe(true);
  const pushed = await pushInvoices(stack, org.apiKey, [invoiceRecord({ customer_code: 'C-ADJ', document_number: number, reference: `INV-${number}`, amount_in_document_currency: 1000 })]);
  const invoiceId = pushed.body.results[0].service_id!;
  const upload = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount: '995.00', booking_date: '2026-10-15', counterparty_name: 'Adjusted Customer AG', remittance_information: `Rechnung ${number}` }],
    },
  });
  expect(upload.status).toBe(200);
  const txId = (await waitForStatement(stack, org.token, upload.body.id)).transactions[0].id as string;
  const payment = (await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token })).body.data[0];
  const patched = await stack.request('PATCH', `/v2/payments/${payment.id}`, {
    token: org.token,
    body: { allocations: [{ invoice_id: invoiceId, amount_paid: '995.00', adjustment_id: adjustmentId, adjustment_amount: '5.00' }] },
  });
  expect(patched.status).toBe(200);
}

describe('user adjustments', () => {
  it('lists the ledger accounts of the system adjustments', async () => {
    const page = await ledgerAccounts(orgA);
    expect(page.data.map((a: any) => a.number)).toEqual(['4900', '6850', '6900', '7900']);
    expect(page.data[0]).toMatchObject({ object: 'ledger_account', classification: 'expense' });
  });

  it('creates an adjustment with an inline ledger account, and one on an existing account', async () => {
    const res = await stack.request('POST', '/v2/adjustments', {
      token: orgA.token,
      body: { name: 'Freight deduction', description: 'Customer deducted freight', ledger_account: { name: 'Freight out', number: '5100' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'adjustment',
      name: 'Freight deduction',
      description: 'Customer deducted freight',
      is_active: true,
      is_system: false,
      automated: false,
      can_delete: true,
      ledger_account: { object: 'ledger_account', name: 'Freight out', number: '5100', classification: 'expense' },
    });
    expect(res.body.ledger_account_id).toBe(res.body.ledger_account.id);
    expect((await stack.request('GET', `/v2/adjustments/${res.body.id}`, { token: orgA.token })).body).toEqual(res.body);

    const second = await stack.request('POST', '/v2/adjustments', {
      token: orgA.token,
      body: { name: 'Pallet return', automated: true, is_active: false, ledger_account_id: res.body.ledger_account_id },
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ name: 'Pallet return', description: null, automated: true, is_active: false, ledger_account_id: res.body.ledger_account_id });

    const list = await stack.request('GET', '/v2/adjustments?page_size=50', { token: orgA.token });
    expect(list.body.total_records).toBe(6);
    expect((await ledgerAccounts(orgA)).data.map((a: any) => a.number)).toEqual(['4900', '5100', '6850', '6900', '7900']);
  });

  it('validates the body', async () => {
    const both = await stack.request('POST', '/v2/adjustments', {
      token: orgA.token,
      body: { name: 'X', ledger_account_id: '0190a8b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b', ledger_account: { name: 'Y', number: '1' } },
    });
    expect(both.status).toBe(422);
    expect(both.body.errors[0].loc).toEqual(['body', 'ledger_account_id']);

    const neither = await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: 'X' } });
    expect(neither.status).toBe(422);

    const noName = await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: '  ', ledger_account: { name: 'Y', number: '1' } } });
    expect(noName.status).toBe(422);
    expect(noName.body.errors[0].loc).toEqual(['body', 'name']);

    // Another organization's ledger account is as unknown as a missing one.
    const accountOfB = (await ledgerAccounts(orgB)).data[0].id;
    const foreign = await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: 'X', ledger_account_id: accountOfB } });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual([{ loc: ['body', 'ledger_account_id'], msg: expect.any(String), type: 'not_found' }]);

    const dupNumber = await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: 'X', ledger_account: { name: 'Other', number: '6850' } } });
    expect(dupNumber.status).toBe(409);
    expect(dupNumber.body.type).toBe('conflict');
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.adjustments WHERE organization_id = $1 AND name = 'X'`, [orgA.organizationId]);
    expect(n).toBe(0);
  });

  it('creates a ledger account on its own; a duplicate number is a conflict', async () => {
    const res = await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: orgA.token, body: { name: 'Rebates', number: '4910', classification: 'revenue' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'ledger_account', name: 'Rebates', number: '4910', classification: 'revenue' });
    const again = await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: orgA.token, body: { name: 'Rebates 2', number: '4910' } });
    expect(again.status).toBe(409);
    const bad = await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: orgA.token, body: { name: 'Z', number: '1', classification: 'income' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'classification']);
  });

  it('updates only the fields given', async () => {
    const created = await stack.request('POST', '/v2/adjustments', {
      token: orgA.token,
      body: { name: 'Damaged goods', description: 'Goods arrived damaged', ledger_account: { name: 'Returns', number: '4950' } },
    });
    const id = created.body.id;
    const res = await stack.request('PATCH', `/v2/adjustments/${id}`, { token: orgA.token, body: { automated: true, description: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Damaged goods', description: null, automated: true, is_active: true });
    expect(Date.parse(res.body.modified_at)).toBeGreaterThanOrEqual(Date.parse(created.body.modified_at));

    const accounts = (await ledgerAccounts(orgA)).data;
    const fee = accounts.find((a: any) => a.number === '6850');
    const moved = await stack.request('PATCH', `/v2/adjustments/${id}`, { token: orgA.token, body: { name: 'Damaged in transit', ledger_account_id: fee.id } });
    expect(moved.body).toMatchObject({ name: 'Damaged in transit', ledger_account_id: fee.id, ledger_account: { number: '6850', name: 'Bank charges' } });

    const unknownAccount = await stack.request('PATCH', `/v2/adjustments/${id}`, { token: orgA.token, body: { ledger_account_id: '0190a8b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b' } });
    expect(unknownAccount.status).toBe(422);
    const badType = await stack.request('PATCH', `/v2/adjustments/${id}`, { token: orgA.token, body: { is_active: 'no' } });
    expect(badType.status).toBe(422);
    expect(badType.body.errors[0].loc).toEqual(['body', 'is_active']);
    expect((await stack.request('GET', `/v2/adjustments/${id}`, { token: orgA.token })).body.name).toBe('Damaged in transit');
  });

  it('deactivates a system adjustment but refuses to delete it', async () => {
    const list = await stack.request('GET', '/v2/adjustments', { token: orgA.token });
    const fx = list.body.data.find((a: any) => a.name === 'FX difference');
    expect(fx).toMatchObject({ is_system: true, can_delete: false });

    const del = await stack.request('DELETE', `/v2/adjustments/${fx.id}`, { token: orgA.token });
    expect(del.status).toBe(409);
    expect(del.body).toMatchObject({ type: 'conflict', status: 409 });
    expect((await stack.request('GET', `/v2/adjustments/${fx.id}`, { token: orgA.token })).status).toBe(200);

    const off = await stack.request('PATCH', `/v2/adjustments/${fx.id}`, { token: orgA.token, body: { is_active: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ is_active: false, is_system: true, can_delete: false });
    const inactive = await stack.request('GET', '/v2/adjustments?is_active=false', { token: orgA.token });
    expect(inactive.body.data.map((a: any) => a.id)).toContain(fx.id);
  });

  it('deletes an unused user adjustment (204) and refuses one a payment allocation uses', async () => {
    const make = async (n: string) =>
      (await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: n, ledger_account: { name: n, number: `9${Math.floor(Math.random() * 1e6)}` } } })).body;
    const unused = await make('Temporary');
    const del = await stack.request('DELETE', `/v2/adjustments/${unused.id}`, { token: orgA.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await stack.request('GET', `/v2/adjustments/${unused.id}`, { token: orgA.token })).status).toBe(404);
    expect((await stack.request('DELETE', `/v2/adjustments/${unused.id}`, { token: orgA.token })).status).toBe(404);

    const used = await make('Used one');
    expect(used.can_delete).toBe(true);
    await allocateWith(orgA, used.id);
    const got = await stack.request('GET', `/v2/adjustments/${used.id}`, { token: orgA.token });
    expect(got.body.can_delete).toBe(false);
    const refused = await stack.request('DELETE', `/v2/adjustments/${used.id}`, { token: orgA.token });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('conflict');
    expect((await stack.request('GET', `/v2/adjustments/${used.id}`, { token: orgA.token })).status).toBe(200);
  });

  it('keeps organizations apart', async () => {
    const mine = await stack.request('POST', '/v2/adjustments', { token: orgA.token, body: { name: 'Mine', ledger_account: { name: 'Mine', number: '8000' } } });
    const id = mine.body.id;
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Theirs' }], ['DELETE', undefined]] as const) {
      const res = await stack.request(method, `/v2/adjustments/${id}`, { token: orgB.token, body });
      expect(res.status, method).toBe(404);
      expect(res.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    expect((await stack.request('PATCH', '/v2/adjustments/not-a-uuid', { token: orgA.token, body: { name: 'x' } })).status).toBe(422); // ids are validated as ids
    const listB = await stack.request('GET', '/v2/adjustments', { token: orgB.token });
    expect(listB.body.data.map((a: any) => a.id)).not.toContain(id);
    expect((await ledgerAccounts(orgB)).data.map((a: any) => a.number)).not.toContain('8000');
    // orgB may reuse the same account number: numbers are unique per organization.
    const theirs = await stack.request('POST', '/v2/adjustments', { token: orgB.token, body: { name: 'Theirs', ledger_account: { name: 'Theirs', number: '8000' } } });
    expect(theirs.status).toBe(200);
    expect((await stack.request('GET', `/v2/adjustments/${id}`, { token: orgA.token })).body.name).toBe('Mine');
  });
});
