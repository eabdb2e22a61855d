/**
 * Scheduled reports' events through the gateway: `report.sent` and `report.failed` appear in
 * `GET /v2/events` with the run exactly as `GET /v2/report-configs/{id}/runs` shows it, once per run
 * (a retried recording records nothing twice), nothing for a recording that rolled back, and only for
 * the organization that owns them. Real admin and cash-app workers (the real AR aging build), the
 * real SMTP sink, and a loopback SMTP server that refuses every recipient for the failed run.
 *
 * SQL set-up, for a state no endpoint can produce: a test trigger on admin.events that fails the
 * first insert of a `report.sent` event (the transaction recording the run sent rolls back after its
 * change and its event were written; the activity's retry then commits). SQL also reads the trigger's
 * counter and the run's email id (which a direct re-run of the recording activity needs).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { connectTemporal, createDb, createLogger, createMailer, type TemporalHandle } from '@rp/platform';
import { scheduledReportWorkflowId } from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { rejectingSmtp, startOneSlotWorker } from './support/smtp-gate.js';
import { failInserts } from './support/faults.js';
import { createScheduledReportActivities } from '../services/admin/src/activities/scheduled-report.js';

let stack: TestStack;
let org: Org;
let other: Org;
let temporal: TemporalHandle;

async function events(token: string, type: string): Promise<any[]> {
  const res = await stack.request('GET', `/v2/events?type=${type}&page_size=200`, { token });
  expect(res.status).toBe(200);
  return res.body.data;
}
const ofRun = (list: any[], runId: string) => list.filter((e) => e.data.object.id === runId);

async function runAsApi(o: Org, configId: string, runId: string) {
  const runs = await stack.request('GET', `/v2/report-configs/${configId}/runs?page_size=200`, { token: o.token });
  return runs.body.data.find((r: any) => r.id === runId);
}

async function sendNow(o: Org, to: string) {
  const config = await stack.request('POST', '/v2/report-configs', { token: o.token, body: { report_type: 'ar_aging_report', frequency: 'daily', time: '07:30', recipient_emails: [to] } });
  expect(config.status).toBe(200);
  const sent = await stack.request('POST', `/v2/report-configs/${config.body.id}/send`, { token: o.token });
  expect(sent.status).toBe(200);
  const result = await temporal.client.workflow.getHandle(scheduledReportWorkflowId(config.body.id, sent.body.id)).result();
  return { configId: config.body.id as string, runId: sent.body.id as string, result };
}

/** The recording activities, as a retried attempt of the worker runs them. */
async function withActivities(fn: (a: ReturnType<typeof createScheduledReportActivities>) => Promise<void>) {
  const db = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
  try {
    await fn(createScheduledReportActivities({ db, log: createLogger('report-events-test', 'silent'), temporal: temporal.client, mailer: createMailer(stack.env.SMTP_URL), from: 'reports@example.com', storage: null, linkTtlSeconds: 60 }));
  } finally {
    await db.destroy();
  }
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'] });
  [org, other] = await Promise.all([stack.onboard('Report Events Org'), stack.onboard('Other Report Org')]);
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('report events', () => {
  let sentRun: { configId: string; runId: string };

  it('records report.sent once with the run as the API shows it; a recording that rolled back after its event left nothing', async () => {
    const fault = await failInserts(stack, { table: 'admin.events', when: `NEW.type = 'report.sent'`, name: 'fail_report_sent' });
    try {
      const to = `events.${randomBytes(4).toString('hex')}@example.com`;
      const { configId, runId, result } = await sendNow(org, to);
      sentRun = { configId, runId };
      expect(result).toMatchObject({ status: 'sent', runId });
      expect(await waitForMail(to)).toHaveLength(1);
      expect(await fault.attempts()).toBe(2); // the first recording wrote its event and rolled back; the retry committed
      const sent = ofRun(await events(org.token, 'report.sent'), runId);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ object: 'event', type: 'report.sent' });
      const run = await runAsApi(org, configId, runId);
      expect(run.status).toBe('sent');
      expect(sent[0].data.object).toEqual(run);
      expect((await stack.request('GET', `/v2/events/${sent[0].id}`, { token: org.token })).body).toEqual(sent[0]);
      expect(ofRun(await events(org.token, 'report.failed'), runId)).toHaveLength(0);
    } finally {
      await fault.restore();
    }
  }, 120_000);

  it('a recording retried after it committed records nothing twice', async () => {
    const before = ofRun(await events(org.token, 'report.sent'), sentRun.runId);
    const [email] = await stack.sql(`SELECT id, message_id FROM admin.report_emails WHERE run_id = $1`, [sentRun.runId]);
    await withActivities(async (a) => {
      await new MockActivityEnvironment({ attempt: 2 }).run(a.recordReportSent, { organizationId: org.organizationId, runId: sentRun.runId, emailId: email.id, messageId: email.message_id });
      await new MockActivityEnvironment({ attempt: 2 }).run(a.markReportRunFailed, { organizationId: org.organizationId, runId: sentRun.runId, error: 'late' });
    });
    expect(ofRun(await events(org.token, 'report.sent'), sentRun.runId)).toEqual(before);
    expect(ofRun(await events(org.token, 'report.failed'), sentRun.runId)).toHaveLength(0);
  });

  it('records report.failed once when the email is refused, with the run as the API shows it', async () => {
    const smtp = await rejectingSmtp();
    await stack.workers.admin!.close();
    const rejecting = await startOneSlotWorker(stack, 'admin', `smtp://127.0.0.1:${smtp.port}`);
    let failed: { configId: string; runId: string; result: any };
    try {
      failed = await sendNow(other, `refused.${randomBytes(4).toString('hex')}@example.com`);
    } finally {
      await rejecting.close();
      await smtp.close();
      await stack.startWorker('admin');
    }
    expect(failed.result).toMatchObject({ status: 'failed', runId: failed.runId });
    const list = ofRun(await events(other.token, 'report.failed'), failed.runId);
    expect(list).toHaveLength(1);
    const run = await runAsApi(other, failed.configId, failed.runId);
    expect(run).toMatchObject({ status: 'failed', sent_at: null });
    expect(list[0].data.object).toEqual(run);
    await withActivities(async (a) => {
      await new MockActivityEnvironment({ attempt: 2 }).run(a.markReportRunFailed, { organizationId: other.organizationId, runId: failed.runId, error: run.error });
    });
    expect(ofRun(await events(other.token, 'report.failed'), failed.runId)).toEqual(list);
    expect(ofRun(await events(other.token, 'report.sent'), failed.runId)).toHaveLength(0);
  }, 120_000);

  it('each organization sees only its own report events', async () => {
    expect(ofRun(await events(other.token, 'report.sent'), sentRun.runId)).toHaveLength(0);
    const [mine] = ofRun(await events(org.token, 'report.sent'), sentRun.runId);
    expect((await stack.request('GET', `/v2/events/${mine.id}`, { token: other.token })).status).toBe(404);
    expect(await events(org.token, 'report.failed')).toEqual([]);
  });
});
