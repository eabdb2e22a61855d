/**
 * A small strict reader for BAI2 (Cash Management Balance Reporting Specification, version 2).
 * Records: 01 file header, 02 group header, 03 account identifier and summary, 16 transaction detail,
 * 88 continuation, 49 account trailer, 98 group trailer, 99 file trailer. Records end with `/`
 * (the text field of a 16 record runs to the end of the record). Amounts carry no decimal point: they
 * are in the currency's minor units (cents). Detail type codes 100-399 are credits, 400-699 debits;
 * 890 (informational) lines are skipped. Funds types 0, 1, 2, Z, V (date, time), S (three amounts)
 * and D (count, then day/amount pairs) are read and their fields skipped. Control totals and record
 * counts of the 49, 98 and 99 trailers are checked. One account (one 03 record) per upload.
 * Errors name the physical line.
 */
import { currencyMinorUnits, isIsoCurrency, Money } from '@rp/platform';
import { fixed, PARSE_BATCH, runParse, StatementParseError, text, yymmdd, type ParseSteps, type ParsedFile, type ParsedStatement, type ParsedTransaction } from './types.js';

interface LogicalRecord {
  code: string;
  fields: string[];
  /** raw text after the fixed fields (16 records only) */
  line: number;
  physical: number;
}

function splitRecords(content: string): LogicalRecord[] {
  const lines = content.replace(/^\uFEFF/, '').split(/\r?\n/);
  const out: { code: string; body: string; line: number; physical: number }[] = [];
  lines.forEach((raw, i) => {
    const lineNo = i + 1;
    const l = raw.trimEnd();
    if (l === '') return;
    const m = /^(\d{2}),/.exec(l);
    if (!m) throw new StatementParseError(`line ${lineNo}`, `"${l.slice(0, 20)}" does not start with a record code`);
    const code = m[1];
    const body = l.slice(3);
    if (code === '88') {
      const prev = out[out.length - 1];
      if (!prev) throw new StatementParseError(`line ${lineNo}`, 'continuation (88) without a record to continue');
      const prevBody = prev.body.replace(/\/$/, '');
      prev.body = prev.code === '16' ? `${prevBody} ${body.replace(/\/$/, '')}` : `${prevBody},${body}`;
      prev.physical += 1;
      return;
    }
    out.push({ code, body, line: lineNo, physical: 1 });
  });
  return out.map((r) => {
    const body = r.body.endsWith('/') ? r.body.slice(0, -1) : r.body;
    return { code: r.code, fields: body.split(','), line: r.line, physical: r.physical };
  });
}

function cents(raw: string | undefined, minor: number, where: string, signed = false): Money {
  const s = (raw ?? '').trim();
  const re = signed ? /^[+-]?\d+$/ : /^\d+$/;
  if (!re.test(s)) throw new StatementParseError(where, `amount "${raw ?? ''}" is not ${signed ? 'a signed' : 'an unsigned'} whole number of minor units`);
  return new Money(s).div(new Money(10).pow(minor));
}

function int(raw: string | undefined, where: string, what: string): number {
  if (!/^\d+$/.test((raw ?? '').trim())) throw new StatementParseError(where, `${what} "${raw ?? ''}" is not a number`);
  return Number(raw);
}

/** Index just past the funds-type fields that start at `i`. */
function skipFundsType(f: string[], i: number, where: string): number {
  const t = (f[i] ?? '').trim();
  switch (t) {
    case '':
    case '0':
    case '1':
    case '2':
    case 'Z':
      return i + 1;
    case 'V':
      yymmdd(f[i + 1] ?? '', where);
      return i + 3;
    case 'S':
      return i + 4;
    case 'D': {
      const n = int(f[i + 1], where, 'number of distributions');
      return i + 2 + 2 * n;
    }
    default:
      throw new StatementParseError(where, `funds type "${t}" is not one of 0, 1, 2, Z, V, S, D`);
  }
}

function counterpartyFromText(t: string | null): string | null {
  if (!t) return null;
  const m = /(?:ORIG(?:INATOR)?(?: CO)? NAME|ORIGINATOR|REMITTER|SENDER)\s*[:=]\s*(.+?)(?=\s+[A-Z]+(?: [A-Z]+)?[:=]|$)/i.exec(t);
  return m ? text(m[1]) : null;
}

export function parseBai2(content: Buffer): ParsedFile {
  return runParse(parseBai2Steps(content));
}

/** parseBai2 as ParseSteps (yields every PARSE_BATCH detail records). */
export function* parseBai2Steps(content: Buffer): ParseSteps {
  const records = splitRecords(content.toString('utf8'));
  if (records.length === 0) throw new StatementParseError('line 1', 'the file is empty');
  const at = (r: LogicalRecord) => `line ${r.line}`;
  const expect = (r: LogicalRecord | undefined, code: string, after: string) => {
    if (!r) throw new StatementParseError(`line ${records[records.length - 1].line + 1}`, `missing ${code} record after ${after}`);
    if (r.code !== code) throw new StatementParseError(at(r), `expected a ${code} record, found ${r.code}`);
    return r;
  };

  let i = 0;
  const header = expect(records[i++], '01', 'the start of the file');
  if ((header.fields[7] ?? '').trim() !== '2') throw new StatementParseError(at(header), `version "${header.fields[7] ?? ''}" is not 2 (BAI2)`);
  let fileRecords = 1;
  let fileTotal = new Money(0);
  let groups = 0;
  let account: ParsedStatement['account'] | null = null;
  let currency: string | null = null;
  let opening: string | null = null;
  let closing: string | null = null;
  let statementDate: string | null = null;
  const transactions: ParsedTransaction[] = [];

  while (records[i]?.code === '02') {
    const g = records[i++];
    groups += 1;
    let groupRecords = g.physical;
    let groupTotal = new Money(0);
    let accounts = 0;
    const asOf = yymmdd((g.fields[3] ?? '').trim(), at(g));
    const groupCcy = (g.fields[5] ?? '').trim() || 'USD';
    if (!isIsoCurrency(groupCcy)) throw new StatementParseError(at(g), `currency "${groupCcy}" is not an ISO 4217 currency`);

    while (records[i]?.code === '03') {
      const a = records[i++];
      accounts += 1;
      if (account) throw new StatementParseError(at(a), 'one account (03 record) per upload');
      const number = (a.fields[0] ?? '').trim();
      if (!number) throw new StatementParseError(at(a), 'customer account number missing');
      const ccy = (a.fields[1] ?? '').trim() || groupCcy;
      if (!isIsoCurrency(ccy)) throw new StatementParseError(at(a), `currency "${ccy}" is not an ISO 4217 currency`);
      const minor = currencyMinorUnits(ccy);
      let accountTotal = new Money(0);
      let accountRecords = a.physical;
      // Summary groups: type code, amount, item count, funds type (+ its fields).
      let k = 2;
      while (k < a.fields.length && (a.fields[k] ?? '').trim() !== '') {
        const type = a.fields[k].trim();
        if (!/^\d{3}$/.test(type)) throw new StatementParseError(at(a), `summary type code "${type}" is not 3 digits`);
        const amountRaw = (a.fields[k + 1] ?? '').trim();
        if (amountRaw !== '') {
          const amt = cents(amountRaw, minor, at(a), true);
          accountTotal = accountTotal.plus(amt);
          if (type === '010') opening = fixed(amt);
          if (type === '015') closing = fixed(amt);
        }
        k = skipFundsType(a.fields, k + 3, at(a));
      }
      account = { identifier: number, iban: null, accountNumber: number, bankCode: text(g.fields[1]) ?? text(header.fields[0]), currency: ccy, name: null };
      currency = ccy;
      statementDate = asOf;

      while (records[i]?.code === '16') {
        if (i % PARSE_BATCH === 0) yield i;
        const d = records[i++];
        accountRecords += d.physical;
        const f = d.fields;
        const type = (f[0] ?? '').trim();
        if (!/^\d{3}$/.test(type)) throw new StatementParseError(at(d), `type code "${type}" is not 3 digits`);
        const amt = cents(f[1], minor, at(d));
        accountTotal = accountTotal.plus(amt);
        const after = skipFundsType(f, 2, at(d));
        const bankRef = text(f[after]);
        const customerRef = text(f[after + 1]);
        const note = text(f.slice(after + 2).join(','));
        const code = Number(type);
        if (code === 890) continue;
        let sign: 1 | -1;
        if (code >= 100 && code <= 399) sign = 1;
        else if (code >= 400 && code <= 699) sign = -1;
        else throw new StatementParseError(at(d), `type code ${type} is neither a credit (100-399) nor a debit (400-699) detail`);
        transactions.push({
          amount: fixed(sign === 1 ? amt : amt.neg()),
          currency: ccy,
          valueDate: asOf,
          bookingDate: asOf,
          counterpartyName: counterpartyFromText(note),
          counterpartyAccount: null,
          counterpartyIban: null,
          counterpartyBankCode: null,
          remittanceInformation: note,
          bankReference: bankRef,
          endToEndId: customerRef,
          transactionCode: type,
        });
      }
      const t = expect(records[i++], '49', `account ${number}`);
      accountRecords += t.physical;
      const control = cents(t.fields[0], minor, at(t), true);
      if (!control.eq(accountTotal)) throw new StatementParseError(at(t), `account control total ${t.fields[0]} does not match the account's amounts (${accountTotal.times(new Money(10).pow(minor)).toFixed(0)})`);
      const count = int(t.fields[1], at(t), 'number of records');
      if (count !== accountRecords) throw new StatementParseError(at(t), `number of records ${count} does not match the account's ${accountRecords} records`);
      groupRecords += accountRecords;
      groupTotal = groupTotal.plus(accountTotal);
    }
    const gt = expect(records[i++], '98', 'the group');
    groupRecords += gt.physical;
    if (!cents(gt.fields[0], currencyMinorUnits(groupCcy), at(gt), true).eq(groupTotal)) throw new StatementParseError(at(gt), `group control total ${gt.fields[0]} does not match its accounts`);
    if (int(gt.fields[1], at(gt), 'number of accounts') !== accounts) throw new StatementParseError(at(gt), `number of accounts ${gt.fields[1]} does not match the group's ${accounts} accounts`);
    if (int(gt.fields[2], at(gt), 'number of records') !== groupRecords) throw new StatementParseError(at(gt), `number of records ${gt.fields[2]} does not match the group's ${groupRecords} records`);
    fileRecords += groupRecords;
    fileTotal = fileTotal.plus(groupTotal);
  }
  const ft = expect(records[i++], '99', 'the last group');
  fileRecords += ft.physical;
  if (!cents(ft.fields[0], currency ? currencyMinorUnits(currency) : 2, at(ft), true).eq(fileTotal)) throw new StatementParseError(at(ft), `file control total ${ft.fields[0]} does not match its groups`);
  if (int(ft.fields[1], at(ft), 'number of groups') !== groups) throw new StatementParseError(at(ft), `number of groups ${ft.fields[1]} does not match the file's ${groups} groups`);
  if (int(ft.fields[2], at(ft), 'number of records') !== fileRecords) throw new StatementParseError(at(ft), `number of records ${ft.fields[2]} does not match the file's ${fileRecords} records`);
  if (records[i]) throw new StatementParseError(at(records[i]), `unexpected ${records[i].code} record after the file trailer`);
  if (!account || !currency) throw new StatementParseError(`line ${ft.line}`, 'the file has no account (03 record)');
  return { statements: [{ account, statementNumber: text(header.fields[4]), statementDate, openingBalance: opening, closingBalance: closing, currency, transactions }] };
}
