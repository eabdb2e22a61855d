/**
 * buildIntegrationSyncReport (contract workflows/src/reports/contracts.ts), on the
 * integrations task queue: per connection of the organization its health, and per model its last
 * successful sync and its sync runs of [periodStart, periodEnd) (completed, failed, cancelled, in
 * progress), the records they synced and their errors (user-facing, addresses removed), read from
 * this service's own tables and written as XLSX + CSV to object storage (kernel writeReportFiles).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ObjectStorage, storageConfigFrom, WorkerPoolBusyError, writeReportFiles, type Db } from '@rp/platform';
import { reportObjectPrefix, type BuildReportInput, type BuiltReport } from '@rp/workflows';
import type { Logger } from 'pino';
import type { IntegrationsConfig } from '../config.js';
import { SYNC_REPORT_COLUMNS, SYNC_SUMMARY_COLUMNS, summarizeConnections, summaryValues, syncReportCells } from '../domain/sync-report.js';
import { syncReportRows } from '../store/sync-report.js';

export interface SyncReportActivityDeps {
  db: Db;
  log: Logger;
  /** null when the service has no object storage configured: the build fails (non-retryable) */
  storage: ObjectStorage | null;
}

export interface IntegrationsReportActivities {
  buildIntegrationSyncReport(input: BuildReportInput): Promise<BuiltReport>;
}

function heartbeat(details: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // not in an activity context
  }
}

const instant = (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s));

export function createSyncReportActivities(deps: SyncReportActivityDeps): IntegrationsReportActivities {
  const { db, log } = deps;
  return {
    async buildIntegrationSyncReport(input: BuildReportInput): Promise<BuiltReport> {
      if (!instant(input.periodStart) || !instant(input.periodEnd) || Date.parse(input.periodStart) > Date.parse(input.periodEnd)) {
        throw ApplicationFailure.nonRetryable(`the report period must be two ISO instants, start ≤ end (got ${input.periodStart} – ${input.periodEnd})`, 'InvalidReportInput');
      }
      if (!/^\d{4}-\d{2}-\d{2}$/.test(input.asOfDate)) throw ApplicationFailure.nonRetryable(`asOfDate must be YYYY-MM-DD, got ${input.asOfDate}`, 'InvalidReportInput');
      if (!deps.storage) throw ApplicationFailure.nonRetryable('object storage is not configured for integrations (S3_ENDPOINT, S3_BUCKET)', 'StorageNotConfigured');
      const rows = await syncReportRows(db, input.organizationId, input.periodStart, input.periodEnd);
      heartbeat({ rows: rows.length });
      const summaries = summarizeConnections(rows);
      const totals = summaries.reduce(
        (t, s) => ({ completed: t.completed + s.completed, failed: t.failed + s.failed, cancelled: t.cancelled + s.cancelled, records: t.records + s.records, lastSuccess: s.lastSuccess && (!t.lastSuccess || s.lastSuccess > t.lastSuccess) ? s.lastSuccess : t.lastSuccess }),
        { completed: 0, failed: 0, cancelled: 0, records: 0, lastSuccess: null as Date | null },
      );
      const day = input.asOfDate;
      const title = `Integration sync report as of ${day}`;
      const written = await writeReportFiles({
        storage: deps.storage,
        objectPrefix: reportObjectPrefix(input.organizationId, input.configId, input.runId),
        baseName: `integration-sync-${day}`,
        title,
        created: new Date(input.periodEnd),
        sheets: [{ name: 'Integration sync', columns: SYNC_REPORT_COLUMNS, rows: rows.map(syncReportCells) }],
      }).catch((err: unknown) => {
        // every report thread of this worker busy: the attempt fails as retryable and runs again after the backoff
        if (err instanceof WorkerPoolBusyError) throw ApplicationFailure.retryable(err.detail ?? err.message, 'ReportBuildBusy');
        throw err;
      });
      const built: BuiltReport = {
        title,
        summaryColumns: SYNC_SUMMARY_COLUMNS,
        summaryRows: [
          ...summaries.map((s) => ({ label: s.name, values: summaryValues(s) })),
          { label: 'All connections', values: summaryValues({ provider: '', health: `${summaries.filter((s) => s.health !== 'healthy').length} not healthy`, ...totals }) },
        ],
        rowCount: written.rowCounts[0]!,
        counts: {
          connections: summaries.length,
          unhealthy_connections: summaries.filter((s) => s.health !== 'healthy').length,
          completed_runs: totals.completed,
          failed_runs: totals.failed,
          cancelled_runs: totals.cancelled,
          records_synced: totals.records,
        },
        artifacts: written.artifacts,
      };
      log.info({ organization_id: input.organizationId, run_id: input.runId, rows: built.rowCount }, 'integration sync report built');
      return built;
    },
  };
}

/** The activities wired to the service's configuration (object storage from S3_*). */
export function syncReportActivities(base: { db: Db; config: IntegrationsConfig; log: Logger }): IntegrationsReportActivities {
  return createSyncReportActivities({ db: base.db, log: base.log, storage: base.config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(base.config)) : null });
}
