/**
 * Bank files as banks really send them, read by the parsers: MT940 with a blank between the amount
 * and the transaction type (German bank exports) and ING's SWIFT envelope with each block on its own
 * line; camt.053 entries that are not booked, a previous closing balance (PRCD) in place of the
 * opening balance, a camt.053 inside a SWIFT MX envelope (AppHdr + Document under another root);
 * amounts with more decimals than the currency has. The sample files under
 * test/fixtures/bank-statements/ were written for these tests from the published layouts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStatement } from '../src/parsers/index.js';
import { CSV_DEBIT_CREDIT_MAPPING, CSV_SEMICOLON_MAPPING } from '../../../test/fixtures/bank-statements/csv-mappings.js';
import { parseError, parseOne } from './support/parse.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));

describe('MT940 as banks export it', () => {
  it('reads a :61: line with a blank between the amount and the transaction type (German banks)', () => {
    const s = parseOne('mt940', fixture('mt940-de-blank-type.sta'));
    expect(s).toMatchObject({ openingBalance: '3000.0000', closingBalance: '4487.6500', currency: 'EUR' });
    expect(s.transactions.map((t) => [t.amount, t.transactionCode, t.bankReference, t.counterpartyName])).toEqual([
      ['-12.3500', 'NRTI', 'POS 4711', 'India Handel GmbH'],
      ['1500.0000', 'NTRF', 'POS 4712', 'Juliett AG'],
    ]);
  });

  it('reads ING\'s envelope with {1:}, {2:} and {4: on lines of their own', () => {
    const s = parseOne('mt940', fixture('mt940-ing-envelope.sta'));
    expect(s).toMatchObject({ statementNumber: '00106', openingBalance: '1500.0000', closingBalance: '1730.0000', account: { identifier: 'NL36INGB0007654321', currency: 'EUR' } });
    expect(s.transactions.map((t) => [t.amount, t.endToEndId, t.counterpartyName, t.remittanceInformation])).toEqual([
      ['250.0000', 'E2E-INV-5001', 'Hotel Kilo BV', 'INV-5001'],
      ['-20.0000', null, null, 'Kosten betalingsverkeer'],
    ]);
  });

  it('still refuses an envelope that never opens its text block, and an MT942 envelope on its own line', () => {
    const text = fixture('mt940-ing-envelope.sta').toString();
    const unopened = parseError('mt940', text.replace('{4:\r\n', ''));
    expect(unopened.where).toBe('line 3');
    expect(unopened.problem).toContain('the SWIFT envelope opened on line 1 has no text block');
    expect(parseError('mt940', text.replace('{2:O940', '{2:O942')).message).toContain('MT942');
  });
});

describe('camt.053 as banks send it', () => {
  it('imports only booked entries (camt.053.001.08 <Sts><Cd>) and counts the others; opens with PRCD when there is no OPBD', () => {
    const s = parseOne('camt053', fixture('camt053-de-prcd-pending.xml'));
    expect(s).toMatchObject({ openingBalance: '8000.0000', closingBalance: '8725.4000', statementDate: '2026-11-10', skipped: { notBooked: 2 } });
    expect(s.transactions.map((t) => [t.amount, t.bookingDate, t.counterpartyName, t.remittanceInformation])).toEqual([
      ['750.0000', '2026-11-10', 'Kilo Maschinenbau GmbH', 'Rechnung INV-7001'],
      ['-24.6000', '2026-11-10', null, 'Kontofuehrungsentgelt Oktober'],
    ]);
    // the booked entries keep their place in the statement (entry 1 and entry 3)
    expect(s.transactions.map((t) => t.lineKey)).toEqual(['2026111000310001:1', '2026111000310003:3']);
  });

  it('skips entries whose status is written <Sts>PDNG</Sts> or <Sts>INFO</Sts> (up to camt.053.001.07)', () => {
    const text = fixture('camt053.xml').toString();
    let n = 0;
    const marked = text.replace(/<Sts>BOOK<\/Sts>/g, (m) => (++n === 1 ? '<Sts>PDNG</Sts>' : n === 3 ? '<Sts>INFO</Sts>' : m));
    const s = parseOne('camt053', marked);
    expect(s.skipped).toEqual({ notBooked: 2 });
    expect(s.transactions.map((t) => t.amount)).toEqual(['-45.5000', '500.0000', '300.0000']);
    expect(parseOne('camt053', text).skipped).toEqual({ notBooked: 0 });
  });

  it('camt.054: a pending notification entry is skipped like a camt.053 one; an entry without Sts counts as booked', () => {
    const text = fixture('camt054.xml').toString();
    const all = parseStatement('camt054', Buffer.from(text)).statements.flatMap((s) => s.transactions).length;
    // the second entry (one transaction; the first is a batch of three) is pending
    const at = text.lastIndexOf('<Sts><Cd>BOOK</Cd></Sts>');
    const pendingText = `${text.slice(0, at)}<Sts><Cd>PDNG</Cd></Sts>${text.slice(at + '<Sts><Cd>BOOK</Cd></Sts>'.length)}`;
    const pending = parseStatement('camt054', Buffer.from(pendingText)).statements;
    expect(all).toBe(4);
    expect(pending.flatMap((s) => s.transactions)).toHaveLength(3);
    expect(pending.reduce((n, s) => n + (s.skipped?.notBooked ?? 0), 0)).toBe(1);
    const noStatus = parseStatement('camt054', Buffer.from(text.replace('<Sts><Cd>BOOK</Cd></Sts>', ''))).statements;
    expect(noStatus.flatMap((s) => s.transactions)).toHaveLength(all);
  });

  it('refuses balances in two currencies, naming both', () => {
    const text = fixture('camt053.xml').toString().replace('<Amt Ccy="EUR">12007.67</Amt>', '<Amt Ccy="SEK">12007.67</Amt>');
    const err = parseError('camt053', text);
    expect(err.where).toBe('Document/BkToCstmrStmt/Stmt/Bal[2]/Amt');
    expect(err.problem).toBe('the balance is in SEK, the statement\'s other balances in EUR: the file contradicts itself');
  });

  it('reads a camt.053 inside a SWIFT MX envelope (AppHdr + Document under another root), element paths from that root', () => {
    const xml = fixture('camt053-mx-envelope.xml');
    const s = parseOne('camt053', xml);
    expect(s).toMatchObject({ statementId: 'FR76-20261112', openingBalance: '2500.0000', closingBalance: '3820.0000', account: { identifier: 'FR7630006000011234567890189' } });
    expect(s.transactions.map((t) => [t.amount, t.counterpartyName, t.endToEndId])).toEqual([['1320.0000', 'November Distribution SARL', 'E2E-FACT-8001']]);
    const err = parseError('camt053', xml.toString().replace('<CdtDbtInd>CRDT</CdtDbtInd>\n          <Sts>', '<CdtDbtInd>CRDX</CdtDbtInd>\n          <Sts>'));
    expect(err.where).toBe('BizMsgEnvlp/Document/BkToCstmrStmt/Stmt/Ntry[1]/CdtDbtInd');
  });
});

describe('amounts are taken exactly as written, never rounded', () => {
  const json = (amount: unknown, currency = 'USD') =>
    JSON.stringify({ account: 'US-ACCT-1', currency, transactions: [{ amount: '1.00', booking_date: '2026-11-02' }, { amount, booking_date: '2026-11-02' }] });

  it('JSON: refuses more decimals than the currency has, and a number that cannot be stored exactly, naming the JSON path', () => {
    expect(parseError('json', json('0.305')).message).toBe('transactions[1].amount: amount "0.305" has more decimals than USD has (2): amounts in USD have at most 2 decimals');
    expect(parseError('json', json('0.304999999999999999999999999999')).problem).toContain('cannot be stored exactly');
    expect(parseError('json', json('12345678901234567.00')).problem).toContain('cannot be stored exactly: at most 16 digits before the decimal point');
    expect(parseError('json', json('100.5', 'JPY')).problem).toContain('has more decimals than JPY has (0)');
    expect(parseError('json', json(0.1 + 0.2)).where).toBe('transactions[1].amount');
    // what the currency allows is read as written, trailing zeros included
    expect(parseOne('json', json('0.300')).transactions[1].amount).toBe('0.3000');
    expect(parseOne('json', json('1.125', 'KWD')).transactions[1].amount).toBe('1.1250');
  });

  it('CSV: refuses an amount with more decimals than its currency has, naming the line', () => {
    const semi = fixture('statement-semicolon.csv').toString().replace('-12,00', '-12,005');
    expect(parseError('csv', semi, { mapping: CSV_SEMICOLON_MAPPING }).message).toBe('line 3: amount "-12,005" has more decimals than EUR has (2): amounts in EUR have at most 2 decimals');
    const dc = fixture('statement-debit-credit.csv').toString().replace(',2500.00,', ',0.305,');
    expect(parseError('csv', dc, { mapping: CSV_DEBIT_CREDIT_MAPPING }).message).toBe('line 2: amount "0.305" has more decimals than USD has (2): amounts in USD have at most 2 decimals');
  });

  it('camt.053 and MT940: an entry amount with more decimals than its currency is refused at its element or line', () => {
    const camt = fixture('camt053.xml').toString().replace('<Amt Ccy="EUR">45.50</Amt>', '<Amt Ccy="EUR">45.505</Amt>');
    expect(parseError('camt053', camt).where).toBe('Document/BkToCstmrStmt/Stmt/Ntry[2]/Amt');
    const mt = fixture('mt940.txt').toString().replace('D99,95NCHG', 'D99,955NCHG');
    expect(parseError('mt940', mt).message).toContain('amount "99,955" has more decimals than EUR has (2)');
  });
});
