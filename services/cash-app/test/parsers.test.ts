import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStatement, parseStatementSteps, runParseAsync, type StatementFormat } from '../src/parsers/index.js';
import { CSV_DEBIT_CREDIT_MAPPING, CSV_SEMICOLON_MAPPING } from '../../../test/fixtures/bank-statements/csv-mappings.js';
import { parseError, parseOne } from './support/parse.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));

describe('CAMT.053', () => {
  const xml = fixture('camt053.xml');
  it('reads account, balances and entries, splitting a batch entry', () => {
    const s = parseOne('camt053', xml);
    expect(s.account).toMatchObject({ identifier: 'DE89370400440532013000', iban: 'DE89370400440532013000', bankCode: 'COBADEFFXXX', currency: 'EUR' });
    expect(s).toMatchObject({ statementNumber: '221', statementDate: '2026-11-04', openingBalance: '10000.0000', closingBalance: '12007.6700', currency: 'EUR' });
    expect(s.transactions.map((t) => t.amount)).toEqual(['1250.0000', '-45.5000', '3.1700', '500.0000', '300.0000']);
    expect(s.transactions[0]).toEqual({
      amount: '1250.0000',
      currency: 'EUR',
      bookingDate: '2026-11-02',
      valueDate: '2026-11-02',
      counterpartyName: 'Acme GmbH',
      counterpartyIban: 'DE44500105175407324931',
      counterpartyAccount: 'DE44500105175407324931',
      counterpartyBankCode: 'INGDDEFFXXX',
      remittanceInformation: 'Invoice INV-1001',
      bankReference: '2026110200001',
      endToEndId: 'E2E-INV-1001',
      transactionCode: 'PMNT/RCDT/ESCT',
      lineKey: '2026110200001:1',
    });
    // The statement's own id and each line's place in it make the unique import id (see uniqueImportIds).
    expect(s.statementId).toBe('STMT-20261104-DE89');
    expect(s.transactions.map((t) => t.lineKey)).toEqual(['2026110200001:1', '2026110200002:2', '2026110300003:3', '2026110400004:4.1', '2026110400004:4.2']);
    expect(s.transactions[2].transactionCode).toBe('ACMT/MDOP/INTR');
    expect(s.transactions[3]).toMatchObject({ counterpartyName: 'Beta Ltd', remittanceInformation: 'RF18INV1002', bankReference: '2026110400004/1', endToEndId: 'E2E-BETA-77' });
    expect(s.transactions[4]).toMatchObject({ counterpartyName: 'Gamma SA', remittanceInformation: 'INV-1003', bankReference: '2026110400004/2', endToEndId: null });
  });
  it('names the element of a bad amount, a missing indicator and the line of broken XML', () => {
    const text = xml.toString();
    const badAmount = parseError('camt053', text.replace('<Amt Ccy="EUR">45.50</Amt>', '<Amt Ccy="EUR">45,50</Amt>'));
    expect(badAmount.where).toBe('Document/BkToCstmrStmt/Stmt/Ntry[2]/Amt');
    const noInd = parseError('camt053', text.replace('<CdtDbtInd>DBIT</CdtDbtInd>', ''));
    expect(noInd.where).toBe('Document/BkToCstmrStmt/Stmt/Ntry[2]/CdtDbtInd');
    const badCcy = parseError('camt053', text.replace('<Amt Ccy="EUR">3.17</Amt>', '<Amt Ccy="XXY">3.17</Amt>'));
    expect(badCcy.where).toBe('Document/BkToCstmrStmt/Stmt/Ntry[3]/Amt');
    const batch = parseError('camt053', text.replace('<Amt Ccy="EUR">300.00</Amt>', '<Amt Ccy="EUR">299.00</Amt>'));
    expect(batch.where).toBe('Document/BkToCstmrStmt/Stmt/Ntry[4]/NtryDtls');
    const broken = parseError('camt053', text.replace('</AcctSvcrRef>', '</AcctSvcrRf>'));
    expect(broken.where).toMatch(/^line \d+$/);
    expect(parseError('camt053', '<Document><Other/></Document>').where).toBe('Document/BkToCstmrStmt');
    expect(parseError('camt053', text.replace(/<IBAN>DE89370400440532013000<\/IBAN>/, '')).where).toBe('Document/BkToCstmrStmt/Stmt/Acct/Id');
  });
});

describe('BAI2', () => {
  const bai = fixture('bai2.txt');
  it('reads the account, signed amounts in cents, funds types and continuation text', () => {
    const s = parseOne('bai2', bai);
    expect(s.account).toMatchObject({ identifier: '0975312468', currency: 'USD' });
    expect(s).toMatchObject({ statementDate: '2026-11-01', openingBalance: '5000.0000', closingBalance: '6765.0000', statementNumber: 'FILE001' });
    expect(s.transactions.map((t) => t.amount)).toEqual(['1500.0000', '-25.0000', '15.0000', '275.0000']);
    expect(s.transactions[0]).toMatchObject({ counterpartyName: 'ACME CORP', bankReference: 'BREF0001', endToEndId: 'CUST-INV-2001', transactionCode: '165' });
    expect(s.transactions[0].remittanceInformation).toContain('ENTRY DESCR:INV-2001');
    expect(s.transactions[1].remittanceInformation).toBe('CHECK PAID 1042 PAYEE SUPPLIES INC');
    expect(s.transactions[3]).toMatchObject({ bankReference: 'BREF0004', remittanceInformation: 'INCOMING WIRE FROM BETA LLC INV-2002' });
  });
  it('names the line of a bad record', () => {
    const lines = bai.toString().split('\n');
    const withLine = (n: number, l: string) => lines.map((x, i) => (i === n - 1 ? l : x)).join('\n');
    expect(parseError('bai2', withLine(4, '16,165,15O000,0,BREF0001,,X/')).where).toBe('line 4');
    expect(parseError('bai2', withLine(7, '16,754,1500,0,BREF0003,,INTEREST/')).where).toBe('line 7');
    expect(parseError('bai2', withLine(9, '49,1358001,7/')).where).toBe('line 9');
    expect(parseError('bai2', withLine(9, '49,1358000,6/')).problem).toMatch(/number of records/);
    expect(parseError('bai2', withLine(8, '16,195,27500,Q,BREF0004,,X/')).where).toBe('line 8');
    expect(parseError('bai2', lines.slice(0, 10).join('\n')).problem).toMatch(/missing 99/);
    expect(parseError('bai2', withLine(1, '01,BANKSENDER,CUSTRECV,261102,0800,FILE001,80,,3/')).where).toBe('line 1');
    // A second account in the group is a second statement (see bai2-camt-parsers.test.ts); its trailer is checked.
    const two = [...lines.slice(0, 9), '03,1111111111,USD,010,0,,/', '49,0,2/', '98,1358000,2,11/', '99,1358000,1,13/'].join('\n');
    expect(parseStatement('bai2', Buffer.from(two)).statements.map((s) => s.account.identifier)).toEqual(['0975312468', '1111111111']);
    expect(parseError('bai2', two.replace('49,0,2/', '49,0,3/'))).toMatchObject({ where: 'line 11', problem: expect.stringMatching(/number of records 3/) });
  });
});

describe('MT940', () => {
  const mt = fixture('mt940.txt');
  it('reads balances, C/D/RD marks, entry dates and :86: subfields', () => {
    const s = parseOne('mt940', mt);
    expect(s.account).toMatchObject({ identifier: 'NL91ABNA0417164300', iban: 'NL91ABNA0417164300' });
    expect(s).toMatchObject({ currency: 'EUR', openingBalance: '5000.0000', closingBalance: '6425.0500', statementDate: '2026-11-03', statementNumber: '00102/1' });
    expect(s.transactions.map((t) => t.amount)).toEqual(['1250.0000', '-99.9500', '200.0000', '75.0000']);
    expect(s.transactions[0]).toMatchObject({
      valueDate: '2026-11-02',
      bookingDate: '2026-11-02',
      counterpartyName: 'Delta BV',
      counterpartyIban: 'NL02RABO0123456789',
      remittanceInformation: 'INV-3001 payment',
      bankReference: 'BREF-3001',
      endToEndId: 'E2E-INV-3001',
      transactionCode: 'NTRF',
    });
    expect(s.transactions[1]).toMatchObject({ bankReference: 'BREF-3002', endToEndId: null, remittanceInformation: 'Bank charges November' });
    expect(s.transactions[2]).toMatchObject({ transactionCode: 'R:NTRF', bankReference: null, counterpartyName: 'Epsilon AG' });
    expect(s.transactions[3]).toMatchObject({ counterpartyName: 'Zeta GmbH', counterpartyIban: 'DE02120300000000202051', counterpartyBankCode: 'DEUTDEFF', remittanceInformation: 'Zahlung Rechnung INV-3004' });
  });
  it('reads a message in its SWIFT envelope with CRLF line ends', () => {
    const wrapped = `{1:F01COBADEFFAXXX0000000000}{2:O9401200261103NDEANOKKAXXX00000000002611031200N}{4:\r\n${mt.toString().replace(/\n-\n$/, '\n').replace(/\n/g, '\r\n')}-}`;
    const s = parseOne('mt940', Buffer.from(wrapped));
    expect(s.transactions.map((t) => t.amount)).toEqual(['1250.0000', '-99.9500', '200.0000', '75.0000']);
    expect(parseError('mt940', wrapped.replace(':61:261103C75,00', ':61:261103C75')).where).toBe('line 12');
  });
  it('names the line of a bad field', () => {
    const text = mt.toString();
    expect(parseError('mt940', text.replace(':61:2611021102D99,95', ':61:2611021102X99,95')).where).toBe('line 7');
    expect(parseError('mt940', text.replace(':61:261103C75,00', ':61:261303C75,00')).where).toBe('line 11');
    expect(parseError('mt940', text.replace(':60F:C261101EUR5000,00', ':60F:C261101EUR5000.00')).where).toBe('line 4');
    expect(parseError('mt940', text.replace(':62F:C261103EUR6425,05\n', '')).problem).toMatch(/missing :62F:/);
    expect(parseError('mt940', text.replace(':28C:', ':99:')).where).toBe('line 3');
  });
});

describe('CSV', () => {
  const semicolon = { mapping: CSV_SEMICOLON_MAPPING };
  const debitCredit = { mapping: CSV_DEBIT_CREDIT_MAPPING };
  it('reads one amount column with quoted fields, thousands separators and a decimal comma', () => {
    const s = parseOne('csv', fixture('statement-semicolon.csv'), semicolon);
    expect(s.account).toMatchObject({ identifier: 'DE75512108001245126199', iban: 'DE75512108001245126199' });
    expect(s.transactions.map((t) => t.amount)).toEqual(['1234.5600', '-12.0000', '500.0000']);
    expect(s.transactions[0]).toMatchObject({ bookingDate: '2026-11-02', counterpartyName: 'Theta SARL', counterpartyIban: 'FR7630006000011234567890189', remittanceInformation: 'Invoice INV-4001; thanks', bankReference: 'REF-4001' });
    expect(s.transactions[2].bankReference).toBeNull();
  });
  it('reads debit and credit columns with a fixed currency', () => {
    const s = parseOne('csv', fixture('statement-debit-credit.csv'), debitCredit);
    expect(s.transactions.map((t) => [t.amount, t.currency, t.bookingDate])).toEqual([
      ['2500.0000', 'USD', '2026-11-02'],
      ['-19.9900', 'USD', '2026-11-03'],
    ]);
    expect(s.transactions[0].remittanceInformation).toBe('INV-5001, INV-5002');
  });
  it('names the line of a bad row and rejects a mapping to unknown columns', () => {
    const text = fixture('statement-semicolon.csv').toString();
    expect(parseError('csv', text.replace('03.11.2026;03.11.2026', '31.11.2026;31.11.2026'), semicolon).where).toBe('line 3');
    expect(parseError('csv', text.replace('-12,00', 'twelve'), semicolon).where).toBe('line 3');
    expect(parseError('csv', text.replace(';Iota Ltd;', ';Iota Ltd;;'), semicolon).where).toBe('line 4');
    expect(parseError('csv', text, { mapping: { ...semicolon.mapping, amount_column: 'Betrag' } }).problem).toMatch(/no column "Betrag"/);
    expect(parseError('csv', fixture('statement-debit-credit.csv').toString().replace(',19.99,', ',19.99,5.00'), debitCredit).where).toBe('line 3');
    expect(parseError('csv', text, { mapping: { account: 'x', date_column: 'Date' } }).where).toBe('mapping');
  });
});

describe('JSON', () => {
  it('reads the JSON statement form', () => {
    const s = parseOne('json', fixture('statement.json'));
    expect(s.account).toMatchObject({ identifier: 'CH9300762011623852957', currency: 'CHF' });
    expect(s.transactions.map((t) => [t.amount, t.currency, t.bookingDate, t.valueDate])).toEqual([
      ['900.0000', 'CHF', '2026-11-05', '2026-11-05'],
      ['-30.0000', 'CHF', '2026-11-05', '2026-11-05'],
    ]);
    expect(s.transactions[0]).toMatchObject({ counterpartyIban: 'CH5604835012345678009', bankReference: 'CHREF-6001' });
  });
  it('names the JSON path of a bad value', () => {
    const doc = JSON.parse(fixture('statement.json').toString());
    doc.transactions[1].amount = '12,5';
    expect(parseError('json', JSON.stringify(doc)).where).toBe('$.transactions[1].amount');
    expect(parseError('json', '{"account": ').where).toBe('$');
  });
});

describe('parsing in steps (the store activity heartbeats between them)', () => {
  it('gives the same statement as the one-go parse, pausing between batches of lines, for every format', async () => {
    const big = ['Date;Amount;Purpose', ...Array.from({ length: 1200 }, (_, i) => `01.11.2026;${i + 1},00;Invoice INV-${i}`)].join('\n');
    const csvMapping = { account: 'BIG1', date_column: 'Date', amount_column: 'Amount', currency: 'EUR', remittance_column: 'Purpose', delimiter: ';', decimal_separator: ',', date_format: 'DD.MM.YYYY' };
    const entry = (i: number) =>
      `<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2026-11-02</Dt></BookgDt><AcctSvcrRef>${i}</AcctSvcrRef></Ntry>`;
    const camt = fixture('camt053.xml').toString().replace('<Ntry>', `${Array.from({ length: 1200 }, (_, i) => entry(i)).join('\n')}<Ntry>`);
    const json = JSON.stringify({ account: 'X1', currency: 'EUR', transactions: Array.from({ length: 1200 }, (_, i) => ({ amount: `${i}.5`, booking_date: '2026-11-01' })) });
    const cases: [StatementFormat, Buffer, Record<string, unknown>][] = [
      ['csv', Buffer.from(big), { mapping: csvMapping }],
      ['camt053', Buffer.from(camt), {}],
      ['json', Buffer.from(json), {}],
      ['mt940', fixture('mt940.txt'), {}],
      ['bai2', fixture('bai2.txt'), {}],
    ];
    for (const [format, content, options] of cases) {
      const pauses: number[] = [];
      const stepped = await runParseAsync(parseStatementSteps(format, content, options), async (n) => void pauses.push(n));
      expect(stepped).toEqual(parseStatement(format, content, options));
      if (format !== 'mt940' && format !== 'bai2') expect(pauses.length, format).toBeGreaterThanOrEqual(2);
    }
  });

  it('reports a malformed line the same way', async () => {
    const bad = fixture('statement-semicolon.csv').toString().replace('04.11.2026;04.11.2026', '2026-11-04;2026-11-04');
    await expect(runParseAsync(parseStatementSteps('csv', Buffer.from(bad), { mapping: CSV_SEMICOLON_MAPPING }), async () => {})).rejects.toMatchObject({ where: 'line 4' });
    const json = JSON.stringify({ account: 'X1', currency: 'EUR', transactions: [{ amount: '1', booking_date: '2026-11-01' }, { amount: '1,5', booking_date: '2026-11-01' }] });
    expect(parseError('json', json).where).toBe('$.transactions[1].amount');
  });
});
