/**
 * The invoice push's fast path (push-invoice-fast.ts) against the record schema it stands in for:
 * for every record of a corpus (a valid record with each field set to valid, edge and invalid
 * values, alone and across currencies), the fast path either declines (the schema then decides)
 * or gives exactly the fields the schema outputs — so it never accepts a record the schema
 * refuses, and never stores a record differently. Pure: no I/O.
 */
import { describe, expect, it } from 'vitest';
import { decimalOf, invoiceRecordSchema, validateInvoice } from '../src/domain/push.js';
import { PLAIN_DECIMAL, significantDigits } from '../src/domain/push-fields.js';
import { invoiceOutcome } from '../src/domain/push-records.js';
import { fastInvoiceFields } from '../src/domain/push-invoice-fast.js';

const base = {
  document_number: '9000001',
  company_code: '1000',
  customer_code: 'C-100',
  currency: 'EUR',
  fiscal_year: '2026',
  document_type: 'RV',
  invoice_doc_type: 'F2',
  exchange_rate: '1.00000',
  reference: 'INV-9000001',
  assignment: '',
  text: 'Goods delivered',
  reason_code: '',
  clearing_document_number: '',
  document_date: '2026-09-01',
  net_due_date: '2026-10-01',
  posting_date: '2026-09-01',
  clearing_date: null,
  amount_in_document_currency: 1190.5,
  amount_in_local_currency: 1190.5,
  status_open: true,
  debit_credit_indicator: 'S',
  line_items: [{ line_number: 1, description: 'Widgets', quantity: 10, unit_amount: 119.05, total_amount: 1190.5 }],
};

const ABSENT = Symbol('absent');
const long = (n: number) => 'a'.repeat(n);
const texts = ['x', '', '  ', null, ABSENT, 123, true, {}, [], long(100), long(101), long(1000), long(1001), 'ü😀', '\ud800'];
const dates = ['2026-02-28', '2024-02-29', '2026-02-29', '2026-9-1', '', '  ', null, ABSENT, 20260901, '2026-09-01T00:00:00Z'];
const amounts = [1190.5, '1190.50', 0, -0, -5, 0.001, 1234.5678, 1234.56789, 1e-7, 1e15, 1e16, 1e17, 1e21, 12345678901234568, 0.1 + 0.2, '1e3', '1,50', '', null, ABSENT, true, '99999999999999999999', '-0.10'];
const item = (o: Record<string, unknown>) => ({ line_number: 1, description: 'Widgets', quantity: 1, unit_amount: 1, total_amount: 1, ...o });

const FIELDS: Record<string, unknown[]> = {
  document_number: texts,
  company_code: texts,
  customer_code: texts,
  document_type: texts,
  invoice_doc_type: texts,
  exchange_rate: texts,
  reference: texts,
  assignment: texts,
  text: texts,
  reason_code: texts,
  clearing_document_number: texts,
  fiscal_year: ['2026', '26', '20261', 2026, '２０２６', '2026\n', '', null, ABSENT],
  currency: ['EUR', 'JPY', 'KWD', 'DEM', 'XAU', 'eur', 'XXY', 'EURO', '', null, ABSENT, 978],
  debit_credit_indicator: ['S', 'H', 's', 'X', '', null, ABSENT, 1],
  document_date: dates,
  net_due_date: dates,
  posting_date: dates,
  clearing_date: dates,
  amount_in_document_currency: amounts,
  amount_in_local_currency: amounts,
  amount_open: [ABSENT, null, 0, 100, 1190.5, 2000, -1, '1190.5'],
  status_open: [true, false, 'true', 1, null, ABSENT],
  line_items: [
    ABSENT,
    null,
    [],
    'x',
    [null],
    [[]],
    [{}],
    [item({}), item({ line_number: 2 })],
    [item({}), item({})],
    [item({ line_number: 0 }), item({ line_number: -1 })],
    [item({ line_number: 1.5 })],
    [item({ line_number: '1' })],
    [item({ line_number: 2 ** 53 })],
    [item({ description: '' }), item({ line_number: 2, description: null }), item({ line_number: 3, description: long(1001) })],
    [item({ description: 5 })],
    [item({ quantity: 1.1234567 }), item({ line_number: 2, unit_amount: 0.123456 })],
    [item({ quantity: null, unit_amount: ABSENT, total_amount: null })],
    [item({ total_amount: 1.234 })],
    [item({ total_amount: 1.23 })],
    [item({ total_amount: '12.5' })],
    [item({ total_amount: 'x' })],
    [item({ extra: 'ignored' })],
    Array.from({ length: 1001 }, (_, i) => item({ line_number: i })),
  ],
  discount_terms: [ABSENT, null, [], [{ due_date: '2026-09-10', percent: 2 }], [{ due_date: '2026-09-10', percent: '2.50' }, { due_date: '2026-09-05', percent: 3 }], 'x'],
  business_unit_id: [ABSENT, null, '', '0192d5b0-7c6e-7cc3-9b0a-1a2b3c4d5e6f', 'not-a-uuid', 5],
  unknown_field: ['ignored', ABSENT],
};

function withField(record: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const out = { ...record };
  if (value === ABSENT) delete out[field];
  else out[field] = value;
  return out;
}

/** Every record of the corpus: each field's values on an invoice, a credit memo and a JPY invoice; currencies × amounts. */
function corpus(): Record<string, unknown>[] {
  const bases = [base, { ...base, debit_credit_indicator: 'H', status_open: false }, { ...base, currency: 'JPY', amount_in_document_currency: 1500, line_items: [item({ total_amount: 1500 })] }];
  const out: Record<string, unknown>[] = [];
  for (const b of bases) for (const [field, values] of Object.entries(FIELDS)) for (const v of values) out.push(withField(b, field, v));
  for (const currency of FIELDS.currency!) for (const a of amounts) out.push(withField(withField(base, 'currency', currency), 'amount_in_document_currency', a));
  for (const currency of ['EUR', 'JPY', 'KWD']) for (const items of FIELDS.line_items!) out.push(withField(withField(base, 'currency', currency), 'line_items', items));
  return out;
}

describe('invoice push fast path', () => {
  it('gives exactly the schema\'s fields for every record it accepts, and accepts none the schema refuses', () => {
    let accepted = 0;
    let declined = 0;
    for (const record of corpus()) {
      const fast = fastInvoiceFields(record);
      const parsed = invoiceRecordSchema.safeParse(record);
      if (fast === null) {
        declined++;
        continue;
      }
      accepted++;
      expect({ record, success: parsed.success }).toEqual({ record, success: true });
      expect(fast).toEqual(parsed.data);
      if (!parsed.success) continue;
      // and the same outcome (row, or the local amount's error) for every base currency's minor unit
      for (const minor of [0, 2, 3]) expect(invoiceOutcome(fast, '9000001', minor)).toStrictEqual(invoiceOutcome(parsed.data, '9000001', minor));
    }
    // the corpus exercises both sides: the common records take the fast path, the others the schema
    expect(accepted).toBeGreaterThan(300);
    expect(declined).toBeGreaterThan(300);
  });

  it('leaves the results to the schema where it declines (errors worded as before)', () => {
    expect(validateInvoice({ ...base, amount_in_document_currency: 1.234 }, 2)).toEqual({
      ok: false,
      remoteId: '9000001',
      errorCode: 'invalid_amount',
      message: 'amount_in_document_currency has more than 2 decimal places (the minor unit of EUR)',
    });
    expect(validateInvoice({ ...base, amount_in_local_currency: 1.234 }, 2)).toMatchObject({ ok: false, errorCode: 'invalid_amount' });
    expect(validateInvoice({ ...base, amount_open: 100 }, 2)).toMatchObject({ ok: true, row: { amount_open: '100' } });
  });
});

describe('amount digits', () => {
  // every plain decimal text of up to 5 characters over these symbols, signed and unsigned
  const texts: string[] = [];
  const grow = (t: string) => {
    if (t.length && /^-?\d+(\.\d+)?$/.test(t)) texts.push(t);
    if (t.length < 5) for (const c of ['0', '1', '9', '.']) grow(t + c);
  };
  grow('');
  texts.push(...texts.map((t) => `-${t}`), '1000000000000000000000', '0.0000001', '123456789012345.6');

  it('reads places and integer digits as the plain-decimal pattern does', () => {
    expect(texts.length).toBeGreaterThan(500);
    for (const text of texts) {
      const m = PLAIN_DECIMAL.exec(text)!;
      expect({ text, ...decimalOf(text) }).toEqual({ text, places: m[2]?.length ?? 0, integerDigits: m[1]!.length });
    }
  });

  it('counts significant digits without leading or trailing zeros', () => {
    for (const text of texts) {
      const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
      expect({ text, n: significantDigits(text) }).toEqual({ text, n: digits.length });
    }
  });
});
