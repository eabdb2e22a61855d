/**
 * buildArAgingReport (contract workflows/src/reports/contracts.ts), on the cash-app task
 * queue: the AR aging of the organization as of the report date, read through the kernel's ledger
 * module in one snapshot with server-side cursors (arAgingPages), streamed into the report files
 * (kernel writeReportFiles: XLSX + CSV in object storage). Nothing but one page of rows and the
 * running totals is ever in memory.
 *
 * Rows: one per customer and business unit of its open invoices (a customer whose invoices belong
 * to two units has two rows; the unit totals add up exactly to the overall total), ordered by
 * customer name. Amounts: local currency (the organization's base currency), integer cents summed
 * as bigint; an invoice without a local amount is converted with the stored exchange rate of its
 * currency on or before the as-of date (the rule of predicted overdue); one that cannot be
 * converted is in no bucket: counted on its row and listed on the XLSX sheet "Not convertible" with
 * its document-currency amount (and per currency in the summary), never summed 1:1; the summary
 * names each stored rate a conversion used ("Converted to EUR: USD"). Only invoices
 * age (credit memos are not in the aging); no due date counts as current.
 *
 * It heartbeats every 5 s (also while the aggregation statement runs) and stops between pages once
 * cancelled. A retry starts over and writes the same object keys.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  AGING_BUCKETS,
  arAgingPages,
  arAgingUnconvertiblePages,
  businessUnitNames,
  displayMinorUnits,
  exchangeRatesToBase,
  getOrganizationProfile,
  unconvertibleOpenInvoices,
  withLedgerSnapshot,
  writeReportFiles,
  WorkerPoolBusyError,
  type ArAgingRow,
  type Db,
  type ObjectStorage,
  type ReportCell,
  type ReportColumn,
} from '@rp/platform';
import { reportObjectPrefix, type BuildReportInput, type BuiltReport, type ReportSummaryRow } from '@rp/workflows';
import type { Logger } from 'pino';
import { conversionFactorsTo } from '../store/exchange-rates.js';

export interface ReportActivityDeps {
  db: Db;
  log: Logger;
  /** null when the service has no object storage configured: the build fails (non-retryable) */
  storage: ObjectStorage | null;
  /** rows per cursor page (default 2000) */
  pageSize?: number;
}

export interface CashAppReportActivities {
  buildArAgingReport(input: BuildReportInput): Promise<BuiltReport>;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NO_UNIT = 'No business unit';

/** The activity's context, or null when called directly (tests, the benchmark). */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

/** Heartbeat every 5 s (also while one long statement runs) until stopped; a no-op outside an activity. */
function keepAlive(ctx: Context | null, progress: () => unknown): () => void {
  if (!ctx) return () => {};
  ctx.heartbeat(progress());
  const timer = setInterval(() => ctx.heartbeat(progress()), 5000);
  return () => clearInterval(timer);
}

/** A NUMERIC text with up to 4 decimals → integer 1/10,000 units (exact). */
function toTenThousandths(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(text.trim());
  if (!m) throw new RangeError(`not an amount: ${text}`);
  const v = BigInt(m[2]!) * 10000n + BigInt((m[3] ?? '').padEnd(4, '0'));
  return m[1] ? -v : v;
}

function displayTenThousandths(v: bigint): string {
  if (v % 100n === 0n) return displayMinorUnits(v / 100n);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const whole = displayMinorUnits(abs / 10000n * 100n).slice(0, -3);
  return `${neg ? '-' : ''}${whole}.${(abs % 10000n).toString().padStart(4, '0')}`;
}

export const AR_AGING_COLUMNS: readonly ReportColumn[] = [
  { header: 'Customer', kind: 'text', width: 36 },
  { header: 'Account number', kind: 'text', width: 18 },
  { header: 'Business unit', kind: 'text', width: 24 },
  ...AGING_BUCKETS.map((b): ReportColumn => ({ header: `${b.label === 'Current' ? 'Current' : `${b.label} days`}`, kind: 'amount' })),
  { header: 'Total', kind: 'amount' },
  { header: 'Open invoices', kind: 'integer' },
  { header: 'Not convertible invoices', kind: 'integer' },
];

const SUMMARY_COLUMNS: readonly ReportColumn[] = [
  { header: 'Business unit', kind: 'text', width: 28 },
  { header: 'Customers', kind: 'integer' },
  ...AR_AGING_COLUMNS.slice(3),
];

const UNCONVERTIBLE_COLUMNS: readonly ReportColumn[] = [
  { header: 'Customer', kind: 'text', width: 36 },
  { header: 'Account number', kind: 'text', width: 18 },
  { header: 'Business unit', kind: 'text', width: 24 },
  { header: 'Document number', kind: 'text', width: 20 },
  { header: 'Currency', kind: 'text', width: 10 },
  { header: 'Open amount (document currency)', kind: 'decimal', width: 20 },
  { header: 'Net due date', kind: 'date', width: 14 },
  { header: 'Days past due', kind: 'integer' },
];

interface Totals {
  buckets: bigint[];
  total: bigint;
  invoices: number;
  unconvertible: number;
  customers: Set<string>;
}

const emptyTotals = (): Totals => ({ buckets: AGING_BUCKETS.map(() => 0n), total: 0n, invoices: 0, unconvertible: 0, customers: new Set() });

function addTo(t: Totals, r: ArAgingRow): void {
  r.buckets.forEach((c, i) => (t.buckets[i]! += c));
  t.total += r.total;
  t.invoices += r.invoice_count;
  t.unconvertible += r.unconvertible_count;
  t.customers.add(r.partner_id);
}

export function createReportActivities(deps: ReportActivityDeps): CashAppReportActivities {
  const { db, log } = deps;
  const pageSize = deps.pageSize ?? 2000;
  return {
    async buildArAgingReport(input: BuildReportInput): Promise<BuiltReport> {
      if (!DATE.test(input.asOfDate)) throw ApplicationFailure.nonRetryable(`asOfDate must be YYYY-MM-DD, got ${input.asOfDate}`, 'InvalidReportInput');
      if (!deps.storage) throw ApplicationFailure.nonRetryable('object storage is not configured for cash-app (S3_ENDPOINT, S3_BUCKET)', 'StorageNotConfigured');
      const storage = deps.storage;
      const organization = await getOrganizationProfile(db, input.organizationId);
      if (!organization) throw ApplicationFailure.nonRetryable('the organization does not exist', 'OrganizationNotFound');
      const base = organization.base_currency.trim();
      const [factors, units] = await Promise.all([
        conversionFactorsTo(db, input.organizationId, base, input.asOfDate),
        businessUnitNames(db, input.organizationId),
      ]);
      const q = { asOfDate: input.asOfDate, conversion: { currencies: [...factors.keys()], factors: [...factors.values()] } };
      const unitName = (id: string | null): string | null => (id ? (units.get(id) ?? id) : null);

      const overall = emptyTotals();
      const perUnit = new Map<string | null, Totals>();
      /** not convertible: currency → [invoices, open amount in 1/10,000] */
      const unconvertible = new Map<string, [number, bigint]>();

      const ctx = activityContext();
      /** between pages: stop when the activity is cancelled (the heartbeats bring the cancellation) */
      const checkCancelled = () => {
        if (ctx?.cancellationSignal.aborted) throw new CancelledFailure('the AR aging report build was cancelled');
      };
      async function* agingRows(trx: Parameters<typeof arAgingPages>[0]): AsyncGenerator<ReportCell[]> {
        for await (const page of arAgingPages(trx, input.organizationId, q, pageSize)) {
          checkCancelled();
          for (const r of page) {
            addTo(overall, r);
            let t = perUnit.get(r.business_unit_id);
            if (!t) perUnit.set(r.business_unit_id, (t = emptyTotals()));
            addTo(t, r);
            yield [r.partner_name, r.partner_account_number, unitName(r.business_unit_id), ...r.buckets, r.total, r.invoice_count, r.unconvertible_count];
          }
        }
      }
      async function* unconvertibleRows(trx: Parameters<typeof arAgingPages>[0]): AsyncGenerator<ReportCell[]> {
        for await (const page of arAgingUnconvertiblePages(trx, input.organizationId, q, pageSize)) {
          checkCancelled();
          for (const d of page) {
            const u = unconvertible.get(d.currency) ?? [0, 0n];
            unconvertible.set(d.currency, [u[0] + 1, u[1] + toTenThousandths(d.amount_open)]);
            yield [d.partner_name, d.partner_account_number, unitName(d.business_unit_id), d.document_number, d.currency, d.amount_open, d.net_due_date, d.days_past_due];
          }
        }
      }
      const unitOrder = () =>
        [...perUnit.entries()].sort(([a], [b]) => {
          if (a === null) return 1;
          if (b === null) return -1;
          return unitName(a)!.localeCompare(unitName(b)!) || a.localeCompare(b);
        });
      function* summaryRows(): Generator<ReportCell[]> {
        for (const [id, t] of unitOrder()) yield [unitName(id) ?? NO_UNIT, t.customers.size, ...t.buckets, t.total, t.invoices, t.unconvertible];
        yield ['All business units', overall.customers.size, ...overall.buckets, overall.total, overall.invoices, overall.unconvertible];
      }

      const baseName = `ar-aging-${input.asOfDate}`;
      const title = `AR aging report as of ${input.asOfDate}`;
      let rowsWritten = 0;
      const stopHeartbeats = keepAlive(ctx, () => ({ rows: rowsWritten }));
      let written;
      try {
        written = await withLedgerSnapshot(db, (trx) =>
          writeReportFiles({
            storage,
            objectPrefix: reportObjectPrefix(input.organizationId, input.configId, input.runId),
            baseName,
            title,
            created: new Date(`${input.asOfDate}T00:00:00Z`),
            onProgress: (rows) => (rowsWritten = rows),
            progressEvery: 1000,
            sheets: [
              { name: 'AR aging', columns: AR_AGING_COLUMNS, rows: agingRows(trx) },
              { name: 'Not convertible', columns: UNCONVERTIBLE_COLUMNS, rows: unconvertibleRows(trx) },
              { name: 'Summary', columns: SUMMARY_COLUMNS, rows: { [Symbol.iterator]: summaryRows } },
            ],
          }),
        );
      } catch (err) {
        // every report thread of this worker busy: the attempt fails as retryable and runs again after the backoff
        if (err instanceof WorkerPoolBusyError) throw ApplicationFailure.retryable(err.detail ?? err.message, 'ReportBuildBusy');
        throw err;
      } finally {
        stopHeartbeats();
      }

      // The rates the conversion used, named in the summary (DESIGN §9: a converted figure says how):
      // one per currency of open invoices without a local amount that has a stored rate.
      const needingConversion = await unconvertibleOpenInvoices(db, input.organizationId, {}, [base]);
      const ratesUsed = await exchangeRatesToBase(db, input.organizationId, base, input.asOfDate, needingConversion.map((c) => c.currency));
      const amounts = (t: Totals) => [...t.buckets.map(displayMinorUnits), displayMinorUnits(t.total)];
      const summaryRowsOut: ReportSummaryRow[] = [
        ...unitOrder().map(([id, t]) => ({ label: unitName(id) ?? NO_UNIT, values: [String(t.customers.size), ...amounts(t), String(t.unconvertible)] })),
        { label: 'All business units', values: [String(overall.customers.size), ...amounts(overall), String(overall.unconvertible)] },
        ...[...ratesUsed.values()]
          .sort((a, b) => a.currency.localeCompare(b.currency))
          .map((r) => ({
            label: `Converted to ${base}: ${r.currency}`,
            values: ['', ...AGING_BUCKETS.map(() => ''), `1 ${r.currency} = ${r.rate} ${base} (stored ${r.pair} rate of ${r.rate_date})`, ''],
          })),
        ...[...unconvertible.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([currency, [count, amount]]) => ({
            label: `Not convertible to ${base}: ${currency}`,
            values: ['', ...AGING_BUCKETS.map(() => ''), `${displayTenThousandths(amount)} ${currency}`, String(count)],
          })),
      ];
      const built: BuiltReport = {
        title,
        summaryColumns: ['Business unit', 'Customers', ...AR_AGING_COLUMNS.slice(3, 10).map((c) => `${c.header} (${base})`), 'Not convertible invoices'],
        summaryRows: summaryRowsOut,
        rowCount: written.rowCounts[0]!,
        counts: {
          customers: overall.customers.size,
          business_units: perUnit.size,
          open_invoices: overall.invoices,
          unconvertible_invoices: overall.unconvertible,
          total_open_lc_cents: Number(overall.total),
          ...Object.fromEntries(AGING_BUCKETS.map((b, i) => [`${b.key}_lc_cents`, Number(overall.buckets[i])])),
        },
        artifacts: written.artifacts,
      };
      log.info({ organization_id: input.organizationId, run_id: input.runId, rows: built.rowCount, customers: built.counts.customers }, 'AR aging report built');
      return built;
    },
  };
}
