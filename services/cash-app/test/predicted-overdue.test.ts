import { describe, expect, it } from 'vitest';
import {
  SurvivalCurve,
  blendedSurvival,
  predictedOverdueCustomers,
  thresholdCents,
  tierTripProbability,
  unpaidProbability,
  type LatenessBucket,
  type UncertainAmount,
} from '../src/domain/predicted-overdue.js';
import { boundedTail, exactTail, exactTailByMeetInTheMiddle, prepareTail, tailProbability, type TailEstimate } from '../src/domain/tail-probability.js';
import { WorkerPoolBusyError } from '@rp/platform';
import { TailPool } from '../src/domain/tail-pool.js';

const histogram = (values: number[]): LatenessBucket[] => values.map((v) => [v, 1] as const);

// The customer's closed invoices were paid at lateness L = [-5, 0, 10, 20, 40] days (n = 5);
// the rest of the organization paid at [0, 0, 5, 30, 60]. The organization curve holds all ten.
const customer = new SurvivalCurve(histogram([-5, 0, 10, 20, 40]));
const organization = new SurvivalCurve(histogram([-5, 0, 10, 20, 40, 0, 0, 5, 30, 60]));

describe('survival curves', () => {
  it('empirical S(d) = #{L > d} / n', () => {
    expect(customer.total).toBe(5);
    expect(customer.survival(-10)).toBe(1);
    expect(customer.survival(-5)).toBe(4 / 5);
    expect(customer.survival(10)).toBe(2 / 5);
    expect(customer.survival(39)).toBe(1 / 5);
    expect(customer.survival(40)).toBe(0);
    expect(organization.survival(0)).toBe(6 / 10); // 5, 10, 20, 30, 40, 60
    expect(new SurvivalCurve([]).survival(3)).toBe(0);
  });

  it('blends with weight w = n / (n + 10)', () => {
    // w = 5 / 15 = 1/3: S(10) = 1/3·(2/5) + 2/3·(4/10) = 0.4
    const s = blendedSurvival(customer, organization)!;
    expect(s(10)).toBeCloseTo(0.4, 12);
    // a customer without history takes the organization's curve
    expect(blendedSurvival(new SurvivalCurve([]), organization)!(30)).toBeCloseTo(0.2, 12);
    // no history anywhere: no curve
    expect(blendedSurvival(new SurvivalCurve([]), new SurvivalCurve([]))).toBeNull();
  });
});

describe('hand-computed example', () => {
  // today = 2026-12-01, as_of = 2026-12-31: as_of − today = 30 days.
  //   A: due 2026-11-21, 1000.00 → age now a = 10, at as_of t = 40
  //   B: due 2026-11-01,  500.00 → a = 30, t = 60
  //   C: due 2026-12-11,  300.00 → a = −10, t = 20
  // Blended S = 1/3·S_customer + 2/3·S_org:
  //   S(10) = 1/3·2/5 + 2/3·4/10 = 0.4      S(40) = 1/3·0 + 2/3·1/10 = 1/15
  //   S(30) = 1/3·1/5 + 2/3·2/10 = 0.2      S(60) = 0
  //   S(−10) = 1                            S(20) = 1/3·1/5 + 2/3·3/10 = 4/15
  //   p_A = S(40)/S(10) = (1/15)/0.4 = 1/6
  //   p_B = S(60)/S(30) = 0
  //   p_C = S(20)/S(−10) = 4/15
  const s = blendedSurvival(customer, organization)!;
  const invoices = [
    { ageAtAsOf: 40, cents: 100_000 },
    { ageAtAsOf: 60, cents: 50_000 },
    { ageAtAsOf: 20, cents: 30_000 },
  ];

  it('conditional survival per invoice', () => {
    expect(unpaidProbability(s, 10, 40)).toBeCloseTo(1 / 6, 12);
    expect(unpaidProbability(s, 30, 60)).toBe(0);
    expect(unpaidProbability(s, -10, 20)).toBeCloseTo(4 / 15, 12);
  });

  it('tier probabilities', () => {
    // days 15, threshold 1200.00: all three are > 15 days late at as_of; B drops out (p = 0);
    // only A and C together (1300.00) exceed: 1/6 · 4/15 = 2/45
    expect(tierTripProbability(invoices, 15, thresholdCents('1200.00'), s, 30).probability).toBeCloseTo(2 / 45, 12);
    // threshold 250.00: A or C exceeds alone: 1 − (5/6)(11/15) = 1 − 55/90 = 7/18
    expect(tierTripProbability(invoices, 15, thresholdCents('250'), s, 30).probability).toBeCloseTo(7 / 18, 12);
    // days 30: only A (t = 40) and B (t = 60); B is certainly paid, A alone exceeds 900: 1/6
    expect(tierTripProbability(invoices, 30, thresholdCents('900'), s, 30).probability).toBeCloseTo(1 / 6, 12);
    // above the maximum possible sum (1800.00 with B): 0
    expect(tierTripProbability(invoices, 15, thresholdCents('1800'), s, 30).probability).toBe(0);
  });

  it('a date already past gives 1 for invoices open then', () => {
    // as_of 10 days before today: every invoice open today was open then (p = 1), so the
    // probability is 1 exactly when the aged sum exceeds the threshold.
    const past = [
      { ageAtAsOf: 0, cents: 100_000 },
      { ageAtAsOf: 20, cents: 50_000 },
    ];
    expect(unpaidProbability(s, 30, 20)).toBe(1);
    expect(unpaidProbability(s, 30, 30)).toBe(1);
    expect(tierTripProbability(past, 0, thresholdCents('400'), s, -10).probability).toBe(1);
    expect(tierTripProbability(past, 0, thresholdCents('500'), s, -10).probability).toBe(0);
  });

  it('falls back to p = 1 beyond the history and without history', () => {
    // aged 70 today: no closed invoice was ever later than 60, S(70) = 0
    expect(unpaidProbability(s, 70, 100)).toBe(1);
    expect(unpaidProbability(null, 0, 100)).toBe(1);
  });
});

function bruteForce(items: UncertainAmount[], threshold: number): number {
  let total = 0;
  for (let mask = 0; mask < 1 << items.length; mask++) {
    let sum = 0;
    let pr = 1;
    items.forEach((it, i) => {
      if (mask & (1 << i)) {
        sum += it.cents;
        pr *= it.p;
      } else pr *= 1 - it.p;
    });
    if (sum > threshold) total += pr;
  }
  return total;
}

// a small deterministic generator (mulberry32) so a failure reproduces
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('exact tail probability', () => {

  it('matches brute-force enumeration on random small cases', () => {
    const r = rng(20261122);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(r() * 12);
      const items: UncertainAmount[] = [];
      for (let i = 0; i < n; i++) {
        const kind = r();
        // some certain (p = 1), some impossible (p = 0), repeated amounts, zero amounts
        const p = kind < 0.1 ? 1 : kind < 0.15 ? 0 : r();
        const cents = r() < 0.2 ? 5000 : r() < 0.05 ? 0 : 1 + Math.floor(r() * 20000);
        items.push({ cents, p });
      }
      const total = items.reduce((s, it) => s + it.cents, 0);
      const threshold = Math.floor(r() * (total + 100));
      expect(tailProbability(items, threshold).probability).toBeCloseTo(bruteForce(items, threshold), 12);
    }
  });

  it('matches brute force when the partial sums outgrow the working buffers', () => {
    // 16 amounts with all 2^16 subset sums distinct (powers of two + 1) and the threshold in the middle
    const items = Array.from({ length: 16 }, (_, i) => ({ cents: 2 ** i + 1, p: 0.3 + 0.04 * i }));
    const threshold = 2 ** 15;
    expect(tailProbability(items, threshold).probability).toBeCloseTo(bruteForce(items, threshold), 12);
    // and again with the grown buffers reused
    expect(tailProbability(items.slice(0, 10), 500).probability).toBeCloseTo(bruteForce(items.slice(0, 10), 500), 12);
  });

  it('treats the threshold strictly (exceeds, not reaches)', () => {
    expect(tailProbability([{ cents: 1000, p: 0.5 }], 1000).probability).toBe(0);
    expect(tailProbability([{ cents: 1000, p: 0.5 }], 999).probability).toBe(0.5);
    expect(thresholdCents('10.005')).toBe(1000);
    expect(thresholdCents('0')).toBe(0);
  });

  it('models signed amounts: +1000 (p = 1), −600 (p = 1), +500 (p = 0.5) over 500 → 0.5', () => {
    // the certain part is 400.00, so only the uncertain 500.00 can take it past 500.00
    const items = [
      { cents: 100_000, p: 1 },
      { cents: -60_000, p: 1 },
      { cents: 50_000, p: 0.5 },
    ];
    expect(tailProbability(items, 50_000).probability).toBe(0.5);
    expect(bruteForce(items, 50_000)).toBe(0.5);
    // an uncertain credit: +1000 certain, −600 with p = 0.25 → exceeds 500 only when the credit is gone: 0.75
    expect(tailProbability([{ cents: 100_000, p: 1 }, { cents: -60_000, p: 0.25 }], 50_000).probability).toBeCloseTo(0.75, 15);
  });

  it('matches brute force with credits (negative amounts) on random small cases', () => {
    const r = rng(8);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(r() * 12);
      const items: UncertainAmount[] = [];
      for (let i = 0; i < n; i++) {
        const kind = r();
        const p = kind < 0.1 ? 1 : kind < 0.15 ? 0 : r();
        const cents = (r() < 0.35 ? -1 : 1) * (r() < 0.2 ? 5000 : 1 + Math.floor(r() * 20000));
        items.push({ cents, p });
      }
      const pos = items.reduce((s, it) => s + Math.max(0, it.cents), 0);
      const neg = items.reduce((s, it) => s + Math.min(0, it.cents), 0);
      const threshold = Math.floor(neg - 100 + r() * (pos - neg + 200));
      expect(tailProbability(items, threshold).probability, JSON.stringify({ items, threshold })).toBeCloseTo(bruteForce(items, threshold), 12);
    }
  });
});

describe('bounded tail probability', () => {

  it('encloses the brute-force answer within the reported error on small cases forced past a tiny state budget', () => {
    const r = rng(4242);
    let bounded = 0;
    for (let trial = 0; trial < 200; trial++) {
      const n = 4 + Math.floor(r() * 10);
      const items: UncertainAmount[] = Array.from({ length: n }, () => ({ cents: (r() < 0.2 ? -1 : 1) * (1 + Math.floor(r() * 500_000)), p: 0.05 + 0.9 * r() }));
      const total = items.reduce((s, it) => s + Math.max(0, it.cents), 0);
      const threshold = Math.floor(r() * total);
      const exact = bruteForce(items, threshold);
      const e = tailProbability(items, threshold, { maxStates: 4 });
      if (e.resolution > 1) bounded++;
      expect(Math.abs(e.probability - exact), JSON.stringify({ items, threshold, e })).toBeLessThanOrEqual(e.maxError + 1e-12);
    }
    expect(bounded).toBeGreaterThan(50); // the bounded path really ran
  });

  it('stays exact (error 0, resolution 1) when the distribution is small', () => {
    const e = tailProbability([{ cents: 100_000_000, p: 0.5 }, { cents: 100_000_000, p: 0.5 }], 150_000_000);
    expect(e).toEqual({ probability: 0.25, maxError: 0, resolution: 1 });
    // 40 equal amounts have only 41 distinct sums: exact however large the amounts
    const equal = Array.from({ length: 40 }, () => ({ cents: 2_500_000, p: 0.5 }));
    const eq = tailProbability(equal, 50_000_000);
    expect(eq.resolution).toBe(1);
    expect(eq.probability).toBeCloseTo(exactTailByMeetInTheMiddle(equal, 50_000_000), 12);
  });

  it('bounds the pathological customer: 40 uncertain invoices around a 1,000,000.00 tier, error within the bound and below 1e-2', () => {
    const r = rng(40);
    const items = Array.from({ length: 40 }, () => ({ cents: 2_000_000 + Math.floor(r() * 6_000_000), p: 0.2 + 0.6 * r() }));
    const threshold = 100_000_000;
    const exact = exactTailByMeetInTheMiddle(items, threshold);
    const e = tailProbability(items, threshold);
    expect(e.resolution).toBeGreaterThan(1);
    expect(e.maxError).toBeLessThan(1e-2);
    expect(Math.abs(e.probability - exact)).toBeLessThanOrEqual(e.maxError + 1e-12);
    // the exact run alone gives up within its limits rather than growing without bound
    expect(exactTail(prepareTail(items, threshold), { maxStates: 1 << 14 })).toBeNull();
    const b = boundedTail(prepareTail(items, threshold), 1000);
    expect(Math.abs(b.probability - exact)).toBeLessThanOrEqual(b.maxError + 1e-12);
  });

  it('computes on a worker thread what it computes in place', async () => {
    const pool = new TailPool(1);
    try {
      const r = rng(7);
      const items = Array.from({ length: 30 }, () => ({ cents: 1_000_000 + Math.floor(r() * 9_000_000), p: r() }));
      const t = prepareTail(items, 80_000_000);
      const [a, b] = await Promise.all([pool.estimate(t), pool.estimate(prepareTail(items.slice(0, 5), 1_000_000))]);
      expect(a).toEqual(tailProbability(items, 80_000_000));
      expect(b).toEqual(tailProbability(items.slice(0, 5), 1_000_000));
    } finally {
      await pool.close();
    }
    await expect(pool.estimate(prepareTail([{ cents: 5, p: 0.5 }], 1))).rejects.toThrow(/closed/);
  });

  it('refuses a tail with 503 and Retry-After when every thread computes and the queue is full', async () => {
    const pool = new TailPool(1, 1);
    try {
      const r = rng(11);
      const items = Array.from({ length: 30 }, () => ({ cents: 1_000_000 + Math.floor(r() * 9_000_000), p: r() }));
      const t = prepareTail(items, 80_000_000);
      const running = pool.estimate(t);
      const waiting = pool.estimate(t);
      const refused = await pool.estimate(t).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WorkerPoolBusyError);
      expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
      // the refused tail took no place: the two accepted ones complete with the in-place answer
      expect(await running).toEqual(tailProbability(items, 80_000_000));
      expect(await waiting).toEqual(tailProbability(items, 80_000_000));
      expect(pool.pending).toBe(0);
    } finally {
      await pool.close();
    }
  });
});

describe('assembling the answer', () => {

  it('lists tripped tiers with days, thresholds and amounts as strings, and offloads only large tails', async () => {
    const row = {
      partner_id: 'p-1',
      partner_name: 'Signed Co',
      partner_account_number: null,
      total_open_lc: '900.00',
      unconvertible_count: 2,
      tier_amounts: ['900.00'],
      tier_counts: [3],
      invoice_ages: [100, 100, 60],
      invoice_cents: [100_000, -60_000, 50_000],
      history_lateness: [],
    };
    // no history anywhere: p = 1 for all → certain 900.00 > 500.00
    let offloaded = 0;
    const offload = async (t: Parameters<typeof exactTail>[0]): Promise<TailEstimate> => {
      offloaded++;
      return tailProbability([...t.cents].map((c, i) => ({ cents: c, p: t.p[i] })), t.threshold);
    };
    const out = await predictedOverdueCustomers([row], [], [{ days: 30, amount_lc: '500' }], 30, { offload });
    expect(out).toEqual([
      {
        partner_id: 'p-1',
        partner_name: 'Signed Co',
        partner_account_number: null,
        total_open_lc: '900.00',
        history_count: 0,
        unconvertible_invoice_count: 2,
        tripped_tiers: [{ days: '30', amount_threshold_lc: '500.00', amount_lc: '900.00', invoice_count: 3, trip_probability: 1, trip_probability_max_error: 0 }],
      },
    ]);
    expect(offloaded).toBe(0);
    // 40 uncertain invoices (history spread over 0..120 days) around a 1,000,000.00 tier: offloaded
    const r = rng(3);
    const big = {
      ...row,
      tier_amounts: ['2000000.00'],
      tier_counts: [40],
      invoice_ages: Array.from({ length: 40 }, (_, i) => 31 + i),
      invoice_cents: Array.from({ length: 40 }, () => 2_000_000 + Math.floor(r() * 6_000_000)),
      history_lateness: Array.from({ length: 121 }, (_, i) => i),
    };
    const heavy = await predictedOverdueCustomers([big], [], [{ days: 0, amount_lc: '1000000.00' }], 30, { offload });
    expect(offloaded).toBe(1);
    expect(heavy[0].tripped_tiers[0].trip_probability_max_error).toBeGreaterThan(0);
    expect(heavy[0].tripped_tiers[0].trip_probability_max_error).toBeLessThan(1e-2);
  });
});
