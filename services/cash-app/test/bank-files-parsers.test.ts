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
import { parseStatement, StatementParseError, type ParsedStatement, type StatementFormat } from '../src/parsers/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));

function parseOne(format: StatementFormat, content: Buffer | string, options: Record<string, unknown> = {}): ParsedStatement {
  const { statements } = parseStatement(format, Buffer.from(content), options);
  expect(statements).toHaveLength(1);
  return statements[0];
}

function parseError(format: StatementFormat, content: string | Buffer, options = {}): StatementParseError {
  try {
    parseStatement(format, Buffer.from(content), options);
  } catch (err) {
    if (err instanceof StatementParseError) return err;
    throw err;
  }
  throw new Error('expected a StatementParseError');
}

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
