/**
 * Adjustments and their ledger accounts end to end through the gateway, written with the typed
 * client (@rp/client): paths, parameters, bodies and answers are checked against the generated
 * OpenAPI types; deliberately invalid bodies are cast (`as never`) to reach the validation.
 * SQL only to prove that a refused request stored nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createPlatformClient, type PlatformClient } from '@rp/client';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let rpA: PlatformClient;
let rpB: PlatformClient;

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  orgA = await stack.onboard('Adjusting A');
  orgB = await stack.onboard('Adjusting B');
  rpA = createPlatformClient({ baseUrl: stack.gatewayUrl, token: orgA.token });
  rpB = createPlatformClient({ baseUrl: stack.gatewayUrl, token: orgB.token });
});
afterAll(async () => stack?.close());

async function ledgerAccounts(rp: PlatformClient) {
  const { data, response } = await rp.GET('/v2/adjustments/ledger-accounts', {});
  expect(response.status).toBe(200);
  return data!;
}

const adjustmentPath = (id: string) => ({ params: { path: { adjustment_id: id } } });

/**
 * Make a payment allocation use the adjustment, the way a user does: the ledger gets an invoice
 * (push endpoint), a bank statement with a short deposit is uploaded and processed into a proposed
 * payment, and the payment's allocation is edited to book the shortfall to the adjustment.
 */
async function allocateWith(org: Org, rp: PlatformClient, adjustmentId: string) {
  const number = `95${Math.floor(Math.random() * 1e5)}`;
  const customer = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'C-ADJ', name1: 'Adjusted Customer AG' })]);
  expect(customer.body.results[0].success).toBe(true);
  const pushed = await pushInvoices(stack, org.apiKey, [invoiceRecord({ customer_code: 'C-ADJ', document_number: number, reference: `INV-${number}`, amount_in_document_currency: 1000 })]);
  const invoiceId = pushed.body.results[0].service_id!;
  const upload = await rp.POST('/v2/bank-statements', {
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount: '995.00', booking_date: '2026-10-15', counterparty_name: 'Adjusted Customer AG', remittance_information: `Rechnung ${number}` }],
    },
  });
  expect(upload.response.status).toBe(200);
  const txId = (await waitForStatement(stack, org.token, upload.data!.id)).transactions[0].id as string;
  const payment = (await rp.GET('/v2/payments', { params: { query: { bank_transaction_id: txId } } })).data!.data[0];
  const patched = await rp.PATCH('/v2/payments/{payment_id}', {
    params: { path: { payment_id: payment.id } },
    body: { allocations: [{ invoice_id: invoiceId, amount_paid: '995.00', adjustment_id: adjustmentId, adjustment_amount: '5.00' }] },
  });
  expect(patched.response.status).toBe(200);
}

describe('user adjustments', () => {
  it('lists the ledger accounts of the system adjustments', async () => {
    const page = await ledgerAccounts(rpA);
    expect(page.data.map((a) => a.number)).toEqual(['4900', '6850', '6900', '7900']);
    expect(page.data[0]).toMatchObject({ object: 'ledger_account', classification: 'expense' });
  });

  it('creates an adjustment with an inline ledger account, and one on an existing account', async () => {
    const res = await rpA.POST('/v2/adjustments', {
      body: { name: 'Freight deduction', description: 'Customer deducted freight', ledger_account: { name: 'Freight out', number: '5100' } },
    });
    expect(res.response.status).toBe(200);
    const created = res.data!;
    expect(created).toMatchObject({
      object: 'adjustment',
      name: 'Freight deduction',
      description: 'Customer deducted freight',
      is_active: true,
      is_system: false,
      automated: false,
      can_delete: true,
      ledger_account: { object: 'ledger_account', name: 'Freight out', number: '5100', classification: 'expense' },
    });
    expect(created.ledger_account_id).toBe(created.ledger_account.id);
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(created.id))).data).toEqual(created);

    const second = await rpA.POST('/v2/adjustments', {
      body: { name: 'Pallet return', automated: true, is_active: false, ledger_account_id: created.ledger_account_id },
    });
    expect(second.response.status).toBe(200);
    expect(second.data).toMatchObject({ name: 'Pallet return', description: null, automated: true, is_active: false, ledger_account_id: created.ledger_account_id });

    const list = await rpA.GET('/v2/adjustments', { params: { query: { page_size: 50 } as never } });
    expect(list.data!.total_records).toBe(6);
    expect((await ledgerAccounts(rpA)).data.map((a) => a.number)).toEqual(['4900', '5100', '6850', '6900', '7900']);
  });

  it('validates the body', async () => {
    const both = await rpA.POST('/v2/adjustments', {
      body: { name: 'X', ledger_account_id: '0190a8b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b', ledger_account: { name: 'Y', number: '1' } },
    });
    expect(both.response.status).toBe(422);
    expect(both.error!.errors![0].loc).toEqual(['body', 'ledger_account_id']);

    const neither = await rpA.POST('/v2/adjustments', { body: { name: 'X' } });
    expect(neither.response.status).toBe(422);

    const noName = await rpA.POST('/v2/adjustments', { body: { name: '  ', ledger_account: { name: 'Y', number: '1' } } });
    expect(noName.response.status).toBe(422);
    expect(noName.error!.errors![0].loc).toEqual(['body', 'name']);

    // Another organization's ledger account is as unknown as a missing one.
    const accountOfB = (await ledgerAccounts(rpB)).data[0].id;
    const foreign = await rpA.POST('/v2/adjustments', { body: { name: 'X', ledger_account_id: accountOfB } });
    expect(foreign.response.status).toBe(422);
    expect(foreign.error!.errors).toEqual([{ loc: ['body', 'ledger_account_id'], msg: expect.any(String), type: 'not_found' }]);

    const dupNumber = await rpA.POST('/v2/adjustments', { body: { name: 'X', ledger_account: { name: 'Other', number: '6850' } } });
    expect(dupNumber.response.status).toBe(409);
    expect(dupNumber.error!.type).toBe('conflict');
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.adjustments WHERE organization_id = $1 AND name = 'X'`, [orgA.organizationId]);
    expect(n).toBe(0);
  });

  it('creates a ledger account on its own; a duplicate number is a conflict', async () => {
    const res = await rpA.POST('/v2/adjustments/ledger-accounts', { body: { name: 'Rebates', number: '4910', classification: 'revenue' } });
    expect(res.response.status).toBe(200);
    expect(res.data).toMatchObject({ object: 'ledger_account', name: 'Rebates', number: '4910', classification: 'revenue' });
    const again = await rpA.POST('/v2/adjustments/ledger-accounts', { body: { name: 'Rebates 2', number: '4910' } });
    expect(again.response.status).toBe(409);
    const bad = await rpA.POST('/v2/adjustments/ledger-accounts', { body: { name: 'Z', number: '1', classification: 'income' } as never });
    expect(bad.response.status).toBe(422);
    expect(bad.error!.errors![0].loc).toEqual(['body', 'classification']);
  });

  it('updates only the fields given', async () => {
    const created = (
      await rpA.POST('/v2/adjustments', {
        body: { name: 'Damaged goods', description: 'Goods arrived damaged', ledger_account: { name: 'Returns', number: '4950' } },
      })
    ).data!;
    const id = created.id;
    const res = await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(id), body: { automated: true, description: null } });
    expect(res.response.status).toBe(200);
    expect(res.data).toMatchObject({ name: 'Damaged goods', description: null, automated: true, is_active: true });
    expect(Date.parse(res.data!.modified_at)).toBeGreaterThanOrEqual(Date.parse(created.modified_at));

    const accounts = (await ledgerAccounts(rpA)).data;
    const fee = accounts.find((a) => a.number === '6850')!;
    const moved = await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(id), body: { name: 'Damaged in transit', ledger_account_id: fee.id } });
    expect(moved.data).toMatchObject({ name: 'Damaged in transit', ledger_account_id: fee.id, ledger_account: { number: '6850', name: 'Bank charges' } });

    const unknownAccount = await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(id), body: { ledger_account_id: '0190a8b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b' } });
    expect(unknownAccount.response.status).toBe(422);
    const badType = await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(id), body: { is_active: 'no' } as never });
    expect(badType.response.status).toBe(422);
    expect(badType.error!.errors![0].loc).toEqual(['body', 'is_active']);
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(id))).data!.name).toBe('Damaged in transit');
  });

  it('deactivates a system adjustment but refuses to delete it', async () => {
    const list = await rpA.GET('/v2/adjustments', {});
    const fx = list.data!.data.find((a) => a.name === 'FX difference')!;
    expect(fx).toMatchObject({ is_system: true, can_delete: false });

    const del = await rpA.DELETE('/v2/adjustments/{adjustment_id}', adjustmentPath(fx.id));
    expect(del.response.status).toBe(409);
    expect(del.error).toMatchObject({ type: 'conflict', status: 409 });
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(fx.id))).response.status).toBe(200);

    const off = await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(fx.id), body: { is_active: false } });
    expect(off.response.status).toBe(200);
    expect(off.data).toMatchObject({ is_active: false, is_system: true, can_delete: false });
    const inactive = await rpA.GET('/v2/adjustments', { params: { query: { is_active: 'false' } as never } });
    expect(inactive.data!.data.map((a) => a.id)).toContain(fx.id);
  });

  it('deletes an unused user adjustment (204) and refuses one a payment allocation uses', async () => {
    const make = async (n: string) => (await rpA.POST('/v2/adjustments', { body: { name: n, ledger_account: { name: n, number: `9${Math.floor(Math.random() * 1e6)}` } } })).data!;
    const unused = await make('Temporary');
    const del = await rpA.DELETE('/v2/adjustments/{adjustment_id}', adjustmentPath(unused.id));
    expect(del.response.status).toBe(204);
    expect(del.error).toBeUndefined();
    expect(await del.response.text()).toBe('');
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(unused.id))).response.status).toBe(404);
    expect((await rpA.DELETE('/v2/adjustments/{adjustment_id}', adjustmentPath(unused.id))).response.status).toBe(404);

    const used = await make('Used one');
    expect(used.can_delete).toBe(true);
    await allocateWith(orgA, rpA, used.id);
    const got = await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(used.id));
    expect(got.data!.can_delete).toBe(false);
    const refused = await rpA.DELETE('/v2/adjustments/{adjustment_id}', adjustmentPath(used.id));
    expect(refused.response.status).toBe(409);
    expect(refused.error!.type).toBe('conflict');
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(used.id))).response.status).toBe(200);
  });

  it('keeps organizations apart', async () => {
    const mine = await rpA.POST('/v2/adjustments', { body: { name: 'Mine', ledger_account: { name: 'Mine', number: '8000' } } });
    const id = mine.data!.id;
    const attempts = {
      GET: () => rpB.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(id)),
      PATCH: () => rpB.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath(id), body: { name: 'Theirs' } }),
      DELETE: () => rpB.DELETE('/v2/adjustments/{adjustment_id}', adjustmentPath(id)),
    };
    for (const [method, attempt] of Object.entries(attempts)) {
      const res = await attempt();
      expect(res.response.status, method).toBe(404);
      expect(res.error).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    expect((await rpA.PATCH('/v2/adjustments/{adjustment_id}', { ...adjustmentPath('not-a-uuid'), body: { name: 'x' } })).response.status).toBe(422); // ids are validated as ids
    const listB = await rpB.GET('/v2/adjustments', {});
    expect(listB.data!.data.map((a) => a.id)).not.toContain(id);
    expect((await ledgerAccounts(rpB)).data.map((a) => a.number)).not.toContain('8000');
    // orgB may reuse the same account number: numbers are unique per organization.
    const theirs = await rpB.POST('/v2/adjustments', { body: { name: 'Theirs', ledger_account: { name: 'Theirs', number: '8000' } } });
    expect(theirs.response.status).toBe(200);
    expect((await rpA.GET('/v2/adjustments/{adjustment_id}', adjustmentPath(id))).data!.name).toBe('Mine');
  });
});
