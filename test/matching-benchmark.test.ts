/**
 * The labelled cash-matching benchmark (bench/matching/, `npm run bench -- matching`) at its small
 * size, as a test of the benchmark itself rather than of the engine's match rates (those change as
 * the engine improves and are published in docs/benchmarks.md):
 *  (a) the generator is deterministic and its truth is consistent: every scenario appears, each
 *      line's allocations add up to its amount give or take the stated shortfall, documents belong
 *      to the payer and are relieved once, IBANs carry valid ISO 13616 check digits;
 *  (b) the scorer classifies hand-made proposals as the classes are defined;
 *  (c) end to end through the real stack (gateway, services, a cash-app worker, Postgres, Temporal):
 *      world pushed, warm-up approved, month uploaded as camt.053; every line is scored exactly once
 *      and the classes add up. Credits that are not customer payments must never be matched.
 * No SQL: every state is reached through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runThroughApi } from '../bench/matching/api.js';
import { DEFAULT_SEED, generateBenchmark, NON_CUSTOMER_SCENARIOS, type Benchmark } from '../bench/matching/benchmark.js';
import { camtFile } from '../bench/matching/camt.js';
import { truthCash, type Line, type Truth } from '../bench/matching/lines.js';
import { ibanOf, ibanValid } from '../bench/matching/random.js';
import { parseOptions } from '../bench/matching/run.js';
import { CUSTOMER_SCENARIOS } from '../bench/matching/scenarios.js';
import { classify, CUSTOMER_CLASSES, overRelieves, scoreLines, type Observed } from '../bench/matching/score.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

const small = generateBenchmark('small');

describe('the generator', () => {
  it('gives the same world, statements and truth for the same seed, and another for another seed', () => {
    const again = generateBenchmark('small', DEFAULT_SEED);
    expect(JSON.stringify(again)).toBe(JSON.stringify(small));
    expect(camtFile(again.world, again.lines, 'M', '2026-11-27')).toBe(camtFile(small.world, small.lines, 'M', '2026-11-27'));
    const other = generateBenchmark('small', DEFAULT_SEED + 1);
    expect(JSON.stringify(other.lines)).not.toBe(JSON.stringify(small.lines));
  });

  it('has every scenario, customer deposits and credits that are not customer payments', () => {
    const scenarios = new Set(small.lines.map((l) => l.truth.scenario));
    for (const s of [...CUSTOMER_SCENARIOS.map((c) => c.name), ...NON_CUSTOMER_SCENARIOS]) expect(scenarios, s).toContain(s);
    const deposits = small.lines.filter((l) => !l.truth.notAPayment).length;
    expect(deposits).toBeGreaterThanOrEqual(55);
    expect(small.lines.length - deposits).toBeGreaterThanOrEqual(10);
  });

  function checkTruth(b: Benchmark, l: Line) {
    const t: Truth = l.truth;
    const docs = new Map(b.world.documents.map((d) => [d.number, d]));
    if (t.notAPayment) {
      expect(t.partner, l.id).toBeNull();
      expect(t.allocations, l.id).toEqual([]);
      return;
    }
    const kinds = new Map(b.world.documents.map((d) => [d.number, d.kind]));
    const cash = truthCash(t, kinds);
    const relieved = t.allocations.reduce((s, a) => s + (kinds.get(a.document) === 'credit_memo' ? -a.paid : a.paid + a.discount + a.withheld + a.adjustment), 0);
    if (t.scenario === 'overpayment') expect(cash, l.id).toBeLessThan(l.amount);
    else expect(cash, l.id).toBe(l.amount);
    if (t.shortfall?.reason === 'partial') {
      // a partial payment relieves what was paid; the shortfall is what stays open on the invoice
      expect(relieved, l.id).toBe(cash);
      expect(cash + t.shortfall.amount, l.id).toBe(docs.get(t.allocations[0]!.document)!.open);
    } else {
      // a fee, discount or deduction relieves the invoice by the deposit plus the shortfall
      expect(relieved - cash, l.id).toBe(t.shortfall?.amount ?? 0);
    }
    for (const a of t.allocations) {
      const d = docs.get(a.document)!;
      expect(d, `${l.id} ${a.document}`).toBeDefined();
      expect(d.customer, l.id).toBe(t.partner);
      expect(d.currency, l.id).toBe(l.currency);
      expect(d.statusOpen && d.open > 0, l.id).toBe(true);
      // a line relieves at most the document's open amount
      expect(a.paid + a.discount + a.withheld + a.adjustment, l.id).toBeLessThanOrEqual(d.open);
    }
  }

  it('states a consistent truth for every line: amounts add up ± the shortfall, documents of the payer, each relieved once', () => {
    for (const b of [small, generateBenchmark('small', 7)]) {
      // a document number or a PO number quoted names one document
      const keys = b.world.documents.flatMap((d) => [d.number, ...(d.reference ? [d.reference] : [])]);
      expect(new Set(keys).size).toBe(keys.length);
      const relievedBy = new Map<string, string>();
      for (const l of [...b.warmup, ...b.lines]) {
        checkTruth(b, l);
        for (const a of l.truth.allocations) {
          expect(relievedBy.get(a.document), `${a.document} relieved by ${relievedBy.get(a.document)} and ${l.id}`).toBeUndefined();
          relievedBy.set(a.document, l.id);
        }
      }
      // camt.053 unstructured remittance information is at most 140 characters
      for (const l of [...b.warmup, ...b.lines]) expect((l.remittance ?? '').length, l.id).toBeLessThanOrEqual(140);
      const ids = [...b.warmup, ...b.lines].map((l) => l.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('writes IBANs with valid ISO 13616 check digits', () => {
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('DE89370400440532013001')).toBe(false);
    expect(ibanOf('DE', '370400440532013000')).toBe('DE89370400440532013000');
    const ibans = [
      ...small.world.accounts.map((a) => a.iban),
      ...small.world.customers.flatMap((c) => [c.iban, c.otherIban]),
      ...small.lines.map((l) => l.counterpartyIban),
    ].filter((x): x is string => x !== null);
    expect(ibans.length).toBeGreaterThan(100);
    for (const iban of ibans) expect(ibanValid(iban), iban).toBe(true);
    expect(new Set(small.world.customers.filter((c) => c.iban).map((c) => c.iban!.slice(0, 2))).size).toBeGreaterThanOrEqual(4);
  });

  it('refuses unknown options', () => {
    expect(parseOptions(['--size', 'small', '--seed', '7', '--direct'])).toEqual({ size: 'small', seed: 7, direct: true });
    expect(() => parseOptions(['--size', 'huge'])).toThrow(/--size/);
    expect(() => parseOptions(['--seed', '-1'])).toThrow(/--seed/);
    expect(() => parseOptions(['--fast'])).toThrow(/unknown option/);
  });
});

describe('the scorer', () => {
  const C = 'C1';
  const line = (truth: Partial<Truth>, amount = 9_500): Line => ({
    id: 'L1',
    account: 'EUR-MAIN',
    currency: 'EUR',
    amount,
    bookingDate: '2026-11-10',
    counterpartyName: 'Payer',
    counterpartyIban: null,
    counterpartyAccount: null,
    remittance: null,
    endToEndId: null,
    transactionCode: 'PMNT/RCDT/ESCT',
    truth: { scenario: 'short_pay_fee', variant: null, partner: C, allocations: [], shortfall: null, notAPayment: false, ...truth },
  });
  const alloc = (document: string, paid: number, rest: Partial<{ discount: number; withheld: number; adjustment: number }> = {}) => ({
    document,
    paid,
    discount: rest.discount ?? 0,
    withheld: rest.withheld ?? 0,
    adjustment: rest.adjustment ?? 0,
  });
  const proposal = (partner: string | null, allocations: Observed['allocations'], extra: Partial<Observed> = {}): Observed => ({ partner, allocations, score: 0.9, ...extra });
  // a 100.00 invoice paid 95.00: a 5.00 bank fee
  const fee = line({ allocations: [alloc('A', 9_500, { adjustment: 500 })], shortfall: { amount: 500, reason: 'fee' } });
  // two invoices paid in full
  const batch = line({ scenario: 'batch_with_numbers', allocations: [alloc('A', 6_000), alloc('B', 3_500)] });

  it('exact: payer and allocations to the cent, shortfall included where stated', () => {
    expect(classify(fee, proposal(C, [alloc('A', 9_500, { adjustment: 500 })]))).toBe('exact');
    expect(classify(fee, proposal(C, [alloc('A', 9_500, { adjustment: 500 })], { shortfall: { amount: 500, reason: 'fee' } }))).toBe('exact');
    expect(classify(batch, proposal(C, [alloc('B', 3_500), alloc('A', 6_000)]))).toBe('exact');
  });

  it('settled: the invoices relieved as the truth says, split otherwise, without the payer, or with another shortfall reason', () => {
    expect(classify(fee, proposal(C, [alloc('A', 9_500, { withheld: 500 })]))).toBe('settled');
    expect(classify(fee, proposal(C, [alloc('A', 9_500, { adjustment: 500 })], { shortfall: { amount: 500, reason: 'deduction' } }))).toBe('settled');
    expect(classify(fee, proposal(C, [alloc('A', 9_500, { adjustment: 500 })], { shortfall: null }))).toBe('settled');
    expect(classify(batch, proposal(null, [alloc('A', 6_000), alloc('B', 3_500)]))).toBe('settled');
  });

  it('partial: only documents of the truth, not all of them or by other amounts', () => {
    expect(classify(batch, proposal(C, [alloc('A', 6_000)]))).toBe('partial');
    expect(classify(fee, proposal(C, [alloc('A', 9_500)]))).toBe('partial');
  });

  it('wrong: another document, another payer, or any proposal for a credit that is not a customer payment', () => {
    expect(classify(batch, proposal(C, [alloc('A', 6_000), alloc('X', 3_500)]))).toBe('wrong');
    expect(classify(batch, proposal('C2', [alloc('A', 6_000), alloc('B', 3_500)]))).toBe('wrong');
    expect(classify(batch, proposal('C2', []))).toBe('wrong');
    const refund = line({ scenario: 'not_a_payment_supplier_refund', partner: null, notAPayment: true });
    expect(classify(refund, proposal(null, [alloc('A', 9_500)]))).toBe('wrong');
    expect(classify(refund, proposal(C, []))).toBe('wrong');
    expect(classify(refund, null)).toBe('not_matched');
  });

  it('counts a proposal that relieves an invoice by more than the truth, whatever its class', () => {
    const partial = line({ scenario: 'partial_payment', allocations: [alloc('A', 5_000)], shortfall: { amount: 5_000, reason: 'partial' } }, 5_000);
    const writtenOff = proposal(C, [alloc('A', 5_000, { adjustment: 5_000 })]);
    expect(classify(partial, writtenOff)).toBe('partial');
    expect(overRelieves(partial, writtenOff)).toBe(true);
    expect(overRelieves(partial, proposal(C, [alloc('A', 5_000)]))).toBe(false);
    expect(scoreLines([partial], new Map([['L1', writtenOff]])).over_relieved).toBe(1);
  });

  it('missed: no proposal, or one that applies nothing', () => {
    expect(classify(batch, null)).toBe('missed');
    expect(classify(batch, proposal(null, []))).toBe('missed');
    expect(classify(batch, proposal(C, []))).toBe('missed');
  });

  it('adds the classes up per scenario and overall, and counts right proposals per score threshold', () => {
    const lines = [
      { ...batch, id: 'exact' },
      { ...fee, id: 'settled' },
      { ...batch, id: 'wrong' },
      { ...batch, id: 'missed' },
      { ...line({ scenario: 'not_a_payment_interest', partner: null, notAPayment: true }), id: 'interest' },
    ];
    const observed = new Map<string, Observed>([
      ['exact', proposal(C, [alloc('A', 6_000), alloc('B', 3_500)], { score: 0.95 })],
      ['settled', proposal(C, [alloc('A', 9_500, { discount: 500 })], { score: 0.7 })],
      ['wrong', proposal(C, [alloc('X', 9_500)], { score: 0.92 })],
    ]);
    const r = scoreLines(lines, observed);
    expect(r.lines).toBe(5);
    expect(r.customer_deposits).toBe(4);
    expect(r.classes).toEqual({ exact: 1, settled: 1, partial: 0, wrong: 1, missed: 1 });
    expect(r.not_a_payment).toEqual({ lines: 1, matched: 0, not_matched: 1 });
    expect(r.rates.exact).toBe(25);
    expect(r.rates.settled_or_exact).toBe(50);
    expect(r.per_scenario.batch_with_numbers).toMatchObject({ lines: 3, exact: 1, wrong: 1, missed: 1 });
    expect(r.calibration.find((c) => c.threshold === 0.9)).toEqual({ threshold: 0.9, proposals: 2, right: 1, precision: 50 });
    expect(r.calibration.find((c) => c.threshold === 0.5)).toEqual({ threshold: 0.5, proposals: 3, right: 2, precision: 66.67 });
  });
});

describe('end to end through the stack', () => {
  let stack: TestStack;
  let org: Org;

  beforeAll(async () => {
    stack = await startStack({ workers: ['cash-app'] });
    org = await stack.onboard('Nordlicht Vertrieb GmbH');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('runs the small benchmark: warm-up approved, month proposed, every line scored once, classes adding up', async () => {
    const run = await runThroughApi({ baseUrl: stack.gatewayUrl, token: org.token, apiKey: org.apiKey }, small);
    expect(run.warmup.approved).toBe(small.warmup.filter((l) => !l.truth.notAPayment).length);
    const approved = await stack.request('GET', '/v2/payments?status=approved&page_size=1', { token: org.token });
    expect(approved.body.total_records).toBe(run.warmup.approved);

    const ids = new Set(small.lines.map((l) => l.id));
    for (const id of run.observed.keys()) expect(ids.has(id), id).toBe(true);
    // every proposal names documents and payers of the world (ids mapped back through the push answers)
    for (const o of run.observed.values()) {
      expect(o.partner === null || !o.partner.startsWith('?'), JSON.stringify(o)).toBe(true);
      for (const a of o.allocations) expect(a.document.startsWith('?'), a.document).toBe(false);
    }

    const report = scoreLines(small.lines, run.observed);
    expect(report.scored.map((s) => s.line).sort()).toEqual([...ids].sort());
    const perScenario = Object.values(report.per_scenario);
    expect(perScenario.reduce((s, x) => s + x.lines, 0)).toBe(small.lines.length);
    expect(perScenario.reduce((s, x) => s + x.exact + x.settled + x.partial + x.wrong + x.missed + x.not_matched, 0)).toBe(small.lines.length);
    expect(CUSTOMER_CLASSES.reduce((s, c) => s + report.classes[c], 0)).toBe(report.customer_deposits);
    expect(report.customer_deposits + report.not_a_payment.lines).toBe(small.lines.length);
    expect(report.classes.exact).toBeGreaterThan(0);
    // credits that are not customer payments (refunds, interest, own transfers, card settlements) are never matched
    expect(report.not_a_payment.matched).toBe(0);
  });
});
