/** The API schemas of bank statements and their transactions (they generate the OpenAPI components). */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';
import { MATCH_STATUS_DESCRIPTION, MATCH_STATUSES, STATEMENT_STATUSES, STATUS_DESCRIPTION } from '../domain-types/bank-statements.js';
import { INLINE_TRANSACTIONS_MAX } from '../domain/statement-reads.js';
import { STATEMENT_FORMATS } from '../parsers/index.js';

const money = z.string().describe('Decimal string with the currency\'s minor units, e.g. "1250.00".');

const paymentSummarySchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: money,
  currency: z.string(),
  partner_id: z.string().nullable(),
  match_score: z.number().nullable(),
})
  .meta({ id: 'BankTransactionPayment' });

export const bankTransactionSchema = z.object({
  object: z.literal('bank_transaction'),
  id: z.string(),
  statement_id: z.string(),
  bank_account_id: z.string().nullable(),
  unique_import_id: z
    .string()
    .describe(
      'Identity of the bank line, unique per organization: a line is imported once. CAMT.053 (the statement has its own id): ' +
        '`<account>:stmt:<Stmt/Id>:<entry reference>:<entry position>[.<transaction position>]`, so a re-export of the same ' +
        'statement maps onto the same lines while another day\'s statement is new even when the bank reuses its references. ' +
        'Other formats, by content: `<account>:ref:<bank reference>:<booking date>:<amount>` (a reference reused on another ' +
        'day or for another amount is another line), or `<account>:sha256:<hash of the line\'s fields>:<n>` without a ' +
        'reference. The nth identical id inside one file gets `#n` (`:n` for hashes).',
    ),
  sequence: z.number().int().describe('Position in the statement file (1-based).'),
  amount: money.describe('Signed: credits (deposits) positive, debits negative.'),
  currency: z.string(),
  is_deposit: z.boolean(),
  is_payment: z
    .boolean()
    .nullable()
    .describe('Whether the deposit is a customer payment (null until classified). Credits are payments unless they come from one of the organization\'s own accounts, or their bank transaction code or remittance text says interest, refund, internal transfer or reversal, or automatic matching finds they are not a customer payment (then `match_status` is `not_a_payment`).'),
  match_status: z.enum(MATCH_STATUSES).nullable().describe(MATCH_STATUS_DESCRIPTION),
  value_date: z.string().nullable(),
  booking_date: z.string().nullable(),
  counterparty_name: z.string().nullable(),
  counterparty_account: z.string().nullable(),
  counterparty_iban: z.string().nullable(),
  counterparty_bank_code: z.string().nullable(),
  remittance_information: z.string().nullable(),
  bank_reference: z.string().nullable(),
  end_to_end_id: z.string().nullable(),
  transaction_code: z.string().nullable().describe('Bank transaction code: CAMT Domn/Fmly/SubFmly, BAI2 type code, MT940 type; `R:` prefix for entries the bank marks as reversals.'),
  payments: z.array(paymentSummarySchema).describe('Payments proposed (unapproved) or approved for this transaction.'),
  ...timestampsShape,
})
  .meta({ id: 'BankTransaction' });

export const bankStatementSchema = z.object({
  object: z.literal('bank_statement'),
  id: z.string(),
  status: z.enum(STATEMENT_STATUSES).describe(STATUS_DESCRIPTION),
  source: z.enum(['upload', 'connection']),
  format: z.enum(STATEMENT_FORMATS),
  file_name: z.string().nullable(),
  file_sha256: z.string().nullable().describe('SHA-256 of the uploaded file (shared by every statement of a multi-statement file).'),
  file_position: z.number().int().describe('Position of the statement in its file (1-based; files with several statements yield one statement each).'),
  encoding: z
    .string()
    .nullable()
    .describe('Character encoding the file was read in: the upload\'s `charset`, else detected (e.g. `UTF-8`, `windows-1250`, `cp852`). Null for the JSON form and statements stored before this field.'),
  warnings: z
    .array(z.string())
    .describe('What the upload noticed but could not decide, e.g. a statement in another currency than the bank account is kept in, an opening balance that differs from the previous statement\'s closing balance, balances that do not reconcile (see `balance_mismatch`), or balances that could not be checked because of entries in another currency. Empty when none.'),
  balance_mismatch: z
    .object({
      difference: money.describe('Closing balance − (opening balance + the sum of the entries), signed, in `currency`, e.g. "-27.00": a booked entry the closing balance leaves out.'),
      currency: z.string().nullable().describe('The statement\'s currency, which the difference is in.'),
      acknowledged_by: z.string().nullable().describe('The user who approved the statement acknowledging the mismatch (null until then).'),
      acknowledged_at: z.string().nullable().describe('When the mismatch was acknowledged (ISO 8601 UTC), null until then.'),
    })
    .nullable()
    .describe(
      'Set when the file gives both balances and they do not reconcile with the entries (banks send such files, e.g. an entry dated the next day left out of the closing balance). ' +
        'The statement is imported all the same (also named in `warnings`) and is approved only with `acknowledge_balance_mismatch: true`. Null when the balances reconcile or the file gives no two balances.',
    ),
  skipped_entries: z
    .object({
      not_booked: z
        .number()
        .int()
        .describe('camt.053/054 entries not imported because their status (`Sts`) is not BOOK: pending (PDNG), information only (INFO), future (FUTR). They are not money on the account; 0 for other formats.'),
    })
    .describe('Entries of the file that were deliberately not imported, by reason.'),
  bank_account_id: z.string().nullable(),
  account_identifier: z.string().nullable().describe('IBAN or account number of the bank account.'),
  currency: z.string().nullable(),
  statement_number: z.string().nullable(),
  statement_date: z.string().nullable(),
  opening_balance: money.nullable(),
  closing_balance: money.nullable(),
  transaction_count: z.number().int().describe('Transactions stored for this statement (lines imported before by another statement are not counted).'),
  match_counts: z
    .object({
      unmatched: z.number().int(),
      proposed: z.number().int(),
      approved: z.number().int(),
      not_a_payment: z.number().int(),
    })
    .describe(
      'Extension of the spec. How many of the statement\'s deposits have each `match_status` (see the bank transaction); ' +
        'they add up to the number of credits (debits have no match status). All 0 until processing has stored the lines. ' +
        'List them with GET /v2/bank-statements/{statement_id}/transactions?match_status=….',
    ),
  totals: z
    .array(
      z.object({
        currency: z.string(),
        credit_count: z.number().int().describe('Credits (deposits, amount > 0).'),
        credit_total: money.describe('Sum of the credits, e.g. "1250.00".'),
        debit_count: z.number().int().describe('Debits (amount < 0).'),
        debit_total: money.describe('Sum of the debits, signed like the transactions (≤ 0), e.g. "-99.95".'),
      }),
    )
    .describe('Per currency of the stored transactions (ordered by currency): counts and sums of credits and debits. Empty until processing has stored the lines.'),
  error: z.string().nullable().describe('Why processing failed (status `failed`).'),
  workflow_id: z.string().nullable().describe('Temporal workflow processing the statement (`bank-statement-<id>`).'),
  uploaded_by: z.string().nullable(),
  approved_by: z.string().nullable(),
  approved_at: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'BankStatement' });

export const bankStatementDetailSchema = bankStatementSchema.extend({
  transactions: z
    .array(bankTransactionSchema)
    .optional()
    .describe(`The first ${INLINE_TRANSACTIONS_MAX} transactions in file order (absent with \`transactions=omit\`); page through all of them with GET /v2/bank-statements/{statement_id}/transactions.`),
  transactions_truncated: z.boolean().optional().describe(`With the inline transactions: whether the statement has more than ${INLINE_TRANSACTIONS_MAX} (then only the first ${INLINE_TRANSACTIONS_MAX} are inline).`),
}).meta({ id: 'BankStatementDetail' });

/** The upload's answer: the first statement of the file, plus all of them. */
export const bankStatementUploadSchema = bankStatementSchema
  .extend({
    statements: z
      .array(bankStatementSchema)
      .min(1)
      .describe(
        'Every statement the file held, in file order (the first is the statement this object describes). A file with one ' +
          'statement answers exactly as before plus this one-element array; a month of daily MT940 statements answers one element per day.',
      ),
  })
  .meta({ id: 'BankStatementUpload' });
