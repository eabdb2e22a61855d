/**
 * Rules for a payment's allocations (pure).
 *
 * An allocation relieves its invoice by amount_paid + amount_discount + amount_withheld +
 * adjustment_amount; only amount_paid consumes the bank transaction's amount. An allocation may
 * also name an open credit memo of the payer: its amount_paid is the credit applied (it relieves
 * the memo's open credit and reduces the cash the payment's invoices take from the deposit: cash =
 * Σ invoices' amount_paid − Σ memos' amount_paid). Rules:
 *  - each document is an open invoice or credit memo of the organization, in the transaction's currency, at most once;
 *  - what an allocation relieves is > 0 and at most the document's open amount, i.e. the ledger's
 *    `amount_open` (a memo's credit, positive) minus what APPROVED payments other than this one already relieve (unapproved
 *    proposals of other transactions do not block an edit: they are suggestions; approval re-checks);
 *  - a credit memo belongs to the payment's payer and takes only amount_paid (no discount, withholding or adjustment);
 *  - the credit applied never exceeds the cash applied to invoices (a payment's cash is never negative);
 *  - the running total of the cash (the memos' credit taken off first) never exceeds the transaction amount;
 *  - an adjustment_amount needs an adjustment_id, which must be one of the organization's active adjustments;
 *  - every amount fits the currency's minor units (JPY none, EUR 2, KWD 3 decimals).
 * Violations are reported as 422 issues whose `loc` names the allocation index and field.
 */
import { currencyMinorUnits, Money, type LedgerDocument, type ValidationIssue } from '@rp/platform';
import type { AllocationDraft } from '../domain-types/payments.js';

export type { AllocationDraft };

const minorUnitsCache = new Map<string, number>();
/** Decimal places of the currency (JPY 0, EUR 2, KWD 3), from the kernel's ISO 4217 data. */
export function minorUnits(currency: string): number {
  const code = currency.trim();
  let n = minorUnitsCache.get(code);
  if (n === undefined) minorUnitsCache.set(code, (n = currencyMinorUnits(code)));
  return n;
}

/** Whether the amount has no more decimals (other than trailing zeros) than the currency allows. */
export function fitsMinorUnits(value: string | InstanceType<typeof Money>, currency: string): boolean {
  return new Money(value).decimalPlaces() <= minorUnits(currency);
}

/** An amount as the currency writes it: "1190" (JPY), "1190.00" (EUR), "1.234" (KWD); half-up rounding. */
export function formatInCurrency(value: string | number | InstanceType<typeof Money>, currency: string): string {
  return new Money(value).toFixed(minorUnits(currency));
}

const AMOUNT_FIELDS = ['amount_paid', 'amount_discount', 'amount_withheld', 'adjustment_amount'] as const;

export interface AllocationCheckInput {
  allocations: readonly AllocationDraft[];
  transactionAmount: string;
  currency: string;
  invoices: ReadonlyMap<string, Pick<LedgerDocument, 'id' | 'kind' | 'status_open' | 'currency' | 'amount_open' | 'document_number'> & { partner_id?: string | null }>;
  /** the payment's payer as the allocations leave it: a credit memo must be this partner's */
  payerId?: string | null;
  /** per invoice: what approved payments other than this one relieve */
  relievedElsewhere: ReadonlyMap<string, string>;
  activeAdjustments: ReadonlySet<string>;
}

export function relievedBy(a: Pick<AllocationDraft, 'amount_paid' | 'amount_discount' | 'amount_withheld' | 'adjustment_amount'>) {
  return new Money(a.amount_paid).plus(a.amount_discount).plus(a.amount_withheld).plus(a.adjustment_amount);
}

export function openAmount(amountOpen: string, relievedElsewhere: string | undefined) {
  return new Money(amountOpen).minus(relievedElsewhere ?? 0);
}

/** A document's open amount as allocations use it: an invoice's `amount_open`, a credit memo's credit (positive whatever its stored sign). */
export function documentOpen(doc: Pick<LedgerDocument, 'kind' | 'amount_open'>): string {
  return doc.kind === 'credit_memo' ? new Money(doc.amount_open).abs().toFixed() : doc.amount_open;
}

/** The cash of allocations: what the invoices are paid less the credit the memos apply. */
export function cashOf(allocations: readonly { amount_paid: string; document_kind?: string }[]): InstanceType<typeof Money> {
  return allocations.reduce((sum, a) => (a.document_kind === 'credit_memo' ? sum.minus(a.amount_paid) : sum.plus(a.amount_paid)), new Money(0));
}

export function checkAllocations(input: AllocationCheckInput): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  const isMemo = (id: string) => input.invoices.get(id)?.kind === 'credit_memo';
  // The memos' credit is taken off the cash first, so the total is reported at the invoice that makes it too large.
  const memoCredit = input.allocations.reduce((sum, a) => (isMemo(a.invoice_id) && fitsMinorUnits(a.amount_paid, input.currency) ? sum.plus(a.amount_paid) : sum), new Money(0));
  let paidTotal = new Money(0).minus(memoCredit);
  let invoicePaid = new Money(0);
  let lastMemo = -1;
  let totalReported = false;
  const transactionAmount = new Money(input.transactionAmount);
  const digits = minorUnits(input.currency);
  const fmt = (v: InstanceType<typeof Money>) => v.toFixed(digits);
  input.allocations.forEach((a, i) => {
    const loc = (field: string) => ['body', 'allocations', i, field];
    const tooPrecise = AMOUNT_FIELDS.filter((f) => !fitsMinorUnits(a[f], input.currency));
    for (const f of tooPrecise) {
      issues.push({
        loc: loc(f),
        msg: `has more decimals than ${input.currency.trim()} allows (${digits === 0 ? 'no decimals' : `at most ${digits}`})`,
        type: 'value_error.decimal_places',
      });
    }
    if (tooPrecise.length > 0) return;
    if (seen.has(a.invoice_id)) {
      issues.push({ loc: loc('invoice_id'), msg: 'this invoice is already allocated in an earlier entry', type: 'value_error.duplicate' });
      return;
    }
    seen.add(a.invoice_id);
    const inv = input.invoices.get(a.invoice_id);
    if (!inv || (inv.kind !== 'invoice' && inv.kind !== 'credit_memo')) {
      issues.push({ loc: loc('invoice_id'), msg: 'is not an invoice or credit memo of this organization', type: 'value_error.not_found' });
      return;
    }
    const memo = inv.kind === 'credit_memo';
    const what = memo ? 'credit memo' : 'invoice';
    if (!inv.status_open) {
      issues.push({ loc: loc('invoice_id'), msg: `${what} ${inv.document_number} is not open`, type: 'value_error.invoice_closed' });
      return;
    }
    if (inv.currency.trim() !== input.currency.trim()) {
      issues.push({ loc: loc('invoice_id'), msg: `${what} ${inv.document_number} is in ${inv.currency.trim()}, the transaction in ${input.currency.trim()}`, type: 'value_error.currency' });
      return;
    }
    if (memo) {
      lastMemo = i;
      if (!inv.partner_id || inv.partner_id !== input.payerId) {
        issues.push({
          loc: loc('invoice_id'),
          msg: `credit memo ${inv.document_number} is not a credit of the payment's payer${inv.partner_id ? '' : ' (it has no customer)'}`,
          type: 'value_error.credit_memo_partner',
        });
      }
      for (const f of ['amount_discount', 'amount_withheld', 'adjustment_amount'] as const) {
        if (!new Money(a[f]).isZero()) issues.push({ loc: loc(f), msg: 'must be 0 on a credit memo: its allocation applies credit (amount_paid) only', type: 'value_error.credit_memo' });
      }
      if (a.adjustment_id) issues.push({ loc: loc('adjustment_id'), msg: 'must be null on a credit memo: its allocation applies credit (amount_paid) only', type: 'value_error.credit_memo' });
    }
    if (!memo && a.adjustment_id && !input.activeAdjustments.has(a.adjustment_id)) {
      issues.push({ loc: loc('adjustment_id'), msg: 'is not an active adjustment of this organization', type: 'value_error.not_found' });
    }
    if (!a.adjustment_id && new Money(a.adjustment_amount).gt(0)) {
      issues.push({ loc: loc('adjustment_amount'), msg: 'an adjustment amount needs an adjustment_id', type: 'value_error.missing' });
    }
    const relieved = relievedBy(a);
    if (relieved.lte(0)) {
      issues.push({ loc: loc('amount_paid'), msg: 'the allocation relieves nothing: amount_paid, discount, withheld and adjustment are all zero', type: 'value_error.empty' });
    }
    const open = openAmount(documentOpen(inv), input.relievedElsewhere.get(inv.id));
    if (relieved.gt(open)) {
      issues.push({
        loc: loc('amount_paid'),
        msg: memo
          ? `the credit applied (${fmt(relieved)}) exceeds the open credit of credit memo ${inv.document_number} (${fmt(Money.max(open, 0))})`
          : `paid + discount + withheld + adjustment (${fmt(relieved)}) exceeds the open amount of invoice ${inv.document_number} (${fmt(Money.max(open, 0))})`,
        type: 'value_error.exceeds_open_amount',
      });
    }
    if (memo) return;
    invoicePaid = invoicePaid.plus(a.amount_paid);
    paidTotal = paidTotal.plus(a.amount_paid);
    if (!totalReported && paidTotal.gt(transactionAmount)) {
      totalReported = true;
      issues.push({
        loc: loc('amount_paid'),
        msg: memoCredit.isZero()
          ? `the allocations' amount_paid total (${fmt(paidTotal)}) exceeds the transaction amount (${fmt(transactionAmount)})`
          : `the invoices' amount_paid less the credit memos' credit (${fmt(paidTotal)}) exceeds the transaction amount (${fmt(transactionAmount)})`,
        type: 'value_error.exceeds_transaction_amount',
      });
    }
  });
  if (lastMemo >= 0 && memoCredit.gt(invoicePaid)) {
    issues.push({
      loc: ['body', 'allocations', lastMemo, 'amount_paid'],
      msg: `the credit memos' credit applied (${fmt(memoCredit)}) exceeds the amount_paid of the payment's invoices (${fmt(invoicePaid)}): a payment's cash cannot be negative`,
      type: 'value_error.credit_exceeds_invoices',
    });
  }
  return issues;
}

/**
 * A payment's shortfall recomputed from its allocations (after a user changes them): what the
 * allocated invoices lack after the cash, and why. Components, in the payment's currency:
 *  - `discount`: the allocations' amount_discount;
 *  - `deduction`: their amount_withheld;
 *  - `fee`: their adjustment_amount (a bank fee or short-pay write-off booked to an adjustment);
 *  - `partial`: what stays open on the allocated invoices (open amount − what the allocation relieves).
 * The amount is their sum; the reason is the largest component (ties: discount, deduction, fee,
 * partial). Null when they are all zero: the cash settles what it is allocated to (an overpayment
 * has no shortfall; its rest is `unallocated_amount`). Credit memos applied are not invoices left
 * open, so only invoices count towards `partial`.
 */
export function shortfallOf(
  allocations: readonly AllocationDraft[],
  invoices: ReadonlyMap<string, Pick<LedgerDocument, 'id' | 'kind' | 'amount_open'>>,
  relievedElsewhere: ReadonlyMap<string, string>,
  currency: string,
): { amount: string; reason: 'fee' | 'discount' | 'deduction' | 'partial' } | null {
  const parts = { discount: new Money(0), deduction: new Money(0), fee: new Money(0), partial: new Money(0) };
  for (const a of allocations) {
    parts.discount = parts.discount.plus(a.amount_discount);
    parts.deduction = parts.deduction.plus(a.amount_withheld);
    parts.fee = parts.fee.plus(a.adjustment_amount);
    const inv = invoices.get(a.invoice_id);
    if (inv && inv.kind === 'invoice') {
      const left = openAmount(inv.amount_open, relievedElsewhere.get(inv.id)).minus(relievedBy(a));
      if (left.gt(0)) parts.partial = parts.partial.plus(left);
    }
  }
  const total = parts.discount.plus(parts.deduction).plus(parts.fee).plus(parts.partial);
  if (!total.gt(0)) return null;
  let reason: keyof typeof parts = 'discount';
  for (const k of ['deduction', 'fee', 'partial'] as const) if (parts[k].gt(parts[reason])) reason = k;
  return { amount: formatInCurrency(total, currency), reason };
}
