/**
 * Predicted overdue (spec 4.3 rule 2): the pure probability model.
 *
 * Lateness of a closed invoice: L = clearing_date − net_due_date, in days (negative when paid early).
 *
 * 1. Survival. From a histogram of lateness values the empirical survival function is
 *    S(d) = #{L > d} / n. A customer's curve is blended with the organization's:
 *    S(d) = w·S_customer(d) + (1 − w)·S_org(d), w = n / (n + k), k = HISTORY_PRIOR_WEIGHT (10),
 *    n = the customer's number of closed invoices (`history_count`). With no history at all in the
 *    organization there is no curve (null) and every invoice is taken as staying unpaid (p = 1).
 * 2. Per invoice. a = today − due (its age now), t = as_of − due (its age at as_of).
 *    p = P(L > t | L > a) = S(t) / S(a) (conditional survival: it is unpaid today).
 *    When as_of ≤ today (t ≤ a) the date has passed for an invoice open today: p = 1.
 *    When S(a) = 0 (no history was ever this late) the history says nothing: p = 1.
 * 3. Per tier. With X_i ~ Bernoulli(p_i) independent, P(Σ X_i·amount_i > threshold) over the signed
 *    amounts (credits are negative), exactly when that is cheap and within a reported error bound
 *    otherwise (see tail-probability.ts). Small cases run here; larger ones go to `offload` (the
 *    worker-thread pool), so a pathological customer does not hold the event loop.
 */

import { Money, type PredictedOverdueRow } from '@rp/platform';
import { exactTail, prepareTail, tailEstimate, statesFor, type PreparedTail, type TailEstimate, type UncertainAmount } from './tail-probability.js';

export { type UncertainAmount } from './tail-probability.js';

export const HISTORY_PRIOR_WEIGHT = 10;

/** One lateness value (days) and how many closed invoices had it. */
export type LatenessBucket = readonly [lateness: number, count: number];

/** Empirical survival S(d) = P(L > d) from a lateness histogram. */
export class SurvivalCurve {
  readonly total: number;
  private readonly values: Float64Array; // distinct lateness values, ascending
  private readonly atOrAbove: Float64Array; // atOrAbove[i] = #{L >= values[i]}

  constructor(buckets: Iterable<LatenessBucket>, sortedDistinct = false) {
    let sorted: (readonly [number, number])[];
    if (sortedDistinct) sorted = buckets as (readonly [number, number])[];
    else {
      const merged = new Map<number, number>();
      for (const [l, c] of buckets) if (c > 0) merged.set(l, (merged.get(l) ?? 0) + c);
      sorted = [...merged.entries()].sort((x, y) => x[0] - y[0]);
    }
    this.values = new Float64Array(sorted.map((e) => e[0]));
    this.atOrAbove = new Float64Array(sorted.length);
    let total = 0;
    for (let i = sorted.length - 1; i >= 0; i--) {
      total += sorted[i][1];
      this.atOrAbove[i] = total;
    }
    this.total = total;
  }

  /** From raw lateness values, one per closed invoice. */
  static fromValues(values: readonly number[]): SurvivalCurve {
    const sorted = Float64Array.from(values).sort();
    const buckets: [number, number][] = [];
    for (let i = 0; i < sorted.length; i++) {
      if (i > 0 && sorted[i] === sorted[i - 1]) buckets[buckets.length - 1][1]++;
      else buckets.push([sorted[i], 1]);
    }
    return new SurvivalCurve(buckets, true);
  }

  /** Number of observations with L > d. */
  countAbove(d: number): number {
    let lo = 0; // first index with values[lo] > d
    let hi = this.values.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.values[mid] > d) hi = mid;
      else lo = mid + 1;
    }
    return lo === this.values.length ? 0 : this.atOrAbove[lo];
  }

  /** S(d) = P(L > d); 0 for an empty curve. */
  survival(d: number): number {
    return this.total === 0 ? 0 : this.countAbove(d) / this.total;
  }
}

export type Survival = (d: number) => number;

/** The customer's curve blended with the organization's: w = n / (n + k). Null when the organization has no history. */
export function blendedSurvival(customer: SurvivalCurve, organization: SurvivalCurve, k = HISTORY_PRIOR_WEIGHT): Survival | null {
  const n = customer.total;
  if (n === 0 && organization.total === 0) return null;
  if (organization.total === 0) return (d) => customer.survival(d);
  const w = n / (n + k);
  if (w === 0) return (d) => organization.survival(d);
  return (d) => w * customer.survival(d) + (1 - w) * organization.survival(d);
}

/**
 * P(still unpaid at as_of | unpaid today) for an invoice aged `ageNow` days today and `ageAtAsOf`
 * days at as_of (both relative to its net due date).
 */
export function unpaidProbability(survival: Survival | null, ageNow: number, ageAtAsOf: number): number {
  if (ageAtAsOf <= ageNow || survival === null) return 1;
  const now = survival(ageNow);
  if (now <= 0) return 1;
  const p = survival(ageAtAsOf) / now;
  return p > 1 ? 1 : p < 0 ? 0 : p;
}

/**
 * A tier threshold (decimal string ≥ 0) as whole cents: with sums in cents, sum > threshold ⇔
 * sumCents > floor(threshold·100) (e.g. 10.005 → 1000: 10.01 exceeds it, 10.00 does not).
 */
export function thresholdCents(amount: string): number {
  const cents = new Money(amount).times(100).floor();
  return cents.gt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : cents.toNumber();
}

export interface OpenInvoiceAging {
  /** as_of − net_due_date, days */
  ageAtAsOf: number;
  /** open amount in local currency, signed integer cents */
  cents: number;
  /** P(still unpaid at as_of | unpaid today), when already known */
  p?: number;
}

/** The amounts of a tier for one customer: invoices more than `days` past due at as_of, with their p. */
export function tierItems(invoices: readonly OpenInvoiceAging[], days: number, survival: Survival | null, asOfMinusToday: number): UncertainAmount[] {
  const items: UncertainAmount[] = [];
  for (const inv of invoices) {
    if (inv.ageAtAsOf <= days) continue;
    items.push({ cents: inv.cents, p: inv.p ?? unpaidProbability(survival, inv.ageAtAsOf - asOfMinusToday, inv.ageAtAsOf) });
  }
  return items;
}

/** The tier's trip probability for one customer, computed here (exact, or bounded for large cases). */
export function tierTripProbability(
  invoices: readonly OpenInvoiceAging[],
  days: number,
  thresholdCentsValue: number,
  survival: Survival | null,
  asOfMinusToday: number,
): TailEstimate {
  const t = prepareTail(tierItems(invoices, days, survival, asOfMinusToday), thresholdCentsValue);
  return tailEstimate(t, { maxStates: statesFor(t.cents.length) });
}

/**
 * What the event loop computes itself: the exact tail within these limits (about a millisecond);
 * anything larger goes to `offload`.
 */
export const EVENT_LOOP_LIMITS = { maxStates: 1 << 14, maxWork: 1 << 19 };
/** Yield to the event loop after this much synchronous work (ms) while assembling an answer. */
const SLICE_MS = 10;

// ---------------------------------------------------------------- assembling the answer

export interface Tier {
  days: number;
  amount_lc: string;
}

/** One customer as the ledger aggregation returns it (predictedOverdueRows in @rp/platform). */
export type CustomerAging = PredictedOverdueRow;

export interface TrippedTier {
  /** spec 4.3.2: `days`, `amount_threshold_lc` and `amount_lc` are strings */
  days: string;
  amount_threshold_lc: string;
  amount_lc: string;
  invoice_count: number;
  trip_probability: number;
  /** guaranteed |exact − trip_probability| ≤ this (0 when computed exactly) */
  trip_probability_max_error: number;
}

export interface PredictedOverdueCustomer {
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  total_open_lc: string;
  history_count: number;
  /** open invoices in scope left out of every sum: no local amount and no exchange rate to the base currency */
  unconvertible_invoice_count: number;
  tripped_tiers: TrippedTier[];
}

/** A decimal string with at most 2 decimals (as the ledger aggregation returns sums) in whole cents. */
function centsOf(amount: string): number {
  if (amount.startsWith('-')) return -centsOf(amount.slice(1));
  const dot = amount.indexOf('.');
  return dot < 0 ? Number(amount) * 100 : Number(amount.slice(0, dot)) * 100 + Number(amount.slice(dot + 1).padEnd(2, '0').slice(0, 2));
}

/** Whole days from `from` to `to` (both 'YYYY-MM-DD'). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

export interface PredictedOverdueOptions {
  /** computes a tail too large for the event loop (the worker-thread pool); default: computed in place */
  offload?: (t: PreparedTail) => Promise<TailEstimate>;
}

/**
 * Assembles the answer customer by customer, as the ledger's rows arrive: `add` computes a customer's
 * tripped tiers with their probabilities at once (small tails in place, large ones handed to
 * `offload`), `finish` waits for the offloaded tails and returns the customers sorted by their
 * largest tripped amount, descending (ties: partner id ascending). Tiers keep the request's order.
 */
export class PredictedOverdueAssembler {
  private readonly organization: SurvivalCurve;
  private readonly thresholds: { cents: number; text: string }[];
  private readonly out: { customer: PredictedOverdueCustomer; largest: number }[] = [];
  private readonly offloaded: Promise<void>[] = [];

  constructor(
    organizationHistory: Iterable<LatenessBucket>,
    private readonly tiers: readonly Tier[],
    private readonly asOfMinusToday: number,
    private readonly options: PredictedOverdueOptions = {},
  ) {
    this.organization = new SurvivalCurve(organizationHistory);
    this.thresholds = tiers.map((t) => ({ cents: thresholdCents(t.amount_lc), text: new Money(t.amount_lc).toFixed(2) }));
  }

  add(c: CustomerAging): void {
    const { tiers, thresholds, asOfMinusToday } = this;
    const own = SurvivalCurve.fromValues(c.history_lateness);
    const survival = blendedSurvival(own, this.organization);
    // p depends on the invoice only: computed once, shared by the tiers
    const invoices = c.invoice_ages.map((age, i) => ({ ageAtAsOf: age, cents: c.invoice_cents[i], p: unpaidProbability(survival, age - asOfMinusToday, age) }));
    const tripped: TrippedTier[] = [];
    let largest = -Infinity;
    tiers.forEach((tier, i) => {
      const cents = centsOf(c.tier_amounts[i]);
      if (cents <= thresholds[i].cents) return;
      if (cents > largest) largest = cents;
      const t = prepareTail(tierItems(invoices, tier.days, survival, asOfMinusToday), thresholds[i].cents);
      const row: TrippedTier = {
        days: String(tier.days),
        amount_threshold_lc: thresholds[i].text,
        amount_lc: c.tier_amounts[i],
        invoice_count: c.tier_counts[i],
        trip_probability: 0,
        trip_probability_max_error: 0,
      };
      const set = (e: TailEstimate) => {
        row.trip_probability = e.probability;
        row.trip_probability_max_error = e.maxError;
      };
      const quick = exactTail(t, EVENT_LOOP_LIMITS);
      if (quick) set(quick);
      else if (this.options.offload) this.offloaded.push(this.options.offload(t).then(set));
      else set(tailEstimate(t, { maxStates: statesFor(t.cents.length) }));
      tripped.push(row);
    });
    if (tripped.length > 0) {
      this.out.push({
        largest,
        customer: {
          partner_id: c.partner_id,
          partner_name: c.partner_name,
          partner_account_number: c.partner_account_number,
          total_open_lc: c.total_open_lc,
          history_count: own.total,
          unconvertible_invoice_count: c.unconvertible_count,
          tripped_tiers: tripped,
        },
      });
    }
  }

  async finish(): Promise<PredictedOverdueCustomer[]> {
    await Promise.all(this.offloaded);
    const out = this.out;
    out.sort((a, b) => b.largest - a.largest || (a.customer.partner_id < b.customer.partner_id ? -1 : a.customer.partner_id > b.customer.partner_id ? 1 : 0));
    return out.map((o) => o.customer);
  }
}

/**
 * The tripped tiers of each customer with their probabilities (PredictedOverdueAssembler over a list
 * already read), yielding to the event loop every few ms of work.
 */
export async function predictedOverdueCustomers(
  customers: readonly CustomerAging[],
  organizationHistory: Iterable<LatenessBucket>,
  tiers: readonly Tier[],
  asOfMinusToday: number,
  options: PredictedOverdueOptions = {},
): Promise<PredictedOverdueCustomer[]> {
  const assembler = new PredictedOverdueAssembler(organizationHistory, tiers, asOfMinusToday, options);
  let sliceStart = performance.now();
  for (const c of customers) {
    assembler.add(c);
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  return assembler.finish();
}
