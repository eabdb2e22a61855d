import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MATCH_CONFIG,
  extractTokens,
  findSubsetSum,
  allocationsFitMinorUnits,
  identifyPayer,
  matchDeposit,
  matchDeposits,
  matchStatement,
  MatchState,
  nameSimilarity,
  nameTokens,
  PartnerIndex,
  stripAmountsAndDates,
  transactionTokens,
  type MatchContext,
  type MatchInvoice,
  type MatchPartner,
  type MatchTransaction,
} from '../src/domain/matching/index.js';

const ACME = 'p-acme';
const BETA = 'p-beta';
const WRITE_OFF = 'adj-write-off';

function inv(id: string, partner: string | null, number: string, open: string, extra: Partial<MatchInvoice> = {}): MatchInvoice {
  return { id, partner_id: partner, document_number: number, reference: null, currency: 'EUR', open_amount: open, net_due_date: '2026-10-01', ...extra };
}

function tx(extra: Partial<MatchTransaction>): MatchTransaction {
  return {
    id: 't1',
    amount: '100.00',
    currency: 'EUR',
    counterparty_name: null,
    counterparty_account: null,
    counterparty_iban: null,
    remittance_information: null,
    bank_reference: null,
    end_to_end_id: null,
    ...extra,
  };
}

function ctx(extra: Partial<MatchContext> = {}): MatchContext {
  return {
    invoices: [],
    partners: [
      { id: ACME, name: 'Acme Handels GmbH', legal_name: 'ACME Handels-GmbH & Co. KG' },
      { id: BETA, name: 'Beta Logistics Ltd', legal_name: null },
    ],
    knownAccounts: [],
    remittances: [],
    toleranceAdjustmentId: WRITE_OFF,
    config: DEFAULT_MATCH_CONFIG,
    ...extra,
  };
}

function run(t: MatchTransaction, c: MatchContext) {
  return matchDeposit(t, c, new MatchState(c.invoices));
}

describe('token extraction', () => {
  it('finds numeric and invoice-number-like tokens, ignores words', () => {
    const tokens = extractTokens('Zahlung RE 9000001/9000002, INV-000123 Kd.Nr. C-100 danke', 'REF#77');
    expect(tokens).toEqual(expect.arrayContaining(['9000001', '9000002', 'INV000123', '000123', '123', 'C100', '100']));
    expect(tokens).not.toContain('ZAHLUNG');
    expect(tokens).not.toContain('77'); // too short to be a document number
    expect(extractTokens(null, undefined, 'no numbers here')).toEqual([]);
  });

  it('takes amounts and dates out before looking for invoice numbers', () => {
    // today's defect: "1.190,00" gave the token "1190", "15.10.2026" gave "15102026" and "2026"
    expect(extractTokens('Betrag 1.190,00 vom 15.10.2026')).toEqual([]);
    expect(extractTokens('paid 1,190.00 on 2026-10-15; 1190.00 and 1\'190.50 and 10/15/2026')).toEqual([]);
    expect(extractTokens('RE 9000001 EUR 1.190,00 15.10.26')).toEqual(['9000001']);
    expect(extractTokens('Rechnung 9000001 über 1.190 € am 2026/10/15')).toEqual(['9000001']);
    // what only looks like a date or an amount stays: not a calendar date, an identifier with a prefix, 4 decimals
    expect(extractTokens('INV 12.34.5678')).toEqual(expect.arrayContaining(['12345678']));
    expect(extractTokens('INV-2026-10-15')).toEqual(expect.arrayContaining(['INV20261015']));
    expect(extractTokens('RE 2026.0015')).toEqual(expect.arrayContaining(['20260015']));
    // a bare number next to the deposit's own currency code is an amount; another three-letter word is not a currency
    expect(stripAmountsAndDates('EUR 1190 PAY ALL 9000001', 'EUR').trim()).toBe('PAY ALL 9000001');
    expect(transactionTokens({ remittance_information: 'EUR 1190 PAY ALL 9000001', bank_reference: '1190 EUR', end_to_end_id: null, currency: 'EUR' })).toEqual(['9000001']);
  });

  it('normalizes names: case, punctuation, diacritics, legal forms', () => {
    expect(nameTokens('ACME Handels-GmbH & Co. KG')).toEqual(['acme', 'handels']);
    expect(nameTokens('Müller AG')).toEqual(['muller']);
    expect(nameSimilarity('ACME HANDELS GMBH', 'Acme Handels GmbH')).toBe(1);
    expect(nameSimilarity('Acme Handels', 'Beta Logistics Ltd')).toBeLessThan(0.3);
  });

  it('finds a bounded subset sum and reports ambiguity', () => {
    expect(findSubsetSum([500n, 300n, 200n], 700n, 1000)).toEqual({ indexes: [0, 2], ambiguous: false });
    expect(findSubsetSum([500n, 300n, 200n], 50n, 1000)).toBeNull();
    expect(findSubsetSum([100n, 100n], 100n, 1000)?.ambiguous).toBe(true);
  });
});

describe('matching engine', () => {
  it('matches a single invoice by number and exact amount', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '1190.00'), inv('i2', ACME, '9000002', '1190.00')] });
    const p = run(tx({ amount: '1190.00', remittance_information: 'Invoice 9000001 thank you' }), c)!;
    expect(p.partner_id).toBe(ACME);
    expect(p.allocations).toEqual([
      { invoice_id: 'i1', amount_paid: '1190.0000', amount_discount: '0.0000', amount_withheld: '0.0000', adjustment_id: null, adjustment_amount: '0.0000' },
    ]);
    expect(p.reasons).toEqual([{ rule: 'invoice_number', value: '9000001', invoice_id: 'i1' }, { rule: 'amount_exact', invoices: 1 }]);
    expect(p.score).toBe(0.8);
  });

  it('matches a reference with punctuation and leading zeros', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '0090000001', '50.00', { reference: 'PO-4711' })] });
    expect(run(tx({ amount: '50.00', remittance_information: 'order 4711' }), c)).toBeNull(); // "4711" alone is not the reference "PO4711"
    expect(run(tx({ amount: '50.00', remittance_information: 'po 4711' }), c)?.allocations[0]?.invoice_id).toBe('i1'); // a blank for the hyphen
    expect(run(tx({ amount: '50.00', remittance_information: 'PO-4711' }), c)?.allocations[0]?.invoice_id).toBe('i1');
    expect(run(tx({ amount: '50.00', bank_reference: '90000001' }), c)?.allocations[0]?.invoice_id).toBe('i1');
  });

  it('pays several referenced invoices at once', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '100.00'), inv('i2', ACME, '9000002', '250.50'), inv('i3', ACME, '9000003', '80.00')] });
    const p = run(tx({ amount: '350.50', remittance_information: 'RE 9000001 9000002 9000003' }), c)!;
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid])).toEqual([
      ['i1', '100.0000'],
      ['i2', '250.5000'],
    ]);
    expect(p.reasons.at(-1)).toMatchObject({ rule: 'amount_combination', invoices: 2 });
  });

  it('finds a combination of the payer\'s open invoices without references', () => {
    const c = ctx({
      invoices: [inv('i1', ACME, 'A1', '100.00'), inv('i2', ACME, 'A2', '40.00', { net_due_date: '2026-11-01' }), inv('i3', ACME, 'A3', '60.25'), inv('b1', BETA, 'B1', '40.00')],
    });
    const p = run(tx({ amount: '140.00', counterparty_name: 'ACME HANDELS GMBH' }), c)!;
    expect(p.partner_id).toBe(ACME);
    expect(p.allocations.map((a) => a.invoice_id).sort()).toEqual(['i1', 'i2']);
    expect(p.reasons[0]).toMatchObject({ rule: 'name', partner_id: ACME, similarity: 1 });
    expect(p.reasons[1]).toMatchObject({ rule: 'amount_combination' });
  });

  it('proposes a short payment within tolerance with the write-off adjustment', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '1190.00')] });
    const p = run(tx({ amount: '1187.50', remittance_information: '9000001' }), c)!;
    expect(p.allocations).toEqual([
      { invoice_id: 'i1', amount_paid: '1187.5000', amount_discount: '0.0000', amount_withheld: '0.0000', adjustment_id: WRITE_OFF, adjustment_amount: '2.5000' },
    ]);
    expect(p.reasons.at(-1)).toEqual({ rule: 'amount_within_tolerance', shortfall: '2.5000', adjustment_id: WRITE_OFF });
  });

  it('proposes a partial payment beyond tolerance, oldest due first', () => {
    const c = ctx({ invoices: [inv('i2', ACME, '9000002', '300.00', { net_due_date: '2026-12-01' }), inv('i1', ACME, '9000001', '200.00')] });
    const p = run(tx({ amount: '250.00', remittance_information: '9000001 9000002' }), c)!;
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid, a.adjustment_id])).toEqual([
      ['i1', '200.0000', null],
      ['i2', '50.0000', null],
    ]);
    expect(p.reasons.at(-1)).toEqual({ rule: 'amount_partial', shortfall: '250.0000' });
  });

  it('uses the percentage tolerance when larger than the absolute one', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '1000.00')], config: { ...DEFAULT_MATCH_CONFIG, toleranceAmount: '1', tolerancePercent: '2' } });
    expect(run(tx({ amount: '985.00', remittance_information: '9000001' }), c)!.allocations[0]!.adjustment_amount).toBe('15.0000');
    // beyond the tolerance and the fee ceiling: no adjustment
    expect(run(tx({ amount: '950.00', remittance_information: '9000001' }), c)!.allocations[0]!.adjustment_amount).toBe('0.0000');
  });

  it('identifies the payer by a learned IBAN before the name', () => {
    const c = ctx({
      invoices: [inv('a1', ACME, 'A1', '99.00'), inv('b1', BETA, 'B1', '99.00')],
      knownAccounts: [{ account_identifier: 'DE89370400440532013000', partner_id: BETA }],
    });
    const p = run(tx({ amount: '99.00', counterparty_name: 'Acme Handels GmbH', counterparty_iban: 'DE89 3704 0044 0532 0130 00' }), c)!;
    expect(p.partner_id).toBe(BETA);
    expect(p.allocations[0]!.invoice_id).toBe('b1');
    expect(p.reasons[0]).toEqual({ rule: 'iban', partner_id: BETA, value: 'DE89370400440532013000' });
    expect(p.score).toBe(0.6);
  });

  it('does not take an amount or a date in the remittance text for an invoice number', () => {
    const c = ctx({ invoices: [inv('b1', BETA, '1190', '1190.00'), inv('b2', BETA, '15102026', '1190.00'), inv('b3', BETA, '2026', '1190.00')] });
    for (const info of ['Zahlung 1.190,00 EUR vom 15.10.2026', 'Payment 1,190.00 of 2026-10-15', 'Betrag EUR 1190']) {
      expect(run(tx({ amount: '1190.00', remittance_information: info }), c), info).toBeNull();
    }
    // the invoice number itself still matches
    expect(run(tx({ amount: '1190.00', remittance_information: 'Rechnung 1190 über 1.190,00 EUR' }), c)?.allocations[0]?.invoice_id).toBe('b1');
  });

  it('lets the payer known by IBAN with an exact amount on its own invoice win over another customer\'s number', () => {
    // the old engine took the typed number: a1 (ACME's), partner ACME, score 0.5
    const c = ctx({
      invoices: [inv('a1', ACME, '9000001', '500.00'), inv('b1', BETA, 'B1', '500.00')],
      knownAccounts: [{ account_identifier: 'DE89370400440532013000', partner_id: BETA }],
    });
    const p = run(tx({ amount: '500.00', remittance_information: 'Invoice 9000001', counterparty_iban: 'DE89370400440532013000' }), c)!;
    expect(p.partner_id).toBe(BETA);
    expect(p.allocations.map((a) => a.invoice_id)).toEqual(['b1']);
    expect(p.reasons).toEqual([
      { rule: 'iban', partner_id: BETA, value: 'DE89370400440532013000' },
      { rule: 'amount_exact', invoices: 1 },
      { rule: 'reference_other_partner', value: '9000001', partner_id: ACME },
    ]);
    expect(p.score).toBe(0.5);
  });

  it('records a conflict, scores lower and keeps the payer as partner when the payer known by IBAN pays another customer\'s invoice', () => {
    const c = ctx({
      invoices: [inv('a1', ACME, '9000001', '500.00'), inv('b1', BETA, 'B1', '300.00')],
      knownAccounts: [{ account_identifier: 'DE89370400440532013000', partner_id: BETA }],
    });
    const p = run(tx({ amount: '500.00', remittance_information: 'Invoice 9000001', counterparty_iban: 'DE89370400440532013000' }), c)!;
    // the payment is BETA's (who paid); the old engine made it ACME's
    expect(p.partner_id).toBe(BETA);
    expect(p.allocations.map((a) => a.invoice_id)).toEqual(['a1']);
    expect(p.reasons).toEqual([
      { rule: 'invoice_number', value: '9000001', invoice_id: 'a1' },
      { rule: 'payer_conflict', payer_rule: 'iban', payer_partner_id: BETA, partner_id: ACME, value: 'DE89370400440532013000' },
      { rule: 'amount_exact', invoices: 1 },
    ]);
    // number + exact amount is 0.8; the disagreeing payer takes off what an agreeing one adds (0.3)
    expect(p.score).toBe(0.5);
    // no conflict when the payer and the invoices agree
    const agreeing = run(tx({ amount: '500.00', remittance_information: 'Invoice 9000001', counterparty_iban: 'DE89370400440532013000' }), {
      ...c,
      knownAccounts: [{ account_identifier: 'DE89370400440532013000', partner_id: ACME }],
    })!;
    expect(agreeing.reasons.map((r) => r.rule)).toEqual(['invoice_number', 'iban', 'amount_exact']);
    expect(agreeing.score).toBe(1);
  });

  it('records a conflict when a remittance names another partner than the payer known by IBAN', () => {
    const c = ctx({
      invoices: [inv('a1', ACME, '9000001', '100.00')],
      knownAccounts: [{ account_identifier: 'DE89370400440532013000', partner_id: BETA }],
      remittances: [
        { id: 'r1', partner_id: ACME, transaction_amount: '100.00', transaction_number: 'PAY-4711', currency: 'EUR', payer_iban: null, payer_account: null, allocations: [{ invoice_id: 'a1', amount_paid: '100.00', amount_discount: '0', amount_withheld: '0' }] },
      ],
    });
    const p = run(tx({ amount: '100.00', remittance_information: 'PAY-4711', counterparty_iban: 'DE89370400440532013000' }), c)!;
    expect(p.remittance_id).toBe('r1');
    expect(p.reasons).toContainEqual(expect.objectContaining({ rule: 'payer_conflict', payer_partner_id: BETA, partner_id: ACME }));
    expect(p.score).toBe(0.6);
  });

  it('proposes nothing that does not fit the currency\'s minor units', () => {
    expect(allocationsFitMinorUnits([{ invoice_id: 'x', amount_paid: '1190.0000', amount_discount: '0.0000', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0' }], 'JPY')).toBe(true);
    expect(allocationsFitMinorUnits([{ invoice_id: 'x', amount_paid: '1.2340', amount_discount: '0', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0.001' }], 'KWD')).toBe(true);
    expect(allocationsFitMinorUnits([{ invoice_id: 'x', amount_paid: '1.2345', amount_discount: '0', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0' }], 'KWD')).toBe(false);
    // a JPY invoice whose open amount has decimals (bad ledger data) is not proposed; the next deposit still matches cleanly
    const c = ctx({ invoices: [inv('j1', ACME, '9000001', '1190.50', { currency: 'JPY' }), inv('j2', ACME, '9000002', '500', { currency: 'JPY' })] });
    const state = new MatchState(c.invoices);
    // 1190 against 1190.50 open would write off 0.50 yen
    expect(matchDeposit(tx({ amount: '1190', currency: 'JPY', remittance_information: '9000001' }), c, state)).toBeNull();
    expect(state.available('j1').toFixed(2)).toBe('1190.50');
    expect(matchDeposit(tx({ amount: '500', currency: 'JPY', remittance_information: '9000002' }), c, state)?.allocations[0]?.amount_paid).toBe('500.0000');
  });

  it('rejects a name tie between two partners', () => {
    const partners = [
      { id: 'x1', name: 'Nordwind Trading GmbH', legal_name: null },
      { id: 'x2', name: 'Nordwind Trading AG', legal_name: null },
    ];
    expect(identifyPayer({ counterparty_name: 'NORDWIND TRADING', counterparty_iban: null, counterparty_account: null }, partners, [], DEFAULT_MATCH_CONFIG)).toBeNull();
    // both twins have an open invoice of the amount: nothing to tell them apart
    const c = ctx({ partners, invoices: [inv('i1', 'x1', 'N1', '10.00'), inv('i2', 'x2', 'N2', '10.00')] });
    expect(run(tx({ amount: '10.00', counterparty_name: 'Nordwind Trading' }), c)).toBeNull();
    // one of them known by account: no tie any more
    expect(run(tx({ amount: '10.00', counterparty_name: 'Nordwind Trading', counterparty_account: '12345678' }), { ...c, knownAccounts: [{ account_identifier: '12345678', partner_id: 'x1' }] })?.partner_id).toBe('x1');
  });

  it('matches a legal name among many partners through the index', () => {
    const partners: MatchPartner[] = Array.from({ length: 2000 }, (_, i) => ({ id: `p${String(i).padStart(4, '0')}`, name: `Customer ${i} Trading GmbH`, legal_name: null }));
    partners.push({ id: 'p-legal', name: 'ZZ Brand', legal_name: 'Quantum Widgets Holding AG' });
    const index = new PartnerIndex(partners, []);
    expect(identifyPayer({ counterparty_name: 'QUANTUM WIDGETS HOLDING', counterparty_iban: null, counterparty_account: null }, index, [], DEFAULT_MATCH_CONFIG)).toMatchObject({
      partner_id: 'p-legal',
      rule: 'name',
    });
    expect(identifyPayer({ counterparty_name: 'Customer 1234 Trading', counterparty_iban: null, counterparty_account: null }, index, [], DEFAULT_MATCH_CONFIG)?.partner_id).toBe('p1234');
    // an account known for two partners identifies nobody by account
    const shared = new PartnerIndex(partners.slice(0, 2), [
      { account_identifier: 'DE02 1001 0010 0006 8201 01', partner_id: 'p0000' },
      { account_identifier: 'DE02100100100006820101', partner_id: 'p0001' },
    ]);
    expect(identifyPayer({ counterparty_name: null, counterparty_iban: 'DE02100100100006820101', counterparty_account: null }, shared, [], DEFAULT_MATCH_CONFIG)).toBeNull();
  });

  it('decides exactly as scoring every partner would (pruned candidate search)', () => {
    const words = ['nord', 'sued', 'handel', 'logistik', 'foods', 'metall', 'bau', 'tech', 'trading', 'systems'];
    const partners: MatchPartner[] = [];
    for (let i = 0; i < 600; i++) partners.push({ id: `q${String(i).padStart(3, '0')}`, name: `${words[i % 10]} ${words[(i * 7) % 10]} ${i % 50} GmbH`, legal_name: i % 3 ? null : `${words[(i * 3) % 10]} Holding ${i}` });
    const index = new PartnerIndex(partners, []);
    const brute = (name: string) => {
      const scored = partners
        .map((p) => ({ id: p.id, similarity: Math.max(nameSimilarity(name, p.name), p.legal_name ? nameSimilarity(name, p.legal_name) : 0) }))
        .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id));
      const [best, second] = scored;
      if (!best || best.similarity < DEFAULT_MATCH_CONFIG.nameThreshold) return null;
      if (second && best.similarity - second.similarity <= DEFAULT_MATCH_CONFIG.nameTieMargin) return null;
      return best.id;
    };
    let decided = 0;
    for (let i = 0; i < 120; i++) {
      const name = i % 4 === 0 ? `${words[(i * 3) % 10]} Holding ${i * 2}` : `${words[i % 10]} ${words[(i * 7) % 10]} ${i % 50}`;
      const viaIndex = identifyPayer({ counterparty_name: name, counterparty_iban: null, counterparty_account: null }, index, [], DEFAULT_MATCH_CONFIG)?.partner_id ?? null;
      expect(viaIndex, name).toBe(brute(name));
      if (viaIndex) decided++;
    }
    expect(decided).toBeGreaterThan(0);
  });

  it('builds the same index in paced slices as at once, yielding between the slices', async () => {
    const words = ['nord', 'sued', 'handel', 'logistik', 'foods', 'metall', 'bau', 'tech', 'trading', 'systems'];
    const partners: MatchPartner[] = [];
    for (let i = 0; i < 300; i++) partners.push({ id: `s${String(i).padStart(3, '0')}`, name: `${words[i % 10]} ${words[(i * 7) % 10]} ${i % 40} ${i % 2 ? 'GmbH' : 'AG'}`, legal_name: i % 4 ? null : `${words[(i * 3) % 10]} Holding ${i}` });
    const accounts = [{ account_identifier: 'DE02100100100006820101', partner_id: 's007', source: 'master_data' as const }];
    let paces = 0;
    const paced = await PartnerIndex.paced(partners, accounts, async () => void paces++, 50);
    expect(paces).toBe(5);
    const whole = new PartnerIndex(partners, accounts);
    for (let i = 0; i < 60; i++) {
      const name = i % 3 === 0 ? `${words[(i * 3) % 10]} Holding ${i * 4}` : `${words[i % 10]} ${words[(i * 7) % 10]} ${i % 40} GmbH`;
      expect(paced.ranked(name, DEFAULT_MATCH_CONFIG.nameThreshold, DEFAULT_MATCH_CONFIG.nameTieMargin), name).toEqual(whole.ranked(name, DEFAULT_MATCH_CONFIG.nameThreshold, DEFAULT_MATCH_CONFIG.nameTieMargin));
      expect(paced.legalFormsOf(partners[i]!.id)).toEqual(whole.legalFormsOf(partners[i]!.id));
    }
    expect(identifyPayer({ counterparty_name: null, counterparty_iban: 'DE02 1001 0010 0006 8201 01', counterparty_account: null }, paced, [], DEFAULT_MATCH_CONFIG)).toEqual({
      partner_id: 's007',
      rule: 'iban',
      value: 'DE02100100100006820101',
      source: 'master_data',
    });
  });

  it('rejects a name below the threshold', () => {
    const c = ctx({ invoices: [inv('i1', ACME, 'A1', '10.00')] });
    expect(run(tx({ amount: '10.00', counterparty_name: 'Zenith Partners' }), c)).toBeNull();
  });

  it('never matches another currency', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '100.00', { currency: 'USD' })] });
    expect(run(tx({ amount: '100.00', remittance_information: '9000001' }), c)).toBeNull();
  });

  it('applies a remittance found by its transaction number', () => {
    const c = ctx({
      invoices: [inv('i1', ACME, '9000001', '100.00'), inv('i2', ACME, '9000002', '200.00')],
      remittances: [
        {
          id: 'r1',
          partner_id: ACME,
          transaction_amount: '290.00',
          transaction_number: 'PAY-2026-0815',
          currency: 'EUR',
          payer_iban: null,
          payer_account: null,
          allocations: [
            { invoice_id: 'i1', amount_paid: '98.00', amount_discount: '2.00', amount_withheld: '0' },
            { invoice_id: 'i2', amount_paid: '192.00', amount_discount: '0', amount_withheld: '8.00' },
          ],
        },
      ],
    });
    const p = run(tx({ amount: '290.00', remittance_information: 'payment PAY-2026-0815' }), c)!;
    expect(p.remittance_id).toBe('r1');
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid, a.amount_discount, a.amount_withheld])).toEqual([
      ['i1', '98.0000', '2.0000', '0.0000'],
      ['i2', '192.0000', '0.0000', '8.0000'],
    ]);
    expect(p.reasons[0]).toEqual({ rule: 'remittance', remittance_id: 'r1', matched_by: 'transaction_number', value: 'PAY-2026-0815' });
    expect(p.score).toBe(0.9);
  });

  it('does not propose the same open amount twice within a batch', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '100.00')] });
    const { proposals, unmatched } = matchDeposits(
      [tx({ id: 't1', amount: '100.00', remittance_information: '9000001' }), tx({ id: 't2', amount: '100.00', remittance_information: '9000001' })],
      c,
    );
    expect(proposals.map((p) => p.transaction_id)).toEqual(['t1']);
    expect(unmatched).toEqual(['t2']);
  });
});

const IBAN_ACME = 'DE02100100100006820101';

describe('document-number spellings', () => {
  it('matches a slash-separated series as a whole', () => {
    // the old word splitter cut "EU/2026/004711" at each slash: no proposal
    const c = ctx({ invoices: [inv('i1', ACME, 'EU/2026/004711', '970.00'), inv('i2', BETA, 'INV-4711', '970.00')] });
    const p = run(tx({ amount: '970.00', remittance_information: 'Rechnung EU/2026/004711' }), c)!;
    expect(p.allocations.map((a) => a.invoice_id)).toEqual(['i1']);
    expect(p.reasons[0]).toEqual({ rule: 'invoice_number', value: 'EU2026004711', invoice_id: 'i1' });
  });

  it('matches a number with leading zeros dropped or its prefix dropped, in a looser spelling below the exact score', () => {
    // the old engine found neither "RE-2026-1766" nor "202601766" for RE-2026-01766
    const c = ctx({ invoices: [inv('i1', ACME, 'RE-2026-01766', '250.00')] });
    for (const info of ['RE-2026-1766', 'Zahlung 202601766', 'RE 2026 1766', '2026/1766']) {
      const p = run(tx({ amount: '250.00', remittance_information: info }), c);
      expect(p?.allocations.map((a) => a.invoice_id), info).toEqual(['i1']);
      expect(p!.reasons[0], info).toMatchObject({ rule: 'invoice_number', invoice_id: 'i1', spelling: 'variant' });
      expect(p!.score, info).toBe(0.75);
    }
    // the glued spelling is the number itself
    expect(run(tx({ amount: '250.00', remittance_information: 'RE202601766' }), c)!.score).toBe(0.8);
    // the number in the end-to-end id
    expect(run(tx({ amount: '250.00', end_to_end_id: 'E2E-RE202601766-01' }), c)?.allocations[0]?.invoice_id).toBe('i1');
  });

  it('reads numbers joined by + or & as separate numbers', () => {
    // the old engine kept "INV-410285+INV-410265" as one word and found neither invoice
    const c = ctx({ invoices: [inv('i1', ACME, 'INV-410285', '180.00'), inv('i2', ACME, 'INV-410265', '643.67'), inv('i3', ACME, 'EU/2026/002364', '100.00')] });
    const p = run(tx({ amount: '923.67', remittance_information: 'INV INV-410285+INV-410265&EU/2026/2364' }), c)!;
    expect(p.allocations.map((a) => a.invoice_id).sort()).toEqual(['i1', 'i2', 'i3']);
    expect(p.reasons.at(-1)).toEqual({ rule: 'amount_combination', invoices: 3 });
  });

  it('keeps an invoice number followed by the currency code, and still takes real amounts out', () => {
    // the old engine read "515871 USD" as an amount: no proposal
    const c = ctx({ invoices: [inv('u1', ACME, '515871', '970.00', { currency: 'USD' }), inv('u2', BETA, '1190', '1190.00', { currency: 'USD' })] });
    const p = run(tx({ amount: '970.00', currency: 'USD', remittance_information: 'Invoice 515871 USD 970.00' }), c)!;
    expect(p.allocations.map((a) => a.invoice_id)).toEqual(['u1']);
    expect(transactionTokens({ remittance_information: 'Invoice 515871 USD 970.00', bank_reference: null, end_to_end_id: null, currency: 'USD', amount: '970.00' })).toEqual(['515871']);
    // a number beside the code that is the deposit's amount, or shaped as an amount, is an amount
    expect(run(tx({ amount: '1190.00', currency: 'USD', remittance_information: 'Payment USD 1190' }), c)).toBeNull();
    expect(run(tx({ amount: '1190.00', currency: 'USD', remittance_information: 'Payment 1,190 USD' }), c)).toBeNull();
  });

  it('accepts a one-digit typo only when the amount agrees and the typo is unique', () => {
    const c = ctx({ invoices: [inv('i1', ACME, 'INV-400123', '250.00'), inv('i2', BETA, 'INV-400999', '99.00')] });
    const p = run(tx({ amount: '250.00', remittance_information: 'INV-400132' }), c)!;
    expect(p.allocations.map((a) => a.invoice_id)).toEqual(['i1']);
    expect(p.reasons[0]).toMatchObject({ rule: 'invoice_number_typo', invoice_id: 'i1' });
    expect(p.score).toBeLessThan(0.9);
    expect(run(tx({ amount: '240.00', remittance_information: 'INV-400132' }), c)).toBeNull();
    // exact evidence beats a typo: the number as written names another invoice of the same amount
    const both = ctx({ invoices: [inv('i1', ACME, 'INV-400123', '250.00'), inv('i3', ACME, 'INV-400132', '250.00')] });
    expect(run(tx({ amount: '250.00', remittance_information: 'INV-400132' }), both)!.allocations[0]!.invoice_id).toBe('i3');
  });
});

describe('assignment over the statement', () => {
  it('never picks one of several equal invoices of the payer', () => {
    // the old engine proposed the oldest due with `ambiguous: true` (a coin flip)
    const c = ctx({
      invoices: [inv('i1', ACME, 'A1', '99.00'), inv('i2', ACME, 'A2', '99.00', { net_due_date: '2026-11-01' })],
      knownAccounts: [{ account_identifier: IBAN_ACME, partner_id: ACME }],
    });
    const t = tx({ amount: '99.00', counterparty_iban: IBAN_ACME });
    expect(run(t, c)).toBeNull();
    expect(matchStatement([t], c)).toEqual([
      {
        outcome: 'unmatched',
        transaction_id: 't1',
        reasons: [{ rule: 'ambiguous', basis: 'amount_exact', candidates: 'i1,i2' }, { rule: 'iban', partner_id: ACME, value: IBAN_ACME }],
      },
    ]);
    // several subsets summing to the deposit: no guess either
    const sums = ctx({ invoices: [inv('i1', ACME, 'A1', '60.00'), inv('i2', ACME, 'A2', '40.00'), inv('i3', ACME, 'A3', '70.00'), inv('i4', ACME, 'A4', '30.00')], knownAccounts: c.knownAccounts });
    expect(matchStatement([tx({ amount: '100.00', counterparty_iban: IBAN_ACME })], sums)[0]).toMatchObject({ outcome: 'unmatched', reasons: [{ rule: 'ambiguous', basis: 'amount_combination' }, { rule: 'iban' }] });
  });

  it('lets the stronger evidence take an invoice first, whatever the file order', () => {
    // the old engine gave t1 (first in the file, payer only) invoice i1, so t2, which names i1, got nothing
    const c = ctx({
      invoices: [inv('i1', ACME, '9000001', '100.00'), inv('i2', ACME, '9000002', '100.00', { net_due_date: '2026-11-01' })],
      knownAccounts: [{ account_identifier: IBAN_ACME, partner_id: ACME }],
    });
    const { proposals, unmatched } = matchDeposits([tx({ id: 't1', amount: '100.00', counterparty_iban: IBAN_ACME }), tx({ id: 't2', amount: '100.00', remittance_information: 'RE 9000001' })], c);
    expect(proposals.map((p) => [p.transaction_id, p.allocations[0]!.invoice_id]).sort()).toEqual([
      ['t1', 'i2'],
      ['t2', 'i1'],
    ]);
    expect(unmatched).toEqual([]);
  });

  it('tells legal-form twins apart by their open amounts or the legal form written in the name', () => {
    // the old engine rejected the name tie and proposed nothing
    const partners = [
      { id: 'm-ag', name: 'Müller Logistik AG', legal_name: null },
      { id: 'm-gmbh', name: 'Müller Logistik GmbH', legal_name: null },
    ];
    const c = ctx({ partners, invoices: [inv('g1', 'm-gmbh', 'G1', '250.00'), inv('a1', 'm-ag', 'A1', '400.00')] });
    const p = run(tx({ amount: '250.00', counterparty_name: 'MUELLER LOGISTIK' }), { ...c, partners: [...partners.map((x) => ({ ...x, name: x.name.replace('ü', 'ue') }))] })!;
    expect(p.partner_id).toBe('m-gmbh');
    expect(p.reasons[0]).toMatchObject({ rule: 'name', partner_id: 'm-gmbh', twins: 'm-ag,m-gmbh' });
    expect(p.score).toBeLessThan(0.5);
    // both have the amount open: the legal form in the counterparty name decides
    const both = ctx({ partners, invoices: [inv('g1', 'm-gmbh', 'G1', '250.00'), inv('a1', 'm-ag', 'A1', '250.00')] });
    expect(run(tx({ amount: '250.00', counterparty_name: 'Müller Logistik AG' }), both)?.partner_id).toBe('m-ag');
    expect(run(tx({ amount: '250.00', counterparty_name: 'Müller Logistik' }), both)).toBeNull();
  });

  it('reads legal forms written with dots (e.K., B.V., S.A.R.L.) as legal forms, so such twins tie on the name', () => {
    expect(nameTokens('Walter Transporte e.K.')).toEqual(['walter', 'transporte']);
    expect(nameTokens('De Vries Logistiek B.V.')).toEqual(['de', 'vries', 'logistiek']);
    expect(nameTokens('Mécanique Mercier S.A.R.L.')).toEqual(['mecanique', 'mercier']);
    // initials that are part of the name stay
    expect(nameTokens('A.B.C. Bau GmbH')).toEqual(['abc', 'bau']);
    const partners = [
      { id: 'w-gmbh', name: 'Walter Transporte GmbH', legal_name: null },
      { id: 'w-ek', name: 'Walter Transporte e.K.', legal_name: null },
    ];
    const c = ctx({ partners, invoices: [inv('g1', 'w-gmbh', 'G1', '500.00'), inv('e1', 'w-ek', 'E1', '107.00')] });
    // the old engine ranked the GmbH above the e.K. (1 against 0.9), found nothing of 107.00 there and gave up
    const p = run(tx({ amount: '107.00', counterparty_name: 'Walter Transporte' }), c)!;
    expect(p.partner_id).toBe('w-ek');
    expect(p.reasons[0]).toMatchObject({ rule: 'name', partner_id: 'w-ek', twins: 'w-ek,w-gmbh' });
    // the form written with dots in the counterparty name decides a tie
    const both = ctx({ partners, invoices: [inv('g1', 'w-gmbh', 'G1', '107.00'), inv('e1', 'w-ek', 'E1', '107.00')] });
    expect(run(tx({ amount: '107.00', counterparty_name: 'WALTER TRANSPORTE E.K.' }), both)?.partner_id).toBe('w-ek');
  });

  it('reads a written legal form that fits none of the chosen twin\'s open amounts as possibly cut short, and lets the amounts decide', () => {
    // a bank field cut at a fixed width turns "… SARL" or "… SAS" into "… SA"
    const partners = [
      { id: 'm-sa', name: 'Mécanique Mercier SA', legal_name: null },
      { id: 'm-sas', name: 'Mécanique Mercier SAS', legal_name: null },
    ];
    const c = ctx({ partners, invoices: [inv('a1', 'm-sa', 'A1', '900.00'), inv('s1', 'm-sas', 'S1', '1815.98')] });
    const p = run(tx({ amount: '1815.98', counterparty_name: 'MECANIQUE MERCIER SA' }), c)!;
    expect(p.partner_id).toBe('m-sas');
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid])).toEqual([['s1', '1815.9800']]);
    expect(p.reasons[0]).toMatchObject({ rule: 'name', partner_id: 'm-sas', twins: 'm-sa,m-sas', legal_form_written: 'sa' });
    expect(p.score).toBeLessThan(0.5);
    // the twin the written form names keeps what fits it
    expect(run(tx({ amount: '900.00', counterparty_name: 'MECANIQUE MERCIER SA' }), c)?.partner_id).toBe('m-sa');
    // both other amounts open at the other twin and nothing at the named one: no guess
    const two = ctx({ partners: [...partners, { id: 'm-sarl', name: 'Mécanique Mercier SARL', legal_name: null }], invoices: [...c.invoices, inv('r1', 'm-sarl', 'R1', '1815.98')] });
    expect(run(tx({ amount: '1815.98', counterparty_name: 'MECANIQUE MERCIER SA' }), two)).toBeNull();
  });
});

describe('credit memos and shortfalls', () => {
  it('allocates a credit memo named in the text', () => {
    // the old engine read the memo as one more invoice and proposed a partial payment of RE-100
    const c = ctx({ invoices: [inv('i1', ACME, 'RE-100', '500.00'), inv('m1', ACME, 'GS-7001', '50.00', { kind: 'credit_memo' })] });
    const p = run(tx({ amount: '450.00', remittance_information: 'RE-100 abzgl. Gutschrift GS-7001' }), c)!;
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid])).toEqual([
      ['i1', '500.0000'],
      ['m1', '50.0000'],
    ]);
    expect(p.shortfall).toBeNull();
    expect(p.reasons).toContainEqual({ rule: 'credit_memo', invoice_id: 'm1', amount: '50.0000' });
  });

  it('finds invoice minus credit memo of the payer when no number is given', () => {
    const c = ctx({
      invoices: [inv('i1', ACME, 'RE-100', '500.00'), inv('i2', ACME, 'RE-101', '800.00'), inv('m1', ACME, 'GS-7001', '50.00', { kind: 'credit_memo' })],
      knownAccounts: [{ account_identifier: IBAN_ACME, partner_id: ACME }],
    });
    const p = run(tx({ amount: '750.00', counterparty_iban: IBAN_ACME }), c)!;
    expect(p.allocations.map((a) => [a.invoice_id, a.amount_paid])).toEqual([
      ['i2', '800.0000'],
      ['m1', '50.0000'],
    ]);
    // a credit memo is never paid as if it were an invoice
    expect(run(tx({ amount: '50.00', counterparty_iban: IBAN_ACME }), c)).toBeNull();
  });

  it('records an early-payment discount by the invoice\'s terms when paid in time', () => {
    // the old engine proposed a partial payment of 980.00
    const terms = { discount_terms: [{ due_date: '2026-10-10', percent: '2' }] };
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '1000.00', terms)] });
    const p = run(tx({ amount: '980.00', remittance_information: '9000001', value_date: '2026-10-10' }), c)!;
    expect(p.allocations).toEqual([
      { invoice_id: 'i1', amount_paid: '980.0000', amount_discount: '20.0000', amount_withheld: '0.0000', adjustment_id: null, adjustment_amount: '0.0000' },
    ]);
    expect(p.shortfall).toEqual({ amount: '20.0000', reason: 'discount' });
    // a day late: no discount; the discount taken anyway is a deduction to follow up (unearned discount)
    const late = run(tx({ amount: '980.00', remittance_information: '9000001', value_date: '2026-10-11' }), c)!;
    expect(late.allocations[0]!.amount_discount).toBe('0.0000');
    expect(late.shortfall).toEqual({ amount: '20.0000', reason: 'deduction' });
  });

  it('says what a shortfall is: a fee within tolerance, a deduction (said, or an unexplained short pay of most of the invoice), a partial payment', () => {
    // the old engine made the deduction an indistinguishable partial payment and set no shortfall
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '1000.00')] });
    const fee = run(tx({ amount: '997.50', remittance_information: '9000001' }), c)!;
    expect(fee.shortfall).toEqual({ amount: '2.5000', reason: 'fee' });
    const deduction = run(tx({ amount: '900.00', remittance_information: '9000001 Abzug beschädigte Ware' }), c)!;
    expect(deduction.allocations).toEqual([
      { invoice_id: 'i1', amount_paid: '900.0000', amount_discount: '0.0000', amount_withheld: '100.0000', adjustment_id: null, adjustment_amount: '0.0000' },
    ]);
    expect(deduction.shortfall).toEqual({ amount: '100.0000', reason: 'deduction' });
    expect(run(tx({ amount: '900.00', remittance_information: '9000001' }), c)!.shortfall).toEqual({ amount: '100.0000', reason: 'deduction' });
    // said to be a partial payment, or half the invoice or less without a word: a partial payment, the rest stays open
    const partial = run(tx({ amount: '900.00', remittance_information: 'Teilzahlung 9000001' }), c)!;
    expect(partial.allocations[0]!.amount_withheld).toBe('0.0000');
    expect(partial.allocations[0]!.amount_paid).toBe('900.0000');
    expect(partial.shortfall).toEqual({ amount: '100.0000', reason: 'partial' });
    expect(run(tx({ amount: '500.00', remittance_information: '9000001' }), c)!.shortfall).toEqual({ amount: '500.0000', reason: 'partial' });
    expect(run(tx({ amount: '1000.00', remittance_information: '9000001' }), c)!.shortfall).toBeNull();
  });

  it('proposes an unexplained shortfall above the tolerance, up to the fee ceiling, as a bank fee on the write-off adjustment, in the review band', () => {
    const c = ctx({
      invoices: [inv('i1', ACME, '9000001', '1000.00'), inv('i2', ACME, '9000002', '2000.00', { net_due_date: '2026-11-01' })],
      knownAccounts: [{ account_identifier: IBAN_ACME, partner_id: ACME }],
    });
    // invoice number + known payer: the invoice is relieved in full, the charge booked on the adjustment
    const fee = run(tx({ amount: '980.00', remittance_information: '9000001', counterparty_iban: IBAN_ACME }), c)!;
    expect(fee.allocations).toEqual([
      { invoice_id: 'i1', amount_paid: '980.0000', amount_discount: '0.0000', amount_withheld: '0.0000', adjustment_id: WRITE_OFF, adjustment_amount: '20.0000' },
    ]);
    expect(fee.shortfall).toEqual({ amount: '20.0000', reason: 'fee' });
    expect(fee.reasons).toContainEqual({ rule: 'amount_fee', shortfall: '20.0000', adjustment_id: WRITE_OFF });
    // above what the organization writes off unattended: proposed for a person, below the automatic band
    expect(fee.score).toBeLessThan(0.9);
    expect(fee.score).toBeGreaterThanOrEqual(0.5);
    // within the tolerance the same evidence stays in the automatic band
    expect(run(tx({ amount: '997.50', remittance_information: '9000001', counterparty_iban: IBAN_ACME }), c)!.score).toBeGreaterThanOrEqual(0.9);
    // the ceiling itself is a fee; a cent more is a deduction
    expect(run(tx({ amount: '965.00', remittance_information: '9000001' }), c)!.shortfall).toEqual({ amount: '35.0000', reason: 'fee' });
    const over = run(tx({ amount: '964.99', remittance_information: '9000001' }), c)!;
    expect(over.shortfall).toEqual({ amount: '35.0100', reason: 'deduction' });
    expect(over.allocations[0]!.adjustment_amount).toBe('0.0000');
    // words say otherwise: a deduction or a partial payment, not a fee
    expect(run(tx({ amount: '980.00', remittance_information: '9000001 Abzug Preisdifferenz' }), c)!.shortfall).toEqual({ amount: '20.0000', reason: 'deduction' });
    expect(run(tx({ amount: '980.00', remittance_information: 'Teilzahlung 9000001' }), c)!.shortfall).toEqual({ amount: '20.0000', reason: 'partial' });
    // a payer known by account, without a number: the one invoice the charge explains
    const byPayer = run(tx({ amount: '1975.00', counterparty_iban: IBAN_ACME }), c)!;
    expect(byPayer.allocations.map((a) => [a.invoice_id, a.amount_paid, a.adjustment_amount])).toEqual([['i2', '1975.0000', '25.0000']]);
    expect(byPayer.shortfall).toEqual({ amount: '25.0000', reason: 'fee' });
    expect(byPayer.score).toBeLessThan(0.9);
    // a payer known only by a name that looks alike is not evidence enough for a charge
    expect(run(tx({ amount: '1975.00', counterparty_name: 'Acme Handels GmbH' }), c)).toBeNull();
    // the ceiling is configurable (0: no fees beyond the tolerance)
    const none = ctx({ invoices: c.invoices, config: { ...DEFAULT_MATCH_CONFIG, feeCeilingAmount: '0' } });
    expect(run(tx({ amount: '980.00', remittance_information: '9000001' }), none)!.shortfall).toEqual({ amount: '20.0000', reason: 'deduction' });
  });
});

describe('credits that are not customer payments', () => {
  it('never matches interest, card settlements or own-account transfers', () => {
    // the old engine proposed partial payments of invoice 123456 / 9000001 for the first two
    const c = ctx({ invoices: [inv('i1', ACME, '123456', '500.00'), inv('i2', ACME, '9000001', '500.00')], ownAccounts: ['DE44 5001 0517 5407 3249 31'] });
    const interest = tx({ id: 'x1', amount: '12.34', transaction_code: 'ACMT/MCOP/INTR', counterparty_name: 'Sparkasse', remittance_information: 'Habenzinsen Konto 123456' });
    const card = tx({ id: 'x2', amount: '123.45', counterparty_name: 'Stripe Payments Europe Ltd', remittance_information: 'STRIPE PAYOUT 9000001' });
    const own = tx({ id: 'x3', amount: '500.00', counterparty_iban: 'DE44500105175407324931', remittance_information: 'Umbuchung 9000001' });
    expect(run(interest, c)).toBeNull();
    expect(run(card, c)).toBeNull();
    expect(run(own, c)).toBeNull();
    expect(matchStatement([interest, card, own], c)).toEqual([
      { outcome: 'not_a_payment', transaction_id: 'x1', reasons: [{ rule: 'interest', value: 'ACMT/MCOP/INTR' }] },
      { outcome: 'not_a_payment', transaction_id: 'x2', reasons: [{ rule: 'payment_processor', value: 'stripe' }] },
      { outcome: 'not_a_payment', transaction_id: 'x3', reasons: [{ rule: 'own_account', value: 'DE44500105175407324931' }] },
    ]);
    // a customer paying through a processor with its own invoice number and the exact amount is still a customer
    expect(run(tx({ amount: '500.00', counterparty_name: 'PayPal Europe', remittance_information: 'Invoice 9000001' }), c)?.allocations[0]?.invoice_id).toBe('i2');
  });

  it('proposes nothing for a credit without customer evidence', () => {
    const c = ctx({ invoices: [inv('i1', ACME, '9000001', '75.00')] });
    expect(matchStatement([tx({ amount: '75.00', counterparty_name: 'Unknown Sender' })], c)).toEqual([{ outcome: 'unmatched', transaction_id: 't1', reasons: [{ rule: 'no_customer_evidence' }] }]);
  });
});
