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
