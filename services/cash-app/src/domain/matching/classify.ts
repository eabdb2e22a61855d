/**
 * Credits that are not customer payments: decided from strong signals only, since a customer
 * payment taken for one is left for a person while a non-customer credit taken for a payment
 * relieves an invoice wrongly.
 *  - a transfer from one of the organization's own accounts (its IBAN or account number);
 *  - the bank's transaction code for interest (camt sub-family INTR, BAI2 354, MT940 NINT/INT) or a
 *    card settlement (camt family CCRD or sub-family POSC/POSD/SETT of CCRD/MCRD, BAI2 173-175 card
 *    deposits/settlements);
 *  - a card acquirer or payment processor as the counterparty (Stripe, Adyen, PayPal, …).
 * The code and processor signals give way to a customer's own reference that checks out (an
 * invoice number or remittance with the deposit's exact amount): a customer paying through a
 * processor is still a customer. An own-account transfer never does.
 */
import type { MatchReason, MatchTransaction } from '../../domain-types/matching.js';
import { normalizeAccount } from './payers.js';

export interface NonCustomerSignal {
  reason: MatchReason;
  /** nothing overrides it (own-account transfers) */
  absolute: boolean;
}

const PROCESSORS = [
  'stripe', 'adyen', 'paypal', 'braintree', 'sumup', 'worldpay', 'worldline', 'mollie', 'klarna', 'payone', 'concardis', 'nexi', 'elavon',
  'global payments', 'american express', 'amex', 'visa europe', 'mastercard', 'first data', 'fiserv', 'checkout com', 'wirecard', 'unzer',
  'heidelpay', 'square inc', 'shopify payments', 'amazon payments', 'card settlement', 'kartenumsatz', 'merchant services',
];

/** camt Domain/Family/SubFamily segments, BAI2 type codes, MT940 codes (an `R:` prefix marks a reversal). */
const codeCache = new Map<string, 'interest' | 'card_settlement' | null>();

function codeKind(code: string): 'interest' | 'card_settlement' | null {
  let kind = codeCache.get(code);
  if (kind === undefined) {
    if (codeCache.size > 10_000) codeCache.clear();
    codeCache.set(code, (kind = kindOfCode(code)));
  }
  return kind;
}

function kindOfCode(code: string): 'interest' | 'card_settlement' | null {
  const c = code.toUpperCase().replace(/^R:/, '').trim();
  const parts = c.split(/[/\s-]+/);
  if (parts.includes('INTR') || c === 'NINT' || c === 'INT' || c === '354') return 'interest';
  if (parts.includes('CCRD') || (parts.includes('MCRD') && (parts.includes('POSD') || parts.includes('POSC') || parts.includes('SETT')))) return 'card_settlement';
  if (parts.includes('POSC') || parts.includes('POSD') || ['173', '174', '175'].includes(c)) return 'card_settlement';
  return null;
}

const processorCache = new Map<string, string | null>();

function processorOf(name: string | null): string | null {
  if (!name) return null;
  const cached = processorCache.get(name);
  if (cached !== undefined) return cached;
  if (processorCache.size > 100_000) processorCache.clear();
  const found = findProcessor(name);
  processorCache.set(name, found);
  return found;
}

function findProcessor(name: string): string | null {
  const norm = ` ${name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim()} `;
  return PROCESSORS.find((p) => norm.includes(` ${p} `)) ?? null;
}

/** The strongest signal that a credit is not a customer payment, or null. */
export function nonCustomerSignal(
  tx: Pick<MatchTransaction, 'counterparty_iban' | 'counterparty_account' | 'counterparty_name' | 'transaction_code'>,
  ownAccounts: ReadonlySet<string>,
): NonCustomerSignal | null {
  for (const raw of [tx.counterparty_iban, tx.counterparty_account]) {
    const key = normalizeAccount(raw);
    if (key && ownAccounts.has(key)) return { reason: { rule: 'own_account', value: key }, absolute: true };
  }
  if (tx.transaction_code) {
    const kind = codeKind(tx.transaction_code);
    if (kind) return { reason: { rule: kind, value: tx.transaction_code }, absolute: false };
  }
  const processor = processorOf(tx.counterparty_name);
  if (processor) return { reason: { rule: 'payment_processor', value: processor }, absolute: false };
  return null;
}

/** The organization's own account identifiers, normalized. */
export function ownAccountSet(accounts: readonly string[] | undefined): Set<string> {
  return new Set((accounts ?? []).map((a) => normalizeAccount(a)).filter((a): a is string => !!a));
}
