/**
 * Amount arithmetic of matching: allocations, the write-off tolerance, early-payment discounts by
 * payment terms, the bounded subset-sum search, and the order in which open invoices are paid.
 * All amounts are decimal strings / decimal.js values; the search works in 1/10000 units.
 */
import { Money } from '@rp/platform';
import type { MatchInvoice, ProposedAllocation } from '../../domain-types/matching.js';
import { fitsMinorUnits, minorUnits } from '../payments.js';
import type { MatchConfig } from './config.js';

export type Dec = InstanceType<typeof Money>;

export const ZERO = new Money(0);

export function fmt(d: Dec): string {
  return d.toFixed(4);
}

/** An allocation paying `paid` (and optionally discounting, withholding or adjusting) on one document. */
export function allocation(
  invoiceId: string,
  paid: Dec,
  extra: { adjustment?: { id: string; amount: Dec }; discount?: Dec; withheld?: Dec } = {},
): ProposedAllocation {
  return {
    invoice_id: invoiceId,
    amount_paid: fmt(paid),
    amount_discount: fmt(extra.discount ?? ZERO),
    amount_withheld: fmt(extra.withheld ?? ZERO),
    adjustment_id: extra.adjustment ? extra.adjustment.id : null,
    adjustment_amount: fmt(extra.adjustment ? extra.adjustment.amount : ZERO),
  };
}

/** What an allocation takes off the document's open amount. */
export function relievedBy(a: ProposedAllocation): Dec {
  return new Money(a.amount_paid).plus(a.amount_discount).plus(a.amount_withheld).plus(a.adjustment_amount);
}

export function tolerance(config: MatchConfig, openTotal: Dec): Dec {
  return Money.max(new Money(config.toleranceAmount), openTotal.times(config.tolerancePercent).dividedBy(100));
}

/** Every amount of the allocations fits the currency's minor units (JPY 0, EUR 2, KWD 3 decimals). */
export function allocationsFitMinorUnits(allocations: readonly ProposedAllocation[], currency: string): boolean {
  return allocations.every((a) => [a.amount_paid, a.amount_discount, a.amount_withheld, a.adjustment_amount].every((v) => fitsMinorUnits(v, currency)));
}

/**
 * The early-payment discount an invoice grants on a deposit dated `date`: the first term (earliest
 * due first) whose due_date is on or after the date, its percent of `open` rounded half-up to the
 * currency's minor units. No date, no term in time, or a zero discount: null. Exact rule, no grace days.
 */
export function discountFor(inv: MatchInvoice, open: Dec, date: string | null): { amount: Dec; percent: string; due_date: string } | null {
  if (!date || !inv.discount_terms || inv.discount_terms.length === 0) return null;
  const terms = [...inv.discount_terms].sort((a, b) => a.due_date.localeCompare(b.due_date));
  for (const t of terms) {
    if (t.due_date.slice(0, 10) < date.slice(0, 10)) continue;
    let pct: Dec;
    try {
      pct = new Money(t.percent);
    } catch {
      return null;
    }
    if (!pct.gt(0) || pct.gte(100)) return null;
    const amount = open.times(pct).dividedBy(100).toDecimalPlaces(minorUnits(inv.currency), Money.ROUND_HALF_UP);
    return amount.gt(0) ? { amount, percent: t.percent, due_date: t.due_date } : null;
  }
  return null;
}

/** The shortfall is exactly one of the invoice's early-payment discounts, in time or not (a discount taken late is a deduction, never a fee). */
export function isTermDiscount(inv: MatchInvoice, open: Dec, shortfall: Dec): boolean {
  return (inv.discount_terms ?? []).some((t) => discountFor({ ...inv, discount_terms: [t] }, open, t.due_date)?.amount.eq(shortfall) ?? false);
}

/** Amounts in 1/10000 units (NUMERIC(20,4)) for the subset-sum search. */
export function toUnits(d: Dec): bigint {
  return BigInt(d.times(10_000).toFixed(0));
}

/**
 * Subset of `amounts` (in 1/10000 units) summing exactly to `target`: depth-first in the given
 * order (callers put the preferred invoices first), bounded by `maxSteps` nodes. Returns the
 * first solution's indexes and whether a second, different one exists.
 */
export function findSubsetSum(amounts: readonly bigint[], target: bigint, maxSteps: number): { indexes: number[]; ambiguous: boolean } | null {
  const n = amounts.length;
  const suffix: bigint[] = new Array<bigint>(n + 1).fill(0n);
  for (let i = n - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + amounts[i]!;
  const solutions: number[][] = [];
  let steps = 0;
  const chosen: number[] = [];
  const walk = (i: number, remaining: bigint): void => {
    if (solutions.length >= 2 || steps++ > maxSteps) return;
    if (remaining === 0n && chosen.length > 0) {
      solutions.push([...chosen]);
      return;
    }
    if (i >= n || remaining < 0n || suffix[i]! < remaining) return;
    const a = amounts[i]!;
    if (a > 0n && a <= remaining) {
      chosen.push(i);
      walk(i + 1, remaining - a);
      chosen.pop();
    }
    walk(i + 1, remaining);
  };
  walk(0, target);
  if (solutions.length === 0) return null;
  return { indexes: solutions[0]!, ambiguous: solutions.length > 1 };
}

/** Oldest due first (no due date last), then document number, then id: the order open invoices are paid in. */
export function byDue(a: MatchInvoice, b: MatchInvoice): number {
  return (a.net_due_date ?? '9999-12-31').localeCompare(b.net_due_date ?? '9999-12-31') || a.document_number.localeCompare(b.document_number) || a.id.localeCompare(b.id);
}
