/**
 * customerPaymentHabits (issue 15 part 2, onboarding; contract workflows/src/knowledge/contracts.ts),
 * on the cash-app task queue: per customer (ledger partner) of the organization, the cash-app figures
 * of the knowledge pipeline's CustomerPaymentStats over the window [windowEnd − 365 days, windowEnd]:
 * - payment_count: live payments (unapproved or approved) assigned to the customer, dated by
 *   payment_date, else the deposit's booking or value date;
 * - usual_payment_method (+ share of payment_count): the most frequent payment_method stated by the
 *   remittance advice matched to those payments (payments have no method of their own; ties go to the
 *   alphabetically first method); null when no payment has one;
 * - remittance_count and the share naming at least one invoice number (an allocation with a
 *   non-empty invoice_number), dated by transaction_date, else the day received;
 * - deductions: allocations of those payments written off to an adjustment (adjustment_amount ≠ 0;
 *   cash-app has no deductions table: a short payment is recorded that way), reason = the
 *   adjustment's name, total converted to the organization's base currency with the latest stored
 *   rate on or before windowEnd (deductions in a currency without a rate are left out of count and
 *   total, never summed 1:1).
 * Only customers with a payment or remittance in the window are returned, by partner id, a page at a
 * time (aggregates only: a page of 500 is ~100 KB). Read-only, so a retry just reads again.
 */
import { ApplicationFailure } from '@temporalio/common';
import { getOrganizationProfile, type Db } from '@rp/platform';
import {
  CUSTOMER_HABITS_PAGE_SIZE,
  CUSTOMER_HABITS_WINDOW_DAYS,
  type CustomerCashHabits,
  type CustomerPaymentHabitsInput,
  type CustomerPaymentHabitsPage,
} from '@rp/workflows';
import type { Logger } from 'pino';
import { conversionFactorsTo } from '../store/exchange-rates.js';
import { deductionsByReason, habitsPartners, minorUnits, paymentMethodCounts } from '../store/customer-habits.js';

export interface CustomerHabitsActivityDeps {
  db: Db;
  log: Logger;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function shiftDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Sum of decimal strings with at most 4 decimals, exact, formatted with `digits` decimals. */
function sumDecimals(values: string[], digits: number): string {
  let total = 0n;
  for (const v of values) {
    const m = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(v.trim());
    if (!m) throw new RangeError(`not an amount: ${v}`);
    const n = BigInt(m[2]!) * 10000n + BigInt((m[3] ?? '').padEnd(4, '0'));
    total += m[1] ? -n : n;
  }
  const neg = total < 0n;
  const abs = neg ? -total : total;
  const scale = 10n ** BigInt(4 - digits);
  const rounded = (abs + scale / 2n) / scale; // the parts are already rounded to `digits`: exact
  const unit = 10n ** BigInt(digits);
  const text = digits > 0 ? `${rounded / unit}.${(rounded % unit).toString().padStart(digits, '0')}` : `${rounded}`;
  return neg && rounded !== 0n ? `-${text}` : text;
}

export function createCustomerHabitsActivities(deps: CustomerHabitsActivityDeps) {
  const { db } = deps;
  return {
    async customerPaymentHabits(input: CustomerPaymentHabitsInput): Promise<CustomerPaymentHabitsPage> {
      if (!DATE.test(input.windowEnd)) throw ApplicationFailure.nonRetryable(`windowEnd must be YYYY-MM-DD, got ${input.windowEnd}`, 'InvalidInput');
      const limit = Math.max(1, Math.min(CUSTOMER_HABITS_PAGE_SIZE, Math.trunc(input.limit) || CUSTOMER_HABITS_PAGE_SIZE));
      const end = input.windowEnd;
      const start = shiftDays(end, -CUSTOMER_HABITS_WINDOW_DAYS);
      const profile = await getOrganizationProfile(db, input.organizationId);
      if (!profile) return { window_start: start, window_end: end, customers: [], next_after: null };
      const base = profile.base_currency.trim();
      const rows = await habitsPartners(db, input.organizationId, start, end, input.afterPartnerId, limit + 1);
      const page = rows.slice(0, limit);
      const ids = page.map((r) => r.partner_id);
      const factors = await conversionFactorsTo(db, input.organizationId, base, end);
      const [methods, deductions, digits] = await Promise.all([
        paymentMethodCounts(db, input.organizationId, start, end, ids),
        deductionsByReason(db, input.organizationId, start, end, ids, base, factors),
        minorUnits(db, base),
      ]);
      const customers: CustomerCashHabits[] = page.map((r) => {
        const mine = methods.filter((m) => m.partner_id === r.partner_id && m.method !== null).sort((a, b) => b.n - a.n || a.method!.localeCompare(b.method!));
        const usual = mine[0] ?? null;
        const ded = deductions.filter((d) => d.partner_id === r.partner_id && d.n > 0).sort((a, b) => b.n - a.n || a.reason.localeCompare(b.reason));
        return {
          partner_id: r.partner_id,
          first_date: r.first_date,
          last_date: r.last_date,
          payment_count: r.payment_count,
          usual_payment_method: usual ? usual.method : null,
          usual_payment_method_share: usual && r.payment_count > 0 ? usual.n / r.payment_count : null,
          remittance_count: r.remittance_count,
          remittances_with_invoice_numbers_share: r.remittance_count > 0 ? r.remittances_naming_invoice / r.remittance_count : null,
          deduction_count: ded.reduce((s, d) => s + d.n, 0),
          deduction_total: sumDecimals(ded.map((d) => d.total ?? '0'), digits),
          currency: base,
          top_deduction_reasons: ded.slice(0, 3).map((d) => ({ reason: d.reason, count: d.n })),
        };
      });
      return { window_start: start, window_end: end, customers, next_after: rows.length > limit ? page[page.length - 1]!.partner_id : null };
    },
  };
}
