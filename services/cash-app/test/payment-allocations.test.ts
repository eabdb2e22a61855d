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

  it('refuses unknown, closed, credit-memo, other-currency and repeated invoices, bad adjustments and empty allocations', () => {
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
      ['body.allocations.3.invoice_id', 'value_error.not_found'],
      ['body.allocations.4.adjustment_id', 'value_error.not_found'],
      ['body.allocations.5.invoice_id', 'value_error.duplicate'],
      ['body.allocations.6.adjustment_amount', 'value_error.missing'],
      ['body.allocations.7.invoice_id', 'value_error.duplicate'],
    ]);
    expect(check([draft('a', '0')])).toEqual([['body.allocations.0.amount_paid', 'value_error.empty']]);
  });
});
