import { currencyMinorUnits, Money, sumMoney } from '@rp/platform';
import { parseBai2Steps } from './bai2.js';
import { parseCamt053Steps, parseCamt054Steps } from './camt053.js';
import { csvMappingSchema, parseCsvSteps } from './csv.js';
import { decodeStatementText } from './encoding.js';
import { parseJsonStatementFileSteps } from './json.js';
import { parseMt940Steps } from './mt940.js';
import { fixed, runParse, StatementParseError, type ParsedFile, type ParsedStatement, type ParseSteps, type StatementFormat } from './types.js';

export * from './types.js';
export { csvMappingSchema, type CsvMapping } from './csv.js';
export { jsonStatementSchema, jsonStatementShape, fromJsonStatement, type JsonStatement } from './json.js';
export { charsetSupported, decodeStatementText, DETECTED_CHARSETS } from './encoding.js';

/**
 * Parse a statement file in `format` into its statements (in file order). `options` is what was
 * stored with the statement (the CSV column mapping; `charset`, the file's character encoding, else
 * detected: see encoding.ts). Throws StatementParseError naming the line or element of the first problem.
 */
export function parseStatement(format: StatementFormat, content: Buffer, options: Record<string, unknown> = {}): ParsedFile {
  return runParse(parseStatementSteps(format, content, options));
}

/**
 * parseStatement as ParseSteps: the parser yields between batches of lines; drive it with
 * runParseAsync to heartbeat and let the event loop run while a large file is read. The answer's
 * `encoding` says which character encoding the file was read in.
 */
export function* parseStatementSteps(format: StatementFormat, content: Buffer, options: Record<string, unknown> = {}): ParseSteps {
  const { utf8, encoding } = decodeStatementText(content, typeof options.charset === 'string' ? options.charset : null);
  const file = yield* parserOf(format, utf8, options);
  return { ...file, encoding };
}

function parserOf(format: StatementFormat, content: Buffer, options: Record<string, unknown>): ParseSteps {
  switch (format) {
    case 'camt053':
      return parseCamt053Steps(content);
    case 'camt054':
      return parseCamt054Steps(content);
    case 'bai2':
      return parseBai2Steps(content);
    case 'mt940':
      return parseMt940Steps(content);
    case 'csv': {
      const mapping = csvMappingSchema.safeParse(options.mapping);
      if (!mapping.success) throw new StatementParseError('mapping', mapping.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return parseCsvSteps(content, mapping.data);
    }
    case 'json':
      return parseJsonStatementFileSteps(content);
  }
}

/** How messages name a statement of a file: its position, number and where it starts. */
export function statementLabel(s: ParsedStatement, index: number): string {
  const parts = [s.statementNumber ? `number ${s.statementNumber}` : null, s.source ?? null].filter(Boolean);
  return `statement ${index + 1}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/**
 * What a file must agree with itself on, for every format (StatementParseError otherwise, at the
 * statement's `source`, naming the statements):
 *
 * - balances in the account's currency: a balance currency that differs from the account currency the
 *   file states is a contradiction;
 * - balances in sequence: for consecutive statements of one account in the file, each opening
 *   balance equals the closing balance before it.
 *
 * Opening balance + the sum of the entries = closing balance is checked where the file gives both
 * balances and every entry is in the statement currency (otherwise a warning says it could not be).
 * Real bank files do not always reconcile (a booked entry dated the next day left out of the closing
 * balance), so a difference does not refuse the file: the statement gets `balanceMismatch` (the
 * difference in its currency) and a warning saying it, and is approved only with the mismatch acknowledged.
 */
export function checkStatements(file: ParsedFile): void {
  const lastOf = new Map<string, { s: ParsedStatement; i: number }>();
  file.statements.forEach((s, i) => {
    const label = statementLabel(s, i);
    // the error names where the statement starts; its text names the statement when that is not already said
    const where = s.source ?? label;
    const subject = s.source ? `${label}: ` : '';
    const accountCcy = s.account.currency ?? s.currency;
    if (s.balanceCurrency && accountCcy && s.balanceCurrency !== accountCcy) {
      throw new StatementParseError(where, `${subject}the statement states its balances in ${s.balanceCurrency}, but the account's currency is ${accountCcy}: the file contradicts itself`);
    }
    if (s.openingBalance != null && s.closingBalance != null) {
      if (s.transactions.every((t) => t.currency === s.currency)) {
        const entries = sumMoney(s.transactions.map((t) => t.amount));
        const expected = new Money(s.openingBalance).plus(entries);
        if (!expected.eq(s.closingBalance)) {
          const ccy = s.currency;
          const difference = new Money(s.closingBalance).minus(expected);
          const message =
            `the balances do not reconcile: opening balance ${inCurrency(s.openingBalance, ccy)} + ${s.transactions.length} entries (${inCurrency(fixed(entries), ccy)}) = ` +
            `${inCurrency(fixed(expected), ccy)}, but the closing balance is ${inCurrency(s.closingBalance, ccy)}: a difference of ${inCurrency(fixed(difference), ccy)}`;
          s.balanceMismatch = { difference: fixed(difference), currency: ccy, message };
          (s.warnings ??= []).push(message);
        }
      } else {
        (s.warnings ??= []).push(`balances not checked: the statement has entries in a currency other than ${s.currency}`);
      }
    }
    const prev = lastOf.get(s.account.identifier);
    if (prev && prev.s.closingBalance != null && s.openingBalance != null && !new Money(prev.s.closingBalance).eq(s.openingBalance)) {
      throw new StatementParseError(
        where,
        `${subject}the statement opens with ${plain(s.openingBalance)}, but ${statementLabel(prev.s, prev.i)} of account ${s.account.identifier} before it closes with ` +
          `${plain(prev.s.closingBalance)}: the balances are not in sequence (a statement is missing or out of order)`,
      );
    }
    lastOf.set(s.account.identifier, { s, i });
  });
}

/** An amount with its currency, to the currency's minor units ("-27.0000", EUR → "-27.00 EUR"; JPY "1500 JPY"). */
function inCurrency(v: string, currency: string): string {
  const m = new Money(v);
  const places = currencyMinorUnits(currency);
  return `${m.toFixed(Math.max(places, m.decimalPlaces()))} ${currency}`;
}

/** A decimal without trailing zeros beyond two places ("5000.0000" → "5000.00"). */
function plain(v: string): string {
  return v.replace(/^(-?\d+\.\d\d)0+$/, '$1');
}
export { detectStatementFormat, type Detection } from './detect.js';
