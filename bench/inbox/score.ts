/**
 * Scores what the platform made of the corpus against its labels (pure):
 * - customer match at a threshold (default 80, the mailbox setting's default): a message is
 *   *assigned* when its partner_id is set with match_confidence ≥ threshold. Precision = assigned to
 *   the true customer / assigned; recall = assigned to the true customer / messages that have one.
 * - remittance lines: a labelled line is *exact* when a remittance read from its message has an
 *   allocation with the same invoice (its number compared without case, spaces or punctuation, or its
 *   resolved invoice's number) and the same amount_paid to the cent; *exact with deductions* when
 *   the discount and withholding are equal too. Allocations matching no labelled line are *extra*.
 * - category accuracy: the message's category equals the label's.
 * Overall and per house style; every miss listed for reader work.
 */
import type { MessageLabel } from './types.js';

export interface ObservedMessage {
  id: string;
  message_id: string;
  /** the matched customer's code (account_number), null when none */
  partner_code: string | null;
  match_confidence: number | null;
  status: string;
  category: string | null;
  processing_state: string;
  /** the matcher's reasons (`rule: detail`), shown with a miss */
  reasons?: string[];
  /** the kinds of record the message led to (promise_to_pay, dispute, remittance) */
  results?: string[];
}

export interface ObservedAllocation {
  invoice_number: string | null;
  /** the ledger number of invoice_id when the allocation resolved one */
  resolved_number: string | null;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
}

export interface ObservedRemittance {
  id: string;
  transaction_amount: string | null;
  agent_error_code: string | null;
  allocations: ObservedAllocation[];
}

export interface Counts {
  messages: number;
  processed: number;
  with_customer: number;
  assigned: number;
  assigned_correct: number;
  precision: number | null;
  recall: number | null;
  category_correct: number;
  category_accuracy: number;
  remittance_messages: number;
  remittances_read: number;
  lines: number;
  lines_exact: number;
  lines_exact_share: number | null;
  lines_exact_with_deductions: number;
  extra_allocations: number;
}

export interface Miss {
  id: string;
  style: string;
  kind: 'customer' | 'category' | 'line' | 'unprocessed' | 'not_recorded';
  expected: unknown;
  got: unknown;
}

export interface InboxScore {
  threshold: number;
  overall: Counts;
  per_style: Record<string, Counts>;
  per_category: Record<string, Counts>;
  /** promises and disputes recorded from their messages (not only suggested) */
  recorded: { promises: { labelled: number; recorded: number }; disputes: { labelled: number; recorded: number } };
  /** recall over the customers' own answers only (auto-replies and bounces left out: no person wrote them) */
  answers: { with_customer: number; assigned_correct: number; recall: number | null };
  /** precision and recall at other thresholds, for calibration */
  thresholds: { threshold: number; precision: number | null; recall: number | null }[];
  misses: Miss[];
}

const norm = (s: string | null) => (s ?? '').toUpperCase().replace(/[^A-Z0-9]/g, '');
const cents = (s: string | number | null) => (s === null ? NaN : Math.round(Number(s) * 100));
const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10000) / 10000);

function empty(): Counts {
  return { messages: 0, processed: 0, with_customer: 0, assigned: 0, assigned_correct: 0, precision: null, recall: null, category_correct: 0, category_accuracy: 0, remittance_messages: 0, remittances_read: 0, lines: 0, lines_exact: 0, lines_exact_share: null, lines_exact_with_deductions: 0, extra_allocations: 0 };
}

function finish(c: Counts): Counts {
  return { ...c, precision: ratio(c.assigned_correct, c.assigned), recall: ratio(c.assigned_correct, c.with_customer), category_accuracy: ratio(c.category_correct, c.messages) ?? 0, lines_exact_share: ratio(c.lines_exact, c.lines) };
}

const assignedAt = (o: ObservedMessage | undefined, threshold: number) => !!o && o.partner_code !== null && (o.match_confidence ?? 0) >= threshold;

export function scoreInbox(labels: MessageLabel[], observed: ReadonlyMap<string, ObservedMessage>, remittances: ReadonlyMap<string, ObservedRemittance[]>, threshold = 80): InboxScore {
  const overall = empty();
  const perStyle = new Map<string, Counts>();
  const perCategory = new Map<string, Counts>();
  const misses: Miss[] = [];
  for (const l of labels) {
    const o = observed.get(l.message_id);
    const buckets = [overall, perStyle.get(l.style) ?? perStyle.set(l.style, empty()).get(l.style)!, perCategory.get(l.category) ?? perCategory.set(l.category, empty()).get(l.category)!];
    const add = (key: keyof Counts, n = 1) => buckets.forEach((b) => ((b[key] as number) += n));
    add('messages');
    if (!o || o.processing_state !== 'processed') misses.push({ id: l.id, style: l.style, kind: 'unprocessed', expected: 'processed', got: o?.processing_state ?? 'not received' });
    if (o?.processing_state === 'processed') add('processed');
    if (l.customer) add('with_customer');
    if (assignedAt(o, threshold)) {
      add('assigned');
      if (o!.partner_code === l.customer) add('assigned_correct');
    }
    if (assignedAt(o, threshold) ? o!.partner_code !== l.customer : l.customer !== null)
      misses.push({ id: l.id, style: l.style, kind: 'customer', expected: l.customer, got: o ? { partner: o.partner_code, confidence: o.match_confidence, reasons: o.reasons ?? [] } : null });
    if (o?.category === l.category) add('category_correct');
    else misses.push({ id: l.id, style: l.style, kind: 'category', expected: l.category, got: o?.category ?? null });
    const record = l.category === 'promise_to_pay' ? 'promise_to_pay' : l.category === 'dispute' ? 'dispute' : null;
    if (record && !o?.results?.includes(record)) misses.push({ id: l.id, style: l.style, kind: 'not_recorded', expected: l.promise ?? l.dispute, got: o?.results ?? null });
    if (!l.remittance) continue;
    add('remittance_messages');
    const read = remittances.get(l.message_id) ?? [];
    if (read.some((r) => r.allocations.length > 0)) add('remittances_read');
    const pool = read.flatMap((r) => r.allocations);
    const used = new Set<number>();
    for (const line of l.remittance.lines) {
      add('lines');
      const want = norm(line.invoice_number);
      const at = pool.findIndex((a, i) => !used.has(i) && (norm(a.invoice_number) === want || norm(a.resolved_number) === want));
      const a = at >= 0 ? pool[at]! : null;
      if (a) used.add(at);
      if (a && cents(a.amount_paid) === cents(line.amount_paid)) {
        add('lines_exact');
        if (cents(a.amount_discount) === cents(line.amount_discount) && cents(a.amount_withheld) === cents(line.amount_withheld)) add('lines_exact_with_deductions');
      } else misses.push({ id: l.id, style: l.style, kind: 'line', expected: line, got: a });
    }
    add('extra_allocations', pool.length - used.size);
  }
  const thresholds = [50, 60, 70, 80, 90].map((t) => {
    let assigned = 0;
    let correct = 0;
    for (const l of labels) {
      const o = observed.get(l.message_id);
      if (!assignedAt(o, t)) continue;
      assigned++;
      if (o!.partner_code === l.customer) correct++;
    }
    return { threshold: t, precision: ratio(correct, assigned), recall: ratio(correct, labels.filter((l) => l.customer).length) };
  });
  const answers = labels.filter((l) => l.customer && l.category !== 'auto_reply' && l.category !== 'bounce');
  const answersCorrect = answers.filter((l) => {
    const o = observed.get(l.message_id);
    return assignedAt(o, threshold) && o!.partner_code === l.customer;
  }).length;
  const recordedOf = (category: string, object: string) => {
    const of = labels.filter((l) => l.category === category);
    return { labelled: of.length, recorded: of.filter((l) => observed.get(l.message_id)?.results?.includes(object)).length };
  };
  const sorted = (m: Map<string, Counts>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, finish(v)]));
  return {
    threshold,
    overall: finish(overall),
    recorded: { promises: recordedOf('promise_to_pay', 'promise_to_pay'), disputes: recordedOf('dispute', 'dispute') },
    answers: { with_customer: answers.length, assigned_correct: answersCorrect, recall: ratio(answersCorrect, answers.length) },
    per_style: sorted(perStyle),
    per_category: sorted(perCategory),
    thresholds,
    misses,
  };
}

/** The styles scoring worst: by exact-line share (advice styles) and category accuracy, then match recall. */
export function worstStyles(score: InboxScore, n = 5): { style: string; lines_exact_share: number | null; category_accuracy: number; precision: number | null; recall: number | null }[] {
  const key = (c: Counts) => Math.min(c.lines_exact_share ?? 1, c.category_accuracy, c.recall ?? 1, c.precision ?? 1);
  return Object.entries(score.per_style)
    .sort(([, a], [, b]) => key(a) - key(b))
    .slice(0, n)
    .map(([style, c]) => ({ style, lines_exact_share: c.lines_exact_share, category_accuracy: c.category_accuracy, precision: c.precision, recall: c.recall }));
}
