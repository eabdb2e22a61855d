/**
 * Roles, permissions and business-unit scope, end to end through the gateway
 * with real cash-app and integrations workers:
 * - every route that moves or rewrites money: a member without its permission gets 403 and nothing
 *   changes; a member granted it and an admin get through;
 * - permissions are set through the users API and take effect on the next request (the gateway's
 *   credential cache is invalidated by the admin service's NOTIFY);
 * - a member's business units apply to payments (list, get, edit, approve, post, unpost, statement
 *   detail), remittances, receipts and connections: out of scope answers exactly like a random id
 *   (404 / absent), never 403; body references out of scope or of another organization are 422;
 * - references: an admin's connection business_unit_id and predicted overdue's business_unit_id__in.
 *
 * SQL is used only to look up ledger ids (as the other end-to-end tests do).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;
let north: string;
let south: string;
let otherUnit: string;
/** member of North without permissions */
let plain: { id: string; token: string };
/** member of North with every permission */
let granted: { id: string; token: string };
/** member of South with every permission */
let southMember: { id: string; token: string };
const ALL = ['payments:write', 'payments:approve', 'erp-postings:write', 'exchange-rates:write', 'adjustments:write'];
/** ledger ids: invoices of North (several), South and of no unit; partners */
const inv: Record<string, string> = {};
const partner: Record<string, string> = {};
/** deposits without a payment, taken one by one */
let deposits: string[] = [];
let statementId: string;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function member(email: string, units: string[], permissions: string[]) {
  const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email, name: email, role: 'member', business_unit_ids: units, permissions } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.permissions).toEqual([...permissions].sort());
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', org.organizationId, '--user', res.body.id], stack.env)) as { token: string };
  return { id: res.body.id as string, token: t.token };
}

function deposit(): string {
  const tx = deposits.shift();
  if (!tx) throw new Error('out of deposits');
  return tx;
}

/** A new unapproved payment (by the admin) of a fresh deposit, allocated as given. */
async function payment(allocations: { invoice_id: string; amount_paid: string }[], partnerId?: string) {
  const res = await stack.request('POST', '/v2/payments', {
    token: org.token,
    body: { bank_transaction_id: deposit(), allocations, ...(partnerId ? { partner_id: partnerId } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; status: string; allocations: { invoice_id: string }[] };
}

const get = (token: string, path: string) => stack.request('GET', path, { token });

/** The 404 a random id of the same kind gets: body equal but for the id in the detail. */
async function expectLikeRandom(res: { status: number; body: any }, random: { status: number; body: any }) {
  expect(res.status).toBe(random.status);
  expect(res.body.type).toBe(random.body.type);
  expect(res.body.title).toBe(random.body.title);
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app', 'integrations'] });
  [org, other] = await Promise.all([stack.onboard('Authz Org'), stack.onboard('Authz Other')]);
  const unit = async (o: Org, name: string) => {
    const res = await stack.request('POST', '/v2/business-units', { token: o.token, body: { name } });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  north = await unit(org, 'North');
  south = await unit(org, 'South');
  otherUnit = await unit(other, 'Elsewhere');
  plain = await member('plain@authz.example', [north], []);
  granted = await member('granted@authz.example', [north], ALL);
  southMember = await member('south@authz.example', [south], ALL);

  const customers = await pushCustomers(stack, org.apiKey, [
    { ...customerRecord({ customer_code: 'C-N', name1: 'Nord GmbH', smtp_addr: 'ap@nord.example' }), business_unit_id: north },
    { ...customerRecord({ customer_code: 'C-S', name1: 'Sued GmbH', smtp_addr: 'ap@sued.example' }), business_unit_id: south },
    customerRecord({ customer_code: 'C-U', name1: 'Ohne GmbH', smtp_addr: 'ap@ohne.example' }),
  ]);
  expect(customers.body.results.every((r) => r.success), JSON.stringify(customers.body)).toBe(true);
  const docs: Parameters<typeof invoiceRecord>[0][] = [];
  for (let i = 1; i <= 12; i++) docs.push({ document_number: `N-${i}`, reference: `RN-${i}`, customer_code: 'C-N', amount_in_document_currency: 1000 });
  docs.push({ document_number: 'S-1', reference: 'RS-1', customer_code: 'C-S', amount_in_document_currency: 1000 });
  docs.push({ document_number: 'U-1', reference: 'RU-1', customer_code: 'C-U', amount_in_document_currency: 1000 });
  const pushed = await pushInvoices(stack, org.apiKey, docs.map((d) => invoiceRecord(d)));
  expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
  for (const r of await stack.sql('SELECT id, document_number FROM integrations.documents WHERE organization_id = $1', [org.organizationId])) inv[r.document_number] = r.id;
  for (const r of await stack.sql('SELECT id, remote_id FROM integrations.partners WHERE organization_id = $1', [org.organizationId])) partner[r.remote_id] = r.id;

  // deposits of odd amounts from unknown payers: matching proposes nothing for them
  const upload = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: Array.from({ length: 30 }, (_, i) => ({
        amount: `${(i + 1) * 3}.17`,
        booking_date: '2026-10-15',
        value_date: '2026-10-15',
        counterparty_name: `Unbekannt ${randomUUID().slice(0, 8)}`,
        remittance_information: null,
        bank_reference: `REF-${randomUUID().slice(0, 8)}`,
      })),
    },
  });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  statementId = upload.body.id;
  const ready = await waitForStatement(stack, org.token, statementId);
  deposits = (ready.transactions as { id: string; payments: unknown[] }[]).filter((t) => t.payments.length === 0).map((t) => t.id);
  expect(deposits.length).toBeGreaterThanOrEqual(25);
}, 180_000);

afterAll(async () => stack?.close());

describe('the role model in OpenAPI', () => {
  const MONEY_ROUTES: [string, string, string][] = [
    ['post', '/v2/payments', 'payments:write'],
    ['patch', '/v2/payments/{payment_id}', 'payments:write'],
    ['post', '/v2/payments/{payment_id}/approve', 'payments:approve'],
    ['post', '/v2/payments/{payment_id}/post', 'erp-postings:write'],
    ['post', '/v2/payments/{payment_id}/unpost', 'erp-postings:write'],
    ['put', '/v2/exchange-rates', 'exchange-rates:write'],
    ['post', '/v2/adjustments', 'adjustments:write'],
    ['patch', '/v2/adjustments/{adjustment_id}', 'adjustments:write'],
    ['delete', '/v2/adjustments/{adjustment_id}', 'adjustments:write'],
    ['post', '/v2/adjustments/ledger-accounts', 'adjustments:write'],
  ];

  it('names the permission of each money-moving route in x-rp-auth and in its description, and the model in the API description', async () => {
    const doc = (await stack.request('GET', '/openapi.json')).body;
    for (const [method, path, permission] of MONEY_ROUTES) {
      const op = doc.paths[path][method];
      expect(op['x-rp-auth'], `${method} ${path}`).toMatchObject({ permission, credentials: ['user'] });
      expect(op.description).toContain(`member granted the \`${permission}\` permission`);
    }
    // reads stay open to members: no permission on them
    expect(doc.paths['/v2/payments'].get['x-rp-auth'].permission).toBeUndefined();
    expect(doc.paths['/v2/exchange-rates'].get['x-rp-auth'].permission).toBeUndefined();
    for (const p of ALL) expect(doc.info.description).toContain(`\`${p}\``);
    expect(doc.info.description).toContain('Organization API keys');
    expect(doc.paths['/v2/users/{user_id}'].patch['x-rp-auth']).toMatchObject({ role: 'admin' });
  });
});

describe('permissions on money-moving routes', () => {
  it('PUT /v2/exchange-rates: member without 403 and nothing stored; member with it and admin 200', async () => {
    const rate = (quote: string) => [{ base_currency: 'EUR', quote_currency: quote, rate_date: '2026-10-01', rate: '1.25' }];
    const refused = await stack.request('PUT', '/v2/exchange-rates', { token: plain.token, body: rate('CHF') });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ type: 'forbidden', detail: expect.stringContaining('exchange-rates:write') });
    const list = async () => ((await get(org.token, '/v2/exchange-rates')).body.data as { quote_currency: string }[]).map((r) => r.quote_currency);
    expect(await list()).not.toContain('CHF');
    expect((await stack.request('PUT', '/v2/exchange-rates', { token: granted.token, body: rate('CHF') })).status).toBe(200);
    expect((await stack.request('PUT', '/v2/exchange-rates', { token: org.token, body: rate('GBP') })).status).toBe(200);
    expect(await list()).toEqual(expect.arrayContaining(['CHF', 'GBP']));
    // members keep read access
    expect((await get(plain.token, '/v2/exchange-rates')).status).toBe(200);
  });

  it('adjustments and ledger accounts: create, change, delete need adjustments:write', async () => {
    const account = (n: string) => ({ name: `Fees ${n}`, number: `6${n}`, classification: 'expense' });
    const count = async (path: string) => (await get(org.token, path)).body.total_records as number;
    const accounts = await count('/v2/adjustments/ledger-accounts');
    const r1 = await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: plain.token, body: account('01') });
    expect(r1.status).toBe(403);
    expect(await count('/v2/adjustments/ledger-accounts')).toBe(accounts);
    const a1 = await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: granted.token, body: account('02') });
    expect(a1.status, JSON.stringify(a1.body)).toBe(200);
    expect((await stack.request('POST', '/v2/adjustments/ledger-accounts', { token: org.token, body: account('03') })).status).toBe(200);

    const adjustments = await count('/v2/adjustments');
    const body = (n: string) => ({ name: `Bank fee ${n}`, ledger_account_id: a1.body.id });
    expect((await stack.request('POST', '/v2/adjustments', { token: plain.token, body: body('x') })).status).toBe(403);
    expect(await count('/v2/adjustments')).toBe(adjustments);
    const byMember = await stack.request('POST', '/v2/adjustments', { token: granted.token, body: body('m') });
    expect(byMember.status, JSON.stringify(byMember.body)).toBe(200);
    const byAdmin = await stack.request('POST', '/v2/adjustments', { token: org.token, body: body('a') });
    expect(byAdmin.status).toBe(200);

    const patch = (token: string, id: string, name: string) => stack.request('PATCH', `/v2/adjustments/${id}`, { token, body: { name } });
    expect((await patch(plain.token, byMember.body.id, 'renamed by plain')).status).toBe(403);
    expect((await get(org.token, `/v2/adjustments/${byMember.body.id}`)).body.name).toBe('Bank fee m');
    expect((await patch(granted.token, byMember.body.id, 'renamed by member')).status).toBe(200);
    expect((await patch(org.token, byAdmin.body.id, 'renamed by admin')).status).toBe(200);
    expect((await get(plain.token, `/v2/adjustments/${byMember.body.id}`)).body.name).toBe('renamed by member');

    expect((await stack.request('DELETE', `/v2/adjustments/${byMember.body.id}`, { token: plain.token })).status).toBe(403);
    expect((await get(org.token, `/v2/adjustments/${byMember.body.id}`)).status).toBe(200);
    expect((await stack.request('DELETE', `/v2/adjustments/${byMember.body.id}`, { token: granted.token })).status).toBe(204);
    expect((await stack.request('DELETE', `/v2/adjustments/${byAdmin.body.id}`, { token: org.token })).status).toBe(204);
    expect((await get(org.token, `/v2/adjustments/${byMember.body.id}`)).status).toBe(404);
  });

  it('POST /v2/payments needs payments:write', async () => {
    const tx = deposit();
    const refused = await stack.request('POST', '/v2/payments', { token: plain.token, body: { bank_transaction_id: tx, allocations: [] } });
    expect(refused.status).toBe(403);
    expect((await get(org.token, `/v2/payments?bank_transaction_id=${tx}`)).body.total_records).toBe(0);
    const byMember = await stack.request('POST', '/v2/payments', { token: granted.token, body: { bank_transaction_id: tx, allocations: [{ invoice_id: inv['N-1']!, amount_paid: '1.00' }] } });
    expect(byMember.status, JSON.stringify(byMember.body)).toBe(200);
    const byAdmin = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: deposit(), allocations: [] } });
    expect(byAdmin.status).toBe(200);
  });

  it('PATCH /v2/payments/{id} needs payments:write', async () => {
    const p = await payment([{ invoice_id: inv['N-2']!, amount_paid: '1.00' }]);
    const edit = (token: string, amount: string) => stack.request('PATCH', `/v2/payments/${p.id}`, { token, body: { allocations: [{ invoice_id: inv['N-2']!, amount_paid: amount }] } });
    expect((await edit(plain.token, '2.00')).status).toBe(403);
    expect((await get(org.token, `/v2/payments/${p.id}`)).body.allocations[0].amount_paid).toBe('1.00');
    expect((await edit(granted.token, '2.00')).status).toBe(200);
    expect((await edit(org.token, '3.00')).status).toBe(200);
    expect((await get(plain.token, `/v2/payments/${p.id}`)).body.allocations[0].amount_paid).toBe('3.00');
  });

  it('POST /v2/payments/{id}/approve needs payments:approve', async () => {
    const p1 = await payment([{ invoice_id: inv['N-3']!, amount_paid: '1.00' }]);
    const p2 = await payment([{ invoice_id: inv['N-4']!, amount_paid: '1.00' }]);
    const refused = await stack.request('POST', `/v2/payments/${p1.id}/approve`, { token: plain.token });
    expect(refused.status).toBe(403);
    expect((await get(org.token, `/v2/payments/${p1.id}`)).body).toMatchObject({ status: 'unapproved', posting_status: 'not_posted' });
    const byMember = await stack.request('POST', `/v2/payments/${p1.id}/approve`, { token: granted.token });
    expect(byMember.status, JSON.stringify(byMember.body)).toBe(200);
    expect(byMember.body).toMatchObject({ status: 'approved', approved_by: granted.id });
    expect((await stack.request('POST', `/v2/payments/${p2.id}/approve`, { token: org.token })).body).toMatchObject({ status: 'approved', approved_by: org.userId });
  });

  it('POST /v2/payments/{id}/post and /unpost need erp-postings:write', async () => {
    // approved → queued for the middleware → the middleware reports a failure → the post retries it
    const failedPayment = async (invoice: string) => {
      const p = await payment([{ invoice_id: inv[invoice]!, amount_paid: '1.00' }]);
      expect((await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: org.token })).status).toBe(200);
      await waitFor('the posting queue', async () => {
        const res = await stack.request('POST', `/v2/integrations/providers/middleware/payments/${p.id}/failed`, { token: org.apiKey, body: { error: 'period closed' } });
        return res.status === 200;
      });
      return waitFor('posting failed', async () => {
        const res = await get(org.token, `/v2/payments/${p.id}`);
        return res.body.posting_status === 'failed' ? res.body : null;
      });
    };
    const p1 = await failedPayment('N-5');
    const p2 = await failedPayment('N-6');
    const refused = await stack.request('POST', `/v2/payments/${p1.id}/post`, { token: plain.token });
    expect(refused.status).toBe(403);
    expect((await get(org.token, `/v2/payments/${p1.id}`)).body.posting_status).toBe('failed');
    const byMember = await stack.request('POST', `/v2/payments/${p1.id}/post`, { token: granted.token });
    expect(byMember.status, JSON.stringify(byMember.body)).toBe(200);
    expect(byMember.body.posting_status).toBe('pending');
    const byAdmin = await stack.request('POST', `/v2/payments/${p2.id}/post`, { token: org.token });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);

    // unpost: the middleware cannot take a payment back (409 from the domain rule), so past the
    // permission check a member with it and an admin get that 409; without it, 403 before any rule
    const u = await stack.request('POST', `/v2/payments/${p2.id}/unpost`, { token: plain.token });
    expect(u.status).toBe(403);
    expect(u.body.type).toBe('forbidden');
    for (const token of [granted.token, org.token]) {
      const res = await stack.request('POST', `/v2/payments/${p2.id}/unpost`, { token });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
    }
  });

  it('permissions are set with PATCH /v2/users/{id} and apply from the next request; unknown names 422', async () => {
    const rate = [{ base_currency: 'EUR', quote_currency: 'JPY', rate_date: '2026-10-02', rate: '160' }];
    const put = () => stack.request('PUT', '/v2/exchange-rates', { token: plain.token, body: rate });
    expect((await put()).status).toBe(403);
    const grant = await stack.request('PATCH', `/v2/users/${plain.id}`, { token: org.token, body: { permissions: ['exchange-rates:write'] } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(200);
    expect(grant.body).toMatchObject({ id: plain.id, permissions: ['exchange-rates:write'], business_unit_ids: [north] });
    await waitFor('the grant to reach the gateway', async () => (await put()).status === 200);
    expect((await get(org.token, `/v2/users/${plain.id}`)).body.permissions).toEqual(['exchange-rates:write']);
    const revoke = await stack.request('PATCH', `/v2/users/${plain.id}`, { token: org.token, body: { permissions: [] } });
    expect(revoke.body.permissions).toEqual([]);
    await waitFor('the revocation to reach the gateway', async () => (await put()).status === 403);

    const bad = await stack.request('PATCH', `/v2/users/${plain.id}`, { token: org.token, body: { permissions: ['payments:steal'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'permissions', 0]);
    const badCreate = await stack.request('POST', '/v2/users', { token: org.token, body: { email: 'x@authz.example', name: 'X', permissions: ['root'] } });
    expect(badCreate.status).toBe(422);
    // only admins change access; another organization's user is not found
    expect((await stack.request('PATCH', `/v2/users/${plain.id}`, { token: granted.token, body: { permissions: ALL } })).status).toBe(403);
    expect((await stack.request('PATCH', `/v2/users/${other.userId}`, { token: org.token, body: { permissions: [] } })).status).toBe(404);
    const foreignUnit = await stack.request('PATCH', `/v2/users/${plain.id}`, { token: org.token, body: { business_unit_ids: [north, otherUnit] } });
    expect(foreignUnit.status).toBe(422);
    expect(foreignUnit.body.errors[0].loc).toEqual(['body', 'business_unit_ids', 1]);
    expect((await get(org.token, `/v2/users/${plain.id}`)).body.business_unit_ids).toEqual([north]);
  });

  it('the CLI grants permissions too (user create --permission), and names an unknown one', async () => {
    const { runCli } = await import('@rp/admin/cli');
    const user = (await runCli(
      ['user', 'create', '--org', org.organizationId, '--email', 'cli@authz.example', '--name', 'Cli', '--permission', 'payments:approve', '--permission', 'payments:write'],
      stack.env,
    )) as { permissions: string[] };
    expect(user.permissions).toEqual(['payments:approve', 'payments:write']);
    await expect(runCli(['user', 'create', '--org', org.organizationId, '--email', 'cli2@authz.example', '--name', 'Cli', '--permission', 'everything'], stack.env)).rejects.toThrow(/--permission/);
  });

  it('an organization API key may not call a money-moving route', async () => {
    const res = await stack.request('PUT', '/v2/exchange-rates', { token: org.apiKey, body: [{ base_currency: 'EUR', quote_currency: 'SEK', rate_date: '2026-10-01', rate: '11' }] });
    expect(res.status).toBe(403);
  });
});

describe('business-unit scope', () => {
  let northPayment: { id: string };
  let unassignedPayment: { id: string };
  let southPayment: { id: string };
  const randomPayment = () => `/v2/payments/${randomUUID()}`;

  beforeAll(async () => {
    northPayment = await payment([{ invoice_id: inv['N-7']!, amount_paid: '1.00' }]);
    unassignedPayment = await payment([]);
    southPayment = await payment([{ invoice_id: inv['S-1']!, amount_paid: '1.00' }]);
  });

  it('payments: a member lists and gets only payments of their units (and of none); others are like a random id', async () => {
    const ids = async (token: string, query = '') => ((await get(token, `/v2/payments?page_size=500${query}`)).body.data as { id: string }[]).map((p) => p.id);
    const seen = await ids(southMember.token);
    expect(seen).toContain(southPayment.id);
    expect(seen).toContain(unassignedPayment.id);
    expect(seen).not.toContain(northPayment.id);
    expect(await ids(southMember.token, `&partner_id=${partner['C-N']}`)).toEqual([]);
    expect(await ids(granted.token)).toContain(northPayment.id);
    expect(await ids(org.token)).toEqual(expect.arrayContaining([northPayment.id, southPayment.id, unassignedPayment.id]));
    const total = (await get(southMember.token, '/v2/payments')).body.total_records;
    expect(total).toBe(seen.length);

    const random = await get(southMember.token, randomPayment());
    expect(random.status).toBe(404);
    await expectLikeRandom(await get(southMember.token, `/v2/payments/${northPayment.id}`), random);
    expect((await get(southMember.token, `/v2/payments/${unassignedPayment.id}`)).status).toBe(200);
  });

  it('payments: edit, approve, post and unpost of an out-of-scope payment answer 404 and change nothing', async () => {
    const body = { allocations: [{ invoice_id: inv['S-1']!, amount_paid: '1.00' }] };
    const randomPatch = await stack.request('PATCH', randomPayment(), { token: southMember.token, body });
    for (const [method, suffix, b] of [['PATCH', '', body], ['POST', '/approve', undefined], ['POST', '/post', undefined], ['POST', '/unpost', undefined]] as const) {
      const res = await stack.request(method, `/v2/payments/${northPayment.id}${suffix}`, { token: southMember.token, ...(b ? { body: b } : {}) });
      await expectLikeRandom(res, randomPatch);
    }
    expect((await get(org.token, `/v2/payments/${northPayment.id}`)).body).toMatchObject({ status: 'unapproved', allocations: [{ invoice_id: inv['N-7'] }] });
  });

  it('payments: an invoice or payer of another unit is an unknown reference (422 with its loc), like another organization\'s', async () => {
    const p = await payment([]);
    const res = await stack.request('PATCH', `/v2/payments/${p.id}`, {
      token: southMember.token,
      body: { allocations: [{ invoice_id: inv['U-1']!, amount_paid: '1.00' }, { invoice_id: inv['N-8']!, amount_paid: '1.00' }], partner_id: partner['C-N'] },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'allocations', 1, 'invoice_id'], type: 'value_error.not_found' }),
        expect.objectContaining({ loc: ['body', 'partner_id'], type: 'value_error.not_found' }),
      ]),
    );
    expect((await get(org.token, `/v2/payments/${p.id}`)).body.allocations).toEqual([]);
    const created = await stack.request('POST', '/v2/payments', { token: southMember.token, body: { bank_transaction_id: deposit(), allocations: [{ invoice_id: inv['N-8']!, amount_paid: '1.00' }] } });
    expect(created.status).toBe(422);
    expect(created.body.errors[0].loc).toEqual(['body', 'allocations', 0, 'invoice_id']);
    // the same edit within the member's units goes through
    const ok = await stack.request('PATCH', `/v2/payments/${p.id}`, { token: southMember.token, body: { allocations: [{ invoice_id: inv['U-1']!, amount_paid: '1.00' }], partner_id: partner['C-S'] } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('the statement detail shows a member only the payments of their units', async () => {
    const detail = await get(southMember.token, `/v2/bank-statements/${statementId}`);
    const paymentIds = (detail.body.transactions as { payments: { id: string }[] }[]).flatMap((t) => t.payments.map((p) => p.id));
    expect(paymentIds).toContain(southPayment.id);
    expect(paymentIds).not.toContain(northPayment.id);
    const all = (await get(org.token, `/v2/bank-statements/${statementId}`)).body.transactions.flatMap((t: { payments: { id: string }[] }) => t.payments.map((p) => p.id));
    expect(all).toContain(northPayment.id);
  });

  it('a member may not delete a statement holding payments of another unit (409, nothing removed); a member of that unit may', async () => {
    const upload = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE44500105175407324931',
        currency: 'EUR',
        statement_number: `S-${randomUUID()}`,
        transactions: [{ amount: '7.77', booking_date: '2026-10-16', value_date: '2026-10-16', counterparty_name: 'Irgendwer', bank_reference: `REF-${randomUUID().slice(0, 8)}` }],
      },
    });
    expect(upload.status).toBe(200);
    const ready = await waitForStatement(stack, org.token, upload.body.id);
    const tx = ready.transactions[0].id as string;
    const existing = (await get(org.token, `/v2/payments?bank_transaction_id=${tx}`)).body.data[0];
    const body = { allocations: [{ invoice_id: inv['N-11']!, amount_paid: '1.00' }] };
    const p = existing
      ? await stack.request('PATCH', `/v2/payments/${existing.id}`, { token: org.token, body })
      : await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: tx, ...body } });
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    const refused = await stack.request('DELETE', `/v2/bank-statements/${upload.body.id}`, { token: southMember.token });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('conflict');
    expect((await get(org.token, `/v2/payments/${p.body.id}`)).status).toBe(200);
    expect((await stack.request('DELETE', `/v2/bank-statements/${upload.body.id}`, { token: plain.token })).status).toBe(204);
    expect((await get(org.token, `/v2/payments/${p.body.id}`)).status).toBe(404);
  });

  it('receipts: a member neither requests nor sees receipts of another unit\'s payment', async () => {
    const p = await payment([{ invoice_id: inv['N-9']!, amount_paid: '1.00' }], partner['C-N']);
    expect((await stack.request('POST', `/v2/payments/${p.id}/approve`, { token: org.token })).status).toBe(200);
    const receipt = await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: org.token, body: { payment_id: p.id } });
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
    const random = await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: southMember.token, body: { payment_id: randomUUID() } });
    await expectLikeRandom(await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: southMember.token, body: { payment_id: p.id } }), random);
    const randomGet = await get(southMember.token, `/v2/cash-app/outreach/${randomUUID()}`);
    await expectLikeRandom(await get(southMember.token, `/v2/cash-app/outreach/${receipt.body.id}`), randomGet);
    const listed = (token: string) => get(token, '/v2/cash-app/outreach?page_size=500').then((r) => (r.body.data as { id: string }[]).map((o) => o.id));
    expect(await listed(southMember.token)).not.toContain(receipt.body.id);
    expect(await listed(granted.token)).toContain(receipt.body.id);
    expect((await get(granted.token, `/v2/cash-app/outreach/${receipt.body.id}`)).status).toBe(200);
  });

  it('remittances: a member sees only remittances of their units and links only their invoices', async () => {
    const create = (token: string, number: string) =>
      stack.request('POST', '/v1/remittances', { token, body: { payer_name: 'Nord GmbH', currency: 'EUR', transaction_amount: 5, allocations: [{ invoice_number: number, amount_paid: 5 }] } });
    const northRemittance = await create(org.token, 'N-10');
    expect(northRemittance.status, JSON.stringify(northRemittance.body)).toBe(200);
    expect(northRemittance.body.partner?.id).toBe(partner['C-N']);
    const random = await get(southMember.token, `/v1/remittances/${randomUUID()}`);
    expect(random.status).toBe(404);
    const hidden = await get(southMember.token, `/v1/remittances/${northRemittance.body.id}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ ...random.body, message: hidden.body.message });
    const ids = (token: string) => get(token, '/v1/remittances?page_size=500').then((r) => (r.body.data as { id: string }[]).map((x) => x.id));
    expect(await ids(southMember.token)).not.toContain(northRemittance.body.id);
    expect(await ids(granted.token)).toContain(northRemittance.body.id);
    // the South member citing a North invoice: not linked, as if it did not exist
    const bySouth = await create(southMember.token, 'N-10');
    expect(bySouth.status).toBe(200);
    expect(bySouth.body.allocations[0].invoice_id).toBeNull();
    expect(bySouth.body.partner).toBeNull();
    expect(bySouth.body.agent_uncertainties).toContain('invoice_not_found: N-10');
  });

  it('connections: a member lists and uses only connections of their units (and of none)', async () => {
    const make = async (name: string, unit?: string) => {
      const res = await stack.request('POST', '/v2/integrations/connections', { token: org.token, body: { provider_name: 'middleware', name, ...(unit ? { business_unit_id: unit } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };
    const northConn = await make('North ERP', north);
    const sharedConn = await make('Shared ERP');
    const listed = (await get(southMember.token, '/v2/integrations/connections?page_size=100')).body;
    const ids = (listed.data as { id: string }[]).map((c) => c.id);
    expect(ids).toContain(sharedConn);
    expect(ids).not.toContain(northConn);
    expect(listed.total_records).toBe(ids.length);
    expect(((await get(granted.token, '/v2/integrations/connections?page_size=100')).body.data as { id: string }[]).map((c) => c.id)).toContain(northConn);

    for (const [method, suffix] of [['POST', '/health-check'], ['POST', '/sync'], ['GET', '/sync-runs']] as const) {
      const random = await stack.request(method, `/v2/integrations/connections/${randomUUID()}${suffix}`, { token: southMember.token });
      expect(random.status).toBe(404);
      await expectLikeRandom(await stack.request(method, `/v2/integrations/connections/${northConn}${suffix}`, { token: southMember.token }), random);
    }
    expect((await stack.request('POST', `/v2/integrations/connections/${sharedConn}/health-check`, { token: southMember.token })).status).toBe(200);
    expect((await stack.request('POST', `/v2/integrations/connections/${northConn}/health-check`, { token: granted.token })).status).toBe(200);
  });
});

describe('references in bodies', () => {
  it('POST /v2/integrations/connections by an admin refuses another organization\'s unit and a random id (422), stores nothing', async () => {
    const before = (await get(org.token, '/v2/integrations/connections')).body.total_records;
    for (const unit of [otherUnit, randomUUID()]) {
      const res = await stack.request('POST', '/v2/integrations/connections', { token: org.token, body: { provider_name: 'middleware', name: 'Bad unit', business_unit_id: unit } });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'business_unit_id'], type: 'value_error.not_found' })]);
    }
    expect((await get(org.token, '/v2/integrations/connections')).body.total_records).toBe(before);
  });

  it('predicted overdue: business_unit_id__in must name units of the organization (and, for a member, theirs)', async () => {
    const body = (units: string[]) => ({ as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 30, amount_lc: '1.00' }], business_unit_id__in: units });
    const foreign = await stack.request('POST', '/v2/analytics/predicted-overdue', { token: org.token, body: body([north, otherUnit]) });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'business_unit_id__in', 1] })]);
    const outOfScope = await stack.request('POST', '/v2/analytics/predicted-overdue', { token: southMember.token, body: body([north]) });
    expect(outOfScope.status).toBe(422);
    expect(outOfScope.body.errors[0].loc).toEqual(['body', 'business_unit_id__in', 0]);
    expect((await stack.request('POST', '/v2/analytics/predicted-overdue', { token: southMember.token, body: body([south]) })).status).toBe(200);
    expect((await stack.request('POST', '/v2/analytics/predicted-overdue', { token: org.token, body: body([north, south]) })).status).toBe(200);
  });
});
