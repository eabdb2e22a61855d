import { describe, expect, it } from 'vitest';
import { formatAmount, renderPaymentReceipt } from '../src/domain/receipts.js';

describe('payment receipt rendering', () => {
  it('formats amounts with grouping and two decimals, exactly', () => {
    expect(formatAmount('1234567.5')).toBe('1,234,567.50');
    expect(formatAmount('0.005')).toBe('0.01');
    expect(formatAmount('999.994')).toBe('999.99');
    expect(formatAmount('-1000')).toBe('-1,000.00');
  });

  it('writes amounts with the currency\'s minor units (JPY none, KWD 3)', () => {
    expect(formatAmount('1190.0000', 'JPY')).toBe('1,190');
    expect(formatAmount('1190.5', 'KWD')).toBe('1,190.500');
    expect(formatAmount('1190.5', 'EUR')).toBe('1,190.50');
    const r = renderPaymentReceipt({
      organizationName: 'S',
      partnerName: 'P',
      amount: '1190.0000',
      currency: 'JPY',
      paymentDate: null,
      reference: null,
      lines: [{ invoice_number: 'J1', currency: 'JPY', amount_paid: '1190.0000', amount_discount: '0', amount_withheld: '0' }],
    });
    expect(r.subject).toBe('Payment received: JPY 1,190');
    expect(r.text).toContain('Invoice J1: JPY 1,190\n');
  });

  it('lists the invoices paid with discounts and withholdings, and escapes HTML', () => {
    const r = renderPaymentReceipt({
      organizationName: 'Seller & Co',
      partnerName: '<Acme>',
      amount: '1761.2',
      currency: 'EUR',
      paymentDate: '2026-10-02',
      reference: null,
      lines: [
        { invoice_number: '9100001', currency: 'EUR', amount_paid: '1166.2', amount_discount: '23.8', amount_withheld: '0' },
        { invoice_number: '9100002', currency: 'EUR', amount_paid: '595', amount_discount: '0', amount_withheld: '10' },
      ],
    });
    expect(r.subject).toBe('Payment received: EUR 1,761.20 on 2026-10-02');
    expect(r.text).toContain('Dear <Acme>,');
    expect(r.text).toContain('  Invoice 9100001: EUR 1,166.20 (discount EUR 23.80)\n  Invoice 9100002: EUR 595.00 (withheld EUR 10.00)');
    expect(r.text).not.toContain('Bank reference');
    expect(r.html).toContain('Dear &lt;Acme&gt;,');
    expect(r.html).toContain('Seller &amp; Co');
    expect(r.html).not.toContain('<Acme>');
  });

  it('lists a credit memo the payment applied as a credit, after the invoices it settles', () => {
    const r = renderPaymentReceipt({
      organizationName: 'Seller',
      partnerName: 'Acme',
      amount: '900',
      currency: 'EUR',
      paymentDate: '2026-10-02',
      reference: null,
      lines: [
        { invoice_number: '9100001', currency: 'EUR', amount_paid: '1000', amount_discount: '0', amount_withheld: '0' },
        { invoice_number: 'CM-7', currency: 'EUR', amount_paid: '100', amount_discount: '0', amount_withheld: '0', kind: 'credit_memo' },
      ],
    });
    expect(r.text).toContain('It was applied to these invoices:\n  Invoice 9100001: EUR 1,000.00\n  Credit memo CM-7: credit EUR 100.00 applied\n');
    expect(r.html).toContain('<tr><td>Credit memo CM-7</td><td style="text-align:right">-EUR 100.00</td><td>credit applied</td></tr>');
  });

  it('says so when the payment is not applied to an invoice', () => {
    const r = renderPaymentReceipt({ organizationName: 'S', partnerName: 'P', amount: '5', currency: 'USD', paymentDate: null, reference: 'R1', lines: [] });
    expect(r.subject).toBe('Payment received: USD 5.00');
    expect(r.text).toContain('It has not been applied to an invoice yet.');
    expect(r.text).toContain('Bank reference: R1');
  });
});
