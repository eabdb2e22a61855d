/**
 * Middleware push records (spec 4.3 rules 16 and 17): the invoice and customer record schemas,
 * their per-record validation and their mapping onto ledger rows. Pure: no I/O.
 */
import { z } from 'zod';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { emailSchema, isIsoCurrency, Money } from '@rp/platform';
import type { DiscountTermUpsert, DocumentUpsert, LineItemUpsert, MasterBankAccountUpsert, PartnerUpsert } from '../types.js';
import {
  amount,
  blank,
  businessUnitId,
  code,
  date,
  decimalOf,
  failure,
  isPlainObject,
  minorUnitsOf,
  notAnObject,
  nulFailure,
  optionalDate,
  optionalText,
  PUSH_TEXT_MAX,
  remoteIdOf,
  requiredText,
  type ExactDecimal,
  type PushOutcome,
} from './push-fields.js';
import { fastInvoiceFields } from './push-invoice-fast.js';
// ── invoices (rule 16) ───────────────────────────────────────────────────────────────────────────

const lineItemSchema = z.object({
  line_number: z.number().int().min(0),
  description: optionalText(PUSH_TEXT_MAX.text).transform(blank),
  quantity: amount({ scale: 6, optional: true }).optional(),
  unit_amount: amount({ scale: 6, optional: true }).optional(),
  total_amount: amount({ scale: 4, optional: true }).optional(),
});

/** At most this many early-payment discounts per invoice (SAP's payment terms have two; one more for other ERPs). */
export const MAX_DISCOUNT_TERMS = 3;
const PERCENT_MAX_LENGTH = 12;

/** A discount percent: a decimal string (or JSON number) above 0 and below 100 with at most 4 decimals, normalized ("2.50" → "2.5"). */
const discountPercent = z
  .unknown()
  .meta({ anyOf: [{ type: 'string', maxLength: PERCENT_MAX_LENGTH }, { type: 'number' }], description: 'Above 0 and below 100, at most 4 decimals, e.g. "2" or "2.5".' })
  .transform((value, ctx): string => {
    const d = typeof value === 'string' && value.length > PERCENT_MAX_LENGTH ? null : decimalOf(value);
    const p = d ? new Money(d.text) : null;
    if (!d || !p || d.places > 4 || p.lte(0) || p.gte(100)) {
      ctx.addIssue({ code: 'custom', message: 'must be a decimal above 0 and below 100 with at most 4 decimals', ...code('invalid_discount_term') });
      return z.NEVER;
    }
    return p.toFixed();
  });

const discountTermsSchema = z
  .array(z.object({ due_date: date, percent: discountPercent }))
  .meta({ maxItems: MAX_DISCOUNT_TERMS })
  .nullish()
  .superRefine((terms, ctx) => {
    if (!terms) return;
    if (terms.length > MAX_DISCOUNT_TERMS) ctx.addIssue({ code: 'custom', message: `has more than ${MAX_DISCOUNT_TERMS} terms`, ...code('invalid_discount_term') });
    const dates = new Set<string>();
    terms.forEach((t, i) => {
      if (dates.has(t.due_date)) ctx.addIssue({ code: 'custom', path: [i, 'due_date'], message: 'repeats another term\'s due_date', ...code('invalid_discount_term') });
      dates.add(t.due_date);
    });
  })
  // earliest first (the matching contract's order)
  .transform((terms): DiscountTermUpsert[] => [...(terms ?? [])].sort((a, b) => (a.due_date < b.due_date ? -1 : 1)));

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
    discount_terms: discountTermsSchema,
    business_unit_id: businessUnitId,
  })
  .superRefine((r, ctx) => {
    if (r.debit_credit_indicator === 'H' && r.discount_terms.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['discount_terms'], message: 'must be absent or empty on a credit memo (H): only invoices carry early-payment discounts', ...code('invalid_discount_term') });
    }
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

/** What the schema outputs for a valid record (the fast path's fields must be assignable to it). */
export type InvoiceFields = z.output<typeof invoiceRecordSchema>;

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
  // the common valid record in one pass of plain checks; the schema decides (and words) the rest
  let r: InvoiceFields | null = fastInvoiceFields(record as Record<string, unknown>);
  if (r === null) {
    const parsed = invoiceRecordSchema.safeParse(record);
    if (!parsed.success) return failure(record, remoteId, parsed.error);
    r = parsed.data;
  }
  return invoiceOutcome(r, remoteId, localMinorUnits);
}

/** A record's checked fields as its outcome: the local amount against the base currency, then the ledger row. */
export function invoiceOutcome(r: InvoiceFields, remoteId: string | null, localMinorUnits: number): PushOutcome<ValidInvoice> {
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
      discount_terms: r.discount_terms,
    },
  };
}

// ── customers (rule 17) ──────────────────────────────────────────────────────────────────────────

/** Customer text fields normalized in the schema (absent, null, "" → null); the customer path is not the hot one. */
const customerText = (max: number) => optionalText(max).transform(blank);

/** At most this many bank accounts per customer. */
export const MAX_BANK_ACCOUNTS = 20;
/** An IBAN is at most 34 characters; room for the spaces of its printed form (groups of four). */
const IBAN_INPUT_MAX = 42;
const ACCOUNT_NUMBER_MAX = 34;
const BANK_CODE_MAX = 15;

/** Letters and digits only, upper case (how cash application compares account numbers). */
const accountKey = (v: string) => v.toUpperCase().replace(/[^A-Z0-9]/g, '');

/**
 * A customer bank account (an extension of rule 17): `{iban}` with valid ISO 13616 check digits,
 * stored upper case without spaces, or `{account_number, bank_code}`, stored as letters and digits.
 */
const bankAccountSchema = z
  .object({
    iban: customerText(IBAN_INPUT_MAX).describe('IBAN, printed (with spaces) or electronic form; checked with its mod-97 check digits.'),
    account_number: customerText(ACCOUNT_NUMBER_MAX).describe('Domestic account number (with bank_code), when the account has no IBAN.'),
    bank_code: customerText(BANK_CODE_MAX).describe('Bank code of account_number (e.g. ABA routing number, sort code, BLZ).'),
  })
  .transform((a, ctx): MasterBankAccountUpsert => {
    const bad = (message: string) => {
      ctx.addIssue({ code: 'custom', message, ...code('invalid_bank_account') });
      return z.NEVER;
    };
    if (a.iban !== null) {
      if (a.account_number !== null || a.bank_code !== null) return bad('gives an iban and an account_number/bank_code: give one of them');
      const iban = electronicFormatIBAN(a.iban.replace(/\s+/g, '').toUpperCase()) ?? '';
      if (!isValidIBAN(iban)) return bad(`iban ${JSON.stringify(a.iban)} is not a valid IBAN (ISO 13616 check digits and length)`);
      return { account_identifier: iban, bank_code: null };
    }
    if (a.account_number === null || a.bank_code === null) return bad('needs either an iban, or an account_number with its bank_code');
    const account = accountKey(a.account_number);
    const bank = accountKey(a.bank_code);
    if (!account || !bank) return bad('account_number and bank_code must contain letters or digits');
    return { account_identifier: account, bank_code: bank };
  });

const bankAccountsSchema = z
  .array(bankAccountSchema)
  .meta({ maxItems: MAX_BANK_ACCOUNTS })
  .nullish()
  .superRefine((list, ctx) => {
    if (list && list.length > MAX_BANK_ACCOUNTS) ctx.addIssue({ code: 'custom', message: `has more than ${MAX_BANK_ACCOUNTS} entries`, ...code('invalid_bank_account') });
  })
  // absent or null: leave the stored accounts as they are; the same account twice is stored once
  .transform((list): MasterBankAccountUpsert[] | undefined =>
    list == null ? undefined : [...new Map(list.map((a) => [`${a.account_identifier}/${a.bank_code ?? ''}`, a])).values()],
  );

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
  bank_accounts: bankAccountsSchema,
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
    ...(r.bank_accounts ? { bank_accounts: r.bank_accounts } : {}),
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
