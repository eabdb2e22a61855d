import { describe, expect, it } from 'vitest';
import { assessRemittance, parseRemittanceCsv, partnerByPayerName, type InvoiceCandidate, type RemittanceLine } from '../src/domain/remittances.js';

const inv = (id: string, number: string, open: string, o: Partial<InvoiceCandidate> = {}): InvoiceCandidate => ({
  id,
  partner_id: 'p1',
  document_number: number,
  currency: 'EUR',
  amount_open: open,
  status_open: true,
  ...o,
});
const line = (invoice_number: string, amount_paid: string, amount_discount = '0', amount_withheld = '0'): RemittanceLine => ({ invoice_number, amount_paid, amount_discount, amount_withheld });
const byNumber = (...invoices: InvoiceCandidate[]) => {
  const m = new Map<string, InvoiceCandidate[]>();
  for (const i of invoices) m.set(i.document_number, [...(m.get(i.document_number) ?? []), i]);
  return m;
};

describe('assessRemittance', () => {
  it('is fully confident when every line links cleanly and the sum agrees', () => {
    const a = assessRemittance({
      lines: [line('A', '100.10', '2.00'), line('B', '50')],
      invoicesByNumber: byNumber(inv('i1', 'A', '102.10'), inv('i2', 'B', '50')),
      currency: 'EUR',
      transactionAmount: '150.10',
      payerPartnerId: null,
      partnerNames: new Map([['p1', 'Acme']]),
    });
    expect(a).toEqual({ invoiceIds: ['i1', 'i2'], partnerId: 'p1', score: 1, reason: '2 of 2 allocations matched open invoices of Acme exactly.', uncertainties: [], errorCode: null });
  });

  it('compares paid + discount + withheld with the open amount, exactly', () => {
    const a = assessRemittance({
      lines: [line('A', '100.00', '0.01')],
      invoicesByNumber: byNumber(inv('i1', 'A', '100.00')),
      currency: 'EUR',
      transactionAmount: null,
      payerPartnerId: null,
    });
    expect(a.uncertainties).toEqual(['amount_exceeds_open: A']);
    expect(a.score).toBe(0.5);
  });

  it('prefers the only open invoice among several with the same number, else reports the ambiguity', () => {
    const open = inv('i-open', 'A', '10');
    const closed = inv('i-closed', 'A', '0', { status_open: false });
    expect(assessRemittance({ lines: [line('A', '10')], invoicesByNumber: byNumber(open, closed), currency: 'EUR', transactionAmount: null, payerPartnerId: null }).invoiceIds).toEqual(['i-open']);
    const twoOpen = byNumber(inv('x', 'A', '10', { currency: 'USD' }), inv('y', 'A', '10'));
    expect(assessRemittance({ lines: [line('A', '10')], invoicesByNumber: twoOpen, currency: 'EUR', transactionAmount: null, payerPartnerId: null }).invoiceIds).toEqual(['y']);
    const same = byNumber(inv('x', 'A', '10'), inv('y', 'A', '10'));
    const amb = assessRemittance({ lines: [line('A', '10')], invoicesByNumber: same, currency: 'EUR', transactionAmount: null, payerPartnerId: null });
    expect(amb).toMatchObject({ invoiceIds: [null], score: 0, errorCode: 'no_invoice_matched' });
    expect(amb.uncertainties).toEqual(['ambiguous_invoice: A', 'partner_not_identified']);
  });

  it('flags currency mismatch, duplicates, a payer name of another customer, and no customer', () => {
    const a = assessRemittance({
      lines: [line('A', '10'), line('A', '10')],
      invoicesByNumber: byNumber(inv('i1', 'A', '100', { currency: 'USD' })),
      currency: 'EUR',
      transactionAmount: '20',
      payerPartnerId: 'p2',
    });
    expect(a.uncertainties).toEqual(['currency_mismatch: A', 'duplicate_invoice: A', 'currency_mismatch: A', 'payer_name_mismatch']);
    expect(a.score).toBe(0.405); // 0.5 × 0.9 (payer) × 0.9 (duplicate)
    const none = assessRemittance({ lines: [line('A', '10')], invoicesByNumber: byNumber(inv('i1', 'A', '10', { partner_id: null })), currency: 'EUR', transactionAmount: null, payerPartnerId: null });
    expect(none).toMatchObject({ partnerId: null, score: 0.8, uncertainties: ['partner_not_identified'] });
  });

  it('weighs lines equally when every amount is zero', () => {
    const a = assessRemittance({ lines: [line('A', '0'), line('Z', '0')], invoicesByNumber: byNumber(inv('i1', 'A', '5')), currency: 'EUR', transactionAmount: null, payerPartnerId: null });
    expect(a.score).toBe(0.5);
  });
});

describe('partnerByPayerName', () => {
  const partners = [
    { id: 'a', name: 'Acme Handels GmbH', legal_name: null },
    { id: 'b', name: 'Beta', legal_name: 'Beta Retail AG' },
    { id: 'c', name: 'Twin', legal_name: null },
    { id: 'd', name: 'twin', legal_name: null },
  ];
  it('matches name or legal name ignoring case and punctuation, never a tie', () => {
    expect(partnerByPayerName(partners, 'ACME HANDELS, GMBH')).toBe('a');
    expect(partnerByPayerName(partners, 'beta retail ag')).toBe('b');
    expect(partnerByPayerName(partners, 'Twin')).toBeNull();
    expect(partnerByPayerName(partners, 'Nobody')).toBeNull();
    expect(partnerByPayerName(partners, null)).toBeNull();
  });
});

describe('parseRemittanceCsv', () => {
  it('reads common header spellings, quoted fields, ; or , separators, a BOM and empty optional cells', () => {
    const { lines, problems } = parseRemittanceCsv('\uFEFF"Invoice No.","Amount Paid","Discount Taken"\n"9000001","1,00"\n');
    // The BOM-prefixed, quoted header was recognised (no header problem); only the comma decimal is refused.
    expect(lines.map((l) => [l.invoice_number, l.amount_discount])).toEqual([['9000001', '0']]);
    expect(problems).toEqual([{ line: 2, field: 'amount_paid', msg: expect.stringContaining('"1,00"') }]);
    const ok = parseRemittanceCsv('Invoice;Paid;Withholding\n9000001;10.5;0.25\n9000002;3;\n');
    expect(ok).toEqual({
      lines: [
        { invoice_number: '9000001', amount_paid: '10.5', amount_discount: '0', amount_withheld: '0.25' },
        { invoice_number: '9000002', amount_paid: '3', amount_discount: '0', amount_withheld: '0' },
      ],
      problems: [],
    });
  });

  it('reports a missing column, an empty file, a header without lines, negative amounts and broken quoting', () => {
    expect(parseRemittanceCsv('').problems[0]).toMatchObject({ line: 1, field: 'csv' });
    expect(parseRemittanceCsv('invoice,paid\n').problems).toEqual([{ line: 2, field: 'csv', msg: 'The CSV has a header row but no remittance lines.' }]);
    expect(parseRemittanceCsv('invoice,discount\nA,1\n').problems).toEqual([{ line: 1, field: 'amount_paid', msg: expect.any(String) }]);
    expect(parseRemittanceCsv('invoice,paid\nA,-1\nB,1.23456\n').problems.map((p) => [p.line, p.field])).toEqual([
      [2, 'amount_paid'],
      [3, 'amount_paid'],
    ]);
    expect(parseRemittanceCsv('invoice,paid\n"A,1\n').problems[0].msg).toMatch(/Malformed CSV/);
  });
});
