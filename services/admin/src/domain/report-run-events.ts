/**
 * A report run's end with its event (kernel events/): `report.sent` and `report.failed`, recorded in
 * the transaction that records the end, with the run as `GET /v2/report-configs/{id}/runs` shows it.
 * The end is a conditional transition (running → failed; not yet sent → sent), so an activity retried
 * after its first attempt committed records nothing twice. Report runs belong to the organization,
 * not to a business unit.
 */
import { recordEvent, type Db } from '@rp/platform';
import { markReportEmailSent, markRunFailed, markRunSent } from '../store/report-configs.js';
import { reportRunView } from '../views/report-configs.js';

/** Marks the run's email and the run sent (and the config's `last_sent_at`); records `report.sent` when the run was not sent yet. */
export async function recordRunSent(db: Db, input: { organizationId: string; runId: string; emailId: string; messageId: string }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const sentAt = await markReportEmailSent(trx, input.emailId, input.messageId);
    const run = await markRunSent(trx, input.organizationId, input.runId, sentAt);
    if (run) await recordEvent(trx, { organizationId: input.organizationId, type: 'report.sent', resourceId: run.id, object: reportRunView(run) });
    return run !== null;
  });
}

/** Ends a running run failed with `error`; records `report.failed` when this call ended it. */
export async function recordRunFailed(db: Db, organizationId: string, runId: string, error: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const run = await markRunFailed(trx, organizationId, runId, error);
    if (run) await recordEvent(trx, { organizationId, type: 'report.failed', resourceId: run.id, object: reportRunView(run) });
    return run !== null;
  });
}
