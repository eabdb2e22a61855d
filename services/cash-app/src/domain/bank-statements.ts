/**
 * Bank statement rules that need no database: statuses and their moves, the unique import id of a
 * transaction, and the classification of deposits as payments.
 */
import { createHash } from 'node:crypto';
import type { ParsedTransaction } from '../parsers/types.js';

/**
 * Statuses. `uploaded`: file stored, processing not started. `processing`: the bankStatement workflow
 * is storing, classifying and matching the transactions. `ready`: processed, payments proposed,
 * waiting for approval. `approved`: accepted by a user (cannot be deleted). `failed`: processing
 * failed after retries (`error` says why). `synced`: arrived through a bank connection.
 */
export const STATEMENT_STATUSES = ['uploaded', 'processing', 'ready', 'approved', 'synced', 'failed'] as const;
export type StatementStatus = (typeof STATEMENT_STATUSES)[number];

export const STATUS_DESCRIPTION =
  '`uploaded` (file stored, processing queued) → `processing` (workflow storing, classifying and matching ' +
  'transactions) → `ready` (payments proposed) → `approved` (accepted; can no longer be deleted). `failed`: ' +
  'processing failed after retries, `error` says why. `synced`: the statement arrived through a bank ' +
  'connection rather than an upload (only organization admins may delete it).';

/** The unique import ids of a statement's transactions, in order (see uniqueImportId). */
export function uniqueImportIds(accountIdentifier: string, txs: readonly ParsedTransaction[]): string[] {
  const refSeen = new Map<string, number>();
  const hashSeen = new Map<string, number>();
  return txs.map((t) => {
    if (t.bankReference) {
      const n = (refSeen.get(t.bankReference) ?? 0) + 1;
      refSeen.set(t.bankReference, n);
      return `${accountIdentifier}:ref:${t.bankReference}${n > 1 ? `#${n}` : ''}`;
    }
    const hash = contentHash(accountIdentifier, t);
    const n = (hashSeen.get(hash) ?? 0) + 1;
    hashSeen.set(hash, n);
    return `${accountIdentifier}:sha256:${hash}:${n}`;
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
