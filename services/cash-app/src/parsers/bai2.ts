/**
 * A strict reader for BAI2 (BAI Cash Management Balance Reporting Specifications, version 2).
 * Records: 01 file header, 02 group header, 03 account identifier and summary, 16 transaction detail,
 * 88 continuation, 49 account trailer, 98 group trailer, 99 file trailer.
 *
 * Records are joined as the standard describes (see Bai2Fields): fields are separated by `,`; a `/`
 * ends a physical record's fields (the fields not given before it are defaulted); an `88` record
 * continues the previous record with its next field. In an 03 record a `/` after a summary's amount
 * defaults the rest of that summary (item count, funds type), so the continuation starts the next
 * summary; a summary slot left empty (`,,,,`) is skipped. The text of a 16 record runs to the end of
 * the record: not split at commas, continued on 88 lines (joined with a space), a trailing `/` dropped.
 *
 * Amounts carry no decimal point: they are in the currency's minor units (cents). Detail type codes
 * 100-399 are credits, 400-699 debits; 890 (informational) lines are skipped. Funds types: 0
 * (immediate), 1 (one-day), 2 (two-day), Z (unknown) availability; V value date (YYMMDD) and
 * optional time, which become the line's value date (otherwise the value date is the group's as-of
 * date); S three availability amounts (immediate, one-day, two-or-more days); D a count then that
 * many (days, amount) pairs. Availability amounts are validated but are not part of the control
 * totals (as the standard says: those add up the summary and detail amounts). Control totals and
 * record counts of the 49, 98 and 99 trailers are checked (control totals add up the amounts as written, in
 * whole minor units). Each account (03 record … 49 trailer) is one statement, in file order, dated by
 * its group's as-of date; a file may have several groups and accounts.
 * Errors name the physical line.
 */
import { currencyMinorUnits, isIsoCurrency, Money } from '@rp/platform';
import { fixed, PARSE_BATCH, runParse, StatementParseError, text, yymmdd, type ParseSteps, type ParsedFile, type ParsedStatement, type ParsedTransaction } from './types.js';

/** One physical line of a record: its text after the record code and its line number. */
interface Segment {
  body: string;
  line: number;
}

/** A logical record: its code and its physical lines (the record's own, then its 88 continuations). */
interface LogicalRecord {
  code: string;
  segments: Segment[];
  line: number;
  physical: number;
}

function splitRecords(content: string): LogicalRecord[] {
  const lines = content.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const out: LogicalRecord[] = [];
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
      prev.segments.push({ body, line: lineNo });
      prev.physical += 1;
      return;
    }
    out.push({ code, segments: [{ body, line: lineNo }], line: lineNo, physical: 1 });
  });
  return out;
}

/**
 * The fields of one logical record, read in order across its physical lines. `next()` gives the next
 * fixed field (undefined once the record has no more): the text up to the next `,` or `/` or the end
 * of the line. A line whose last field is followed by `,` continues with the next field on the 88
 * line; `/` (or the end of the line) ends the line's fields, and `ended` says that the last field
 * read was its line's last one. `,/` is an empty field ended by the slash. `text()` is the rest of
 * the record as free text (a 16 record's text field).
 */
class Bai2Fields {
  private seg = 0;
  private pos = 0;
  /** The last field read was its physical line's last one (followed by `/` or the line's end). */
  ended = false;
  /** Line of the last field read. */
  line: number;

  constructor(private readonly segments: Segment[]) {
    this.line = segments[0].line;
  }

  /** Moves past lines that were read to their end after a `,` (and empty continuation lines). */
  private settle(): boolean {
    while (this.seg < this.segments.length && this.pos >= this.segments[this.seg].body.length) {
      this.seg += 1;
      this.pos = 0;
    }
    return this.seg < this.segments.length;
  }

  /** Whether the record has another field. */
  more(): boolean {
    return this.settle();
  }

  next(): string | undefined {
    if (!this.settle()) {
      this.ended = true;
      return undefined;
    }
    const { body: s, line } = this.segments[this.seg];
    this.line = line;
    let end = this.pos;
    while (end < s.length && s[end] !== ',' && s[end] !== '/') end++;
    const field = s.slice(this.pos, end).trim();
    if (end < s.length && s[end] === ',') {
      this.pos = end + 1;
      this.ended = false;
    } else {
      // `/` or the end of the line: what follows a `/` on the same line is not read.
      this.ended = true;
      this.seg += 1;
      this.pos = 0;
    }
    return field;
  }

  /** The rest of the record as text: the rest of this line, then each continuation line, joined with a space; a trailing `/` is dropped. */
  text(): string | null {
    const parts: string[] = [];
    for (let k = this.seg; k < this.segments.length; k++) parts.push(this.segments[k].body.slice(k === this.seg ? this.pos : 0));
    this.seg = this.segments.length;
    this.pos = 0;
    return text(parts.map((p) => p.replace(/\/\s*$/, '')).join(' '));
  }

  /** All remaining fixed fields (records without free text: 01, 02, 49, 98, 99). */
  rest(): string[] {
    const out: string[] = [];
    while (this.more()) out.push(this.next()!);
    return out;
  }
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

/** Optional availability amount (S and D funds types): empty or a whole number of minor units. */
function availability(raw: string | undefined, where: string): void {
  const s = (raw ?? '').trim();
  if (s !== '' && !/^[+-]?\d+$/.test(s)) throw new StatementParseError(where, `availability amount "${s}" is not a whole number of minor units`);
}

function hhmm(raw: string | undefined, where: string): void {
  const s = (raw ?? '').trim();
  if (s === '') return;
  // 2400 and 9999 are both used for the end of the day.
  if (!/^\d{4}$/.test(s) || (s !== '9999' && (Number(s.slice(0, 2)) > 24 || Number(s.slice(2)) > 59))) {
    throw new StatementParseError(where, `time "${s}" is not a time (HHMM)`);
  }
}

/**
 * Reads the funds type (and the fields it brings) of a summary or detail. Returns the value date of a
 * `V` funds type, else null. With `stopAtLineEnd` (03 summaries) a `/` ends the group: the fields
 * not given are defaulted.
 */
function readFundsType(f: Bai2Fields, stopAtLineEnd: boolean): string | null {
  const t = f.next() ?? '';
  const where = () => `line ${f.line}`;
  const stop = () => stopAtLineEnd && f.ended;
  switch (t) {
    case '':
    case '0':
    case '1':
    case '2':
    case 'Z':
      return null;
    case 'V': {
      if (stop()) throw new StatementParseError(where(), 'funds type V without its value date');
      const date = yymmdd(f.next() ?? '', where());
      if (!stop()) hhmm(f.next(), where());
      return date;
    }
    case 'S':
      for (let k = 0; k < 3 && !stop(); k++) availability(f.next(), where());
      return null;
    case 'D': {
      if (stop()) throw new StatementParseError(where(), 'funds type D without its number of distributions');
      const n = int(f.next(), where(), 'number of distributions');
      for (let k = 0; k < n; k++) {
        if (stop()) throw new StatementParseError(where(), `funds type D announces ${n} distributions, the record ends after ${k}`);
        int(f.next(), where(), 'availability days');
        availability(f.next(), where());
      }
      return null;
    }
    default:
      throw new StatementParseError(where(), `funds type "${t}" is not one of 0, 1, 2, Z, V, S, D`);
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

/** A control total field: a signed whole number (the amounts as written, in minor units). */
function control(raw: string | undefined, where: string, what: string): bigint {
  const s = (raw ?? '').trim();
  if (!/^[+-]?\d+$/.test(s)) throw new StatementParseError(where, `${what} "${raw ?? ''}" is not a signed whole number`);
  return BigInt(s);
}

/** parseBai2 as ParseSteps (yields every PARSE_BATCH detail records): one statement per account (03 … 49), in file order. */
export function* parseBai2Steps(content: Buffer): ParseSteps {
  const records = splitRecords(content.toString('utf8'));
  if (records.length === 0) throw new StatementParseError('line 1', 'the file is empty');
  const at = (r: LogicalRecord) => `line ${r.line}`;
  const expect = (r: LogicalRecord | undefined, code: string, after: string) => {
    if (!r) throw new StatementParseError(`line ${records[records.length - 1].line + 1}`, `missing ${code} record after ${after}`);
    if (r.code !== code) throw new StatementParseError(at(r), `expected a ${code} record, found ${r.code}`);
    return r;
  };
  const fieldsOf = (r: LogicalRecord) => new Bai2Fields(r.segments).rest();

  let i = 0;
  const headerRecord = expect(records[i++], '01', 'the start of the file');
  const header = fieldsOf(headerRecord);
  if ((header[7] ?? '').trim() !== '2') throw new StatementParseError(at(headerRecord), `version "${header[7] ?? ''}" is not 2 (BAI2)`);
  let fileRecords = 1;
  // Control totals add up the amount fields as written (whole numbers, whatever the currency).
  let fileTotal = 0n;
  let groups = 0;
  const statements: ParsedStatement[] = [];

  while (records[i]?.code === '02') {
    const groupRecord = records[i++];
    const g = fieldsOf(groupRecord);
    groups += 1;
    let groupRecords = groupRecord.physical;
    let groupTotal = 0n;
    let accounts = 0;
    const asOf = yymmdd((g[3] ?? '').trim(), at(groupRecord));
    const groupCcy = (g[5] ?? '').trim() || 'USD';
    if (!isIsoCurrency(groupCcy)) throw new StatementParseError(at(groupRecord), `currency "${groupCcy}" is not an ISO 4217 currency`);

    while (records[i]?.code === '03') {
      const a = records[i++];
      accounts += 1;
      const f = new Bai2Fields(a.segments);
      const number = (f.next() ?? '').trim();
      if (!number) throw new StatementParseError(at(a), 'customer account number missing');
      const ccy = (f.ended ? '' : (f.next() ?? '').trim()) || groupCcy;
      if (!isIsoCurrency(ccy)) throw new StatementParseError(`line ${f.line}`, `currency "${ccy}" is not an ISO 4217 currency`);
      const minor = currencyMinorUnits(ccy);
      let accountTotal = 0n;
      let accountRecords = a.physical;
      let opening: string | null = null;
      let closing: string | null = null;
      // Summary groups: type code, amount, item count, funds type (+ its fields). A `/` after the
      // amount defaults the rest of the group; an empty slot (no type code) is skipped.
      while (f.more()) {
        const type = f.next() ?? '';
        const where = `line ${f.line}`;
        if (type !== '' && !/^\d{3}$/.test(type)) throw new StatementParseError(where, `summary type code "${type}" is not 3 digits`);
        if (type === '' && f.ended) continue;
        // A type code ending its line: the continuation carries its amount.
        const amountRaw = f.next() ?? '';
        const amountWhere = `line ${f.line}`;
        if (amountRaw !== '') {
          if (type === '') throw new StatementParseError(amountWhere, `summary amount "${amountRaw}" without a type code`);
          const amt = cents(amountRaw, minor, amountWhere, true);
          accountTotal += BigInt(amountRaw);
          if (type === '010') opening = fixed(amt);
          if (type === '015') closing = fixed(amt);
        }
        if (f.ended) continue;
        const count = f.next() ?? '';
        if (count !== '' && !/^\d+$/.test(count)) throw new StatementParseError(`line ${f.line}`, `item count "${count}" is not a number`);
        if (f.ended) continue;
        readFundsType(f, true);
      }
      const transactions: ParsedTransaction[] = [];

      while (records[i]?.code === '16') {
        if (i % PARSE_BATCH === 0) yield i;
        const d = records[i++];
        accountRecords += d.physical;
        const df = new Bai2Fields(d.segments);
        const type = df.next() ?? '';
        if (!/^\d{3}$/.test(type)) throw new StatementParseError(at(d), `type code "${type}" is not 3 digits`);
        const amountRaw = df.next();
        const amt = cents(amountRaw, minor, `line ${df.line}`);
        accountTotal += BigInt(amountRaw!);
        const valueDate = readFundsType(df, false);
        const bankRef = text(df.next());
        const customerRef = text(df.next());
        const note = df.text();
        const code = Number(type);
        if (code === 890) continue;
        let sign: 1 | -1;
        if (code >= 100 && code <= 399) sign = 1;
        else if (code >= 400 && code <= 699) sign = -1;
        else throw new StatementParseError(at(d), `type code ${type} is neither a credit (100-399) nor a debit (400-699) detail`);
        transactions.push({
          amount: fixed(sign === 1 ? amt : amt.neg()),
          currency: ccy,
          valueDate: valueDate ?? asOf,
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
      const trailer = expect(records[i++], '49', `account ${number}`);
      const t = fieldsOf(trailer);
      accountRecords += trailer.physical;
      if (control(t[0], at(trailer), 'account control total') !== accountTotal) {
        throw new StatementParseError(at(trailer), `account control total ${t[0]} does not match the account's amounts (${accountTotal})`);
      }
      const count = int(t[1], at(trailer), 'number of records');
      if (count !== accountRecords) throw new StatementParseError(at(trailer), `number of records ${count} does not match the account's ${accountRecords} records`);
      groupRecords += accountRecords;
      groupTotal += accountTotal;
      statements.push({
        account: { identifier: number, iban: null, accountNumber: number, bankCode: text(g[1]) ?? text(header[0]), currency: ccy, name: null },
        statementNumber: text(header[4]),
        statementDate: asOf,
        openingBalance: opening,
        closingBalance: closing,
        currency: ccy,
        transactions,
        source: at(a),
      });
    }
    const gtRecord = expect(records[i++], '98', 'the group');
    const gt = fieldsOf(gtRecord);
    groupRecords += gtRecord.physical;
    if (control(gt[0], at(gtRecord), 'group control total') !== groupTotal) throw new StatementParseError(at(gtRecord), `group control total ${gt[0]} does not match its accounts (${groupTotal})`);
    if (int(gt[1], at(gtRecord), 'number of accounts') !== accounts) throw new StatementParseError(at(gtRecord), `number of accounts ${gt[1]} does not match the group's ${accounts} accounts`);
    if (int(gt[2], at(gtRecord), 'number of records') !== groupRecords) throw new StatementParseError(at(gtRecord), `number of records ${gt[2]} does not match the group's ${groupRecords} records`);
    fileRecords += groupRecords;
    fileTotal += groupTotal;
  }
  const ftRecord = expect(records[i++], '99', 'the last group');
  const ft = fieldsOf(ftRecord);
  fileRecords += ftRecord.physical;
  if (control(ft[0], at(ftRecord), 'file control total') !== fileTotal) throw new StatementParseError(at(ftRecord), `file control total ${ft[0]} does not match its groups (${fileTotal})`);
  if (int(ft[1], at(ftRecord), 'number of groups') !== groups) throw new StatementParseError(at(ftRecord), `number of groups ${ft[1]} does not match the file's ${groups} groups`);
  if (int(ft[2], at(ftRecord), 'number of records') !== fileRecords) throw new StatementParseError(at(ftRecord), `number of records ${ft[2]} does not match the file's ${fileRecords} records`);
  if (records[i]) throw new StatementParseError(at(records[i]), `unexpected ${records[i].code} record after the file trailer`);
  if (statements.length === 0) throw new StatementParseError(`line ${ftRecord.line}`, 'the file has no account (03 record)');
  return { statements };
}
