/**
 * The events integrations records with its ledger changes (invoice.created / updated / closed,
 * partner.created / updated), read back through GET /v2/events as an API client would: one event
 * per record that changed, none for an identical re-push, previous_attributes with the earlier
 * values, nothing for a push that rolled back, other organizations and other business units kept out.
 *
 * SQL set-up: the rolled-back push needs a write that fails after its batch has been validated,
 * which no request can cause; a trigger on integrations.documents (created here, for one document
 * number only) raises inside the push's statement, so the whole batch rolls back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let org: Org;
let other: Org;

beforeAll(async () => {
  stack = await startStack();
  [org, other] = [await stack.onboard('Events Org'), await stack.onboard('Events Other Org')];
}, 120_000);
afterAll(async () => stack?.close());

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString().padStart(3, '0')}`;

interface EventBody {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  data: { object: Record<string, any> };
  previous_attributes?: Record<string, unknown>;
}

/** The events of `type` about the resource `id` that `token` may see, oldest first. */
async function eventsOf(token: string, type: string, id: string): Promise<EventBody[]> {
  const res = await stack.request('GET', `/v2/events?type=${type}&page_size=200`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as EventBody[]).filter((e) => e.data.object.id === id).reverse();
}

async function pushOk(records: unknown[], apiKey = org.apiKey): Promise<string[]> {
  const res = await pushInvoices(stack, apiKey, records);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.results.every((r) => r.success), JSON.stringify(res.body)).toBe(true);
  return res.body.results.map((r) => r.service_id!);
}

async function listedPartner(token: string, name: string) {
  const res = await stack.request('GET', `/v2/partners?name=${encodeURIComponent(name)}`, { token });
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0];
}

describe('invoice events from the middleware push', () => {
  let id: string;
  let number: string;

  it('records invoice.created with the invoice as stored', async () => {
    number = unique('EV');
    [id] = await pushOk([invoiceRecord({ document_number: number, customer_code: 'C-EV-NONE', amount_in_document_currency: 1190.5, amount_in_local_currency: 1190.5 })]);
    const [created, ...more] = await eventsOf(org.token, 'invoice.created', id);
    expect(more).toEqual([]);
    expect(created).toMatchObject({ object: 'event', type: 'invoice.created' });
    expect(created!.previous_attributes).toBeUndefined();
    expect(created!.data.object).toMatchObject({
      object: 'invoice',
      id,
      kind: 'invoice',
      origin: 'middleware',
      document_number: number,
      company_code: '1000',
      fiscal_year: '2026',
      customer_code: 'C-EV-NONE',
      partner_id: null,
      currency: 'EUR',
      amount_in_document_currency: '1190.50',
      amount_in_local_currency: '1190.5',
      amount_open: '1190.50',
      status_open: true,
      net_due_date: '2026-10-01',
      remote_deleted_at: null,
      discount_terms: [],
      line_items: [{ line_number: 1, description: 'Widgets', quantity: '10', unit_amount: '119.05', total_amount: '1190.50' }],
    });
  });

  it('records nothing for an identical re-push', async () => {
    await pushOk([invoiceRecord({ document_number: number, customer_code: 'C-EV-NONE', amount_in_document_currency: 1190.5, amount_in_local_currency: 1190.5 })]);
    expect(await eventsOf(org.token, 'invoice.created', id)).toHaveLength(1);
    expect(await eventsOf(org.token, 'invoice.updated', id)).toHaveLength(0);
  });

  it('records invoice.updated with the changed fields\' earlier values', async () => {
    await pushOk([invoiceRecord({ document_number: number, customer_code: 'C-EV-NONE', amount_in_document_currency: 1190.5, amount_in_local_currency: 1190.5, text: 'Goods delivered late', net_due_date: '2026-10-15' })]);
    const updated = await eventsOf(org.token, 'invoice.updated', id);
    expect(updated).toHaveLength(1);
    expect(updated[0]!.previous_attributes).toEqual({ text: 'Goods delivered', net_due_date: '2026-10-01' });
    expect(updated[0]!.data.object).toMatchObject({ id, text: 'Goods delivered late', net_due_date: '2026-10-15', status_open: true });
  });

  it('records invoice.closed when the invoice is no longer open, and nothing when it is pushed closed again', async () => {
    const closedRecord = invoiceRecord({
      document_number: number,
      customer_code: 'C-EV-NONE',
      amount_in_document_currency: 1190.5,
      amount_in_local_currency: 1190.5,
      text: 'Goods delivered late',
      net_due_date: '2026-10-15',
      status_open: false,
      clearing_date: '2026-10-20',
      clearing_document_number: '1400000123',
    });
    await pushOk([closedRecord]);
    const closed = await eventsOf(org.token, 'invoice.closed', id);
    expect(closed).toHaveLength(1);
    expect(closed[0]!.previous_attributes).toEqual({ status_open: true, amount_open: '1190.50', clearing_date: null, clearing_document_number: null });
    expect(closed[0]!.data.object).toMatchObject({ id, status_open: false, amount_open: '0.00', clearing_date: '2026-10-20' });
    await pushOk([closedRecord]);
    expect(await eventsOf(org.token, 'invoice.closed', id)).toHaveLength(1);
    expect(await eventsOf(org.token, 'invoice.updated', id)).toHaveLength(1);
  });

  it('records one event per record of a batch that changed, credit memos included', async () => {
    const a = unique('EVA');
    const b = unique('EVB');
    const [idA, idB] = await pushOk([invoiceRecord({ document_number: a }), invoiceRecord({ document_number: b, debit_credit_indicator: 'H', line_items: [] })]);
    const [createdB] = await eventsOf(org.token, 'invoice.created', idB!);
    expect(createdB!.data.object).toMatchObject({ kind: 'credit_memo', document_number: b });
    // The batch again with only B changed: one event, for B.
    await pushOk([invoiceRecord({ document_number: a }), invoiceRecord({ document_number: b, debit_credit_indicator: 'H', line_items: [], reference: 'RMA-7' })]);
    expect(await eventsOf(org.token, 'invoice.updated', idA!)).toHaveLength(0);
    const [updatedB, ...rest] = await eventsOf(org.token, 'invoice.updated', idB!);
    expect(rest).toEqual([]);
    expect(updatedB!.previous_attributes).toEqual({ reference: 'INV-9000001' });
  });

  it('records one invoice.created when the same new invoice is pushed by concurrent requests', async () => {
    const record = invoiceRecord({ document_number: unique('CC') });
    const results = await Promise.all(Array.from({ length: 6 }, () => pushInvoices(stack, org.apiKey, [record])));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const ids = new Set(results.map((r) => r.body.results[0]!.service_id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(await eventsOf(org.token, 'invoice.created', id!)).toHaveLength(1);
    expect(await eventsOf(org.token, 'invoice.updated', id!)).toHaveLength(0);
  });

  it('records nothing for a push that rolled back', async () => {
    const boom = unique('BOOM');
    await stack.sql(`
      CREATE OR REPLACE FUNCTION integrations.test_refuse_document() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.document_number = '${boom}' THEN RAISE EXCEPTION 'test trigger refuses document %', NEW.document_number; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_document BEFORE INSERT OR UPDATE ON integrations.documents FOR EACH ROW EXECUTE FUNCTION integrations.test_refuse_document();`);
    try {
      const before = await stack.request('GET', '/v2/events?type=invoice.created', { token: org.token });
      const first = unique('RB');
      const res = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: first }), invoiceRecord({ document_number: boom })]);
      expect(res.status).toBe(500);
      const after = await stack.request('GET', '/v2/events?type=invoice.created', { token: org.token });
      expect(after.body.total_records).toBe(before.body.total_records);
      const rows = await stack.sql(`SELECT count(*)::int AS n FROM integrations.documents WHERE organization_id = $1 AND document_number = ANY($2)`, [org.organizationId, [first, boom]]);
      expect(rows[0].n).toBe(0);
    } finally {
      await stack.sql(`DROP TRIGGER test_refuse_document ON integrations.documents; DROP FUNCTION integrations.test_refuse_document();`);
    }
  });

  it('keeps other organizations out of the event log', async () => {
    const created = await eventsOf(org.token, 'invoice.created', id);
    expect(created).toHaveLength(1);
    expect(await eventsOf(other.token, 'invoice.created', id)).toHaveLength(0);
    const res = await stack.request('GET', `/v2/events/${created[0]!.id}`, { token: other.token });
    expect(res.status).toBe(404);
    expect((await stack.request('GET', `/v2/events/${created[0]!.id}`, { token: org.token })).body).toEqual(created[0]);
  });
});

describe('partner events', () => {
  let code: string;
  let partnerId: string;

  it('records partner.created with the partner as GET /v2/partners lists it, and links waiting invoices with invoice.updated', async () => {
    code = unique('CEV');
    const [waitingId] = await pushOk([invoiceRecord({ document_number: unique('EVW'), customer_code: code })]);
    const res = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: `Acme ${code}` })]);
    expect(res.status).toBe(200);
    partnerId = res.body.results[0]!.service_id!;
    const [created, ...more] = await eventsOf(org.token, 'partner.created', partnerId);
    expect(more).toEqual([]);
    expect(created!.data.object).toEqual(await listedPartner(org.token, `Acme ${code}`));
    const [linked] = await eventsOf(org.token, 'invoice.updated', waitingId!);
    expect(linked!.previous_attributes).toEqual({ partner_id: null });
    expect(linked!.data.object).toMatchObject({ id: waitingId, partner_id: partnerId });
  });

  it('records nothing for an identical customer re-push, partner.updated for a change', async () => {
    await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: `Acme ${code}` })]);
    expect(await eventsOf(org.token, 'partner.updated', partnerId)).toHaveLength(0);
    await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: `Acme ${code}`, smtp_addr: 'ar@acme.example' })]);
    const updated = await eventsOf(org.token, 'partner.updated', partnerId);
    expect(updated).toHaveLength(1);
    expect(updated[0]!.previous_attributes).toEqual({ email: 'ap@acme.example' });
    expect(updated[0]!.data.object).toEqual(await listedPartner(org.token, `Acme ${code}`));
  });

  it('records partner.updated for an assignment through PATCH, and nothing for a PATCH that changes nothing', async () => {
    const patch = () => stack.request('PATCH', `/v2/partners/${partnerId}`, { token: org.token, body: { assignee_id: org.userId } });
    expect((await patch()).status).toBe(200);
    const listed = await listedPartner(org.token, `Acme ${code}`);
    expect((await patch()).status).toBe(200);
    const updated = await eventsOf(org.token, 'partner.updated', partnerId);
    expect(updated).toHaveLength(2);
    expect(updated[1]!.previous_attributes).toEqual({ assignee_id: null, effective_assignee_id: null });
    expect(updated[1]!.data.object).toEqual(listed);
  });
});

describe('business units', () => {
  it('shows a member only the events of invoices and partners in their units', async () => {
    const [u1, u2] = await Promise.all(
      ['North', 'South'].map(async (name) => (await stack.request('POST', '/v2/business-units', { token: org.token, body: { name: unique(name) } })).body.id as string),
    );
    const member = await stack.request('POST', '/v2/users', { token: org.token, body: { email: `${unique('m')}@events.example`, name: 'Mo Member', role: 'member', business_unit_ids: [u1] } });
    expect(member.status).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const { token } = (await runCli(['token', 'issue', '--org', org.organizationId, '--user', member.body.id], stack.env)) as { token: string };

    const [inU1, inU2] = await pushOk([invoiceRecord({ document_number: unique('BU1'), business_unit_id: u1 }), invoiceRecord({ document_number: unique('BU2'), business_unit_id: u2 })]);
    expect(await eventsOf(token, 'invoice.created', inU1!)).toHaveLength(1);
    expect(await eventsOf(token, 'invoice.created', inU2!)).toHaveLength(0);
    expect(await eventsOf(org.token, 'invoice.created', inU2!)).toHaveLength(1);

    const res = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: unique('CB1'), business_unit_id: u1 }), customerRecord({ customer_code: unique('CB2'), business_unit_id: u2 })]);
    const [p1, p2] = res.body.results.map((r) => r.service_id!);
    expect(await eventsOf(token, 'partner.created', p1)).toHaveLength(1);
    expect(await eventsOf(token, 'partner.created', p2)).toHaveLength(0);
  });
});
