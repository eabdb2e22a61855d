/**
 * Middleware push (spec 4.3 rules 16 and 17): per-record validation of SAP-style invoice and
 * customer records, and their mapping onto ledger rows. Pure: no I/O.
 *
 * Each record is checked on its own; a bad record yields a stable `error_code` and a `message`
 * naming the field(s), and does not stop the other records of the request.
 */
import { z } from 'zod';
import { currencyMinorUnits, emailSchema, findNul, idSchema, isIsoCurrency, Money } from '@rp/platform';
import type { DocumentUpsert, LineItemUpsert, PartnerUpsert } from '../store/ledger.js';

export const PUSH_ORIGIN = 'middleware';
export const MAX_PUSH_RECORDS = 100;

/** Stable per-record error codes (documented in the endpoints' OpenAPI descriptions and the README). */
export const PUSH_ERROR_CODES = {
  invalid_record: 'the record is not a JSON object',
  missing_field: 'a required field is absent, null or an empty string',
  invalid_field: 'a field has the wrong type or shape (e.g. a number where a string is expected, fiscal_year not 4 digits, a repeated line_number), or a string or key of the record contains the NUL character (U+0000)',
  invalid_currency: 'currency is not an ISO 4217 code (current or historic), upper case',
  invalid_date: 'a date is not a real calendar date written YYYY-MM-DD',
  invalid_amount: 'an amount is not a finite number (or decimal string), has more decimal places than its currency allows, or is too large',
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

/** A string field that may be absent, null or empty (all stored as null: see `blank`). */
const optionalText = z.string().nullish();

/** Absent, null and "" → null (kept out of the zod schema: a transform per field costs on the hot path). */
const blank = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

const requiredText = z.string().refine((v) => v.trim() !== '', 'is required');

const date = z.string().refine(isCalendarDate, { message: 'must be a real calendar date written YYYY-MM-DD', ...code('invalid_date') });

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

/**
 * The kernel's no-NUL rule (U+0000, which PostgreSQL refuses), per record: the push route opts out
 * of the request-wide check (`perRecordBody`) so that only the record carrying one is refused.
 */
function nulFailure<R>(record: unknown, remoteId: string | null, schema: z.ZodType): PushOutcome<R> | null {
  const found = findNul(record);
  if (found.length === 0) return null;
  const texts = found.map((f) => `${fieldPath(f.path)} ${f.key ? 'is a key that contains' : 'contains'} the NUL character (U+0000)`);
  // The message lists every problem of the record, as for any other failure.
  const parsed = schema.safeParse(record);
  if (!parsed.success) texts.push(...parsed.error.issues.map((i) => describe(record, i).text));
  return { ok: false, remoteId, errorCode: 'invalid_field', message: texts.join('; ') };
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
  description: optionalText.transform(blank),
  quantity: amount({ scale: 6, optional: true }).optional(),
  unit_amount: amount({ scale: 6, optional: true }).optional(),
  total_amount: amount({ scale: 4, optional: true }).optional(),
});

export const invoiceRecordSchema = z
  .object({
    document_number: requiredText,
    company_code: requiredText,
    fiscal_year: z.string().regex(/^\d{4}$/, 'must be a four-digit year'),
    customer_code: requiredText,
    currency: z.string().refine((c) => isIsoCurrency(c), { message: 'is not an ISO 4217 currency code (current or historic)', ...code('invalid_currency') }),
    debit_credit_indicator: z.string().refine((v) => v === 'S' || v === 'H', { message: 'must be S (invoice) or H (credit memo)', ...code('invalid_debit_credit_indicator') }),
    document_type: optionalText,
    invoice_doc_type: optionalText,
    exchange_rate: optionalText,
    reference: optionalText,
    assignment: optionalText,
    text: optionalText,
    reason_code: optionalText,
    clearing_document_number: optionalText,
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
const customerText = optionalText.transform(blank);

export const customerRecordSchema = z.object({
  customer_code: requiredText,
  name1: requiredText,
  name2: customerText,
  name3: customerText,
  street: customerText,
  house_num1: customerText,
  house_num2: customerText,
  post_code1: customerText,
  city1: customerText,
  city2: customerText,
  region: customerText,
  country: customerText,
  accounting_clerk: customerText,
  accounting_clerk_name: customerText,
  smtp_addr: optionalText.transform(blank).pipe(emailSchema().nullable()),
  tel_number: customerText,
  telnr_long: customerText,
  tax_jurisdiction: customerText,
  payment_method: customerText,
  search_term: customerText,
  vendor_account_number: customerText,
  company_code: customerText,
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
