/**
 * Bank statements exported as CSV, read with a column mapping (the file itself says nothing about
 * its layout). RFC 4180 quoting ("" inside quoted fields, quoted line breaks), a configurable
 * delimiter, decimal separator (thousands separators of the other kind are dropped) and date format.
 * The first row is the header; mapped columns are named by their header text. Either one signed
 * `amount` column, or `debit` and `credit` columns (unsigned; the debit is negated). Errors name the line.
 */
import { z } from 'zod';
import { isIsoCurrency, isoCurrencyCode } from '@rp/platform';
import {
  calendarDate,
  decimal,
  fixed,
  inMinorUnits,
  looksLikeIban,
  PARSE_BATCH,
  runParse,
  StatementParseError,
  text,
  type ParseSteps,
  type ParsedFile,
  type ParsedTransaction,
} from './types.js';

export const CSV_DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY', 'YYYYMMDD', 'DD-MM-YYYY'] as const;

const column = () => z.string().trim().min(1).max(200);

export const csvMappingSchema = z
  .object({
    account: z.string().trim().min(1).max(100).describe('Identifier (IBAN or account number) of the account the statement belongs to.'),
    date_column: column().describe('Booking date column.'),
    value_date_column: column().optional().describe('Value date column (default: the booking date).'),
    amount_column: column().optional().describe('One signed amount column (credit positive, debit negative).'),
    debit_column: column().optional().describe('Unsigned debit amounts (with `credit_column`, instead of `amount_column`).'),
    credit_column: column().optional().describe('Unsigned credit amounts (with `debit_column`).'),
    currency_column: column().optional().describe('Column holding each line\'s ISO 4217 currency.'),
    currency: isoCurrencyCode().optional().describe('Fixed currency of every line (instead of `currency_column`).'),
    counterparty_name_column: column().optional(),
    counterparty_account_column: column().optional().describe('Counterparty IBAN or account number.'),
    remittance_column: column().optional().describe('Remittance information (payment purpose).'),
    reference_column: column().optional().describe('Bank reference of the line (used for the unique import id).'),
    end_to_end_id_column: column().optional(),
    transaction_code_column: column().optional(),
    delimiter: z.enum([',', ';', '\t', '|']).default(','),
    decimal_separator: z.enum(['.', ',']).default('.'),
    date_format: z.enum(CSV_DATE_FORMATS).default('YYYY-MM-DD'),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.amount_column && (m.debit_column || m.credit_column)) {
      ctx.addIssue({ code: 'custom', path: ['amount_column'], message: 'give either amount_column or debit_column + credit_column, not both' });
    } else if (!m.amount_column && !(m.debit_column && m.credit_column)) {
      ctx.addIssue({ code: 'custom', path: ['amount_column'], message: 'give amount_column, or both debit_column and credit_column' });
    }
    if (!m.currency && !m.currency_column) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'give currency or currency_column' });
    if (m.currency && m.currency_column) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'give currency or currency_column, not both' });
  });
export type CsvMapping = z.output<typeof csvMappingSchema>;

/** RFC 4180 records with the line each starts on. */
export function readCsv(content: string, delimiter: string): { line: number; cells: string[] }[] {
  return runParse(readCsvSteps(content, delimiter));
}

/** readCsv, yielding every PARSE_BATCH records. */
function* readCsvSteps(content: string, delimiter: string): Generator<number, { line: number; cells: string[] }[], void> {
  const rows: { line: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let fieldStart = true;
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (quoted) {
      if (c === '"') {
        if (content[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        cell += c;
      }
      continue;
    }
    if (c === '"' && fieldStart) {
      quoted = true;
      fieldStart = false;
    } else if (c === '"') {
      throw new StatementParseError(`line ${line}`, 'a quote inside an unquoted field');
    } else if (c === delimiter) {
      cells.push(cell);
      cell = '';
      fieldStart = true;
    } else if (c === '\r' && content[i + 1] === '\n') {
      continue;
    } else if (c === '\n') {
      cells.push(cell);
      if (!(cells.length === 1 && cells[0] === '')) rows.push({ line: start, cells });
      cells = [];
      cell = '';
      fieldStart = true;
      line++;
      start = line;
      if (rows.length % PARSE_BATCH === 0) yield rows.length;
    } else {
      cell += c;
      fieldStart = false;
    }
  }
  if (quoted) throw new StatementParseError(`line ${start}`, 'a quoted field is not closed');
  cells.push(cell);
  if (!(cells.length === 1 && cells[0] === '')) rows.push({ line: start, cells });
  return rows;
}

function parseDate(raw: string, format: CsvMapping['date_format'], where: string): string {
  const s = raw.trim();
  const patterns: Record<CsvMapping['date_format'], [RegExp, [number, number, number]]> = {
    'YYYY-MM-DD': [/^(\d{4})-(\d{1,2})-(\d{1,2})$/, [1, 2, 3]],
    'DD.MM.YYYY': [/^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, [3, 2, 1]],
    'DD/MM/YYYY': [/^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, [3, 2, 1]],
    'MM/DD/YYYY': [/^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, [3, 1, 2]],
    'YYYYMMDD': [/^(\d{4})(\d{2})(\d{2})$/, [1, 2, 3]],
    'DD-MM-YYYY': [/^(\d{1,2})-(\d{1,2})-(\d{4})$/, [3, 2, 1]],
  };
  const [re, [y, m, d]] = patterns[format];
  const match = re.exec(s);
  if (!match) throw new StatementParseError(where, `date "${raw}" does not have the format ${format}`);
  return calendarDate(Number(match[y]), Number(match[m]), Number(match[d]), where, raw);
}

function parseAmount(raw: string, sep: '.' | ',', where: string) {
  let s = raw.trim().replace(/\s/g, '');
  s = sep === ',' ? s.replace(/\./g, '').replace(',', '.') : s.replace(/,/g, '');
  return decimal(s, where);
}

export function parseCsv(content: Buffer, mapping: CsvMapping): ParsedFile {
  return runParse(parseCsvSteps(content, mapping));
}

/** parseCsv as ParseSteps (yields every PARSE_BATCH records while reading and while converting). */
export function* parseCsvSteps(content: Buffer, mapping: CsvMapping): ParseSteps {
  const rows = yield* readCsvSteps(content.toString('utf8').replace(/^\uFEFF/, ''), mapping.delimiter);
  if (rows.length === 0) throw new StatementParseError('line 1', 'the file is empty (a header row is required)');
  const [header, ...data] = rows;
  const index = new Map(header.cells.map((h, i) => [h.trim(), i] as const));
  const col = (name: string | undefined) => {
    if (!name) return undefined;
    const i = index.get(name);
    if (i === undefined) throw new StatementParseError(`line ${header.line}`, `the header has no column "${name}" (columns: ${header.cells.map((h) => h.trim()).join(', ')})`);
    return i;
  };
  const c = {
    date: col(mapping.date_column)!,
    valueDate: col(mapping.value_date_column),
    amount: col(mapping.amount_column),
    debit: col(mapping.debit_column),
    credit: col(mapping.credit_column),
    currency: col(mapping.currency_column),
    name: col(mapping.counterparty_name_column),
    account: col(mapping.counterparty_account_column),
    remittance: col(mapping.remittance_column),
    reference: col(mapping.reference_column),
    e2e: col(mapping.end_to_end_id_column),
    code: col(mapping.transaction_code_column),
  };
  const transactions: ParsedTransaction[] = [];
  for (let n = 0; n < data.length; n++) {
    if (n > 0 && n % PARSE_BATCH === 0) yield n;
    const r = data[n];
    const where = `line ${r.line}`;
    if (r.cells.length !== header.cells.length) throw new StatementParseError(where, `${r.cells.length} columns, the header has ${header.cells.length}`);
    const get = (i: number | undefined) => (i === undefined ? null : text(r.cells[i]));
    let amount;
    let amountRaw: string;
    if (c.amount !== undefined) {
      const raw = get(c.amount);
      if (!raw) throw new StatementParseError(where, `column "${mapping.amount_column}" is empty`);
      amountRaw = raw;
      amount = parseAmount(raw, mapping.decimal_separator, where);
    } else {
      const d = get(c.debit);
      const cr = get(c.credit);
      if (d && cr) throw new StatementParseError(where, 'both the debit and the credit column have a value');
      if (!d && !cr) throw new StatementParseError(where, 'neither the debit nor the credit column has a value');
      amountRaw = (d ?? cr)!;
      const v = parseAmount(amountRaw, mapping.decimal_separator, where).abs();
      amount = d ? v.neg() : v;
    }
    const currency = mapping.currency ?? get(c.currency)?.toUpperCase() ?? '';
    if (!isIsoCurrency(currency)) throw new StatementParseError(where, `currency "${currency}" is not an ISO 4217 currency`);
    inMinorUnits(amount, amountRaw, currency, where);
    const dateRaw = get(c.date);
    if (!dateRaw) throw new StatementParseError(where, `column "${mapping.date_column}" is empty`);
    const bookingDate = parseDate(dateRaw, mapping.date_format, where);
    const vd = get(c.valueDate);
    const account = get(c.account);
    transactions.push({
      amount: fixed(amount),
      currency,
      bookingDate,
      valueDate: vd ? parseDate(vd, mapping.date_format, where) : bookingDate,
      counterpartyName: get(c.name),
      counterpartyAccount: account,
      counterpartyIban: looksLikeIban(account) ? account!.replace(/\s+/g, '').toUpperCase() : null,
      counterpartyBankCode: null,
      remittanceInformation: get(c.remittance),
      bankReference: get(c.reference),
      endToEndId: get(c.e2e),
      transactionCode: get(c.code),
    });
  }
  const account = mapping.account.replace(/\s+/g, '');
  const iban = looksLikeIban(account) ? account.toUpperCase() : null;
  const currency = mapping.currency ?? transactions[0]?.currency;
  if (!currency) throw new StatementParseError(`line ${header.line + 1}`, 'the file has no transactions and no fixed currency');
  const dates = transactions.map((t) => t.bookingDate!).sort();
  return {
    statements: [
      {
        account: { identifier: iban ?? account, iban, accountNumber: account, bankCode: null, currency, name: null },
        statementNumber: null,
        statementDate: dates[dates.length - 1] ?? null,
        openingBalance: null,
        closingBalance: null,
        currency,
        transactions,
      },
    ],
  };
}
