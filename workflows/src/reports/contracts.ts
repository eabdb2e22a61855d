/**
 * Contracts of the scheduled-report workflow's cross-service activities.
 *
 * The report configuration and the workflow live in services/admin (task queue `admin`); the data of
 * each report is built by the service that owns it, on its own task queue (Temporal's way across
 * service boundaries: no service reads another's schema):
 * - `buildArAgingReport` on the cash-app task queue (ledger read through the kernel's ledger module);
 * - `buildIntegrationSyncReport` on the integrations task queue.
 *
 * A report's rows can be far larger than a Temporal payload (2 MB): the build activity streams its
 * rows into the report files (XLSX and CSV) in object storage and returns only the summary and the
 * files' object keys. The admin send activity attaches the files (or links them, presigned, when
 * over the attachment limit).
 */
import { TASK_QUEUES } from '../task-queues.js';

export const REPORT_TYPES = ['integration_sync_report', 'ar_aging_report'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** Task queue of the service that builds each report type's data. */
export const REPORT_BUILD_TASK_QUEUE: Record<ReportType, string> = {
  ar_aging_report: TASK_QUEUES.cashApp,
  integration_sync_report: TASK_QUEUES.integrations,
};

export interface BuildReportInput {
  organizationId: string;
  /** report config id and run id: the files' object keys derive from them (idempotent on retry). */
  configId: string;
  runId: string;
  /** IANA timezone of the organization at run time. */
  timezone: string;
  /** Report date (YYYY-MM-DD) in the organization's timezone: the aging "as of" date. */
  asOfDate: string;
  /** Period the report covers (ISO instants, [start, end)): the sync report's runs of the period. */
  periodStart: string;
  periodEnd: string;
}

/** One report file the build activity wrote to object storage. */
export interface ReportArtifact {
  /** file name shown to the recipient, e.g. `ar-aging-2026-11-23.xlsx` */
  filename: string;
  contentType: string;
  objectKey: string;
  size: number;
  sha256: string;
}

/** One line of the email's summary table (already formatted for display). */
export interface ReportSummaryRow {
  label: string;
  values: string[];
}

export interface BuiltReport {
  /** email subject line's report part, e.g. "AR aging report as of 2026-11-23" */
  title: string;
  /** headers of the summary table and its rows (the HTML body is rendered by the send activity) */
  summaryColumns: string[];
  summaryRows: ReportSummaryRow[];
  /** data rows written to the files (customers for AR aging, connection-model rows for the sync report) */
  rowCount: number;
  /** exact totals worth recording on the run (e.g. `total_open_lc_cents`, `customers`, `failed_runs`) */
  counts: Record<string, number>;
  /** the XLSX and the CSV, in that order */
  artifacts: ReportArtifact[];
}

/** Implemented by services/cash-app (buildArAgingReport) and services/integrations (buildIntegrationSyncReport). */
export interface ReportBuildActivities {
  buildArAgingReport(input: BuildReportInput): Promise<BuiltReport>;
  buildIntegrationSyncReport(input: BuildReportInput): Promise<BuiltReport>;
}

/** Object key prefix of a run's files (the build activity writes `${reportObjectPrefix(...)}/<filename>`). */
export function reportObjectPrefix(organizationId: string, configId: string, runId: string): string {
  return `reports/${organizationId}/${configId}/${runId}`;
}
