/**
 * The building blocks of middleware push records (spec 4.3 rules 16 and 17): the error codes, exact
 * decimals and calendar dates, the field schemas, and how a failed record is described (a stable
 * `error_code` and a `message` naming the field(s)). Pure: no I/O.
 */
import { z } from 'zod';
import { currencyMinorUnits, findInvalidText, idSchema, Money, toWellFormed, wellFormed } from '@rp/platform';

export const PUSH_ORIGIN = 'middleware';
export const MAX_PUSH_RECORDS = 100;

/** Stable per-record error codes (documented in the endpoints' OpenAPI descriptions and docs/integrations.md). */
export const PUSH_ERROR_CODES = {
  invalid_record: 'the record is not a JSON object',
  missing_field: 'a required field is absent, null or an empty string',
  invalid_field:
    'a field has the wrong type or shape (e.g. a number where a string is expected, fiscal_year not 4 digits, a repeated line_number), a string is longer than its documented maximum, ' +
    'or a string or key of the record contains the NUL character (U+0000) or a lone surrogate (an unpaired UTF-16 escape such as \\ud800)',
  invalid_currency: 'currency is not an ISO 4217 code (current or historic), upper case',
  invalid_date: 'a date is not a real calendar date written YYYY-MM-DD',
  invalid_amount:
    'an amount is not a finite number (or decimal string), has more decimal places than its currency allows, is a JSON number of more than 15 significant digits (not exact: send a decimal string), or is too large',
  invalid_debit_credit_indicator: 'debit_credit_indicator is neither S (invoice) nor H (credit memo)',
  invalid_email: 'smtp_addr is not an email address',
  invalid_business_unit: 'business_unit_id is not a business unit of the organization',
  invalid_bank_account:
    'a bank_accounts entry is neither an IBAN with valid ISO 13616 check digits (mod 97) and its country\'s length nor an account_number with a bank_code (letters and digits), or bank_accounts has more than 20 entries',
  invalid_discount_term: 'a discount_terms percent is not a decimal above 0 and below 100 with at most 4 decimals, two terms share a due_date, or there are more than 3 terms',
} as const;
export type PushErrorCode = keyof typeof PUSH_ERROR_CODES;

export function errorCodesMarkdown(codes: readonly PushErrorCode[]): string {
  return codes.map((c) => `\`${c}\` (${PUSH_ERROR_CODES[c]})`).join(', ');
}

export type PushOutcome<R> =
  | { ok: true; remoteId: string; row: R }
  | { ok: false; remoteId: string | null; errorCode: PushErrorCode; message: string };

// ── amounts and dates ────────────────────────────────────────────────────────────────────────────

export const DECIMAL_STRING = /^-?\d+(\.\d+)?$/;
export const PLAIN_DECIMAL = /^-?0*(\d*?)(?:\.(\d*?)0*)?$/;

/** An exact decimal: its text (for NUMERIC), decimal places and integer digits (without leading/trailing zeros). */
export interface ExactDecimal {
  text: string;
  places: number;
  integerDigits: number;
}

/**
 * Significant digits a JSON number can carry exactly: any decimal text of at most 15 significant
 * digits parses to a double whose shortest form (`String(n)`) is that text again (IEEE 754
 * binary64, DBL_DIG = 15). A number whose shortest form has more was sent with more than 15 digits
 * and has been rounded by the JSON parser (12345678901234567.89 arrives as 12345678901234568), so
 * it is refused: such amounts are sent as decimal strings, which are taken as written.
 */
export const MAX_NUMBER_SIGNIFICANT_DIGITS = 15;

const ZERO = 48;
const DOT = 46;
const MINUS = 45;

/**
 * Significant digits of a plain decimal text (no exponent): leading and trailing zeros do not
 * count. One scan of the characters (no intermediate strings: it runs for every pushed amount).
 */
export function significantDigits(text: string): number {
  let first = -1;
  let last = -1;
  let count = 0; // digits seen, the sign and the point skipped
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === MINUS || c === DOT) continue;
    count++;
    if (c !== ZERO) {
      if (first < 0) first = count;
      last = count;
    }
  }
  return first < 0 ? 0 : last - first + 1;
}

/**
 * An amount as an exact decimal. JSON numbers are taken as their shortest decimal representation
 * (what `String(n)` prints: 0.1 → "0.1", 1e-7 → "0.0000001"), never through float arithmetic;
 * decimal strings ("1190.50") are accepted too. Null for anything else (NaN, Infinity, booleans,
 * "1,50", "1e3"). Plain string work on the hot path; decimal.js only expands exponent notation.
 */
export function decimalOf(value: unknown): ExactDecimal | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    text = String(value);
    if (text.includes('e')) text = new Money(text).toFixed();
  } else if (typeof value === 'string' && DECIMAL_STRING.test(value)) {
    text = value;
  } else {
    return null;
  }
  return { text, ...digitsOf(text) };
}

/**
 * Decimal places and integer digits of a plain decimal text, without leading zeros of the integer
 * part nor trailing zeros of the fraction ("007.50": 1 integer digit, 1 place), as PLAIN_DECIMAL
 * reads them; a scan instead of the regular expression (it runs for every pushed amount).
 */
function digitsOf(text: string): { places: number; integerDigits: number } {
  const dot = text.indexOf('.');
  const integerEnd = dot < 0 ? text.length : dot;
  let i = text.charCodeAt(0) === MINUS ? 1 : 0;
  while (i < integerEnd && text.charCodeAt(i) === ZERO) i++;
  if (dot < 0) return { places: 0, integerDigits: integerEnd - i };
  let end = text.length;
  while (end > dot + 1 && text.charCodeAt(end - 1) === ZERO) end--;
  return { places: end - dot - 1, integerDigits: integerEnd - i };
}

export const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Strict YYYY-MM-DD that names a real calendar day (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!);
}

export const minorUnitsCache = new Map<string, number>();
/** currencyMinorUnits, memoized (it searches a list). */
export function minorUnitsOf(currency: string): number {
  let n = minorUnitsCache.get(currency);
  if (n === undefined) minorUnitsCache.set(currency, (n = currencyMinorUnits(currency)));
  return n;
}

export const code = (c: PushErrorCode) => ({ params: { code: c } });

/**
 * Longest accepted strings. SAP's own fields are shorter (KUNNR 10, NAME1 35, BELNR 10, XBLNR 16,
 * SGTXT 50, SMTP_ADDR 241), but middlewares push other ERPs too (QuickBooks names 100, Xero 255),
 * so the limits leave room for them while every stored (and indexed) value stays far below
 * PostgreSQL's index entry size: codes and keys 100, names and address parts 255, free text 1000,
 * email 254 (RFC 5321 path), phone numbers 64.
 */
export const PUSH_TEXT_MAX = { code: 100, name: 255, text: 1000, phone: 64 } as const;

export const textMax = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** A string field that may be absent, null or empty (all stored as null: see `blank`). */
export const optionalText = (max: number) => textMax(max).nullish();

/** Absent, null and "" → null (kept out of the zod schema: a transform per field costs on the hot path). */
export const blank = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

export const requiredText = (max: number) => textMax(max).refine((v) => v.trim() !== '', 'is required');

// maxLength documents what the refinement enforces (its own code, not a length error)
export const date = z.string().meta({ maxLength: 10 }).refine(isCalendarDate, { message: 'must be a real calendar date written YYYY-MM-DD', ...code('invalid_date') });

export const optionalDate = z
  .string()
  .nullish()
  .transform((v) => (v === undefined || v === null || v === '' ? null : v))
  .refine((v) => v === null || isCalendarDate(v), { message: 'must be a real calendar date written YYYY-MM-DD (or null)', ...code('invalid_date') });

/**
 * An exact amount: up to `scale` decimal places and below 10^(20-scale), i.e. it fits the
 * NUMERIC(20, scale) column without rounding: the decimal, or what is wrong with `value`. Shared by
 * the schema (`amount`) and the push's fast path, so both judge an amount alike.
 */
export function exactAmount(value: unknown, scale: number): ExactDecimal | string {
  const d = decimalOf(value);
  if (d === null) return 'must be a finite number (or a decimal string)';
  if (typeof value === 'number' && significantDigits(d.text) > MAX_NUMBER_SIGNIFICANT_DIGITS) {
    return `has more than ${MAX_NUMBER_SIGNIFICANT_DIGITS} significant digits, more than a JSON number carries exactly (send it as a decimal string)`;
  }
  if (d.places > scale) return `has more than ${scale} decimal places`;
  if (d.integerDigits > 20 - scale) return `is too large (at most ${20 - scale} integer digits)`;
  return d;
}

/** {@link exactAmount} as a schema (`invalid_amount`). `optional`: absent or null gives null. */
export function amount(opts: { scale: number; optional?: boolean }) {
  return z.unknown().transform((value, ctx): ExactDecimal | null => {
    if (opts.optional && (value === undefined || value === null)) return null;
    const d = exactAmount(value, opts.scale);
    if (typeof d === 'string') {
      ctx.addIssue({ code: 'custom', message: d, ...code('invalid_amount') });
      return z.NEVER;
    }
    return d;
  });
}

/** A business unit id (its existence in the organization is checked by the caller). */
export const idFormat = idSchema();
export const businessUnitId = z
  .unknown()
  .transform((v) => (v === undefined || v === null || v === '' ? null : v))
  .refine((v) => v === null || (typeof v === 'string' && idFormat.safeParse(v).success), {
    message: 'must be the id of a business unit of the organization',
    ...code('invalid_business_unit'),
  })
  .transform((v) => v as string | null)
  .optional();

// ── issues → error code and message ──────────────────────────────────────────────────────────────

export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '');
}

export function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = record;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

export function describe(record: unknown, issue: z.core.$ZodIssue): { code: PushErrorCode; text: string } {
  const field = fieldPath(issue.path);
  const value = valueAt(record, issue.path);
  // Only required fields raise issues for absent/null/blank values (optional ones map them to null).
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    return { code: 'missing_field', text: `${field} is required` };
  }
  const custom = issue.code === 'custom' ? (issue.params?.code as PushErrorCode | undefined) : undefined;
  if (custom) return { code: custom, text: `${field} ${issue.message}` };
  if (issue.code === 'invalid_format' && issue.format === 'email') return { code: 'invalid_email', text: `${field} is not an email address` };
  return { code: 'invalid_field', text: `${field}: ${issue.message}` };
}

export function failure<R>(record: unknown, remoteId: string | null, error: z.ZodError): PushOutcome<R> {
  const described = error.issues.map((i) => describe(record, i));
  return { ok: false, remoteId, errorCode: described[0]!.code, message: described.map((d) => d.text).join('; ') };
}

/** How a field that is not text is named in a record's message. */
export function fieldName(path: readonly PropertyKey[]): string {
  return fieldPath(path.map((p) => (typeof p === 'string' ? toWellFormed(p) : p)));
}

/**
 * The kernel's text rules, per record: no NUL (U+0000, which PostgreSQL refuses) and no lone
 * surrogate anywhere in the record, keys included. The push route opts out of the request-wide
 * checks (`perRecordBody`) so that only the record carrying one is refused.
 */
export function nulFailure<R>(record: unknown, remoteId: string | null, schema: z.ZodType): PushOutcome<R> | null {
  const found = findInvalidText(record);
  if (found.length === 0) return null;
  const texts = found.map(
    (f) =>
      `${fieldName(f.path)} ${f.key ? 'is a key that contains' : 'contains'} ${f.problem === 'nul' ? 'the NUL character (U+0000)' : 'a lone surrogate (an unpaired UTF-16 escape such as \\ud800), which is not text'}`,
  );
  // The message lists every problem of the record, as for any other failure.
  const parsed = schema.safeParse(record);
  if (!parsed.success) texts.push(...parsed.error.issues.map((i) => describe(record, i).text));
  return { ok: false, remoteId: remoteId !== null && !wellFormed(remoteId) ? null : remoteId, errorCode: 'invalid_field', message: texts.join('; ') };
}

export function remoteIdOf(record: unknown, field: string): string | null {
  const v = record !== null && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

export function notAnObject<R>(): PushOutcome<R> {
  return { ok: false, remoteId: null, errorCode: 'invalid_record', message: 'record must be a JSON object' };
}

export const isPlainObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
