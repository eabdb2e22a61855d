/**
 * Statement lines of the matching benchmark and their ground truth, and the pool of open documents
 * the month's customer scenarios draw from (each invoice is paid by at most one line).
 */
import { fmtCents, Rng } from './random.js';
import type { Currency, Customer, Doc, World } from './world.js';

export type ShortfallReason = 'fee' | 'discount' | 'deduction' | 'partial';

/** One document relieved by a line, in cents. A credit memo's `paid` is the credit applied (positive). */
export interface TruthAllocation {
  document: string;
  paid: number;
  discount: number;
  withheld: number;
  adjustment: number;
}

export interface Truth {
  scenario: string;
  /** a finer label inside the scenario (the noise, the name form, how the payer is known), or null */
  variant: string | null;
  /** the payer's customer code; null for a credit that is not a customer payment */
  partner: string | null;
  allocations: TruthAllocation[];
  /** why the invoices are relieved by more than the deposit, and by how much (cents) */
  shortfall: { amount: number; reason: ShortfallReason } | null;
  notAPayment: boolean;
}

export interface Line {
  /** the bank's reference of the entry (AcctSvcrRef): how the benchmark finds the line again */
  id: string;
  account: string;
  currency: Currency;
  /** cents, positive (credits) */
  amount: number;
  bookingDate: string;
  counterpartyName: string | null;
  counterpartyIban: string | null;
  counterpartyAccount: string | null;
  remittance: string | null;
  endToEndId: string | null;
  transactionCode: string;
  truth: Truth;
}

export const CREDIT_TRANSFER = 'PMNT/RCDT/ESCT';

export function allocationOf(d: Doc, parts: Partial<Omit<TruthAllocation, 'document'>> = {}): TruthAllocation {
  return { document: d.number, paid: parts.paid ?? d.open, discount: parts.discount ?? 0, withheld: parts.withheld ?? 0, adjustment: parts.adjustment ?? 0 };
}

/** The line's cash: invoices' paid minus credit memos applied (the deposit, less any overpayment left unallocated). */
export function truthCash(t: Truth, kinds: ReadonlyMap<string, Doc['kind']>): number {
  return t.allocations.reduce((s, a) => s + (kinds.get(a.document) === 'credit_memo' ? -a.paid : a.paid), 0);
}

/** Number of subsets of `amounts` summing to `target` (stops counting at `limit`). */
export function subsetCount(amounts: readonly number[], target: number, limit = 2): number {
  const sorted = [...amounts].sort((a, b) => b - a);
  const suffix = sorted.map((_, i) => sorted.slice(i).reduce((s, x) => s + x, 0));
  let count = 0;
  const walk = (i: number, rest: number): void => {
    if (count >= limit) return;
    if (rest === 0) {
      count++;
      return;
    }
    if (i >= sorted.length || rest < 0 || suffix[i]! < rest) return;
    walk(i + 1, rest - sorted[i]!);
    walk(i + 1, rest);
  };
  walk(0, target);
  return count;
}

/** The open documents of the world at the month's statement and which of them lines already pay. */
export class Pool {
  readonly byCustomer = new Map<string, Doc[]>();
  readonly customers: Customer[];
  readonly customerByCode = new Map<string, Customer>();
  readonly kinds = new Map<string, Doc['kind']>();
  /** every document number and reference (normalized): a typo must not produce one of them */
  readonly knownKeys = new Set<string>();
  private readonly used = new Set<string>();
  private readonly relieved: ReadonlySet<string>;

  constructor(world: World, relievedBeforeMonth: ReadonlySet<string>, readonly learned: ReadonlySet<string>) {
    this.customers = world.customers;
    this.relieved = relievedBeforeMonth;
    for (const c of world.customers) this.customerByCode.set(c.code, c);
    for (const d of world.documents) {
      this.kinds.set(d.number, d.kind);
      this.knownKeys.add(normalizeKey(d.number));
      if (d.reference) this.knownKeys.add(normalizeKey(d.reference));
      if (!d.statusOpen || d.open <= 0 || relievedBeforeMonth.has(d.number)) continue;
      const list = this.byCustomer.get(d.customer) ?? [];
      list.push(d);
      this.byCustomer.set(d.customer, list);
    }
  }

  /** open invoices (or credit memos) of a customer, in a currency, that no line pays yet */
  free(customer: string, opts: { kind?: Doc['kind']; currency?: Currency; whole?: boolean } = {}): Doc[] {
    return (this.byCustomer.get(customer) ?? []).filter(
      (d) => !this.used.has(d.number) && d.kind === (opts.kind ?? 'invoice') && (!opts.currency || d.currency === opts.currency) && (!opts.whole || d.open === d.amount),
    );
  }

  /** every open invoice of the customer in the currency (paid by a line or not): what an engine sees */
  openInvoices(customer: string, currency: Currency): Doc[] {
    return (this.byCustomer.get(customer) ?? []).filter((d) => d.kind === 'invoice' && d.currency === currency);
  }

  take(docs: Doc[]): Doc[] {
    for (const d of docs) this.used.add(d.number);
    return docs;
  }

  isRelievedBeforeMonth(number: string): boolean {
    return this.relieved.has(number);
  }
}

export function normalizeKey(value: string): string {
  return value.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** The account of the organization a payment in `currency` arrives on. */
export function accountFor(currency: Currency): string {
  return currency === 'EUR' ? 'EUR-MAIN' : currency;
}

/** A business day of the statement's month (fixed dates: the world does not depend on today). */
export function bookingDay(r: Rng, start: string, end: string): string {
  for (;;) {
    const from = Date.parse(`${start}T00:00:00Z`);
    const days = Math.round((Date.parse(`${end}T00:00:00Z`) - from) / 86_400_000);
    const d = new Date(from + r.int(0, days) * 86_400_000);
    if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) return d.toISOString().slice(0, 10);
  }
}

/** A payer's own end-to-end reference (no document number in it), or none. */
export function endToEnd(r: Rng): string | null {
  return r.chance(0.5) ? null : `ZV${r.digits(8)}-${r.int(1, 999)}`;
}

export function describeLine(l: Line): string {
  return `${l.id} ${fmtCents(l.amount)} ${l.currency} ${l.counterpartyName ?? '-'} | ${l.remittance ?? ''} | ${l.truth.scenario}${l.truth.variant ? `/${l.truth.variant}` : ''}`;
}
