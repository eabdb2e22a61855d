/**
 * customerPaymentHabits (onboarding; contract workflows/src/knowledge/contracts.ts),
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
 * Only customers with a payment or remittance in the window are written, by partner id. The figures
 * are read a page of CUSTOMER_HABITS_PAGE_SIZE customers at a time and streamed as JSON Lines into a
 * temporary file, then uploaded to object storage (putFile, streamed from disk) under
 * customerHabitsObjectKey(org, job): the process holds one page, and only the reference
 * {objectKey, customers, size, sha256} is returned through Temporal (bounded for any number of
 * customers). A retry reads again and overwrites the same key. The knowledge service deletes the
 * object when the job ends.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { ApplicationFailure } from '@temporalio/common';
import { getOrganizationProfile, type Db, type ObjectStorage } from '@rp/platform';
import {
  CUSTOMER_HABITS_CONTENT_TYPE,
  CUSTOMER_HABITS_PAGE_SIZE,
  CUSTOMER_HABITS_WINDOW_DAYS,
  customerHabitsObjectKey,
  type CustomerCashHabits,
  type CustomerHabitsObject,
  type CustomerPaymentHabitsInput,
} from '@rp/workflows';
import type { Logger } from 'pino';
import { conversionFactorsTo } from '../store/exchange-rates.js';
import { deductionsByReason, habitsPartners, minorUnits, paymentMethodCounts } from '../store/customer-habits.js';

export interface CustomerHabitsActivityDeps {
  db: Db;
  log: Logger;
  /** null when the service has no object storage configured: the call fails (retryable: configuration can be fixed) */
  storage: ObjectStorage | null;
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

  /** One page of customers after `after` (by partner id), at most `limit`, and the id to continue after (null: last page). */
  async function habitsPage(org: string, start: string, end: string, base: string, after: string | null, limit: number): Promise<{ customers: CustomerCashHabits[]; next: string | null }> {
    const rows = await habitsPartners(db, org, start, end, after, limit + 1);
    const page = rows.slice(0, limit);
    const ids = page.map((r) => r.partner_id);
    const factors = await conversionFactorsTo(db, org, base, end);
    const [methods, deductions, digits] = await Promise.all([
      paymentMethodCounts(db, org, start, end, ids),
      deductionsByReason(db, org, start, end, ids, base, factors),
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
    return { customers, next: rows.length > limit ? page[page.length - 1]!.partner_id : null };
  }

  return {
    async customerPaymentHabits(input: CustomerPaymentHabitsInput): Promise<CustomerHabitsObject> {
      if (!DATE.test(input.windowEnd)) throw ApplicationFailure.nonRetryable(`windowEnd must be YYYY-MM-DD, got ${input.windowEnd}`, 'InvalidInput');
      if (!deps.storage) throw ApplicationFailure.retryable('object storage is not configured for cash-app (S3_ENDPOINT, S3_BUCKET)', 'StorageNotConfigured');
      const storage = deps.storage;
      const end = input.windowEnd;
      const start = shiftDays(end, -CUSTOMER_HABITS_WINDOW_DAYS);
      const objectKey = customerHabitsObjectKey(input.organizationId, input.jobId);
      const profile = await getOrganizationProfile(db, input.organizationId);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'cash-habits-'));
      try {
        const file = path.join(dir, 'cash-habits.jsonl');
        const out = createWriteStream(file);
        let customers = 0;
        try {
          if (profile) {
            const base = profile.base_currency.trim();
            let after: string | null = null;
            for (;;) {
              const page = await habitsPage(input.organizationId, start, end, base, after, CUSTOMER_HABITS_PAGE_SIZE);
              for (const c of page.customers) {
                if (!out.write(`${JSON.stringify(c)}\n`)) await once(out, 'drain');
                customers += 1;
              }
              if (!page.next) break;
              after = page.next;
            }
          }
        } finally {
          out.end();
          await finished(out);
        }
        const { size, sha256 } = await storage.putFile({ key: objectKey, path: file, contentType: CUSTOMER_HABITS_CONTENT_TYPE });
        deps.log.info({ organization_id: input.organizationId, job_id: input.jobId, customers, size }, 'customer payment habits written');
        return { window_start: start, window_end: end, objectKey, customers, size, sha256 };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
