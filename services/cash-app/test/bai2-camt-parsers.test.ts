/**
 * BAI2 record joining and CAMT dates, one defect per case, on variants of the BAI2 fixture (the
 * end-to-end uploads are in test/bank-files-bai2-camt.test.ts). Each BAI2 variant below was refused
 * or read wrongly before records were joined as the standard says.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStatement, StatementParseError } from '../src/parsers/index.js';
import { bankTimeZone, camtDate } from '../src/parsers/camt053.js';

const bai = readFileSync(new URL('../../../test/fixtures/bank-statements/bai2.txt', import.meta.url)).toString();
const lines = bai.trimEnd().split('\n');

/** The fixture with line `n` (1-based) replaced by `replacement` lines; trailer record counts adjusted. */
function variant(n: number, ...replacement: string[]): Buffer {
  const extra = replacement.length - 1;
  const out = [...lines.slice(0, n - 1), ...replacement, ...lines.slice(n)].map((l) => {
    const count = (re: RegExp, at: number) => {
      const m = re.exec(l);
      if (!m) return l;
      const f = l.slice(0, -1).split(',');
      f[at] = String(Number(f[at]) + extra);
      return `${f.join(',')}/`;
    };
    if (l.startsWith('49,')) return count(/^49,/, 2);
    if (l.startsWith('98,') || l.startsWith('99,')) return count(/^9[89],/, 3);
    return l;
  });
  return Buffer.from(out.join('\n'));
}

const one = (content: Buffer) => {
  const { statements } = parseStatement('bai2', content);
  expect(statements).toHaveLength(1);
  return statements[0];
};

describe('BAI2 records joined as the standard says', () => {
  it('the unchanged fixture', () => {
    expect(one(Buffer.from(bai))).toMatchObject({ openingBalance: '5000.0000', closingBalance: '6765.0000' });
  });

  it('keeps a balance summary on an 88 line after a record ending in `,/` (the slash defaults the rest of the summary)', () => {
    const s = one(variant(3, '03,0975312468,USD,010,500000,/', '88,015,676500,,/'));
    expect(s).toMatchObject({ openingBalance: '5000.0000', closingBalance: '6765.0000' });
  });

  it('keeps a summary continued after a line ending in `,` (the next field is on the 88 line)', () => {
    const s = one(variant(3, '03,0975312468,USD,010,500000,,,015,', '88,676500,,/'));
    expect(s).toMatchObject({ openingBalance: '5000.0000', closingBalance: '6765.0000' });
  });

  it('carries the amount of a type code that ends its line on the 88 line', () => {
    const s = one(variant(3, '03,0975312468,USD,010,500000,,,015/', '88,676500,,/'));
    expect(s.closingBalance).toBe('6765.0000');
  });

  it('skips an empty first summary slot (`,,,,,010`) and counts the summaries after it', () => {
    const s = one(variant(3, '03,0975312468,USD,,,,,010,500000,,,015,676500,,/'));
    expect(s).toMatchObject({ openingBalance: '5000.0000', closingBalance: '6765.0000' });
  });

  it('puts detail text continued on 88 lines in the text, not the customer reference', () => {
    const s = one(variant(4, '16,165,150000,0,BREF0001,CUST-INV-2001/', '88,ORIG CO NAME:ACME CORP ORIG ID:1234567890', '88,ENTRY DESCR:INV-2001'));
    expect(s.transactions[0]).toMatchObject({
      endToEndId: 'CUST-INV-2001',
      bankReference: 'BREF0001',
      remittanceInformation: 'ORIG CO NAME:ACME CORP ORIG ID:1234567890 ENTRY DESCR:INV-2001',
      counterpartyName: 'ACME CORP',
    });
  });

  it('reads references and text from the 88 line after a `/`-ended distributed availability (S)', () => {
    const s = one(variant(7, '16,354,1500,S,500,500,500/', '88,BREF0003,CREF0003,INTEREST CREDIT/'));
    expect(s.transactions[2]).toMatchObject({ amount: '15.0000', bankReference: 'BREF0003', endToEndId: 'CREF0003', remittanceInformation: 'INTEREST CREDIT' });
  });

  it('reads a D distribution (count, then day/amount pairs) before the references', () => {
    const s = one(variant(7, '16,354,1500,D,3,0,500,1,500,2,500,BREF0003,,INTEREST, CREDIT/'));
    expect(s.transactions[2]).toMatchObject({ bankReference: 'BREF0003', endToEndId: null, remittanceInformation: 'INTEREST, CREDIT' });
  });

  it('takes the value date of funds type V, the as-of date otherwise', () => {
    const s = one(variant(8, '16,195,27500,V,261030,,BREF0004,,INCOMING WIRE/'));
    expect(s.transactions.map((t) => [t.bookingDate, t.valueDate])).toEqual([
      ['2026-11-01', '2026-11-01'],
      ['2026-11-01', '2026-11-01'],
      ['2026-11-01', '2026-11-01'],
      ['2026-11-01', '2026-10-30'],
    ]);
  });

  it('names the line of a bad value date, a short D distribution and a summary amount without a type code', () => {
    const err = (content: Buffer) => {
      try {
        parseStatement('bai2', content);
      } catch (e) {
        if (e instanceof StatementParseError) return e;
        throw e;
      }
      throw new Error('parsed');
    };
    expect(err(variant(8, '16,195,27500,V,261340,,BREF0004,,X/'))).toMatchObject({ where: 'line 8', problem: expect.stringMatching(/not a valid date/) });
    expect(err(variant(8, '16,195,27500,V/', '88,261030,2500,BREF0004,,X/'))).toMatchObject({ where: 'line 9', problem: expect.stringMatching(/time "2500"/) });
    expect(err(variant(3, '03,0975312468,USD,010,500000,,D,2,0,500000/'))).toMatchObject({ where: 'line 3', problem: expect.stringMatching(/announces 2 distributions/) });
    expect(err(variant(3, '03,0975312468,USD,,500000,,,015,676500,,/'))).toMatchObject({ where: 'line 3', problem: expect.stringMatching(/without a type code/) });
  });
});

describe('CAMT date-times as the bank\'s local date', () => {
  const berlin = bankTimeZone('DE27100777770209299700', null);
  it('knows the zone from the IBAN, else the BIC; not for a country outside the list', () => {
    expect(berlin).toBe('Europe/Berlin');
    expect(bankTimeZone(null, 'BKAUATWWXXX')).toBe('Europe/Vienna');
    expect(bankTimeZone(null, 'CHASUS33XXX')).toBeNull();
    expect(bankTimeZone(null, null)).toBeNull();
  });
  it('converts UTC date-times to the bank\'s zone (winter and summer time), keeps other offsets as written', () => {
    expect(camtDate('2014-01-04T23:00:00Z', 'x', berlin)).toBe('2014-01-05');
    expect(camtDate('2014-01-04T22:59:59Z', 'x', berlin)).toBe('2014-01-04');
    expect(camtDate('2026-07-15T22:00:00+00:00', 'x', berlin)).toBe('2026-07-16');
    expect(camtDate('2026-07-15T21:59:00.123Z', 'x', berlin)).toBe('2026-07-15');
    expect(camtDate('2014-01-04T23:00:00Z', 'x', null)).toBe('2014-01-04');
    expect(camtDate('2014-01-05T00:30:00+01:00', 'x', berlin)).toBe('2014-01-05');
    expect(camtDate('2014-01-04T20:00:00-05:00', 'x', berlin)).toBe('2014-01-04');
    expect(camtDate('2014-01-04T23:00:00', 'x', berlin)).toBe('2014-01-04');
    expect(camtDate('2014-01-04', 'x', berlin)).toBe('2014-01-04');
    expect(camtDate('2014-01-04T23:00:00+0000', 'x', berlin)).toBe('2014-01-05');
    expect(camtDate('2014-01-05T00:30:00+0100', 'x', berlin)).toBe('2014-01-05');
  });
  it('refuses what is not a date or date-time, naming the element', () => {
    expect(() => camtDate('2014-02-30', 'Ntry[1]/BookgDt', berlin)).toThrow(/Ntry\[1\]\/BookgDt: "2014-02-30" is not a valid date/);
    expect(() => camtDate('04.01.2014', 'Ntry[1]/BookgDt', berlin)).toThrow(/is not a date/);
    expect(() => camtDate('2014-01-04T25:00:00Z', 'Ntry[1]/BookgDt', berlin)).toThrow(/not a valid time/);
  });
});

describe('files with several accounts or statements', () => {
  const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));
  it('BAI2: one statement per account (03 … 49) in file order, each dated by its group, control totals over the amounts as written', () => {
    const { statements } = parseStatement('bai2', fixture('bai2-multi-account.txt'));
    expect(statements.map((s) => [s.account.identifier, s.currency, s.statementDate, s.openingBalance, s.closingBalance, s.source])).toEqual([
      ['4400123456', 'USD', '2026-11-11', '18987.5000', '20487.5000', 'line 3'],
      ['4400987654', 'CAD', '2026-11-11', '5000.0000', '4800.0000', 'line 6'],
      ['7700112233', 'JPY', '2026-11-12', '1000000.0000', '1250000.0000', 'line 11'],
    ]);
    expect(statements.map((s) => s.transactions.map((t) => [t.amount, t.valueDate, t.bankReference, t.remittanceInformation]))).toEqual([
      [['1500.0000', '2026-11-11', 'BAI-1001', 'ACH CREDIT ORIG CO NAME:WAYNE ENTERPRISES INV-5101']],
      [['-200.0000', '2026-11-11', 'BAI-1002', 'WIRE FEE']],
      [['250000.0000', '2026-11-11', 'BAI-1003', 'TELEGRAPHIC TRANSFER UMBRELLA CORP']],
    ]);
  });

  it('CAMT: one statement per Stmt, element paths naming Stmt[n]', () => {
    const xml = fixture('camt053-addtl-tz.xml').toString();
    const second = xml.slice(xml.indexOf('<Stmt>'), xml.indexOf('</Stmt>') + 7).replace('STMT-20260115-DE27', 'STMT-20260116-DE27').replace('<Amt Ccy="EUR">80.25</Amt>', '<Amt Ccy="EUR">80,25</Amt>');
    const two = xml.replace('</Stmt>', `</Stmt>${second.replace('80,25', '80.25')}`);
    const { statements } = parseStatement('camt053', Buffer.from(two));
    expect(statements.map((s) => [s.statementId, s.source, s.transactions.length])).toEqual([
      ['STMT-20260115-DE27', 'Document/BkToCstmrStmt/Stmt[1]', 3],
      ['STMT-20260116-DE27', 'Document/BkToCstmrStmt/Stmt[2]', 3],
    ]);
    expect(() => parseStatement('camt053', Buffer.from(xml.replace('</Stmt>', `</Stmt>${second}`)))).toThrow(/^Document\/BkToCstmrStmt\/Stmt\[2\]\/Ntry\[2\]\/Amt: amount "80,25"/);
  });
});
