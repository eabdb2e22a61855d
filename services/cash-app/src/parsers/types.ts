import { currencyMinorUnits, Money } from '@rp/platform';

export const STATEMENT_FORMATS = ['camt053', 'camt054', 'bai2', 'mt940', 'csv', 'json'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** One bank line as read from a statement file; amounts are signed decimal strings (credit > 0). */
export interface ParsedTransaction {
  amount: string;
  currency: string;
  valueDate: string | null;
  bookingDate: string | null;
  counterpartyName: string | null;
  counterpartyAccount: string | null;
  counterpartyIban: string | null;
  counterpartyBankCode: string | null;
  remittanceInformation: string | null;
  bankReference: string | null;
  endToEndId: string | null;
  /**
   * The bank's transaction type, normalised per format: CAMT `Domn/Fmly/SubFmly` (or the proprietary
   * code), BAI2 the 3-digit type code, MT940 the 4-character type (e.g. `NTRF`). A source that marks
   * the line as a reversal (MT940 RC/RD, CAMT RvslInd) gets the prefix `R:`.
   */
  transactionCode: string | null;
  /**
   * Where the line sits in a statement that has its own identity (`ParsedStatement.statementId`): CAMT
   * `<entry reference>:<entry position>[.<transaction position>]`. With the statement id it forms the
   * line's unique import id; absent for formats identified by content (see uniqueImportIds).
   */
  lineKey?: string;
}

export interface ParsedAccount {
  /** The account identifier used for bank_accounts and unique import ids: IBAN, else account number. */
  identifier: string;
  iban: string | null;
  accountNumber: string | null;
  bankCode: string | null;
  currency: string | null;
  name: string | null;
}

export interface ParsedStatement {
  account: ParsedAccount;
  /** The bank's own identity of the statement where the format has one (CAMT `Stmt/Id`), else null. */
  statementId?: string | null;
  statementNumber: string | null;
  statementDate: string | null;
  openingBalance: string | null;
  closingBalance: string | null;
  currency: string;
  /**
   * The currency the file states the balances in, where the format states it apart from the account
   * currency (CAMT `Bal/Amt@Ccy` beside `Acct/Ccy`, MT940 `:60F:` beside a currency in `:25:`). Null
   * or absent: the balances are in `currency`. A value other than `account.currency` is a file that
   * contradicts itself (checkStatements refuses it).
   */
  balanceCurrency?: string | null;
  transactions: ParsedTransaction[];
  /**
   * Where the statement starts in the file, for messages about the whole statement: `line 12`, or
   * the element path (`Document/BkToCstmrStmt/Stmt[2]`). Absent: the statement's position is named.
   */
  source?: string;
  /** What the parser noticed but could not decide (stored with the statement as warnings). */
  warnings?: string[];
  /** Entries of the file not imported: `notBooked`, CAMT entries whose status is not BOOK (pending, information only). */
  skipped?: { notBooked: number };
  /**
   * Set by checkStatements when the balances do not reconcile: `difference` = closing balance −
   * (opening balance + the entries), a decimal string in `currency` (the statement's); `message` says it in words.
   */
  balanceMismatch?: { difference: string; currency: string; message: string };
}

/**
 * What one file holds: its statements in file order (a month of daily MT940 statements, a CAMT
 * message with several `Stmt`, a BAI2 file with several accounts). Each becomes one statement record.
 * A parser of a format with one statement per file returns one.
 */
export interface ParsedFile {
  statements: ParsedStatement[];
  /** The character encoding the file was read in (set by parseStatementSteps; see encoding.ts). */
  encoding?: string;
}

/**
 * A parser written as a generator: it yields (the number of lines read so far) between batches of
 * lines, so an activity can heartbeat and let the event loop run while it parses a large file, and
 * the API can run the same code in one go (runParse). It returns every statement of the file.
 */
export type ParseSteps = Generator<number, ParsedFile, void>;

/** A parser's steps for one statement (the JSON form), wrapped as a file of one. */
export function* singleStatement(steps: Generator<number, ParsedStatement, void>): ParseSteps {
  return { statements: [yield* steps] };
}

/** Lines (or KiB of XML) between two yields of a parser. */
export const PARSE_BATCH = 500;

/** Runs a parser to its end without pausing (the upload request, tests). */
export function runParse<T>(steps: Generator<number, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs a parser, awaiting `pause(progress)` at each of its yields: the caller heartbeats there and
 * lets the event loop turn (so the worker's heartbeats and cancellations get through).
 */
export async function runParseAsync<T>(steps: Generator<number, T, void>, pause: (progress: number) => Promise<void>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause(r.value);
  }
}

/** A malformed file: `where` names the line (`line 7`) or the XML element path. */
export class StatementParseError extends Error {
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
    this.name = 'StatementParseError';
  }
}

/** What an amount column holds (NUMERIC(20, 4)): 16 digits before the decimal point, 4 after. */
const STORED_INTEGER_DIGITS = 16;
const STORED_DECIMALS = 4;

/**
 * The decimal number `raw`; throws a parse error naming `where` when it is not one, or when it cannot
 * be stored exactly (more than 16 digits before the point or 4 significant decimals): an amount is
 * never rounded on its way in.
 */
export function decimal(raw: string, where: string, what = 'amount'): Money {
  const s = raw.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(s)) throw new StatementParseError(where, `${what} "${raw}" is not a decimal number`);
  const m = new Money(s);
  if (m.decimalPlaces() > STORED_DECIMALS || m.abs().trunc().toFixed(0).length > STORED_INTEGER_DIGITS) {
    throw new StatementParseError(where, `${what} "${raw}" cannot be stored exactly: at most ${STORED_INTEGER_DIGITS} digits before the decimal point and ${STORED_DECIMALS} after`);
  }
  return m;
}

/**
 * `m` (read from `raw`) when it has no more decimals than `currency` has minor units (USD 2, JPY 0,
 * KWD 3; trailing zeros do not count); a parse error naming `where` otherwise: a bank amount is never
 * rounded to fit its currency.
 */
export function inMinorUnits(m: Money, raw: string, currency: string, where: string, what = 'amount'): Money {
  const places = currencyMinorUnits(currency);
  if (m.decimalPlaces() > places) {
    throw new StatementParseError(where, `${what} "${raw.trim()}" has more decimals than ${currency} has (${places}): amounts in ${currency} have at most ${places} decimal${places === 1 ? '' : 's'}`);
  }
  return m;
}

export function fixed(m: Money): string {
  return m.toFixed(4);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Validates a calendar date given as year, month, day; returns YYYY-MM-DD. */
export function calendarDate(y: number, m: number, d: number, where: string, raw: string): string {
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (!(m >= 1 && m <= 12 && d >= 1 && dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d)) {
    throw new StatementParseError(where, `"${raw}" is not a valid date`);
  }
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

export function isoDate(raw: string, where: string): string {
  const s = raw.trim().slice(0, 10);
  const m = ISO_DATE.exec(s);
  if (!m) throw new StatementParseError(where, `"${raw}" is not a date (YYYY-MM-DD)`);
  return calendarDate(Number(m[1]), Number(m[2]), Number(m[3]), where, raw);
}

/** YYMMDD (SWIFT/BAI2): years 00-79 are 20xx, 80-99 are 19xx. */
export function yymmdd(raw: string, where: string): string {
  if (!/^\d{6}$/.test(raw)) throw new StatementParseError(where, `"${raw}" is not a date (YYMMDD)`);
  const yy = Number(raw.slice(0, 2));
  return calendarDate(yy < 80 ? 2000 + yy : 1900 + yy, Number(raw.slice(2, 4)), Number(raw.slice(4, 6)), where, raw);
}

export function text(v: string | null | undefined): string | null {
  if (v == null) return null;
  const t = String(v).replace(/\s+/g, ' ').trim();
  return t === '' ? null : t;
}

const IBAN = /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/;
export function looksLikeIban(v: string | null): boolean {
  return v != null && IBAN.test(v.replace(/\s+/g, '').toUpperCase());
}

/** A parsed statement as an upload stores it: its fields without the lines, and the whole statement as JSON text. */
export interface StoredStatement {
  head: Omit<ParsedStatement, 'transactions'>;
  /** the statement with its lines, as stored with it for processing (bank_statements.parsed_statement) */
  json: string;
}

/**
 * A parsed file as an upload stores it (see StoredStatement). The statement-parse thread makes it, so
 * the lines cross back to the request as one string rather than as 100,000 objects that the event
 * loop would then copy and serialise again.
 */
export function storedFile(parsed: ParsedFile): { statements: StoredStatement[]; encoding?: string } {
  const statements = parsed.statements.map((s) => {
    const head: Partial<ParsedStatement> = { ...s };
    delete head.transactions;
    return { head: head as Omit<ParsedStatement, 'transactions'>, json: JSON.stringify(s) };
  });
  return parsed.encoding === undefined ? { statements } : { statements, encoding: parsed.encoding };
}
