/**
 * What a collection run decides for one customer (pure; the run's activities feed it the ledger page
 * and the admin-owned facts). The rules, documented on `POST /v2/collections/runs`:
 *
 * - Step rule, per invoice: step k of the customer's policy is due when `as_of_date ≥ net_due_date +
 *   offset_days(k)`, neither k nor any later step of the policy is marked done for the invoice, and
 *   k is the LOWEST such step (an invoice is acted on for one step per run, so chasing that paused
 *   for a promise or a dispute resumes at the step it was on). A reminder step (negative offset) is
 *   not due once the invoice is past due (`as_of_date > net_due_date`).
 * - Grouping: one action per (customer, policy, step) with all its due invoices.
 * - Holds: invoices under an open promise to pay or an open dispute are left out of an action; when
 *   every due invoice of a step is on hold the action is skipped `all_invoices_on_hold`.
 * - Then, in this order: `below_min_overdue` (the customer's overdue total in local currency is below
 *   the step's `min_overdue_lc`), `no_email_address` / `no_phone_number` (the channel has no usable
 *   address; a task step needs none), `email_bouncing` (every address of the customer's email
 *   bounced: the inbox received a failed delivery-status notification for it).
 */
import { partnerEmailAddresses, toE164, type CollectionCandidate } from '@rp/platform';
import type { PlanStep, SkipReason } from '../../domain-types/collections.js';

export type { PlanStep, SkipReason };


export interface PlannedAction {
  policy_id: string;
  step: PlanStep;
  invoice_ids: string[];
  skip_reason: SkipReason | null;
}

const DAY_MS = 86_400_000;

/** `date` (YYYY-MM-DD) plus `days` days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (YYYY-MM-DD each). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/**
 * The step an invoice is due for as of `asOf` (index into `steps`, sorted by offset), or null.
 * `marked` holds the offsets already done for this invoice under this policy.
 */
export function dueStep(steps: readonly PlanStep[], netDueDate: string, asOf: string, marked: ReadonlySet<number>): number | null {
  let first = 0;
  steps.forEach((s, i) => {
    if (marked.has(s.offset_days)) first = i + 1;
  });
  const pastDue = asOf > netDueDate;
  for (let k = first; k < steps.length; k++) {
    const s = steps[k]!;
    if (s.offset_days < 0 && pastDue) continue;
    if (asOf >= addDays(netDueDate, s.offset_days)) return k;
    return null;
  }
  return null;
}

/** Whether `overdueCents` (integer text) is below `minLc` (decimal text with at most 2 decimals). */
function belowMinimum(overdueCents: string, minLc: string | null): boolean {
  if (minLc === null) return false;
  const [whole, frac = ''] = minLc.split('.');
  const minCents = BigInt(whole!) * 100n + BigInt((frac + '00').slice(0, 2));
  return BigInt(overdueCents) < minCents;
}

/**
 * The actions of one customer: `steps` are its policy's steps (sorted by offset), `marks` maps an
 * invoice id to the offsets done for it under that policy, `onHold` the ids of invoices under an open
 * promise or dispute, `bouncing` the lower-case addresses known to bounce.
 */
export function planCustomer(
  customer: CollectionCandidate,
  steps: readonly PlanStep[],
  asOf: string,
  marks: ReadonlyMap<string, ReadonlySet<number>>,
  onHold: ReadonlySet<string>,
  bouncing: ReadonlySet<string> = new Set(),
): PlannedAction[] {
  const addresses = partnerEmailAddresses(customer.email);
  const allBounce = addresses.length > 0 && addresses.every((a) => bouncing.has(a));
  const byStep = new Map<number, string[]>();
  for (const inv of customer.invoices) {
    const k = dueStep(steps, inv.net_due_date, asOf, marks.get(inv.id) ?? new Set());
    if (k === null) continue;
    const list = byStep.get(k) ?? [];
    list.push(inv.id);
    byStep.set(k, list);
  }
  const actions: PlannedAction[] = [];
  for (const [k, due] of [...byStep.entries()].sort((a, b) => a[0] - b[0])) {
    const step = steps[k]!;
    const free = due.filter((id) => !onHold.has(id));
    const base = { policy_id: customer.policy_id, step };
    if (free.length === 0) {
      actions.push({ ...base, invoice_ids: due, skip_reason: 'all_invoices_on_hold' });
    } else if (belowMinimum(customer.overdue_cents, step.min_overdue_lc)) {
      actions.push({ ...base, invoice_ids: free, skip_reason: 'below_min_overdue' });
    } else if (step.channel === 'email' && !customer.email?.trim()) {
      actions.push({ ...base, invoice_ids: free, skip_reason: 'no_email_address' });
    } else if (step.channel === 'email' && allBounce) {
      actions.push({ ...base, invoice_ids: free, skip_reason: 'email_bouncing' });
    } else if (step.channel === 'sms' && !toE164(customer.phone?.trim() ?? '', customer.country ?? undefined)) {
      actions.push({ ...base, invoice_ids: free, skip_reason: 'no_phone_number' });
    } else {
      actions.push({ ...base, invoice_ids: free, skip_reason: null });
    }
  }
  return actions;
}
