/**
 * Statement format detection on the file's own signs (detectStatementFormat): the variants a bank's
 * export shows that the fixtures of the end-to-end test (test/bank-statement-reading.test.ts) do not.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectStatementFormat } from '../src/parsers/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));
const detect = (text: string | Buffer) => detectStatementFormat(Buffer.isBuffer(text) ? text : Buffer.from(text));

describe('detectStatementFormat', () => {
  it('reads each fixture as its format, CSV as needing a mapping', () => {
    expect(detect(fixture('camt053.xml'))).toEqual({ format: 'camt053' });
    expect(detect(fixture('mt940.txt'))).toEqual({ format: 'mt940' });
    expect(detect(fixture('bai2.txt'))).toEqual({ format: 'bai2' });
    expect(detect(fixture('statement.json'))).toEqual({ format: 'json' });
    expect(detect(fixture('statement-semicolon.csv'))).toEqual({ csv: true });
    expect(detect(fixture('statement-debit-credit.csv'))).toEqual({ csv: true });
  });

  it('finds camt.053 under a namespace prefix, another version, a byte order mark and no XML declaration', () => {
    expect(detect('\uFEFF<?xml version="1.0"?>\n<ns2:Document xmlns:ns2="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><ns2:BkToCstmrStmt/></ns2:Document>')).toEqual({ format: 'camt053' });
    expect(detect("<Document xmlns='urn:iso:std:iso:20022:tech:xsd:camt.053.001.13'></Document>")).toEqual({ format: 'camt053' });
  });

  it('names another ISO 20022 message and plain XML instead of guessing', () => {
    expect(detect('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.056.001.08"/>')).toEqual({ unknown: expect.stringMatching(/camt\.056\.001\.08.*not a camt\.053/) });
    // camt.054 notifications are read; a camt.052 report is refused as an intraday report.
    expect(detect('<n:Document xmlns:n="urn:iso:std:iso:20022:tech:xsd:camt.054.001.02"/>')).toEqual({ format: 'camt054' });
    expect(detect(fixture('camt052.xml'))).toEqual({ unknown: expect.stringMatching(/camt\.052\.001\.08 account report.*intraday report, not a statement/) });
    expect(detect('<Document><BkToCstmrStmt/></Document>')).toEqual({ unknown: expect.stringMatching(/without the camt\.053 namespace/) });
  });

  it('finds MT940 inside a SWIFT envelope and with CRLF line ends; a JSON object only by `{"` or `{}`', () => {
    const body = ':20:REF\r\n:25:NL91ABNA0417164300\r\n:28C:1/1\r\n:60F:C261101EUR5,00\r\n:62F:C261101EUR5,00\r\n';
    expect(detect(body)).toEqual({ format: 'mt940' });
    expect(detect(`{1:F01ABNANL2AXXXX0000000000}{2:O940}{4:\r\n${body}-}`)).toEqual({ format: 'mt940' });
    expect(detect('{4::20:REF\n:25:X\n:60M:C261101EUR5,00\n')).toEqual({ format: 'mt940' });
    expect(detect(' \n{ "account": "X" }')).toEqual({ format: 'json' });
    expect(detect('{}')).toEqual({ format: 'json' });
  });

  it('does not take a line with a tag alone, a BAI2 record that is not the file header, or free text for a statement', () => {
    expect(detect(':20:REF\nsomething else\n')).toMatchObject({ unknown: expect.any(String) });
    expect(detect('02,CUSTRECV,021000021,1,261101,2400,USD,2/\n')).toMatchObject({ unknown: expect.any(String) });
    expect(detect('Dear customer,\nthank you.\n')).toMatchObject({ unknown: expect.any(String) });
    expect(detect('')).toEqual({ unknown: 'the file is empty' });
    expect(detect(Buffer.from([0, 1, 2, 3, 255]))).toMatchObject({ unknown: expect.any(String) });
  });
});
