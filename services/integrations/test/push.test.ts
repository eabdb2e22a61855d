import { describe, expect, it } from 'vitest';
import { decimalOf, isCalendarDate, validateCustomer, validateInvoice } from '../src/domain/push.js';

const invoice = (overrides: Record<string, unknown> = {}) => ({
  document_number: '9000001',
  company_code: '1000',
  customer_code: 'C-100',
  currency: 'EUR',
  fiscal_year: '2026',
  document_date: '2026-09-01',
  net_due_date: '2026-10-01',
  amount_in_document_currency: 1190.5,
  status_open: true,
  debit_credit_indicator: 'S',
  ...overrides,
});

describe('decimalOf', () => {
  it.each([
    [0.1, '0.1', 1, 0],
    [1190.5, '1190.5', 1, 4],
    [100, '100', 0, 3],
    [1e-7, '0.0000001', 7, 0],
    [1e21, '1000000000000000000000', 0, 22],
    [-12.34, '-12.34', 2, 2],
    ['1190.50', '1190.50', 1, 4],
    ['007', '007', 0, 1],
  ])('reads %s exactly', (value, text, places, integerDigits) => {
    expect(decimalOf(value)).toEqual({ text, places, integerDigits });
  });

  it('reads 0.1 + 0.2 as the double it is (17 places), not 0.3', () => {
    expect(decimalOf(0.1 + 0.2)).toMatchObject({ text: '0.30000000000000004', places: 17 });
  });

  it.each([[NaN], [Infinity], ['1e3'], ['1,50'], [''], [true], [null], [{}]])('refuses %s', (value) => {
    expect(decimalOf(value)).toBeNull();
  });
});

describe('isCalendarDate', () => {
  it.each(['2026-02-28', '2024-02-29', '2000-02-29', '2026-12-31'])('accepts %s', (d) => expect(isCalendarDate(d)).toBe(true));
  it.each(['2026-02-29', '1900-02-29', '2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-1-01', '01.09.2026', '2026-09-01T00:00:00Z'])(
    'refuses %s',
    (d) => expect(isCalendarDate(d)).toBe(false),
  );
});

describe('validateInvoice', () => {
  it('maps S to an invoice and H to a credit memo, amount_open from status_open', () => {
    const s = validateInvoice(invoice(), 2);
    const h = validateInvoice(invoice({ debit_credit_indicator: 'H', status_open: false }), 2);
    expect(s).toMatchObject({ ok: true, row: { kind: 'invoice', amount_open: '1190.5', line_items: [] } });
    expect(h).toMatchObject({ ok: true, row: { kind: 'credit_memo', amount_open: '0' } });
  });

  it('checks decimals against the currency minor unit (JPY 0, KWD 3) and local amounts against the base currency', () => {
    expect(validateInvoice(invoice({ currency: 'JPY', amount_in_document_currency: 1500 }), 2).ok).toBe(true);
    expect(validateInvoice(invoice({ currency: 'JPY', amount_in_document_currency: 1500.5 }), 2)).toMatchObject({ ok: false, errorCode: 'invalid_amount' });
    expect(validateInvoice(invoice({ currency: 'KWD', amount_in_document_currency: 1.234 }), 2).ok).toBe(true);
    expect(validateInvoice(invoice({ amount_in_local_currency: 1.234 }), 2)).toMatchObject({ ok: false, errorCode: 'invalid_amount' });
    expect(validateInvoice(invoice({ amount_in_local_currency: 1.234 }), 3).ok).toBe(true);
    expect(validateInvoice(invoice({ amount_in_document_currency: 1e17 }), 2)).toMatchObject({ ok: false, errorCode: 'invalid_amount' });
  });

  it('stores optional blanks as null', () => {
    const r = validateInvoice(invoice({ reference: '', assignment: null, clearing_date: '' }), 2);
    expect(r).toMatchObject({ ok: true, row: { reference: null, assignment: null, clearing_date: null } });
  });
});

describe('validateCustomer', () => {
  it('maps SAP fields onto the partner', () => {
    const r = validateCustomer({ customer_code: 'C-1', name1: 'Acme', name2: 'GmbH', street: 'Main', house_num1: '1', tel_number: '030 1', telnr_long: '', smtp_addr: '' });
    expect(r).toMatchObject({
      ok: true,
      row: { remote_id: 'C-1', account_number: 'C-1', name: 'Acme', legal_name: 'Acme GmbH', phone: '030 1', email: null, address: { line1: 'Main 1', street: 'Main', house_number: '1' } },
    });
  });

  it('requires customer_code and name1', () => {
    expect(validateCustomer({ name1: 'Acme' })).toMatchObject({ ok: false, errorCode: 'missing_field', message: 'customer_code is required' });
    expect(validateCustomer({ customer_code: 'C-1', name1: '  ' })).toMatchObject({ ok: false, errorCode: 'missing_field', message: 'name1 is required' });
  });
});
