/**
 * The middleware push endpoints (spec 4.3 rules 16 and 17): records validated and stored one by one, one result each.
 */
import { z } from 'zod';
import { NO_NUL_PATTERN } from '@rp/platform';
import { route } from '../deps.js';
import { customerRecordSchema, errorCodesMarkdown, invoiceRecordSchema, MAX_BANK_ACCOUNTS, MAX_DISCOUNT_TERMS, MAX_PUSH_RECORDS, pushCustomers, pushInvoices } from '../domain/push.js';

/**
 * The push body: an array of records the handler validates one by one (a bad record must not fail
 * its batch), so the request schema accepts any item; the record schema is attached to the items
 * for OpenAPI only (fields, types and every string's maxLength), without `required` (a record
 * lacking a required field gets its own `missing_field` result, not a 422 for the request).
 */
/** The kernel's no-NUL rule on every free string of a documented record (as the kernel documents its own schemas). */
function noNulStrings(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(noNulStrings);
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (o.type === 'string' && o.pattern === undefined && o.format === undefined && o.enum === undefined && o.const === undefined) o.pattern = NO_NUL_PATTERN;
  Object.values(o).forEach(noNulStrings);
}

function pushBodySchema(record: z.ZodType, id: string) {
  const documented = z.toJSONSchema(record, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete documented.$schema;
  delete documented.required;
  noNulStrings(documented);
  return z
    .array(z.unknown().meta({ ...documented, additionalProperties: true, title: id }))
    .max(MAX_PUSH_RECORDS)
    .describe(`Up to ${MAX_PUSH_RECORDS} records. A body that is not an array, or a longer one, is refused whole (422) and nothing is written.`);
}

const pushResultSchema = z.strictObject({
  received_at: z.string().describe('When the request was received (ISO 8601 UTC).'),
  results: z
    .array(
      z.strictObject({
        remote_id: z.string().nullable().describe('The record\'s key in the source system (null when the record has none).'),
        success: z.boolean(),
        service_id: z.string().nullable().describe('Our id of the stored row; stable across re-pushes. Null on failure.'),
        error_code: z.string().nullable().describe('Stable error code when `success` is false, else null.'),
        message: z.string().nullable().describe('What is wrong, naming the field(s), when `success` is false, else null.'),
      }),
    )
    .describe('One result per record, in request order.'),
})
  .meta({ id: 'PushResult' });

const COMMON =
  'Authenticated with an organization API key (the tenant is the key\'s organization; user access tokens get 403). ' +
  `At most ${MAX_PUSH_RECORDS} records per request; a body that is not a JSON array, or a longer one, gets 422 \`request-validation\` and nothing is written. ` +
  'Each record is then validated on its own: a bad record gets `success: false` with an `error_code` and a `message` naming the field(s) ' +
  '(the code is that of the first problem found; the message lists every problem), and the good records of the same request are stored ' +
  'all together in one SQL statement (set-based upserts: atomic, never a query per record). Fields not listed here are ignored. ' +
  'Optional text fields may be absent, null or "" (all stored as null). ' +
  'No string of a record, nor any of its keys, may contain the NUL character (U+0000) or a lone surrogate (an unpaired UTF-16 escape such as `\\ud800`, which is not text): such a record gets `invalid_field` naming the field(s), the others are stored. ' +
  'Every string field has a maximum length (the records\' `maxLength`: codes and keys 100 characters, names and address parts 255, free text 1000, `smtp_addr` 254, phone numbers 64; ' +
  'SAP\'s own fields are shorter, the room is for other ERPs); a longer one gets `invalid_field` for that record only. ' +
  'The same key twice in one request: the later record wins (as if the records had been pushed one after the other) and both results carry the same `service_id`. ' +
  'Optional extension field `business_unit_id`: a business unit of the organization. ' +
  '**Events**: the good records and their events are written in one transaction, one event per record whose representation changed ' +
  '(invoices: `invoice.created`, `invoice.updated` with `previous_attributes`, `invoice.closed` when `status_open` turns false, credit memos included; ' +
  'customers: `partner.created`, `partner.updated`, and `invoice.updated` for the documents a new customer links). An identical re-push records none. ' +
  'A request whose write fails stores nothing and records nothing.';

const INVOICE_DESCRIPTION = `${COMMON}

**Records** (spec rule 16). Required: \`document_number\`, \`company_code\`, \`fiscal_year\` (four digits), \`customer_code\` (strings); \`currency\`; \`document_date\`, \`net_due_date\`; \`amount_in_document_currency\`; \`status_open\` (boolean); \`debit_credit_indicator\` (\`S\` stores an invoice, \`H\` a credit memo). Optional: \`document_type\`, \`invoice_doc_type\`, \`exchange_rate\`, \`reference\`, \`assignment\`, \`text\`, \`reason_code\`, \`clearing_document_number\` (strings), \`posting_date\`, \`clearing_date\` (dates or null), \`amount_in_local_currency\` (in the organization's base currency), \`line_items\` (array of \`line_number\` (integer ≥ 0, unique within the record), \`description\`, \`quantity\`, \`unit_amount\`, \`total_amount\`; absent or null = no line items).

**Values.** Amounts are JSON numbers read as their shortest decimal form (0.1 is exactly 0.1; decimal strings such as "1190.50" are also accepted), stored exactly (NUMERIC). A JSON number carries at most 15 significant digits exactly: one whose shortest form has more (1234567890123456.78 arrives as 1234567890123456.8, 9007199254740993 as 9007199254740992) has been rounded by the JSON parser and gets \`invalid_amount\`; send such amounts as decimal strings, which are taken as written. (The check sees the double the parser made: digits that vanish in it entirely, as in 0.10000000000000000001, which is the double 0.1, cannot be told from the shorter number.) Amounts have no more decimal places than the currency's ISO minor unit (EUR 2, JPY 0, KWD 3) for \`amount_in_document_currency\` and line \`total_amount\`, nor than the base currency's for \`amount_in_local_currency\`; up to 6 for \`quantity\` and \`unit_amount\`. Currency: an upper-case ISO 4217 code, current or historic (e.g. DEM). Dates: \`YYYY-MM-DD\` naming a real calendar day.

**Storage.** Upsert key: (organization, \`company_code\`, \`fiscal_year\`, \`document_number\`): re-pushing a document updates it and returns the same \`service_id\`, also when its indicator flips (its kind changes, its id does not). Its line items are replaced as a set. \`amount_open\` is the whole amount while \`status_open\`, else 0, unless the record carries the optional extension field \`amount_open\` (the ERP's open amount after partial payments: between 0 and the document amount, 0 when not open, currency minor units; an \`invalid_amount\` otherwise). Pushing an invoice after a payment was reported \`posted\` (GET/POST …/middleware/payments) tells the platform the ERP's figure includes that payment. The document is linked to the partner whose customer push had the same \`customer_code\`; if that customer has not been pushed yet, the document is stored without a partner and linked when the customer arrives. Without \`business_unit_id\`, a document takes its partner's business unit. \`remote_id\` in the result is the record's \`document_number\`.

**Early-payment discounts** (an extension of rule 16, not in the spec): optional \`discount_terms\`, an array of at most ${MAX_DISCOUNT_TERMS} \`{due_date, percent}\` from the invoice's payment terms (SAP's cash discounts 1 and 2: paying by \`due_date\`, inclusive, may deduct \`percent\` of the amount). \`percent\` is a decimal string (or JSON number) above 0 and below 100 with at most 4 decimals; two terms may not share a due date; they are stored earliest first (percent normalized, "2.50" → "2.5") and cash application uses them to recognise a discounted payment. Absent, null or \`[]\` = no discount: a re-push states the document's whole terms, so one without the field removes earlier terms. Only invoices (\`S\`) carry them: terms on a credit memo get \`invalid_discount_term\`, as does a bad percent, a repeated due date or more than ${MAX_DISCOUNT_TERMS} terms; a bad due date gets \`invalid_date\`.

**Error codes:** ${errorCodesMarkdown(['invalid_record', 'missing_field', 'invalid_field', 'invalid_currency', 'invalid_date', 'invalid_amount', 'invalid_debit_credit_indicator', 'invalid_discount_term', 'invalid_business_unit'])}.`;

const CUSTOMER_DESCRIPTION = `${COMMON}

**Records** (spec rule 17), all strings: required \`customer_code\` and \`name1\`; optional \`name2\`, \`name3\`, \`street\`, \`house_num1\`, \`house_num2\`, \`post_code1\`, \`city1\`, \`city2\`, \`region\`, \`country\`, \`accounting_clerk\`, \`accounting_clerk_name\`, \`smtp_addr\` (an email address when not empty), \`tel_number\`, \`telnr_long\`, \`tax_jurisdiction\`, \`payment_method\`, \`search_term\`, \`vendor_account_number\`, \`company_code\`.

**Mapping onto the partner** (upserted by \`customer_code\` as its remote id): \`name\` = \`name1\`; \`legal_name\` = \`name1\`, \`name2\`, \`name3\` joined with spaces (SAP splits long names over the three); \`account_number\` = \`customer_code\` (the SAP customer account number); \`email\` = \`smtp_addr\`; \`phone\` = \`telnr_long\`, else \`tel_number\`; \`company_code\`, \`search_term\` as sent; \`address\` = {\`line1\` (street, house_num1 and house_num2 joined), \`street\`, \`house_number\` (house_num1), \`house_number_supplement\` (house_num2), \`postal_code\` (post_code1), \`city\` (city1), \`district\` (city2), \`region\`, \`country\`}; \`attributes\` keeps \`name2\`, \`name3\`, \`accounting_clerk\`, \`accounting_clerk_name\`, \`tel_number\`, \`telnr_long\`, \`tax_jurisdiction\`, \`payment_method\`, \`vendor_account_number\`. Empty fields are left out of \`address\` and \`attributes\`. \`business_unit_id\`: the partner's business unit (absent keeps the current one). Documents pushed earlier with this \`customer_code\` and no partner are linked to it now (and take its business unit when they have none). \`remote_id\` in the result is the \`customer_code\`.

**Bank accounts** (an extension of rule 17, not in the spec): optional \`bank_accounts\`, an array of at most ${MAX_BANK_ACCOUNTS} entries, each \`{iban}\` (printed or electronic form; its ISO 13616 mod-97 check digits and its country's length are checked; stored upper case without spaces) or \`{account_number, bank_code}\` for an account without IBAN (both required; stored as their letters and digits, upper case). They are the customer's accounts from the ERP's master data: cash application identifies a deposit's payer by them (as it does by the accounts it learns from approved payments), so a customer is known before its first payment. A re-push that carries \`bank_accounts\` replaces the customer's accounts as a set (\`[]\` removes them all); a re-push without the field (or with null) leaves them as they are; the same account twice in one record is stored once. A malformed entry (a bad IBAN, an account number without bank code, both forms in one entry, more than ${MAX_BANK_ACCOUNTS} entries) gets \`invalid_bank_account\` for that record only, and its customer, accounts included, is left as it was.

**Error codes:** ${errorCodesMarkdown(['invalid_record', 'missing_field', 'invalid_field', 'invalid_email', 'invalid_bank_account', 'invalid_business_unit'])}.`;

export const pushRoutes = [
  route({
    method: 'post',
    path: '/v2/integrations/providers/middleware/invoices',
    operationId: 'pushMiddlewareInvoices',
    summary: 'Push invoices and credit memos (integration middleware)',
    description: INVOICE_DESCRIPTION,
    tags: ['Integrations'],
    auth: { credentials: ['api_key'] },
    body: pushBodySchema(invoiceRecordSchema, 'InvoicePushRecord'),
    perRecordBody: true,
    response: pushResultSchema,
    handler: async ({ body, identity, deps }) => {
      const receivedAt = new Date().toISOString();
      return { received_at: receivedAt, results: await pushInvoices(deps, identity.org, body) };
    },
  }),
  route({
    method: 'post',
    path: '/v2/integrations/providers/middleware/customers',
    operationId: 'pushMiddlewareCustomers',
    summary: 'Push customers (integration middleware)',
    description: CUSTOMER_DESCRIPTION,
    tags: ['Integrations'],
    auth: { credentials: ['api_key'] },
    body: pushBodySchema(customerRecordSchema, 'CustomerPushRecord'),
    perRecordBody: true,
    response: pushResultSchema,
    handler: async ({ body, identity, deps }) => {
      const receivedAt = new Date().toISOString();
      return { received_at: receivedAt, results: await pushCustomers(deps, identity.org, body) };
    },
  }),
];
