/**
 * The JSON statement form: the body of `POST /v2/bank-statements` sent as application/json, or the
 * same document uploaded as a file with `format=json`. Amounts are signed decimal strings (credit
 * positive); numbers are accepted and read through their decimal text.
 */
import { z } from 'zod';
import { isoCurrencyCode } from '@rp/platform';
import { decimal, fixed, inMinorUnits, looksLikeIban, PARSE_BATCH, runParse, singleStatement, StatementParseError, text, type ParseSteps, type ParsedFile, type ParsedStatement } from './types.js';

/** Longest amount text read: far beyond what can be stored (16 + 4 digits), so an over-long number gets the exactness message. */
const AMOUNT_MAX_LENGTH = 64;

const amount = z
  .union([z.string().max(AMOUNT_MAX_LENGTH), z.number()])
  .transform((v) => String(v).trim())
  .refine((v) => /^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(v), 'must be a decimal number, e.g. "1250.00" or "-12.5"');
const AMOUNT_RULE =
  `A decimal string (or number) of at most ${AMOUNT_MAX_LENGTH} characters, exactly as the bank states it: no more decimals than the currency has ` +
  '(USD 2, JPY 0, KWD 3) and at most 16 digits before the decimal point; anything else is refused (422), never rounded.';
const date = z.iso.date();
const opt = (max: number) => z.string().trim().max(max).nullish();

export const jsonTransactionSchema = z.object({
  amount: amount.describe(`Signed amount: credits (money in) positive, debits negative. ${AMOUNT_RULE}`),
  currency: isoCurrencyCode().optional().describe('Default: the statement currency.'),
  booking_date: date.nullish(),
  value_date: date.nullish(),
  counterparty_name: opt(200),
  counterparty_account: opt(100).describe('Counterparty IBAN or account number.'),
  counterparty_bank_code: opt(50),
  remittance_information: opt(2000),
  bank_reference: opt(200).describe('The bank\'s reference of the line; with the account it forms the unique import id.'),
  end_to_end_id: opt(200),
  transaction_code: opt(50),
});

export const jsonStatementShape = {
  account: z.string().trim().min(1).max(100).describe('Identifier (IBAN or account number) of the bank account.'),
  currency: isoCurrencyCode().describe('Statement (account) currency.'),
  statement_number: opt(100),
  statement_date: date.nullish(),
  opening_balance: amount.nullish().describe(`Opening balance (signed). ${AMOUNT_RULE}`),
  closing_balance: amount
    .nullish()
    .describe(`Closing balance (signed). ${AMOUNT_RULE} With both balances, one that does not reconcile with the transactions sets \`balance_mismatch\` on the statement.`),
  transactions: z.array(jsonTransactionSchema).max(100_000),
};
export const jsonStatementSchema = z.object(jsonStatementShape);
export type JsonStatement = z.output<typeof jsonStatementSchema>;

export function fromJsonStatement(s: JsonStatement): ParsedStatement {
  return runParse(fromJsonStatementSteps(s));
}

function* fromJsonStatementSteps(s: JsonStatement): Generator<number, ParsedStatement, void> {
  const account = s.account.replace(/\s+/g, '');
  const iban = looksLikeIban(account) ? account.toUpperCase() : null;
  return {
    account: { identifier: iban ?? account, iban, accountNumber: account, bankCode: null, currency: s.currency, name: null },
    statementNumber: text(s.statement_number),
    statementDate: s.statement_date ?? null,
    openingBalance: s.opening_balance != null ? fixed(exact(s.opening_balance, s.currency, 'opening_balance')) : null,
    closingBalance: s.closing_balance != null ? fixed(exact(s.closing_balance, s.currency, 'closing_balance')) : null,
    currency: s.currency,
    transactions: yield* mapInBatches(s.transactions, (t, i) => {
      if (!t.booking_date && !t.value_date) throw new StatementParseError(`transactions[${i}].booking_date`, 'give booking_date or value_date');
      const cpAccount = text(t.counterparty_account)?.replace(/\s+/g, '') ?? null;
      return {
        amount: fixed(exact(t.amount, t.currency ?? s.currency, `transactions[${i}].amount`)),
        currency: t.currency ?? s.currency,
        bookingDate: t.booking_date ?? t.value_date ?? null,
        valueDate: t.value_date ?? t.booking_date ?? null,
        counterpartyName: text(t.counterparty_name),
        counterpartyAccount: cpAccount,
        counterpartyIban: looksLikeIban(cpAccount) ? cpAccount!.toUpperCase() : null,
        counterpartyBankCode: text(t.counterparty_bank_code),
        remittanceInformation: text(t.remittance_information),
        bankReference: text(t.bank_reference),
        endToEndId: text(t.end_to_end_id),
        transactionCode: text(t.transaction_code),
      };
    }),
  };
}

/** The amount as written, refused when its currency has fewer decimals or it cannot be stored exactly. */
function exact(raw: string, currency: string, where: string) {
  return inMinorUnits(decimal(raw, where), raw, currency, where);
}

function* mapInBatches<T, U>(items: readonly T[], f: (item: T, i: number) => U): Generator<number, U[], void> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % PARSE_BATCH === 0) yield i;
    out.push(f(items[i], i));
  }
  return out;
}

function parseError(issue: z.core.$ZodIssue, prefix: PropertyKey[] = []): StatementParseError {
  const path = [...prefix, ...issue.path].map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return new StatementParseError(`$${path}`, issue.message);
}

/** The statement with its transactions left unchecked: they are validated in batches (see parseJsonStatementFileSteps). */
const jsonStatementHeadSchema = z.object({ ...jsonStatementShape, transactions: z.array(z.unknown()).max(100_000) });

/** A JSON statement file: parse errors name the JSON path of the first problem. */
export function parseJsonStatementFile(content: Buffer): ParsedFile {
  return runParse(parseJsonStatementFileSteps(content));
}

/** parseJsonStatementFile as ParseSteps (transactions validated and converted in batches of PARSE_BATCH). */
export function* parseJsonStatementFileSteps(content: Buffer): ParseSteps {
  let doc: unknown;
  try {
    doc = JSON.parse(content.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new StatementParseError('$', `not valid JSON: ${(err as Error).message}`);
  }
  const head = jsonStatementHeadSchema.safeParse(doc);
  if (!head.success) throw parseError(head.error.issues[0]);
  const transactions = yield* mapInBatches(head.data.transactions, (t, i) => {
    const r = jsonTransactionSchema.safeParse(t);
    if (!r.success) throw parseError(r.error.issues[0], ['transactions', i]);
    return r.data;
  });
  return yield* singleStatement(fromJsonStatementSteps({ ...head.data, transactions }));
}
