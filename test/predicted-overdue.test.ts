/**
 * Predicted overdue (spec 4.3 rule 2) through the gateway, on a ledger pushed through the
 * middleware endpoints, with hand-computed expectations.
 *
 * Organization A (base currency EUR); today (`evaluated_at`) 2026-12-01, as_of 2026-12-31 (30 days on).
 *   C-1 Alpha (BU 1): closed invoices paid at L = −5, 0, 10, 20, 40 days; open:
 *       A due 2026-11-21 1000.00 (age at as_of 40, now 10), B due 2026-11-01 500.00 (60, now 30),
 *       C due 2026-12-11 300.00 (20, now −10)
 *   C-2 Beta (BU 2): closed at L = 0, 0, 5, 30, 60; open D due 2026-10-01, 2000.00 USD = 1850.00 EUR (91, now 61)
 *   C-3 Gamma (BU 1): no history; open E due 2026-12-20 5000.00 (11, now −19)
 * Organization history: the ten closed invoices [−5, 0, 0, 0, 5, 10, 20, 30, 40, 60].
 * Tiers: {15 days, 1200.00}, {60 days, 1000.00}, {0 days, 4000.00}.
 *   C-1: tier 15 → A + B + C = 1800.00 > 1200 (3 invoices); tier 60 → nothing (B is exactly 60); tier 0 → 1800 ≤ 4000.
 *        w = 5/15; S(10) = 0.4, S(40) = 1/15, S(30) = 0.2, S(60) = 0, S(−10) = 1, S(20) = 4/15
 *        p_A = 1/6, p_B = 0, p_C = 4/15 → only A and C together exceed 1200: 1/6 · 4/15 = 2/45
 *   C-2: tier 15 and tier 60 → 1850.00 (1 invoice). Now 61 days late, later than any history: S(61) = 0 → p = 1 → 1.
 *   C-3: tier 0 → 5000.00 > 4000 (1 invoice). No own history: the organization curve,
 *        p = S_org(11) / S_org(−19) = (4/10) / 1 = 0.4.
 *   Order by largest tripped amount: C-3 (5000), C-2 (1850), C-1 (1800).
 *
 * Exact AR analytics, each in an organization of its own:
 *   - local currency: invoices without a local-currency amount (as QuickBooks syncs them) are converted
 *     1:1 only in the base currency, else with the stored rates (PUT /v2/exchange-rates), else reported
 *     as not convertible, never summed 1:1;
 *   - signed amounts: +1000 (p = 1), −600 (p = 1), +500 (p = 0.5) over a 500.00 tier → 0.5;
 *   - bounded cost: customers with 40 uncertain invoices around 1,000,000.00 tiers are answered with a
 *     reported error bound, and a small request of another organization is answered while they compute.
 * Everything is set up through the API (push endpoints, exchange rates).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices, type InvoiceRecord } from './support/ledger.js';
import { sharedTailPool } from '../services/cash-app/src/domain/tail-pool.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let bu1: string;
let bu2: string;
const partnerIds: Record<string, string> = {};

const PATH = '/v2/analytics/predicted-overdue';
const TIERS = [
  { days: 15, amount_lc: '1200.00' },
  { days: 60, amount_lc: '1000.00' },
  { days: 0, amount_lc: '4000' },
];

let seq = 0;
function open(customer: string, due: string, amount: number, extra: Partial<InvoiceRecord> = {}): InvoiceRecord {
  seq++;
  return invoiceRecord({ document_number: `PO-${seq}`, reference: `PO-${seq}`, customer_code: customer, net_due_date: due, amount_in_document_currency: amount, amount_in_local_currency: amount, ...extra });
}
function closed(customer: string, due: string, lateness: number): InvoiceRecord {
  const clearing = new Date(Date.parse(`${due}T00:00:00Z`) + lateness * 86_400_000).toISOString().slice(0, 10);
  return open(customer, due, 100, { status_open: false, clearing_date: clearing, clearing_document_number: `CL-${seq + 1}` });
}

async function push(org: Org, customers: unknown[], invoices: unknown[]) {
  const c = await pushCustomers(stack, org.apiKey, customers);
  expect(c.status).toBe(200);
  expect(c.body.results.every((r) => r.success)).toBe(true);
  const i = await pushInvoices(stack, org.apiKey, invoices);
  expect(i.status).toBe(200);
  expect(i.body.results.every((r) => r.success), JSON.stringify(i.body.results.filter((r) => !r.success))).toBe(true);
}

const query = (org: Org, body: unknown) => stack.request('POST', PATH, { token: org.token, body });

beforeAll(async () => {
  stack = await startStack();
  orgA = await stack.onboard('Overdue A');
  orgB = await stack.onboard('Overdue B');
  const u1 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'North' } });
  const u2 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'South' } });
  expect([u1.status, u2.status]).toEqual([200, 200]);
  bu1 = u1.body.id;
  bu2 = u2.body.id;

  await push(
    orgA,
    [
      customerRecord({ customer_code: 'C-1', name1: 'Alpha GmbH', search_term: 'ALPHA' }),
      customerRecord({ customer_code: 'C-2', name1: 'Beta AG', search_term: 'BETA' }),
      customerRecord({ customer_code: 'C-3', name1: 'Gamma SE', search_term: 'GAMMA' }),
    ],
    [
      ...[-5, 0, 10, 20, 40].map((l) => ({ ...closed('C-1', '2026-06-01', l), business_unit_id: bu1 })),
      ...[0, 0, 5, 30, 60].map((l) => ({ ...closed('C-2', '2026-06-01', l), business_unit_id: bu2 })),
      { ...open('C-1', '2026-11-21', 1000), business_unit_id: bu1 },
      { ...open('C-1', '2026-11-01', 500), business_unit_id: bu1 },
      { ...open('C-1', '2026-12-11', 300), business_unit_id: bu1 },
      { ...open('C-2', '2026-10-01', 2000, { currency: 'USD', exchange_rate: '0.92500', amount_in_local_currency: 1850 }), business_unit_id: bu2 },
      { ...open('C-3', '2026-12-20', 5000), business_unit_id: bu1 },
      // a credit memo and an invoice without a known customer: neither counts
      open('C-1', '2026-01-01', 7000, { debit_credit_indicator: 'H' }),
      open('C-404', '2026-01-01', 9000),
    ],
  );
  // Organization B: same customer code, its own ledger (and a history that would change A's curve if it leaked)
  await push(orgB, [customerRecord({ customer_code: 'C-1', name1: 'Other Company' })], [
    { ...open('C-1', '2026-01-01', 9999) },
    ...[200, 300].map((l) => closed('C-1', '2026-01-01', l)),
  ]);
  const rows = await stack.sql<{ remote_id: string; id: string }>('SELECT remote_id, id FROM integrations.partners WHERE organization_id = $1', [orgA.organizationId]);
  for (const r of rows) partnerIds[r.remote_id] = r.id;
});
afterAll(async () => stack?.close());

describe('predicted overdue', () => {
  it('trips tiers on hand-computed data, with exact probabilities, sorted by largest tripped amount', async () => {
    const res = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: TIERS });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ as_of_date: '2026-12-31', currency: 'EUR', tiers: TIERS, unconvertible_currencies: [], unconvertible_invoice_count: 0 });
    const customers = res.body.customers;
    expect(customers.map((c: { partner_id: string }) => c.partner_id)).toEqual([partnerIds['C-3'], partnerIds['C-2'], partnerIds['C-1']]);

    expect(customers[0]).toEqual({
      partner_id: partnerIds['C-3'],
      partner_name: 'Gamma SE',
      partner_account_number: expect.anything(),
      total_open_lc: '5000.00',
      history_count: 0,
      unconvertible_invoice_count: 0,
      tripped_tiers: [{ days: '0', amount_threshold_lc: '4000.00', amount_lc: '5000.00', invoice_count: 1, trip_probability: expect.any(Number), trip_probability_max_error: 0 }],
    });
    expect(customers[0].tripped_tiers[0].trip_probability).toBeCloseTo(0.4, 12);

    expect(customers[1]).toMatchObject({ partner_name: 'Beta AG', total_open_lc: '1850.00', history_count: 5 });
    expect(customers[1].tripped_tiers).toEqual([
      { days: '15', amount_threshold_lc: '1200.00', amount_lc: '1850.00', invoice_count: 1, trip_probability: 1, trip_probability_max_error: 0 },
      { days: '60', amount_threshold_lc: '1000.00', amount_lc: '1850.00', invoice_count: 1, trip_probability: 1, trip_probability_max_error: 0 },
    ]);

    expect(customers[2]).toMatchObject({ partner_name: 'Alpha GmbH', total_open_lc: '1800.00', history_count: 5 });
    expect(customers[2].tripped_tiers).toHaveLength(1);
    expect(customers[2].tripped_tiers[0]).toMatchObject({ days: '15', amount_threshold_lc: '1200.00', amount_lc: '1800.00', invoice_count: 3 });
    expect(customers[2].tripped_tiers[0].trip_probability).toBeCloseTo(2 / 45, 12);
  });

  it('gives probability 1 when as_of_date has already passed', async () => {
    // as_of 2026-11-15: C-1's B (due 11-01) is 14 days late, 500.00 > 400; C-2's D is 45 days late.
    const res = await query(orgA, { as_of_date: '2026-11-15', evaluated_at: '2026-12-01', tiers: [{ days: 10, amount_lc: '400.00' }] });
    expect(res.status).toBe(200);
    expect(res.body.customers.map((c: { partner_name: string }) => c.partner_name)).toEqual(['Beta AG', 'Alpha GmbH']);
    expect(res.body.customers[1].tripped_tiers).toEqual([
      { days: '10', amount_threshold_lc: '400.00', amount_lc: '500.00', invoice_count: 1, trip_probability: 1, trip_probability_max_error: 0 },
    ]);
    expect(res.body.customers[0].tripped_tiers[0].trip_probability).toBe(1);
  });

  it('returns nobody when no tier trips', async () => {
    const res = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '5000.00' }] });
    expect(res.status).toBe(200);
    expect(res.body.customers).toEqual([]);
  });

  it('filters by business unit', async () => {
    const res = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: TIERS, business_unit_id__in: [bu1] });
    expect(res.status).toBe(200);
    expect(res.body.customers.map((c: { partner_name: string }) => c.partner_name)).toEqual(['Gamma SE', 'Alpha GmbH']);
    // the history is the customer's whole payment behaviour: Alpha's probability is unchanged
    expect(res.body.customers[1].tripped_tiers[0].trip_probability).toBeCloseTo(2 / 45, 12);
    const south = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: TIERS, business_unit_id__in: [bu2] });
    expect(south.body.customers.map((c: { partner_name: string }) => c.partner_name)).toEqual(['Beta AG']);
  });

  it('keeps organizations apart', async () => {
    const res = await query(orgB, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '1.00' }] });
    expect(res.status).toBe(200);
    expect(res.body.customers).toHaveLength(1);
    expect(res.body.customers[0]).toMatchObject({ partner_name: 'Other Company', total_open_lc: '9999.00', history_count: 2 });
    expect(Object.values(partnerIds)).not.toContain(res.body.customers[0].partner_id);
    const a = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '1.00' }] });
    expect(a.body.customers.map((c: { partner_name: string }) => c.partner_name).sort()).toEqual(['Alpha GmbH', 'Beta AG', 'Gamma SE']);
  });

  it('validates the request (422)', async () => {
    const base = { as_of_date: '2026-12-31' };
    const cases: [unknown, (string | number)[]][] = [
      [{ ...base, tiers: [] }, ['body', 'tiers']],
      [{ ...base, tiers: Array.from({ length: 11 }, (_, i) => ({ days: i, amount_lc: '1.00' })) }, ['body', 'tiers']],
      [{ ...base, tiers: [{ days: 30, amount_lc: '12,50' }] }, ['body', 'tiers', 0, 'amount_lc']],
      [{ ...base, tiers: [{ days: 30, amount_lc: 12.5 }] }, ['body', 'tiers', 0, 'amount_lc']],
      [{ ...base, tiers: [{ days: 30, amount_lc: '1.00' }, { days: -1, amount_lc: '1.00' }] }, ['body', 'tiers', 1, 'days']],
      [{ as_of_date: '2026-02-30', tiers: [{ days: 30, amount_lc: '1.00' }] }, ['body', 'as_of_date']],
      [{ as_of_date: '31.12.2026', tiers: [{ days: 30, amount_lc: '1.00' }] }, ['body', 'as_of_date']],
      [{ ...base, tiers: [{ days: 30, amount_lc: '1.00' }], business_unit_id__in: ['nope'] }, ['body', 'business_unit_id__in', 0]],
    ];
    for (const [body, loc] of cases) {
      const res = await query(orgA, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.type).toBe('request-validation');
      expect(res.body.errors.map((e: { loc: unknown }) => e.loc)).toContainEqual(loc);
    }
    const ok = await query(orgA, { ...base, tiers: Array.from({ length: 10 }, (_, i) => ({ days: i, amount_lc: '1000000.00' })) });
    expect(ok.status).toBe(200);
  });

  it('keeps the organization lateness counts exact through inserts and re-pushes', async () => {
    const orgC = await stack.onboard('Overdue C');
    const counts = () =>
      stack.sql<{ lateness: number; n: number }>(
        'SELECT lateness, invoice_count::int AS n FROM integrations.invoice_lateness_counts WHERE organization_id = $1 AND invoice_count > 0 ORDER BY lateness',
        [orgC.organizationId],
      );
    const recount = () =>
      stack.sql<{ lateness: number; n: number }>(
        `SELECT clearing_date - net_due_date AS lateness, count(*)::int AS n FROM integrations.documents
         WHERE organization_id = $1 AND kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL
         GROUP BY 1 ORDER BY 1`,
        [orgC.organizationId],
      );
    const first = closed('C-9', '2026-05-01', 10);
    const second = closed('C-9', '2026-05-01', 10);
    await push(orgC, [customerRecord({ customer_code: 'C-9', name1: 'Delta' })], [first, second, open('C-9', '2026-05-01', 50)]);
    expect(await counts()).toEqual([{ lateness: 10, n: 2 }]);
    // re-push: one clears later, the other is reopened
    await push(orgC, [], [
      { ...first, clearing_date: '2026-05-21' },
      { ...second, status_open: true, clearing_date: null, clearing_document_number: '' },
    ]);
    expect(await counts()).toEqual([{ lateness: 20, n: 1 }]);
    expect(await counts()).toEqual(await recount());
    const res = await query(orgC, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '1.00' }] });
    expect(res.body.customers).toHaveLength(1);
    expect(res.body.customers[0]).toMatchObject({ partner_name: 'Delta', history_count: 1, total_open_lc: '150.00' });
  });

  it('requires a token', async () => {
    const res = await stack.request('POST', PATH, { body: { as_of_date: '2026-12-31', tiers: TIERS } });
    expect(res.status).toBe(401);
  });
});

describe('predicted overdue: currencies, credits and bounded cost', () => {
  const day = (iso: string, delta: number) => new Date(Date.parse(`${iso}T00:00:00Z`) + delta * 86_400_000).toISOString().slice(0, 10);
  const noLocal = (r: InvoiceRecord): InvoiceRecord => ({ ...r, amount_in_local_currency: undefined as unknown as number, exchange_rate: '' });

  it('converts invoices without a local amount with the stored rates, 1:1 only in the base currency, and reports the rest', async () => {
    const org = await stack.onboard('Overdue currencies');
    await push(
      org,
      [customerRecord({ customer_code: 'D-1', name1: 'Dollar Inc' }), customerRecord({ customer_code: 'D-2', name1: 'Euro Sarl' })],
      [
        // USD 10,000.00 with no local amount (a QuickBooks-style document): must not count as EUR 10,000.00
        noLocal(open('D-1', '2026-11-01', 10000, { currency: 'USD', exchange_rate: '' })),
        // EUR (the base currency) without a local amount: 1:1; GBP without one: needs a rate
        noLocal(open('D-2', '2026-11-01', 3000)),
        noLocal(open('D-2', '2026-11-01', 1000, { currency: 'GBP' })),
      ],
    );
    const body = { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '2000.00' }] };
    const before = await query(org, body);
    expect(before.status, before.text).toBe(200);
    expect(before.body.customers).toEqual([
      expect.objectContaining({ partner_name: 'Euro Sarl', total_open_lc: '3000.00', unconvertible_invoice_count: 1, tripped_tiers: [expect.objectContaining({ amount_lc: '3000.00', invoice_count: 1 })] }),
    ]);
    expect(before.body.unconvertible_currencies).toEqual([
      { currency: 'GBP', invoice_count: 1 },
      { currency: 'USD', invoice_count: 1 },
    ]);
    expect(before.body.unconvertible_invoice_count).toBe(2);

    const rates = await stack.request('PUT', '/v2/exchange-rates', {
      token: org.token,
      body: [
        { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-12-01', rate: '1.25' }, // 10,000 USD / 1.25 = 8,000.00 EUR
        { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2027-01-15', rate: '2.00' }, // after as_of: not used
        { base_currency: 'GBP', quote_currency: 'EUR', rate_date: '2026-11-01', rate: '1.15' }, // 1,000 GBP · 1.15 = 1,150.00 EUR
      ],
    });
    expect(rates.status, rates.text).toBe(200);
    const after = await query(org, body);
    expect(after.status).toBe(200);
    expect(after.body.customers.map((c: { partner_name: string; total_open_lc: string; unconvertible_invoice_count: number }) => [c.partner_name, c.total_open_lc, c.unconvertible_invoice_count])).toEqual([
      ['Dollar Inc', '8000.00', 0],
      ['Euro Sarl', '4150.00', 0],
    ]);
    expect(after.body.customers[1].tripped_tiers[0]).toMatchObject({ amount_lc: '4150.00', invoice_count: 2 });
    expect(after.body).toMatchObject({ unconvertible_currencies: [], unconvertible_invoice_count: 0 });
    // an as_of before every USD rate: USD is not convertible again
    const early = await query(org, { ...body, as_of_date: '2026-11-15' });
    expect(early.body.unconvertible_currencies).toEqual([{ currency: 'USD', invoice_count: 1 }]);
    expect(early.body.customers.map((c: { partner_name: string }) => c.partner_name)).toEqual(['Euro Sarl']);
  });

  it('models credits exactly: +1000 (p = 1), −600 (p = 1), +500 (p = 0.5) over a 500.00 tier trips with probability 0.5', async () => {
    // history L = 0, 20, 40, 100: S(30) = 1/2, S(60) = 1/4, S(122) = 0. Today 2026-12-01, as_of 2026-12-31.
    //   +1000.00 and −600.00 due 2026-08-01: 122 days late today, beyond the history → p = 1
    //   +500.00 due 2026-11-01: p = S(60) / S(30) = 1/2
    // The certain part is 400.00: the tier (> 500.00) trips exactly when the 500.00 stays unpaid.
    const org = await stack.onboard('Overdue credits');
    await push(
      org,
      [customerRecord({ customer_code: 'S-1', name1: 'Signed GmbH' })],
      [
        ...[0, 20, 40, 100].map((l) => closed('S-1', '2026-03-01', l)),
        open('S-1', '2026-08-01', 1000),
        open('S-1', '2026-08-01', -600),
        open('S-1', '2026-11-01', 500),
      ],
    );
    const res = await query(org, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: [{ days: 0, amount_lc: '500.00' }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.customers).toHaveLength(1);
    expect(res.body.customers[0]).toMatchObject({ partner_name: 'Signed GmbH', total_open_lc: '900.00', history_count: 4 });
    expect(res.body.customers[0].tripped_tiers).toEqual([
      { days: '0', amount_threshold_lc: '500.00', amount_lc: '900.00', invoice_count: 3, trip_probability: 0.5, trip_probability_max_error: 0 },
    ]);
  });

  describe('bounded cost', () => {
    let big: Org;
    const TODAY = '2026-12-01';
    const AS_OF = '2026-12-31';
    const BIG_TIERS = Array.from({ length: 10 }, (_, i) => ({ days: i, amount_lc: '1000000.00' }));

    beforeAll(async () => {
      // four customers with 40 open invoices each, 20,000.00..80,000.00 (about 2,000,000.00 in all), 1..40 days late today;
      // the organization's history (P-1's closed invoices) was paid 0..120 days late, so every invoice is uncertain.
      big = await stack.onboard('Overdue pathological');
      let x = 12345;
      const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
      const customers = ['P-1', 'P-2', 'P-3', 'P-4'];
      const history = Array.from({ length: 121 }, (_, l) => closed('P-1', '2026-01-01', l));
      await push(big, customers.map((c) => customerRecord({ customer_code: c, name1: `Pathological ${c}` })), history.slice(0, 100));
      await push(big, [], history.slice(100));
      for (const c of customers) {
        await push(big, [], Array.from({ length: 40 }, (_, i) => open(c, day(TODAY, -(1 + i)), Math.round(20000 + next() * 60000))));
      }
    });

    it('answers a customer with 40 uncertain invoices around 1,000,000.00 tiers, with a reported error bound', async () => {
      const res = await query(big, { as_of_date: AS_OF, evaluated_at: TODAY, tiers: BIG_TIERS.slice(0, 2), business_unit_id__in: undefined });
      expect(res.status, res.text).toBe(200);
      expect(res.body.customers).toHaveLength(4);
      for (const c of res.body.customers) {
        expect(c.tripped_tiers).toHaveLength(2);
        for (const t of c.tripped_tiers) {
          expect(t.trip_probability).toBeGreaterThan(0);
          expect(t.trip_probability).toBeLessThan(1);
          expect(t.trip_probability_max_error).toBeGreaterThan(0); // computed at a coarser resolution…
          expect(t.trip_probability_max_error).toBeLessThan(0.01); // …within a small guaranteed bound
        }
        // the same invoices in both tiers (all are more than 1 day late at as_of): the same answer
        expect(c.tripped_tiers[0].trip_probability).toBe(c.tripped_tiers[1].trip_probability);
      }
    });

    it('answers a small request of another organization while the large one computes', async () => {
      const order: string[] = [];
      const large = query(big, { as_of_date: AS_OF, evaluated_at: TODAY, tiers: BIG_TIERS }).then((r) => {
        order.push('large');
        return r;
      });
      // wait until the large request's tails are on the worker threads (same process as the cash-app API)
      while (sharedTailPool().pending === 0 && order.length === 0) await new Promise((r) => setTimeout(r, 2));
      const small = await query(orgA, { as_of_date: '2026-12-31', evaluated_at: '2026-12-01', tiers: TIERS });
      order.push('small');
      expect(small.status).toBe(200);
      expect(small.body.customers).toHaveLength(3);
      const l = await large;
      expect(l.status, l.text).toBe(200);
      expect(l.body.customers).toHaveLength(4);
      expect(l.body.customers[0].tripped_tiers).toHaveLength(10);
      expect(order).toEqual(['small', 'large']);
    });
  });
});
