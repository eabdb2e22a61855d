/** Posting rules (domain/payment-posting.ts) and the QuickBooks Payment body (adapters/quickbooks-online-payments.ts). */
import { describe, expect, it } from 'vitest';
import type { PaymentForPosting } from '@rp/workflows';
import { postingKey, postingOrigin, postingPayload, postingRefusal } from '../src/domain/payment-posting.js';
import { qboPaymentBody } from '../src/adapters/quickbooks-online-payments.js';

function payment(over: Partial<PaymentForPosting> = {}): PaymentForPosting {
  return {
    paymentId: 'p1',
    status: 'approved',
    postingStatus: 'pending',
    postingId: null,
    amount: '1150.0000',
    currency: 'USD',
    paymentDate: '2026-10-15',
    bankReference: 'REF-1',
    partner: { id: 'partner-1', origin: 'connection:c1', remoteId: '1', name: 'Customer 1' },
    lines: [
      { invoiceId: 'i1', origin: 'connection:c1', remoteId: '101', documentNumber: 'INV-101', companyCode: 'r', fiscalYear: '2026', amountPaid: '1000.0000', amountDiscount: '0', amountWithheld: '0', adjustmentAmount: '0' },
    ],
    unallocatedAmount: '150.0000',
    ...over,
  };
}

describe('posting target and refusals', () => {
  it('posts to the origin of the invoices, or of the customer when there are none', () => {
    expect(postingOrigin(payment())).toEqual({ origin: 'connection:c1', connectionId: 'c1' });
    expect(postingOrigin(payment({ lines: [], partner: { id: 'x', origin: 'middleware', remoteId: 'C-1', name: 'X' } }))).toEqual({ origin: 'middleware', connectionId: null });
    expect(postingOrigin(payment({ lines: [], partner: null }))).toHaveProperty('error');
    const mixed = payment();
    mixed.lines.push({ ...mixed.lines[0]!, invoiceId: 'i2', origin: 'middleware' });
    expect(postingOrigin(mixed)).toEqual({ error: expect.stringContaining('different systems') });
  });

  it('refuses providers without posting, QuickBooks without customer or invoice ids', () => {
    expect(postingRefusal('xero', 'connection:c1', payment())).toContain('no posting');
    expect(postingRefusal('quickbooks_online', 'connection:c1', payment())).toBeNull();
    expect(postingRefusal('middleware', 'middleware', payment({ partner: null, unallocatedAmount: '0' }))).toBeNull();
    expect(postingRefusal('middleware', 'middleware', payment({ partner: null }))).toContain('no customer');
    expect(postingRefusal('quickbooks_online', 'connection:c1', payment({ partner: null }))).toContain('no customer');
    const noId = payment();
    noId.lines[0]!.remoteId = null;
    expect(postingRefusal('quickbooks_online', 'connection:c1', noId)).toContain('INV-101');
  });

  it('the payload carries amounts in the currency\'s minor units', () => {
    const p = postingPayload(payment({ currency: 'KWD', amount: '10.1235', unallocatedAmount: '0.0005' }));
    expect(p).toMatchObject({ amount: '10.124', unallocated_amount: '0.001', lines: [{ amount_paid: '1000.000' }] });
    expect(postingPayload(payment({ currency: 'JPY', amount: '1150.0000' })).amount).toBe('1150');
  });
});

describe('QuickBooks Payment body', () => {
  it('links each line to its invoice and writes the amounts exactly as JSON numbers', () => {
    const body = qboPaymentBody({
      customerId: '1',
      currency: 'USD',
      totalAmount: '1234567.8900',
      txnDate: '2026-10-15',
      reference: 'A-very-long-bank-reference-123',
      privateNote: 'note',
      lines: [{ invoiceId: '101', amount: '0.1000' }, { invoiceId: '102', amount: '1234567.7900' }],
    });
    expect(body).toContain('"TotalAmt":1234567.89');
    expect(body).toContain('"Amount":0.1,');
    expect(JSON.parse(body)).toEqual({
      CustomerRef: { value: '1' },
      CurrencyRef: { value: 'USD' },
      TotalAmt: 1234567.89,
      TxnDate: '2026-10-15',
      PaymentRefNum: 'A-very-long-bank-refe', // QuickBooks keeps 21 characters
      PrivateNote: 'note',
      Line: [
        { Amount: 0.1, LinkedTxn: [{ TxnId: '101', TxnType: 'Invoice' }] },
        { Amount: 1234567.79, LinkedTxn: [{ TxnId: '102', TxnType: 'Invoice' }] },
      ],
    });
  });

  it('an on-account deposit has no lines', () => {
    expect(JSON.parse(qboPaymentBody({ customerId: '7', currency: 'USD', totalAmount: '50', txnDate: null, reference: null, privateNote: null, lines: [] }))).toEqual({
      CustomerRef: { value: '7' },
      CurrencyRef: { value: 'USD' },
      TotalAmt: 50,
      Line: [],
    });
  });
});

describe('postingKey', () => {
  it('is 21 characters QuickBooks keeps in PaymentRefNum, case-insensitive digits, the same for every attempt of a payment and different per payment', () => {
    const org = '01900000-0000-7000-8000-000000000001';
    const key = postingKey(org, '01900000-0000-7000-8000-00000000000a');
    expect(key).toMatch(/^RP[0-9A-V]{19}$/);
    expect(postingKey(org, '01900000-0000-7000-8000-00000000000a')).toBe(key);
    expect(postingKey(org, '01900000-0000-7000-8000-00000000000b')).not.toBe(key);
    expect(postingKey('01900000-0000-7000-8000-000000000002', '01900000-0000-7000-8000-00000000000a')).not.toBe(key);
    // no two of 20,000 payments share a key
    const keys = new Set(Array.from({ length: 20_000 }, (_, i) => postingKey(org, `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`)));
    expect(keys.size).toBe(20_000);
  });
});
