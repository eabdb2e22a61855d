/**
 * Character encodings of statement files (parsers/encoding.ts): BOMs, an XML declaration, valid UTF-8,
 * the single-byte code pages detected by their letters, and `charset` overriding all of it.
 */
import { readFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { decodeStatementText, parseStatement } from '../src/parsers/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/bank-statements/${name}`, import.meta.url));
const text = (d: { utf8: Buffer }) => d.utf8.toString('utf8');

describe('decodeStatementText', () => {
  it('keeps UTF-8 (and ASCII) as it is, and reads byte order marks', () => {
    const utf8 = Buffer.from(':86:Zahlung für Müller');
    expect(decodeStatementText(utf8)).toEqual({ utf8, encoding: 'UTF-8' });
    expect(decodeStatementText(Buffer.from('plain ascii')).encoding).toBe('UTF-8');
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(':20:Łódź', 'utf16le')]);
    expect(decodeStatementText(le)).toMatchObject({ encoding: 'utf-16le' });
    expect(text(decodeStatementText(le))).toBe(':20:Łódź');
  });

  it('tells CP852, Windows-1250 and Windows-1252 apart by what reads as letters', () => {
    const pl = 'Płatność za fakturę, Zakład Usług Łączności, żółć gęślą jaźń';
    expect(decodeStatementText(iconv.encode(pl, 'cp852'))).toMatchObject({ encoding: 'cp852' });
    expect(text(decodeStatementText(iconv.encode(pl, 'cp852')))).toBe(pl);
    expect(text(decodeStatementText(iconv.encode(pl, 'windows-1250')))).toBe(pl);
    const fr = 'Société Générale, règlement élève, reçu à Lyon: 12,00 €';
    expect(decodeStatementText(iconv.encode(fr, 'windows-1252'))).toMatchObject({ encoding: 'windows-1252' });
    expect(text(decodeStatementText(iconv.encode(fr, 'windows-1252')))).toBe(fr);
  });

  it('uses an XML encoding declaration, and `charset` over everything', () => {
    const xml = '<?xml version="1.0" encoding="ISO-8859-1"?><a>Müller</a>';
    expect(text(decodeStatementText(iconv.encode(xml, 'latin1')))).toBe(xml);
    expect(text(decodeStatementText(iconv.encode('reçu à Lyon', 'windows-1252'), 'windows-1250'))).toBe('reçu ŕ Lyon');
    expect(decodeStatementText(Buffer.from('x'), 'utf8').encoding).toBe('UTF-8');
  });

  it('gives parsers the decoded text and says which encoding was used (the stored charset wins on a re-parse)', () => {
    const f = parseStatement('mt940', fixture('mt940-cp852.sta'));
    expect(f.encoding).toBe('cp852');
    expect(f.statements[0].transactions[1].counterpartyName).toBe('Przedsiębiorstwo Ślęża');
    expect(parseStatement('mt940', fixture('mt940-cp852.sta'), { charset: 'cp852' }).statements).toEqual(f.statements);
  });
});
