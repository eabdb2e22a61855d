import { describe, expect, it } from 'vitest';
import { classifyDeposit, contentHash, uniqueImportIds } from '../src/domain/bank-lines.js';
import type { ParsedTransaction } from '../src/parsers/types.js';

const tx = (over: Partial<ParsedTransaction> = {}): ParsedTransaction => ({
  amount: '100.0000',
  currency: 'EUR',
  valueDate: '2026-11-02',
  bookingDate: '2026-11-02',
  counterpartyName: 'Acme GmbH',
  counterpartyAccount: null,
  counterpartyIban: null,
  counterpartyBankCode: null,
  remittanceInformation: 'INV-1',
  bankReference: null,
  endToEndId: null,
  transactionCode: null,
  ...over,
});

const stmt = (transactions: ParsedTransaction[], statementId: string | null = null) => ({
  account: { identifier: 'DE89', iban: 'DE89', accountNumber: null, bankCode: null, currency: 'EUR', name: null },
  statementId,
  transactions,
});

describe('unique import ids', () => {
  it('uses the statement id, entry reference and position when the statement has an id (CAMT, as OCA does)', () => {
    const day1 = uniqueImportIds(stmt([tx({ bankReference: '1', lineKey: '1:1' }), tx({ bankReference: '2', lineKey: '2:2' }), tx({ bankReference: '2/1', lineKey: '2:3.1' })], 'STMT-2026-11-02'));
    expect(day1).toEqual(['DE89:stmt:STMT-2026-11-02:1:1', 'DE89:stmt:STMT-2026-11-02:2:2', 'DE89:stmt:STMT-2026-11-02:2:3.1']);
    // the next day's statement restarts the bank's counter: other ids
    const day2 = uniqueImportIds(stmt([tx({ bankReference: '1', lineKey: '1:1' })], 'STMT-2026-11-03'));
    expect(day2).toEqual(['DE89:stmt:STMT-2026-11-03:1:1']);
  });
  it('uses account + reference + booking date + amount otherwise, numbering a repeat in the file', () => {
    const ids = uniqueImportIds(stmt([tx({ bankReference: 'R1' }), tx({ bankReference: 'R2' }), tx({ bankReference: 'R1' })]));
    expect(ids).toEqual(['DE89:ref:R1:2026-11-02:100.0000', 'DE89:ref:R2:2026-11-02:100.0000', 'DE89:ref:R1:2026-11-02:100.0000#2']);
    // a reference the bank reuses on another day, or for another amount, is another line
    expect(uniqueImportIds(stmt([tx({ bankReference: 'R1', bookingDate: '2026-11-03' })]))).toEqual(['DE89:ref:R1:2026-11-03:100.0000']);
    expect(uniqueImportIds(stmt([tx({ bankReference: 'R1', amount: '-100.0000' })]))).toEqual(['DE89:ref:R1:2026-11-02:-100.0000']);
    // a statement id alone (no line keys) does not change that
    expect(uniqueImportIds(stmt([tx({ bankReference: 'R1' })], 'S1'))).toEqual(['DE89:ref:R1:2026-11-02:100.0000']);
  });
  it('hashes the fields of a line without reference, with an ordinal among identical lines', () => {
    const ids = uniqueImportIds(stmt([tx(), tx(), tx({ amount: '100.0100' })]));
    const h = contentHash('DE89', tx());
    expect(ids[0]).toBe(`DE89:sha256:${h}:1`);
    expect(ids[1]).toBe(`DE89:sha256:${h}:2`);
    expect(ids[2]).not.toContain(h);
    // Another account's identical line is another line.
    expect(contentHash('DE00', tx())).not.toBe(h);
    // The same lines in a later file get the same ids (that is what makes re-imports idempotent).
    expect(uniqueImportIds(stmt([tx(), tx()]))).toEqual(ids.slice(0, 2));
  });
});

describe('deposit classification', () => {
  const own = new Set(['DE89370400440532013000']);
  const c = (over: Partial<ParsedTransaction>) => {
    const t = tx(over);
    return classifyDeposit({ ...t, amount: t.amount }, own);
  };
  it('treats an ordinary credit as a payment and a debit as none', () => {
    expect(c({})).toEqual({ isPayment: true, reason: 'deposit' });
    expect(c({ amount: '-10.0000' })).toEqual({ isPayment: false, reason: 'not a deposit' });
    expect(c({ amount: '0.0000' }).isPayment).toBe(false);
  });
  it('recognises interest, refunds, internal transfers and reversals', () => {
    expect(c({ remittanceInformation: 'Credit interest Q3' }).reason).toBe('interest');
    expect(c({ transactionCode: 'ACMT/MDOP/INTR', remittanceInformation: null }).reason).toBe('interest');
    expect(c({ transactionCode: '354' }).reason).toBe('interest');
    expect(c({ remittanceInformation: 'Refund order 77' }).reason).toBe('refund');
    expect(c({ counterpartyIban: 'DE89370400440532013000' }).reason).toBe('internal transfer');
    expect(c({ remittanceInformation: 'Umbuchung' }).reason).toBe('internal transfer');
    expect(c({ transactionCode: 'R:NTRF' }).reason).toBe('reversal');
    expect(c({ transactionCode: 'PMNT/RCDT/RRTN' }).reason).toBe('reversal');
    expect(c({ remittanceInformation: 'Storno Lastschrift' }).reason).toBe('reversal');
  });
  it('does not mistake invoice text for a rule word', () => {
    expect(c({ remittanceInformation: 'Invoice INV-2001 international order' }).isPayment).toBe(true);
    expect(c({ transactionCode: 'PMNT/RCDT/ESCT' }).isPayment).toBe(true);
  });
});
