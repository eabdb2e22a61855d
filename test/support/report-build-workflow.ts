/**
 * Test-only workflow: calls one report build activity on the task queue of the service that owns it
 * (the way the scheduled-report workflow does), so tests reach buildArAgingReport and
 * buildIntegrationSyncReport through the services' real workers. Run by a test worker on its own
 * task queue (test/reports-data.test.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { BuildReportInput, BuiltReport, ReportBuildActivities } from '../../workflows/src/reports/contracts.js';

export async function buildReportForTest(activity: keyof ReportBuildActivities, taskQueue: string, input: BuildReportInput): Promise<BuiltReport> {
  const acts = proxyActivities<ReportBuildActivities>({ taskQueue, startToCloseTimeout: '5 minutes', heartbeatTimeout: '2 minutes', retry: { maximumAttempts: 1 } });
  return acts[activity](input);
}
