/**
 * Middleware push (spec 4.3 rules 16 and 17): per-record validation of SAP-style invoice and
 * customer records, and their mapping onto ledger rows. Pure: no I/O.
 *
 * Each record is checked on its own; a bad record yields a stable `error_code` and a `message`
 * naming the field(s), and does not stop the other records of the request.
 */
import { z } from 'zod';
import { currencyMinorUnits, emailSchema, findInvalidText, idSchema, isIsoCurrency, Money, toWellFormed, wellFormed } from '@rp/platform';
import type { DocumentUpsert, LineItemUpsert, PartnerUpsert } from '../store/ledger.js';

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
} as const;
export type PushErrorCode = keyof typeof PUSH_ERROR_CODES;

export function errorCodesMarkdown(codes: readonly PushErrorCode[]): string {
  return codes.map((c) => `\`${c}\` (${PUSH_ERROR_CODES[c]})`).join(', ');
}

export type PushOutcome<R> =
  | { ok: true; remoteId: string; row: R }
  | { ok: false; remoteId: string | null; errorCode: PushErrorCode; message: string };

// ── amounts and dates ────────────────────────────────────────────────────────────────────────────

const DECIMAL_STRING = /^-?\d+(\.\d+)?$/;
const PLAIN_DECIMAL = /^-?0*(\d*?)(?:\.(\d*?)0*)?$/;

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

/** Significant digits of a plain decimal text (no exponent): leading and trailing zeros do not count. */
export function significantDigits(text: string): number {
  const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return digits.length;
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
  const m = PLAIN_DECIMAL.exec(text)!;
  return { text, places: m[2]?.length ?? 0, integerDigits: m[1]!.length };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Strict YYYY-MM-DD that names a real calendar day (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!);
}

const minorUnitsCache = new Map<string, number>();
/** currencyMinorUnits, memoized (it searches a list). */
function minorUnitsOf(currency: string): number {
  let n = minorUnitsCache.get(currency);
  if (n === undefined) minorUnitsCache.set(currency, (n = currencyMinorUnits(currency)));
  return n;
}

const code = (c: PushErrorCode) => ({ params: { code: c } });

/**
 * Longest accepted strings. SAP's own fields are shorter (KUNNR 10, NAME1 35, BELNR 10, XBLNR 16,
 * SGTXT 50, SMTP_ADDR 241), but middlewares push other ERPs too (QuickBooks names 100, Xero 255),
 * so the limits leave room for them while every stored (and indexed) value stays far below
 * PostgreSQL's index entry size: codes and keys 100, names and address parts 255, free text 1000,
 * email 254 (RFC 5321 path), phone numbers 64.
 */
export const PUSH_TEXT_MAX = { code: 100, name: 255, text: 1000, phone: 64 } as const;

const textMax = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** A string field that may be absent, null or empty (all stored as null: see `blank`). */
const optionalText = (max: number) => textMax(max).nullish();

/** Absent, null and "" → null (kept out of the zod schema: a transform per field costs on the hot path). */
const blank = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

const requiredText = (max: number) => textMax(max).refine((v) => v.trim() !== '', 'is required');

// maxLength documents what the refinement enforces (its own code, not a length error)
const date = z.string().meta({ maxLength: 10 }).refine(isCalendarDate, { message: 'must be a real calendar date written YYYY-MM-DD', ...code('invalid_date') });

const optionalDate = z
  .string()
  .nullish()
  .transform((v) => (v === undefined || v === null || v === '' ? null : v))
  .refine((v) => v === null || isCalendarDate(v), { message: 'must be a real calendar date written YYYY-MM-DD (or null)', ...code('invalid_date') });

/**
 * An exact amount: up to `scale` decimal places and below 10^(20-scale), i.e. it fits the
 * NUMERIC(20, scale) column without rounding. `optional`: absent or null gives null.
 */
function amount(opts: { scale: number; optional?: boolean }) {
  const integerDigits = 20 - opts.scale;
  return z.unknown().transform((value, ctx): ExactDecimal | null => {
    if (opts.optional && (value === undefined || value === null)) return null;
    const d = decimalOf(value);
    if (d === null) {
      ctx.addIssue({ code: 'custom', message: 'must be a finite number (or a decimal string)', ...code('invalid_amount') });
      return z.NEVER;
    }
    if (typeof value === 'number' && significantDigits(d.text) > MAX_NUMBER_SIGNIFICANT_DIGITS) {
      ctx.addIssue({
        code: 'custom',
        message: `has more than ${MAX_NUMBER_SIGNIFICANT_DIGITS} significant digits, more than a JSON number carries exactly (send it as a decimal string)`,
        ...code('invalid_amount'),
      });
      return z.NEVER;
    }
    if (d.places > opts.scale) {
      ctx.addIssue({ code: 'custom', message: `has more than ${opts.scale} decimal places`, ...code('invalid_amount') });
      return z.NEVER;
    }
    if (d.integerDigits > integerDigits) {
      ctx.addIssue({ code: 'custom', message: `is too large (at most ${integerDigits} integer digits)`, ...code('invalid_amount') });
      return z.NEVER;
    }
    return d;
  });
}

/** A business unit id (its existence in the organization is checked by the caller). */
const idFormat = idSchema();
const businessUnitId = z
  .unknown()
  .transform((v) => (v === undefined || v === null || v === '' ? null : v))
  .refine((v) => v === null || (typeof v === 'string' && idFormat.safeParse(v).success), {
    message: 'must be the id of a business unit of the organization',
    ...code('invalid_business_unit'),
  })
  .transform((v) => v as string | null)
  .optional();

// ── issues → error code and message ──────────────────────────────────────────────────────────────

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '');
}

function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = record;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function describe(record: unknown, issue: z.core.$ZodIssue): { code: PushErrorCode; text: string } {
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

function failure<R>(record: unknown, remoteId: string | null, error: z.ZodError): PushOutcome<R> {
  const described = error.issues.map((i) => describe(record, i));
  return { ok: false, remoteId, errorCode: described[0]!.code, message: described.map((d) => d.text).join('; ') };
}

/** How a field that is not text is named in a record's message. */
function fieldName(path: readonly PropertyKey[]): string {
  return fieldPath(path.map((p) => (typeof p === 'string' ? toWellFormed(p) : p)));
}

/**
 * The kernel's text rules, per record: no NUL (U+0000, which PostgreSQL refuses) and no lone
 * surrogate anywhere in the record, keys included. The push route opts out of the request-wide
 * checks (`perRecordBody`) so that only the record carrying one is refused.
 */
function nulFailure<R>(record: unknown, remoteId: string | null, schema: z.ZodType): PushOutcome<R> | null {
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

function remoteIdOf(record: unknown, field: string): string | null {
  const v = record !== null && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

function notAnObject<R>(): PushOutcome<R> {
  return { ok: false, remoteId: null, errorCode: 'invalid_record', message: 'record must be a JSON object' };
}

const isPlainObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

// ── invoices (rule 16) ───────────────────────────────────────────────────────────────────────────

const lineItemSchema = z.object({
  line_number: z.number().int().min(0),
  description: optionalText(PUSH_TEXT_MAX.text).transform(blank),
  quantity: amount({ scale: 6, optional: true }).optional(),
  unit_amount: amount({ scale: 6, optional: true }).optional(),
  total_amount: amount({ scale: 4, optional: true }).optional(),
});

export const invoiceRecordSchema = z
  .object({
    document_number: requiredText(PUSH_TEXT_MAX.code),
    company_code: requiredText(PUSH_TEXT_MAX.code),
    fiscal_year: z.string().regex(/^\d{4}$/, 'must be a four-digit year'),
    customer_code: requiredText(PUSH_TEXT_MAX.code),
    currency: z.string().meta({ maxLength: 3 }).refine((c) => isIsoCurrency(c), { message: 'is not an ISO 4217 currency code (current or historic)', ...code('invalid_currency') }),
    debit_credit_indicator: z.string().meta({ maxLength: 1 }).refine((v) => v === 'S' || v === 'H', { message: 'must be S (invoice) or H (credit memo)', ...code('invalid_debit_credit_indicator') }),
    document_type: optionalText(PUSH_TEXT_MAX.code),
    invoice_doc_type: optionalText(PUSH_TEXT_MAX.code),
    exchange_rate: optionalText(PUSH_TEXT_MAX.code),
    reference: optionalText(PUSH_TEXT_MAX.code),
    assignment: optionalText(PUSH_TEXT_MAX.code),
    text: optionalText(PUSH_TEXT_MAX.text),
    reason_code: optionalText(PUSH_TEXT_MAX.code),
    clearing_document_number: optionalText(PUSH_TEXT_MAX.code),
    document_date: date,
    net_due_date: date,
    posting_date: optionalDate,
    clearing_date: optionalDate,
    amount_in_document_currency: amount({ scale: 4 }),
    amount_in_local_currency: amount({ scale: 4, optional: true }).optional(),
    status_open: z.boolean(),
    amount_open: amount({ scale: 4, optional: true }).optional(),
    line_items: z
      .array(lineItemSchema)
      .max(1000)
      .nullish()
      .transform((v) => v ?? []),
    business_unit_id: businessUnitId,
  })
  .superRefine((r, ctx) => {
    const minor = minorUnitsOf(r.currency);
    const tooPrecise = (d: ExactDecimal | null | undefined) => d != null && d.places > minor;
    if (tooPrecise(r.amount_in_document_currency)) {
      ctx.addIssue({ code: 'custom', path: ['amount_in_document_currency'], message: `has more than ${minor} decimal places (the minor unit of ${r.currency})`, ...code('invalid_amount') });
    }
    if (r.amount_open != null) {
      const open = new Money(r.amount_open.text);
      if (tooPrecise(r.amount_open)) {
        ctx.addIssue({ code: 'custom', path: ['amount_open'], message: `has more than ${minor} decimal places (the minor unit of ${r.currency})`, ...code('invalid_amount') });
      } else if (open.isNegative() || (r.amount_in_document_currency && open.gt(new Money(r.amount_in_document_currency.text).abs()))) {
        ctx.addIssue({ code: 'custom', path: ['amount_open'], message: 'must be between 0 and the document amount', ...code('invalid_amount') });
      } else if (!r.status_open && !open.isZero()) {
        ctx.addIssue({ code: 'custom', path: ['amount_open'], message: 'must be 0 (or absent) when status_open is false', ...code('invalid_amount') });
      }
    }
    const seen = new Set<number>();
    r.line_items.forEach((li, i) => {
      if (tooPrecise(li.total_amount)) {
        ctx.addIssue({ code: 'custom', path: ['line_items', i, 'total_amount'], message: `has more than ${minor} decimal places (the minor unit of ${r.currency})`, ...code('invalid_amount') });
      }
      if (seen.has(li.line_number)) ctx.addIssue({ code: 'custom', path: ['line_items', i, 'line_number'], message: 'repeats another line item\'s line_number', ...code('invalid_field') });
      seen.add(li.line_number);
    });
  });

export type ValidInvoice = DocumentUpsert & { business_unit_id: string | null; line_items: LineItemUpsert[] };

/**
 * Validate one pushed invoice/credit-memo record. `localMinorUnits`: decimal places of the
 * organization's base currency, the currency of `amount_in_local_currency`.
 */
export function validateInvoice(record: unknown, localMinorUnits: number): PushOutcome<ValidInvoice> {
  if (!isPlainObject(record)) return notAnObject();
  const remoteId = remoteIdOf(record, 'document_number');
  const nul = nulFailure<ValidInvoice>(record, remoteId, invoiceRecordSchema);
  if (nul) return nul;
  const parsed = invoiceRecordSchema.safeParse(record);
  if (!parsed.success) return failure(record, remoteId, parsed.error);
  const r = parsed.data;
  if (r.amount_in_local_currency != null && r.amount_in_local_currency.places > localMinorUnits) {
    return {
      ok: false,
      remoteId,
      errorCode: 'invalid_amount',
      message: `amount_in_local_currency has more than ${localMinorUnits} decimal places (the minor unit of the organization's base currency)`,
    };
  }
  const amountDoc = r.amount_in_document_currency!.text; // required: never null here
  return {
    ok: true,
    remoteId: r.document_number,
    row: {
      kind: r.debit_credit_indicator === 'H' ? 'credit_memo' : 'invoice',
      company_code: r.company_code,
      fiscal_year: r.fiscal_year,
      document_number: r.document_number,
      remote_id: r.document_number,
      customer_code: r.customer_code,
      business_unit_id: r.business_unit_id ?? null,
      currency: r.currency,
      document_type: blank(r.document_type),
      invoice_doc_type: blank(r.invoice_doc_type),
      exchange_rate: blank(r.exchange_rate),
      reference: blank(r.reference),
      assignment: blank(r.assignment),
      text: blank(r.text),
      reason_code: blank(r.reason_code),
      clearing_document_number: blank(r.clearing_document_number),
      document_date: r.document_date,
      net_due_date: r.net_due_date,
      posting_date: r.posting_date,
      clearing_date: r.clearing_date,
      amount_in_document_currency: amountDoc,
      amount_in_local_currency: r.amount_in_local_currency?.text ?? null,
      // the ERP's open amount (optional extension, e.g. after a partial payment), else the whole amount while open
      amount_open: r.status_open ? (r.amount_open?.text ?? amountDoc) : '0',
      status_open: r.status_open,
      line_items: r.line_items.map((li) => ({
        line_number: li.line_number,
        description: li.description,
        quantity: li.quantity?.text ?? null,
        unit_amount: li.unit_amount?.text ?? null,
        total_amount: li.total_amount?.text ?? null,
      })),
    },
  };
}

// ── customers (rule 17) ──────────────────────────────────────────────────────────────────────────

/** Customer text fields normalized in the schema (absent, null, "" → null); the customer path is not the hot one. */
const customerText = (max: number) => optionalText(max).transform(blank);

export const customerRecordSchema = z.object({
  customer_code: requiredText(PUSH_TEXT_MAX.code),
  name1: requiredText(PUSH_TEXT_MAX.name),
  name2: customerText(PUSH_TEXT_MAX.name),
  name3: customerText(PUSH_TEXT_MAX.name),
  street: customerText(PUSH_TEXT_MAX.name),
  house_num1: customerText(PUSH_TEXT_MAX.code),
  house_num2: customerText(PUSH_TEXT_MAX.code),
  post_code1: customerText(PUSH_TEXT_MAX.code),
  city1: customerText(PUSH_TEXT_MAX.name),
  city2: customerText(PUSH_TEXT_MAX.name),
  region: customerText(PUSH_TEXT_MAX.code),
  country: customerText(PUSH_TEXT_MAX.code),
  accounting_clerk: customerText(PUSH_TEXT_MAX.code),
  accounting_clerk_name: customerText(PUSH_TEXT_MAX.name),
  smtp_addr: optionalText(254).transform(blank).pipe(emailSchema().nullable()),
  tel_number: customerText(PUSH_TEXT_MAX.phone),
  telnr_long: customerText(PUSH_TEXT_MAX.phone),
  tax_jurisdiction: customerText(PUSH_TEXT_MAX.code),
  payment_method: customerText(PUSH_TEXT_MAX.code),
  search_term: customerText(PUSH_TEXT_MAX.name),
  vendor_account_number: customerText(PUSH_TEXT_MAX.code),
  company_code: customerText(PUSH_TEXT_MAX.code),
  business_unit_id: businessUnitId,
});

type CustomerFields = z.output<typeof customerRecordSchema>;

const joinNonEmpty = (parts: (string | null)[]) => parts.filter((p): p is string => p !== null && p.trim() !== '').join(' ');

/** The SAP-style customer fields mapped onto a partner (the mapping is documented on the endpoint). */
export function partnerFromCustomer(r: CustomerFields): PartnerUpsert & { business_unit_id: string | null } {
  const address = {
    line1: joinNonEmpty([r.street, r.house_num1, r.house_num2]) || null,
    street: r.street,
    house_number: r.house_num1,
    house_number_supplement: r.house_num2,
    postal_code: r.post_code1,
    city: r.city1,
    district: r.city2,
    region: r.region,
    country: r.country,
  };
  return {
    remote_id: r.customer_code,
    account_number: r.customer_code,
    name: r.name1,
    legal_name: joinNonEmpty([r.name1, r.name2, r.name3]),
    email: r.smtp_addr,
    phone: r.telnr_long ?? r.tel_number,
    company_code: r.company_code,
    search_term: r.search_term,
    business_unit_id: r.business_unit_id ?? null,
    address: Object.fromEntries(Object.entries(address).filter(([, v]) => v !== null)),
    attributes: Object.fromEntries(
      Object.entries({
        name2: r.name2,
        name3: r.name3,
        accounting_clerk: r.accounting_clerk,
        accounting_clerk_name: r.accounting_clerk_name,
        tel_number: r.tel_number,
        telnr_long: r.telnr_long,
        tax_jurisdiction: r.tax_jurisdiction,
        payment_method: r.payment_method,
        vendor_account_number: r.vendor_account_number,
      }).filter(([, v]) => v !== null),
    ),
  };
}

export type ValidCustomer = ReturnType<typeof partnerFromCustomer>;

export function validateCustomer(record: unknown): PushOutcome<ValidCustomer> {
  if (!isPlainObject(record)) return notAnObject();
  const remoteId = remoteIdOf(record, 'customer_code');
  const nul = nulFailure<ValidCustomer>(record, remoteId, customerRecordSchema);
  if (nul) return nul;
  const parsed = customerRecordSchema.safeParse(record);
  if (!parsed.success) return failure(record, remoteId, parsed.error);
  return { ok: true, remoteId: parsed.data.customer_code, row: partnerFromCustomer(parsed.data) };
}

/** Mark records whose business unit is not one of the organization's (`known`). */
export function rejectUnknownBusinessUnits<R extends { business_unit_id: string | null }>(outcomes: PushOutcome<R>[], known: ReadonlySet<string>): PushOutcome<R>[] {
  return outcomes.map((o) =>
    o.ok && o.row.business_unit_id !== null && !known.has(o.row.business_unit_id)
      ? { ok: false, remoteId: o.remoteId, errorCode: 'invalid_business_unit', message: 'business_unit_id is not a business unit of the organization' }
      : o,
  );
}
