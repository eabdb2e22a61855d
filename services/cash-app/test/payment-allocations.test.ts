import { describe, expect, it } from 'vitest';
import { checkAllocations, type AllocationCheckInput, type AllocationDraft } from '../src/domain/payments.js';

const inv = (id: string, open: string, extra: Partial<{ status_open: boolean; currency: string; kind: 'invoice' | 'credit_memo' }> = {}) =>
  [id, { id, kind: extra.kind ?? 'invoice', status_open: extra.status_open ?? true, currency: extra.currency ?? 'EUR', amount_open: open, document_number: `N-${id}` }] as const;

function draft(invoice_id: string, amount_paid: string, extra: Partial<AllocationDraft> = {}): AllocationDraft {
  return { invoice_id, amount_paid, amount_discount: '0', amount_withheld: '0', adjustment_id: null, adjustment_amount: '0', ...extra };
}

function check(allocations: AllocationDraft[], extra: Partial<AllocationCheckInput> = {}) {
  return checkAllocations({
    allocations,
    transactionAmount: '1000.00',
    currency: 'EUR',
    invoices: new Map([inv('a', '600.00'), inv('b', '500.00'), inv('c', '10.00', { status_open: false }), inv('d', '10.00', { currency: 'USD' }), inv('e', '10.00', { kind: 'credit_memo' })]),
    relievedElsewhere: new Map([['b', '450.00']]),
    activeAdjustments: new Set(['adj']),
    ...extra,
  }).map((i) => [i.loc.join('.'), i.type]);
}

describe('payment allocation rules', () => {
  it('accepts a multi-invoice and a partial allocation within the open amounts and the transaction', () => {
    expect(check([draft('a', '590.00', { adjustment_id: 'adj', adjustment_amount: '10.00' }), draft('b', '50.00')])).toEqual([]);
    expect(check([draft('a', '100.00')])).toEqual([]);
  });

  it('counts paid + discount + withheld + adjustment against the open amount (less what approved payments relieve)', () => {
    expect(check([draft('a', '590.00', { amount_discount: '5', amount_withheld: '5.01' })])).toEqual([['body.allocations.0.amount_paid', 'value_error.exceeds_open_amount']]);
    expect(check([draft('b', '50.01')])).toEqual([['body.allocations.0.amount_paid', 'value_error.exceeds_open_amount']]);
  });

  it('reports the allocation where the amount_paid total first exceeds the transaction', () => {
    expect(check([draft('a', '600.00'), draft('b', '50.00')], { transactionAmount: '649.99' })).toEqual([['body.allocations.1.amount_paid', 'value_error.exceeds_transaction_amount']]);
  });

  it('refuses unknown, closed, other-currency and repeated invoices, a credit memo that is not the payer\'s, bad adjustments and empty allocations', () => {
    expect(
      check([
        draft('zzz', '1'),
        draft('c', '1'),
        draft('d', '1'),
        draft('e', '1'),
        draft('a', '1', { adjustment_id: 'other', adjustment_amount: '1' }),
        draft('a', '1'),
        draft('b', '0', { adjustment_amount: '1' }),
        draft('d', '0'),
      ]),
    ).toEqual([
      ['body.allocations.0.invoice_id', 'value_error.not_found'],
      ['body.allocations.1.invoice_id', 'value_error.invoice_closed'],
      ['body.allocations.2.invoice_id', 'value_error.currency'],
      ['body.allocations.3.invoice_id', 'value_error.credit_memo_partner'],
      ['body.allocations.4.adjustment_id', 'value_error.not_found'],
      ['body.allocations.5.invoice_id', 'value_error.duplicate'],
      ['body.allocations.6.adjustment_amount', 'value_error.missing'],
      ['body.allocations.7.invoice_id', 'value_error.duplicate'],
    ]);
    expect(check([draft('a', '0')])).toEqual([['body.allocations.0.amount_paid', 'value_error.empty']]);
  });

  it('applies a credit memo of the payer: its credit reduces the cash, within its open credit and the invoices\' amount_paid', () => {
    const memos = { invoices: new Map([inv('a', '600.00'), inv('m', '-100.00', { kind: 'credit_memo' }), inv('x', '30.00', { kind: 'credit_memo' })].map(([id, d]) => [id, { ...d, partner_id: id === 'x' ? 'other' : 'p1' }] as const)), payerId: 'p1' };
    // 600 paid less 100 credit = 500 of cash, within a 500 deposit; the memo's credit is positive whatever its stored sign
    expect(check([draft('a', '600.00'), draft('m', '100.00')], { ...memos, transactionAmount: '500.00' })).toEqual([]);
    expect(check([draft('a', '600.00'), draft('m', '100.00')], { ...memos, transactionAmount: '499.99' })).toEqual([['body.allocations.0.amount_paid', 'value_error.exceeds_transaction_amount']]);
    expect(check([draft('a', '600.00'), draft('m', '100.01')], memos)).toEqual([['body.allocations.1.amount_paid', 'value_error.exceeds_open_amount']]);
    expect(check([draft('a', '600.00'), draft('m', '60.00')], { ...memos, relievedElsewhere: new Map([['m', '50.00']]) })).toEqual([['body.allocations.1.amount_paid', 'value_error.exceeds_open_amount']]);
    expect(check([draft('a', '50.00'), draft('m', '60.00')], memos)).toEqual([['body.allocations.1.amount_paid', 'value_error.credit_exceeds_invoices']]);
    expect(check([draft('a', '50.00'), draft('x', '10.00')], memos)).toEqual([['body.allocations.1.invoice_id', 'value_error.credit_memo_partner']]);
    expect(check([draft('a', '50.00'), draft('m', '10.00', { amount_withheld: '1', adjustment_id: 'adj', adjustment_amount: '1' })], memos)).toEqual([
      ['body.allocations.1.amount_withheld', 'value_error.credit_memo'],
      ['body.allocations.1.adjustment_amount', 'value_error.credit_memo'],
      ['body.allocations.1.adjustment_id', 'value_error.credit_memo'],
    ]);
  });

  it('refuses amounts with more decimals than the currency allows, naming the field (JPY none, KWD 3)', () => {
    const jpy = { transactionAmount: '5000', currency: 'JPY', invoices: new Map([inv('a', '1190', { currency: 'JPY' })]) };
    expect(check([draft('a', '1190')], jpy)).toEqual([]);
    expect(check([draft('a', '1190.0000')], jpy)).toEqual([]); // trailing zeros are no decimals
    expect(check([draft('a', '1189.5', { amount_discount: '0.5' })], jpy)).toEqual([
      ['body.allocations.0.amount_paid', 'value_error.decimal_places'],
      ['body.allocations.0.amount_discount', 'value_error.decimal_places'],
    ]);
    const kwd = { transactionAmount: '5000', currency: 'KWD', invoices: new Map([inv('a', '1190.125', { currency: 'KWD' })]) };
    expect(check([draft('a', '1190.125')], kwd)).toEqual([]);
    expect(check([draft('a', '1190', { amount_withheld: '0.0005', adjustment_id: 'adj', adjustment_amount: '0.1234' })], kwd)).toEqual([
      ['body.allocations.0.amount_withheld', 'value_error.decimal_places'],
      ['body.allocations.0.adjustment_amount', 'value_error.decimal_places'],
    ]);
    expect(check([draft('a', '10.001')])).toEqual([['body.allocations.0.amount_paid', 'value_error.decimal_places']]); // EUR
    const [issue] = checkAllocations({ allocations: [draft('a', '1.5')], transactionAmount: '5000', currency: 'JPY', invoices: jpy.invoices, relievedElsewhere: new Map(), activeAdjustments: new Set() });
    expect(issue!.msg).toBe('has more decimals than JPY allows (no decimals)');
  });

  it('writes amounts in messages with the currency\'s minor units', () => {
    const [issue] = checkAllocations({
      allocations: [draft('a', '1200')],
      transactionAmount: '5000',
      currency: 'JPY',
      invoices: new Map([inv('a', '1190', { currency: 'JPY' })]),
      relievedElsewhere: new Map(),
      activeAdjustments: new Set(),
    });
    expect(issue!.msg).toBe('paid + discount + withheld + adjustment (1200) exceeds the open amount of invoice N-a (1190)');
  });
});
