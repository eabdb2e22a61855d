/**
 * The fast path of an invoice push record (spec 4.3 rule 16): the common record — every field of
 * the documented type and within its limits, no discount terms, no `amount_open` — read in one
 * pass of plain checks instead of the zod schema, whose per-field wrappers cost more than the
 * checks themselves on a push of thousands of records. It only ever says "valid, with these
 * fields" or "not sure": every check here is at least as strict as the schema's (same limits,
 * same helpers), and a record it does not accept goes through `invoiceRecordSchema`, which
 * decides it and words every error. So results, errors and stored rows are those of the schema.
 */
import { isIsoCurrency } from '@rp/platform';
import type { DiscountTermUpsert } from '../types.js';
import { exactAmount, idFormat, isCalendarDate, isPlainObject, minorUnitsOf, PUSH_TEXT_MAX, type ExactDecimal } from './push-fields.js';

/** The invoice record's fields as the schema outputs them (push-records.ts `InvoiceFields`). */
export interface FastInvoiceFields {
  document_number: string;
  company_code: string;
  fiscal_year: string;
  customer_code: string;
  currency: string;
  debit_credit_indicator: 'S' | 'H';
  document_type?: string | null;
  invoice_doc_type?: string | null;
  exchange_rate?: string | null;
  reference?: string | null;
  assignment?: string | null;
  text?: string | null;
  reason_code?: string | null;
  clearing_document_number?: string | null;
  document_date: string;
  net_due_date: string;
  posting_date: string | null;
  clearing_date: string | null;
  amount_in_document_currency: ExactDecimal | null;
  amount_in_local_currency?: ExactDecimal | null;
  status_open: boolean;
  amount_open?: ExactDecimal | null;
  line_items: { line_number: number; description: string | null; quantity?: ExactDecimal | null; unit_amount?: ExactDecimal | null; total_amount?: ExactDecimal | null }[];
  discount_terms: DiscountTermUpsert[];
  business_unit_id?: string | null;
}

/** Thrown inside the fast path (one instance: no stack captured per record): the record needs the schema. Never escapes `fastInvoiceFields`. */
const NOT_SURE = new Error('the schema decides this record');

function required(v: unknown, max: number): string {
  if (typeof v !== 'string' || v.length > max || v.trim() === '') throw NOT_SURE;
  return v;
}

function optional(v: unknown, max: number): string | null | undefined {
  if (v === undefined || v === null || (typeof v === 'string' && v.length <= max)) return v;
  throw NOT_SURE;
}

function calendarDate(v: unknown): string {
  if (typeof v !== 'string' || !isCalendarDate(v)) throw NOT_SURE;
  return v;
}

function optionalDate(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  return calendarDate(v);
}

/** An amount; `optionalValue`: null stays null and absent stays absent (undefined), as the schema's `amount(…).optional()`. */
function decimal(v: unknown, scale: number, optionalValue: true): ExactDecimal | null | undefined;
function decimal(v: unknown, scale: number, optionalValue: false): ExactDecimal;
function decimal(v: unknown, scale: number, optionalValue: boolean): ExactDecimal | null | undefined {
  if (optionalValue && (v === undefined || v === null)) return v;
  const d = exactAmount(v, scale);
  if (typeof d === 'string') throw NOT_SURE;
  return d;
}

const BLANK = (v: unknown): string | null => {
  const s = optional(v, PUSH_TEXT_MAX.text);
  return s === undefined || s === null || s === '' ? null : s;
};

function lineItems(v: unknown, minor: number): FastInvoiceFields['line_items'] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > 1000) throw NOT_SURE;
  const seen = new Set<number>();
  return v.map((li: unknown) => {
    if (!isPlainObject(li)) throw NOT_SURE;
    const o = li as Record<string, unknown>;
    const n = o.line_number;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || seen.has(n)) throw NOT_SURE;
    seen.add(n);
    const total = decimal(o.total_amount, 4, true);
    if (total != null && total.places > minor) throw NOT_SURE;
    return { line_number: n, description: BLANK(o.description), quantity: decimal(o.quantity, 6, true), unit_amount: decimal(o.unit_amount, 6, true), total_amount: total };
  });
}

function businessUnit(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string' && idFormat.safeParse(v).success) return v;
  throw NOT_SURE;
}

/**
 * The record's fields when it is a common, valid invoice record (what `invoiceRecordSchema` would
 * output for it); null when the schema must decide (any problem, or a rarer field).
 */
export function fastInvoiceFields(record: Record<string, unknown>): FastInvoiceFields | null {
  try {
    const currency = record.currency;
    const indicator = record.debit_credit_indicator;
    const fiscalYear = record.fiscal_year;
    if (typeof currency !== 'string' || !isIsoCurrency(currency)) return null;
    if (indicator !== 'S' && indicator !== 'H') return null;
    if (typeof fiscalYear !== 'string' || !/^\d{4}$/.test(fiscalYear)) return null;
    if (typeof record.status_open !== 'boolean') return null;
    // the rarer fields (and their cross-field rules) are the schema's
    if (record.amount_open !== undefined && record.amount_open !== null) return null;
    const terms = record.discount_terms;
    if (terms !== undefined && terms !== null && !(Array.isArray(terms) && terms.length === 0)) return null;
    const minor = minorUnitsOf(currency);
    const amountDoc = decimal(record.amount_in_document_currency, 4, false);
    if (amountDoc.places > minor) return null;
    const code = PUSH_TEXT_MAX.code;
    return {
      document_number: required(record.document_number, code),
      company_code: required(record.company_code, code),
      fiscal_year: fiscalYear,
      customer_code: required(record.customer_code, code),
      currency,
      debit_credit_indicator: indicator,
      document_type: optional(record.document_type, code),
      invoice_doc_type: optional(record.invoice_doc_type, code),
      exchange_rate: optional(record.exchange_rate, code),
      reference: optional(record.reference, code),
      assignment: optional(record.assignment, code),
      text: optional(record.text, PUSH_TEXT_MAX.text),
      reason_code: optional(record.reason_code, code),
      clearing_document_number: optional(record.clearing_document_number, code),
      document_date: calendarDate(record.document_date),
      net_due_date: calendarDate(record.net_due_date),
      posting_date: optionalDate(record.posting_date),
      clearing_date: optionalDate(record.clearing_date),
      amount_in_document_currency: amountDoc,
      amount_in_local_currency: decimal(record.amount_in_local_currency, 4, true),
      status_open: record.status_open,
      amount_open: record.amount_open as null | undefined, // checked above: absent or null

      line_items: lineItems(record.line_items, minor),
      discount_terms: [],
      business_unit_id: record.business_unit_id === undefined ? undefined : businessUnit(record.business_unit_id),
    };
  } catch (err) {
    if (err === NOT_SURE) return null;
    throw err;
  }
}
