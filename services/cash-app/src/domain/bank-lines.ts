/**
 * A statement's bank lines without the database: the unique import id that makes a line imported
 * once per organization, and the classification of a deposit as a customer payment or not.
 */
import { createHash } from 'node:crypto';
import type { ParsedStatement, ParsedTransaction } from '../parsers/types.js';

/**
 * The unique import ids of a statement's transactions, in order. A bank line is imported once per
 * organization; the id must name one real line, never something a bank reuses (daily counters that
 * restart at "1"):
 *
 * - A statement with its own identity (CAMT `Stmt/Id`), as OCA bank-statement-import's camt parser
 *   does: `<account>:stmt:<statement id>:<entry reference>:<entry position>[.<transaction position>]`.
 *   The same statement imported again (a re-export of it) maps onto the same ids; another day's
 *   statement has another id, so its lines are new even when the bank reuses references.
 * - Otherwise (MT940, BAI2, CSV, JSON, or a CAMT statement without `Stmt/Id`), the line's content:
 *   with a bank reference `<account>:ref:<reference>:<booking date>:<amount>`, without one
 *   `<account>:sha256:<contentHash>:<n>`. A reference the bank reuses on another day, or for another
 *   amount, is another line; an overlapping file (the same lines exported again with new ones) stores
 *   only the new lines. The nth line with the same id inside one file gets `#n` (`:n` for hashes).
 */
export function uniqueImportIds(statement: Pick<ParsedStatement, 'account' | 'statementId' | 'transactions'>): string[] {
  const account = statement.account.identifier;
  const statementId = statement.statementId?.trim() || null;
  const refSeen = new Map<string, number>();
  const hashSeen = new Map<string, number>();
  return statement.transactions.map((t) => {
    if (statementId && t.lineKey) return `${account}:stmt:${statementId}:${t.lineKey}`;
    if (t.bankReference) {
      const key = `${account}:ref:${t.bankReference}:${t.bookingDate ?? t.valueDate ?? ''}:${t.amount}`;
      const n = (refSeen.get(key) ?? 0) + 1;
      refSeen.set(key, n);
      return n > 1 ? `${key}#${n}` : key;
    }
    const hash = contentHash(account, t);
    const n = (hashSeen.get(hash) ?? 0) + 1;
    hashSeen.set(hash, n);
    return `${account}:sha256:${hash}:${n}`;
  });
}

/**
 * SHA-256 of what identifies a line without a bank reference: account, amount, currency, dates,
 * counterparty, remittance information, end-to-end id and transaction code. Identical lines in one
 * file are told apart by their ordinal (the nth identical line gets `:n`), so re-importing the same
 * lines maps each onto its earlier copy.
 */
export function contentHash(accountIdentifier: string, t: ParsedTransaction): string {
  const fields = [
    accountIdentifier,
    t.amount,
    t.currency,
    t.valueDate,
    t.bookingDate,
    t.counterpartyName,
    t.counterpartyAccount,
    t.remittanceInformation,
    t.endToEndId,
    t.transactionCode,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

export interface ClassifiableTransaction {
  amount: string;
  counterpartyName: string | null;
  counterpartyAccount: string | null;
  counterpartyIban: string | null;
  remittanceInformation: string | null;
  transactionCode: string | null;
}

export type Classification = { isPayment: boolean; reason: string };

const TEXT_RULES: [RegExp, string][] = [
  [/\b(credit interest|interest (credit|payment|paid)|interest|habenzinsen|zinsen|intérêts)\b/i, 'interest'],
  [/\b(refund|refunded|rückerstattung|erstattung|rebate|remboursement)\b/i, 'refund'],
  [/\b(internal transfer|own account|account transfer between|umbuchung|sweep|cash pooling|zba)\b/i, 'internal transfer'],
  [/\b(reversal|reversed|storno|chargeback|returned|return of|rücklastschrift|rückbuchung)\b/i, 'reversal'],
];

/** Bank transaction codes that mean interest, a return/reversal or an internal (ZBA) transfer. */
const CODE_RULES: [RegExp, string][] = [
  [/^R:/, 'reversal'], // the statement marks the entry as a reversal (MT940 RC/RD, CAMT RvslInd)
  [/(^|\/)INTR$|^NINT$|^354$/, 'interest'], // ISO BkTxCd sub-family INTR, SWIFT NINT, BAI2 354 Interest Credit
  [/(^|\/)(RRTN|ARET|RPCR)$|^NRTI$/, 'reversal'], // ISO returns/reversals, SWIFT returned item
  [/^275$/, 'internal transfer'], // BAI2 275 ZBA Credit
];

/**
 * Is a deposit a customer payment? Debits and zero amounts are not. A credit is a payment unless it
 * comes from one of the organization's own bank accounts (internal transfer), its bank transaction
 * code says interest / return / reversal / ZBA transfer, or its remittance text or counterparty name
 * says interest, refund, internal transfer or reversal (English, German and French words).
 */
export function classifyDeposit(t: ClassifiableTransaction, ownAccounts: ReadonlySet<string>): Classification {
  if (!(Number(t.amount) > 0)) return { isPayment: false, reason: 'not a deposit' };
  for (const acct of [t.counterpartyIban, t.counterpartyAccount]) {
    if (acct && ownAccounts.has(acct.replace(/\s+/g, '').toUpperCase())) return { isPayment: false, reason: 'internal transfer' };
  }
  if (t.transactionCode) {
    for (const [re, reason] of CODE_RULES) if (re.test(t.transactionCode)) return { isPayment: false, reason };
  }
  const text = [t.remittanceInformation, t.counterpartyName].filter(Boolean).join(' ');
  for (const [re, reason] of TEXT_RULES) if (re.test(text)) return { isPayment: false, reason };
  return { isPayment: true, reason: 'deposit' };
}
