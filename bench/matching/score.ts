/**
 * Scoring of the matching benchmark: each line of the month's statement against its truth, per
 * scenario and overall, and the calibration of proposal scores.
 *
 * Classes of a customer deposit (exactly one each):
 *  - wrong:   the proposal allocates to a document the truth does not relieve, or names a payer other
 *             than the truth's;
 *  - exact:   the payer and every allocation equal the truth to the cent (paid, discount, withheld,
 *             adjustment), and the shortfall's reason and amount too where the proposal states one;
 *  - settled: the documents are relieved as the truth says (per document paid + discount + withheld +
 *             adjustment equal), though split otherwise or without the payer;
 *  - partial: a proposal relieving only documents of the truth, but not all of them or by other
 *             amounts (nothing wrong, a clerk completes it);
 *  - missed:  no proposal, or one that allocates nothing.
 * A credit that is not a customer payment is `not_matched` without a proposal, and `wrong` with one
 * (any payer or allocation). Apart from the classes, `over_relieved` counts the proposals that relieve
 * a document of the truth by more than the truth does.
 */
import type { Line, ShortfallReason } from './lines.js';

/** A proposal as the benchmark reads it: documents by number, payers by customer code, amounts in cents. */
export interface Observed {
  /** customer code of the proposal's partner; an id the world does not know is kept as `?<id>` */
  partner: string | null;
  allocations: { document: string; paid: number; discount: number; withheld: number; adjustment: number }[];
  score: number | null;
  /** undefined: the engine does not state shortfalls; null: it states there is none */
  shortfall?: { amount: number; reason: ShortfallReason } | null;
}

export type LineClass = 'exact' | 'settled' | 'partial' | 'wrong' | 'missed' | 'not_matched';
export const CUSTOMER_CLASSES = ['exact', 'settled', 'partial', 'wrong', 'missed'] as const;
export const CALIBRATION_THRESHOLDS = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95] as const;

const relieved = (a: Observed['allocations'][number]) => a.paid + a.discount + a.withheld + a.adjustment;

export function classify(line: Line, observed: Observed | null): LineClass {
  const t = line.truth;
  const proposes = observed !== null && (observed.allocations.length > 0 || observed.partner !== null);
  if (t.notAPayment) return proposes ? 'wrong' : 'not_matched';
  if (!observed || !proposes) return 'missed';
  const truthDocs = new Map(t.allocations.map((a) => [a.document, a]));
  if (observed.partner !== null && observed.partner !== t.partner) return 'wrong';
  if (observed.allocations.some((a) => !truthDocs.has(a.document))) return 'wrong';
  if (observed.allocations.length === 0) return 'missed';
  const byDoc = new Map<string, Observed['allocations'][number]>();
  for (const a of observed.allocations) {
    const prev = byDoc.get(a.document);
    byDoc.set(a.document, prev ? { document: a.document, paid: prev.paid + a.paid, discount: prev.discount + a.discount, withheld: prev.withheld + a.withheld, adjustment: prev.adjustment + a.adjustment } : a);
  }
  const sameDocs = byDoc.size === truthDocs.size;
  const settled = sameDocs && t.allocations.every((a) => relieved(byDoc.get(a.document)!) === a.paid + a.discount + a.withheld + a.adjustment);
  if (!settled) return 'partial';
  const split = t.allocations.every((a) => {
    const o = byDoc.get(a.document)!;
    return o.paid === a.paid && o.discount === a.discount && o.withheld === a.withheld && o.adjustment === a.adjustment;
  });
  const shortfall =
    observed.shortfall === undefined ||
    (observed.shortfall === null ? t.shortfall === null : t.shortfall !== null && observed.shortfall.reason === t.shortfall.reason && observed.shortfall.amount === t.shortfall.amount);
  return observed.partner === t.partner && split && shortfall ? 'exact' : 'settled';
}

/**
 * Whether the proposal relieves a document of the truth by more than the truth does (a partial payment
 * written off as a short pay, say): not `wrong` by the classes' definition, but closing an amount the
 * customer still owes, so it is counted on its own.
 */
export function overRelieves(line: Line, observed: Observed | null): boolean {
  if (!observed || line.truth.notAPayment) return false;
  const truth = new Map(line.truth.allocations.map((a) => [a.document, a.paid + a.discount + a.withheld + a.adjustment]));
  const got = new Map<string, number>();
  for (const a of observed.allocations) got.set(a.document, (got.get(a.document) ?? 0) + relieved(a));
  return [...got].some(([doc, cents]) => truth.has(doc) && cents > truth.get(doc)!);
}

export interface ScenarioScore {
  lines: number;
  exact: number;
  settled: number;
  partial: number;
  wrong: number;
  missed: number;
  not_matched: number;
}

export interface Scored {
  line: string;
  scenario: string;
  variant: string | null;
  class: LineClass;
  score: number | null;
}

export interface ScoreReport {
  lines: number;
  customer_deposits: number;
  classes: Record<(typeof CUSTOMER_CLASSES)[number], number>;
  /** shares of customer deposits, in percent (2 decimals) */
  rates: { exact: number; settled_or_exact: number; partial: number; wrong: number; missed: number };
  not_a_payment: { lines: number; matched: number; not_matched: number };
  /** customer deposits whose proposal relieves a document of the truth by more than the truth (any class) */
  over_relieved: number;
  per_scenario: Record<string, ScenarioScore>;
  calibration: { threshold: number; proposals: number; right: number; precision: number | null }[];
  scored: Scored[];
}

const pct = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 10000) / 100);
const empty = (): ScenarioScore => ({ lines: 0, exact: 0, settled: 0, partial: 0, wrong: 0, missed: 0, not_matched: 0 });

/** Score every line once; `observed` maps line id → the proposal read for it (absent: none). */
export function scoreLines(lines: readonly Line[], observed: ReadonlyMap<string, Observed>): ScoreReport {
  const scored: Scored[] = lines.map((l) => {
    const o = observed.get(l.id) ?? null;
    return { line: l.id, scenario: l.truth.scenario, variant: l.truth.variant, class: classify(l, o), score: o?.score ?? null };
  });
  const per: Record<string, ScenarioScore> = {};
  const classes = { exact: 0, settled: 0, partial: 0, wrong: 0, missed: 0 };
  const nap = { lines: 0, matched: 0, not_matched: 0 };
  for (const s of scored) {
    const row = (per[s.scenario] ??= empty());
    row.lines++;
    row[s.class]++;
    if (s.scenario.startsWith('not_a_payment')) {
      nap.lines++;
      if (s.class === 'wrong') nap.matched++;
      else nap.not_matched++;
    } else if (s.class !== 'not_matched') {
      classes[s.class]++;
    }
  }
  const deposits = lines.length - nap.lines;
  const over_relieved = lines.filter((l) => overRelieves(l, observed.get(l.id) ?? null)).length;
  const calibration = CALIBRATION_THRESHOLDS.map((threshold) => {
    const at = scored.filter((s) => s.score !== null && s.score >= threshold && s.class !== 'missed' && s.class !== 'not_matched');
    const right = at.filter((s) => s.class === 'exact' || s.class === 'settled').length;
    return { threshold, proposals: at.length, right, precision: at.length ? pct(right, at.length) : null };
  });
  return {
    lines: lines.length,
    customer_deposits: deposits,
    classes,
    rates: {
      exact: pct(classes.exact, deposits),
      settled_or_exact: pct(classes.exact + classes.settled, deposits),
      partial: pct(classes.partial, deposits),
      wrong: pct(classes.wrong, deposits),
      missed: pct(classes.missed, deposits),
    },
    not_a_payment: nap,
    over_relieved,
    per_scenario: Object.fromEntries(Object.entries(per).sort(([a], [b]) => a.localeCompare(b))),
    calibration,
    scored,
  };
}

/** The per-scenario table and the calibration, as Markdown (printed by the benchmark, pasted into docs/benchmarks.md). */
export function formatReport(r: ScoreReport): string {
  const rows = Object.entries(r.per_scenario).map(([name, s]) => {
    const cells = [s.exact, s.settled, s.partial, s.wrong, s.missed].map((n) => `${n}`);
    return `| ${name} | ${s.lines} | ${cells.join(' | ')} | ${s.not_matched || ''} |`;
  });
  const c = r.classes;
  return [
    '| scenario | lines | exact | settled | partial | wrong | missed | not matched |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    `| **customer deposits** | **${r.customer_deposits}** | **${c.exact}** (${r.rates.exact} %) | **${c.settled}** | **${c.partial}** | **${c.wrong}** (${r.rates.wrong} %) | **${c.missed}** | |`,
    `| **not a payment** | **${r.not_a_payment.lines}** | | | | **${r.not_a_payment.matched}** | | **${r.not_a_payment.not_matched}** |`,
    '',
    `Exact ${r.rates.exact} %, settled or exact ${r.rates.settled_or_exact} %, partial ${r.rates.partial} %, wrong ${r.rates.wrong} %, missed ${r.rates.missed} % of ${r.customer_deposits} customer deposits; ` +
      `${r.not_a_payment.matched} of ${r.not_a_payment.lines} credits that are not customer payments matched; ` +
      `${r.over_relieved} proposals relieve an invoice by more than the truth.`,
    '',
    '| score ≥ | proposals | right (exact or settled) | precision |',
    '|---:|---:|---:|---:|',
    ...r.calibration.map((k) => `| ${k.threshold} | ${k.proposals} | ${k.right} | ${k.precision === null ? '–' : `${k.precision} %`} |`),
  ].join('\n');
}
