/**
 * P(Σ X_i·a_i > T) for independent X_i ~ Bernoulli(p_i) and signed integer amounts a_i (cents):
 * the tail of predicted overdue (spec 4.3 rule 2). Pure and import-free: it runs on the API's event
 * loop for small cases and in the worker threads of `tail-pool.ts` for large ones.
 *
 * Exact. Certain amounts (p = 1) move the threshold, impossible ones (p = 0, zero amounts) drop out;
 * the rest, largest |a| first, build the distribution of the partial sums still undecided, kept as
 * one sorted array (each step merges it with itself shifted by a_i). A partial sum that exceeds the
 * threshold even if every remaining credit (negative amount) stays open moves its mass to the
 * answer; one that cannot exceed it even if every remaining positive amount stays open is dropped.
 * Branches below 1e-17 are discarded within a total of 1e-13 (reported as the error).
 *
 * Bounded. The number of undecided sums is at most min(2^j, range of sums) and the range grows with
 * the amounts in cents: 40 uncertain invoices around a 1,000,000.00 tier reach millions of states.
 * Past `maxStates` live sums (or `maxWork` merge steps) the exact run stops and the amounts are
 * counted in units of r cents, r = ⌈Σ|a_i| / maxStates⌉, which caps the states at maxStates + m + 1
 * (m uncertain invoices). Rounding every amount down (⌊a_i/r⌋) and up (⌈a_i/r⌉) gives two sums that
 * enclose the exact one in every outcome, so their tail probabilities L ≤ P ≤ U enclose the exact
 * answer: the result is (L + U) / 2 with the guaranteed bound |P − result| ≤ (U − L) / 2 (plus the
 * discarded mass), computed per request and returned with it. Cost: O(m · maxStates) per run.
 */

export interface UncertainAmount {
  /** signed amount in integer cents (a credit is negative) */
  cents: number;
  /** probability that it still counts (is unpaid) */
  p: number;
}

export interface TailEstimate {
  probability: number;
  /** guaranteed: |exact − probability| ≤ maxError */
  maxError: number;
  /** cents per counting unit: 1 = computed exactly */
  resolution: number;
}

export interface TailLimits {
  /** live partial sums allowed before the exact run gives up (and the bounded one takes over) */
  maxStates: number;
  /** merge steps allowed to the exact run (default: unlimited) */
  maxWork?: number;
}

/** The per-request state budget: small enough for ~tens of ms per tier, large enough for 1e-3-level error. */
export const WORK_BUDGET = 1 << 23;
export const MIN_STATES = 1 << 12;
export const MAX_STATES = 1 << 18;

/** maxStates for m uncertain amounts: the bounded run costs about 2·m·maxStates merge steps. */
export function statesFor(m: number): number {
  return Math.max(MIN_STATES, Math.min(MAX_STATES, Math.floor(WORK_BUDGET / Math.max(1, m))));
}

const NEGLIGIBLE_STATE = 1e-17;
const DISCARD_BUDGET = 1e-13;

/** Certain amounts folded into the threshold, the uncertain ones largest |a| first; or a decided answer. */
export interface PreparedTail {
  decided: number | null;
  threshold: number;
  cents: Float64Array;
  p: Float64Array;
}

export function prepareTail(items: readonly UncertainAmount[], thresholdCents: number): PreparedTail {
  let threshold = thresholdCents;
  const uncertain: UncertainAmount[] = [];
  for (const it of items) {
    if (it.cents === 0 || !(it.p > 0)) continue;
    if (it.p >= 1) threshold -= it.cents;
    else uncertain.push(it);
  }
  uncertain.sort((x, y) => Math.abs(y.cents) - Math.abs(x.cents));
  let pos = 0;
  let neg = 0;
  for (const u of uncertain) {
    if (u.cents > 0) pos += u.cents;
    else neg += u.cents;
  }
  // every uncertain credit stays open and the sum still exceeds: certain; every positive stays and it does not: impossible
  const decided = neg > threshold ? 1 : pos <= threshold ? 0 : null;
  return { decided, threshold, cents: Float64Array.from(uncertain, (u) => u.cents), p: Float64Array.from(uncertain, (u) => u.p) };
}

// working buffers (partial sums, their probabilities, and the next step's), grown on demand, reused across calls
let buffers: [Float64Array, Float64Array, Float64Array, Float64Array] = [new Float64Array(256), new Float64Array(256), new Float64Array(256), new Float64Array(256)];

interface RunResult {
  exceeded: number;
  discarded: number;
}

/** One exact run over integer amounts (any unit); null when it outgrows maxStates or maxWork. */
function run(amounts: Float64Array, probs: Float64Array, threshold: number, maxStates: number, maxWork: number): RunResult | null {
  const count = amounts.length;
  if (count === 0) return { exceeded: 0 > threshold ? 1 : 0, discarded: 0 };
  const restPos = new Float64Array(count + 1); // Σ of the positive amounts j..end
  const restNeg = new Float64Array(count + 1); // Σ of the negative amounts j..end
  for (let j = count - 1; j >= 0; j--) {
    const a = amounts[j];
    restPos[j] = restPos[j + 1] + (a > 0 ? a : 0);
    restNeg[j] = restNeg[j + 1] + (a < 0 ? a : 0);
  }
  let [sums, pr, outSums, outPr] = buffers;
  sums[0] = 0;
  pr[0] = 1;
  let n = 1;
  let exceeded = 0;
  let discarded = 0;
  let work = 0;
  let aborted = false;
  for (let j = 0; j < count; j++) {
    const a = amounts[j];
    const p = probs[j];
    const q = 1 - p;
    const floor = threshold - restPos[j + 1]; // s ≤ floor: can no longer exceed
    const sure = threshold - restNeg[j + 1]; // s > sure: exceeds whatever happens next
    if (outSums.length < 2 * n) {
      outSums = new Float64Array(4 * n);
      outPr = new Float64Array(4 * n);
    }
    let m = 0;
    let i = 0; // "paid" branch: sums[i], pr·q
    let k = 0; // "unpaid" branch: sums[k] + a, pr·p
    while (i < n || k < n) {
      let s: number;
      let w: number;
      if (k >= n || (i < n && sums[i] < sums[k] + a)) {
        s = sums[i];
        w = pr[i] * q;
        i++;
      } else if (i < n && sums[i] === sums[k] + a) {
        s = sums[i];
        w = pr[i] * q + pr[k] * p;
        i++;
        k++;
      } else {
        s = sums[k] + a;
        w = pr[k] * p;
        k++;
      }
      if (s > sure) exceeded += w;
      else if (s > floor) {
        if (w < NEGLIGIBLE_STATE && discarded + w <= DISCARD_BUDGET) {
          discarded += w;
          continue;
        }
        outSums[m] = s;
        outPr[m] = w;
        m++;
      }
    }
    work += 2 * n;
    [sums, outSums] = [outSums, sums];
    [pr, outPr] = [outPr, pr];
    n = m;
    if (n === 0) break;
    if (n > maxStates || work > maxWork) {
      aborted = true;
      break;
    }
  }
  buffers = [sums, pr, outSums, outPr];
  return aborted ? null : { exceeded: Math.min(1, exceeded), discarded };
}

/** Exact within the limits (error = discarded mass ≤ 1e-13), or null when the limits are exceeded. */
export function exactTail(t: PreparedTail, limits: TailLimits): TailEstimate | null {
  if (t.decided !== null) return { probability: t.decided, maxError: 0, resolution: 1 };
  const r = run(t.cents, t.p, t.threshold, limits.maxStates, limits.maxWork ?? Infinity);
  return r && { probability: r.exceeded, maxError: r.discarded, resolution: 1 };
}

/** Bounded: amounts counted in units of `resolution` cents, rounded down and up; see the module comment. */
export function boundedTail(t: PreparedTail, resolution: number): TailEstimate {
  if (t.decided !== null) return { probability: t.decided, maxError: 0, resolution: 1 };
  const r = Math.max(1, Math.floor(resolution));
  const thresholdUnits = Math.floor(t.threshold / r); // integer Σ·r > T ⇔ Σ > ⌊T/r⌋
  const lower = unitRun(t, (a) => Math.floor(a / r), thresholdUnits);
  const upper = unitRun(t, (a) => Math.ceil(a / r), thresholdUnits);
  // exact ∈ [L, U] ⊆ [lower.exceeded, upper.exceeded + upper.discarded]
  const lo = lower.exceeded;
  const hi = Math.min(1, upper.exceeded + upper.discarded);
  const top = Math.max(lo, hi);
  return { probability: (lo + top) / 2, maxError: (top - lo) / 2, resolution: r };
}

function unitRun(t: PreparedTail, unit: (a: number) => number, thresholdUnits: number): RunResult {
  const amounts: number[] = [];
  const probs: number[] = [];
  t.cents.forEach((a, i) => {
    const u = unit(a);
    if (u === 0) return;
    amounts.push(u);
    probs.push(t.p[i]);
  });
  return run(Float64Array.from(amounts), Float64Array.from(probs), thresholdUnits, Infinity, Infinity)!;
}

/** The resolution (cents per unit) that keeps the bounded run within `maxStates` live sums. */
export function resolutionFor(t: PreparedTail, maxStates: number): number {
  let span = 0;
  for (const a of t.cents) span += Math.abs(a);
  return Math.max(2, Math.ceil(span / maxStates));
}

/** Exact when it fits in `limits` (small cases always do), else bounded at the resolution that fits. */
export function tailEstimate(t: PreparedTail, limits: TailLimits): TailEstimate {
  return exactTail(t, limits) ?? boundedTail(t, resolutionFor(t, limits.maxStates));
}

/** Convenience: P(Σ X_i·cents_i > thresholdCents) with the per-request budget (`statesFor`). */
export function tailProbability(items: readonly UncertainAmount[], thresholdCents: number, limits?: TailLimits): TailEstimate {
  const t = prepareTail(items, thresholdCents);
  return tailEstimate(t, limits ?? { maxStates: statesFor(t.cents.length) });
}

/**
 * Exactly P(Σ X_i·cents_i > threshold) by meet in the middle: the 2^(m/2) sums of each half, one half
 * sorted with suffix sums of its probabilities. Exponential (use for up to ~44 invoices): the
 * reference the bounded computation is checked and benchmarked against, never used to answer requests.
 */
export function exactTailByMeetInTheMiddle(items: UncertainAmount[], threshold: number): number {
  const half = (part: UncertainAmount[]) => {
    const sums = new Float64Array(1 << part.length);
    const probs = new Float64Array(1 << part.length);
    probs[0] = 1;
    let n = 1;
    for (const it of part) {
      for (let i = 0; i < n; i++) {
        sums[n + i] = sums[i] + it.cents;
        probs[n + i] = probs[i] * it.p;
        probs[i] *= 1 - it.p;
      }
      n *= 2;
    }
    return { sums, probs };
  };
  const a = half(items.slice(0, items.length >> 1));
  const b = half(items.slice(items.length >> 1));
  const order = Uint32Array.from(b.sums, (_, i) => i).sort((x, y) => b.sums[x] - b.sums[y]);
  const sorted = Float64Array.from(order, (i) => b.sums[i]);
  const above = new Float64Array(order.length + 1);
  for (let k = order.length - 1; k >= 0; k--) above[k] = above[k + 1] + b.probs[order[k]];
  let total = 0;
  for (let i = 0; i < a.sums.length; i++) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] > threshold - a.sums[i]) hi = mid;
      else lo = mid + 1;
    }
    total += a.probs[i] * above[lo];
  }
  return total;
}
