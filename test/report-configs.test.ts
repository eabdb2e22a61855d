/**
 * Scheduled reports through the gateway: report configs and their
 * validation, the one-per-type rule (also under concurrent creates), the Temporal Schedules read back from
 * Temporal (created, updated, paused, moved to a new organization timezone, deleted; 07:30 Europe/Berlin on
 * both sides of a daylight-saving change), send-now and scheduled runs delivering to the real SMTP sink
 * (MailDev) with both files, the > 10 MB link path, exactly one email per scheduled time (a re-run and a
 * worker that dies after the SMTP server accepted), tenant isolation, and replays of the workflow.
 *
 * TEST SCAFFOLDING FOR ANOTHER SERVICE: the report data is built by cash-app (buildArAgingReport) and
 * integrations (buildIntegrationSyncReport), implemented on branch i14-data. This file registers a test-only
 * implementation of those two activities on their task queues (REPORT_BUILD_TASK_QUEUE; the stack starts no
 * cash-app or integrations worker here) that writes two small files (XLSX and CSV) to the run's real S3
 * server through the kernel ObjectStorage and returns a BuiltReport per the contract
 * (workflows/src/reports/contracts.ts). It stays after the merge of i14-data on purpose: it makes the builds this
 * file needs (a file over 10 MB, a refused build) on demand; test/scheduled-report-e2e.test.ts runs the real AR
 * aging build through the same workflow. SQL set-up only once: a Schedule whose config row is gone (what a commit
 * failing after the Temporal call leaves; no endpoint can produce it).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker, type ActivityInboundCallsInterceptor, type ActivityExecuteInput, type Next } from '@temporalio/worker';
import { connectTemporal, createDb, createLogger, ObjectStorage, startServiceApi, type CommonConfig, type ServiceModule, type TemporalHandle } from '@rp/platform';
import { adminModule, loadAdminConfig } from '@rp/admin';
import {
  organizationSchedulesWorkflowId,
  REPORT_BUILD_TASK_QUEUE,
  reportObjectPrefix,
  reportScheduleId,
  scheduledReportWorkflowId,
  type BuildReportInput,
  type BuiltReport,
} from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { tcpProxy, type TcpOutage } from './support/outage.js';
import { SERVICE_MODULES } from '../scripts/local/services.js';

let stack: TestStack;
let org: Org;
let other: Org;
let temporal: TemporalHandle;
let storage: ObjectStorage;
/** The admin API reaches Temporal through this proxy, which a test stops (workers connect directly). */
let temporalOutage: TcpOutage;
const buildWorkers: { worker: Worker; done: Promise<void>; connection: NativeConnection }[] = [];
const builds: BuildReportInput[] = [];
/** The next build's CSV size: small, or over the 10 MB attachment limit. */
let largeCsv = false;
/** The next build fails with a business error (as the owning service would refuse). */
let failBuild: string | null = null;

const CSV = 'customer,open_lc\n"<b>Acme</b>",100.00\n\'=1+1,5.00\n';

/** Test-only build activity (see the header): two files in object storage, a BuiltReport back. */
async function testBuild(title: string, input: BuildReportInput): Promise<BuiltReport> {
  builds.push(input);
  if (failBuild) throw ApplicationFailure.nonRetryable(failBuild, 'BusinessError');
  await storage.ready();
  const prefix = reportObjectPrefix(input.organizationId, input.configId, input.runId);
  const xlsx = Buffer.concat([Buffer.from('PK\x03\x04'), randomBytes(256)]);
  const csv = largeCsv ? Buffer.from(CSV + 'x'.repeat(11 * 1024 * 1024)) : Buffer.from(CSV);
  const files = [
    { filename: `report-${input.asOfDate}.xlsx`, contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', bytes: xlsx },
    { filename: `report-${input.asOfDate}.csv`, contentType: 'text/csv', bytes: csv },
  ];
  for (const f of files) {
    await storage.client.send(new PutObjectCommand({ Bucket: storage.bucket, Key: `${prefix}/${f.filename}`, Body: f.bytes, ContentType: f.contentType }));
  }
  return {
    title: `${title} as of ${input.asOfDate}`,
    summaryColumns: ['Customer', 'Open (EUR)'],
    summaryRows: [
      { label: '<script>alert("x")</script>', values: ['1 & 2'] },
      { label: 'Total', values: ['105.00'] },
    ],
    rowCount: 2,
    counts: { customers: 2, total_open_lc_cents: 10500 },
    artifacts: files.map((f) => ({ filename: f.filename, contentType: f.contentType, objectKey: `${prefix}/${f.filename}`, size: f.bytes.length, sha256: 'test' })),
  };
}

async function startBuildWorker(taskQueue: string, activities: object) {
  const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({ connection, namespace: stack.namespace, taskQueue, activities });
  buildWorkers.push({ worker, connection, done: worker.run() });
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
  [org, other] = await Promise.all([stack.onboard('Report Org'), stack.onboard('Other Org')]);
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  storage = new ObjectStorage({
    endpoint: stack.env.S3_ENDPOINT,
    bucket: stack.env.S3_BUCKET,
    accessKeyId: stack.env.S3_ACCESS_KEY_ID,
    secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY,
    region: stack.env.S3_REGION,
  });
  const [temporalHost, temporalPort] = stack.env.TEMPORAL_ADDRESS.split(':');
  temporalOutage = await tcpProxy({ host: temporalHost!, port: Number(temporalPort) });
  const port = stack.apis.admin.port;
  await stack.apis.admin.close();
  stack.apis.admin = await startServiceApi(
    SERVICE_MODULES.admin.module as ServiceModule<CommonConfig, unknown>,
    SERVICE_MODULES.admin.config({ ...stack.env, TEMPORAL_ADDRESS: `127.0.0.1:${temporalOutage.port}` }),
    { port },
  );
  await startBuildWorker(REPORT_BUILD_TASK_QUEUE.ar_aging_report, { buildArAgingReport: (i: BuildReportInput) => testBuild('AR aging report', i) });
  await startBuildWorker(REPORT_BUILD_TASK_QUEUE.integration_sync_report, { buildIntegrationSyncReport: (i: BuildReportInput) => testBuild('Integration sync report', i) });
});
afterAll(async () => {
  for (const w of buildWorkers) {
    w.worker.shutdown();
    await w.done.catch(() => {});
    await w.connection.close();
  }
  storage?.close();
  await temporal?.close();
  await temporalOutage?.start().catch(() => {});
  await stack?.close();
  await temporalOutage?.close();
});

const mailbox = () => `reports.${randomBytes(4).toString('hex')}@example.com`;
const req = (o: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: o.token, body });
const valid = (over: Record<string, unknown> = {}) => ({ report_type: 'ar_aging_report', frequency: 'daily', time: '07:30', recipient_emails: [mailbox()], ...over });
const schedule = (o: Org, type: string) => temporal.client.schedule.getHandle(reportScheduleId(o.organizationId, type));

async function configCount(o: Org): Promise<number> {
  return (await req(o, 'GET', '/v2/report-configs')).body.total_records;
}

async function waitForRun(o: Org, configId: string, runId: string, status = 'sent') {
  for (let i = 0; i < 240; i++) {
    const runs = await req(o, 'GET', `/v2/report-configs/${configId}/runs?page_size=200`);
    const run = runs.body.data.find((r: any) => r.id === runId);
    if (run && run.status !== 'running') {
      expect(run.status).toBe(status);
      return run;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`run ${runId} did not finish`);
}

async function attachment(mail: any, filename: string): Promise<Buffer> {
  const a = mail.attachments.find((x: any) => x.fileName === filename);
  const res = await fetch(`${inject('mailApiUrl')}/email/${mail.id}/attachment/${encodeURIComponent(a.generatedFileName ?? a.fileName)}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('report config validation (each a 422 naming its field; nothing stored)', () => {
  const cases: [string, Record<string, unknown>, (string | number)[]][] = [
    ['unknown report_type', { report_type: 'cash_forecast' }, ['body', 'report_type']],
    ['unknown frequency', { frequency: 'hourly' }, ['body', 'frequency']],
    ['minutes other than 00 or 30', { time: '07:15' }, ['body', 'time']],
    ['hour 24', { time: '24:00' }, ['body', 'time']],
    ['time without two-digit hour', { time: '7:30' }, ['body', 'time']],
    ['weekday missing on weekly', { frequency: 'weekly' }, ['body', 'weekday']],
    ['weekday on daily', { weekday: 2 }, ['body', 'weekday']],
    ['weekday on monthly', { frequency: 'monthly', weekday: 0 }, ['body', 'weekday']],
    ['weekday 7', { frequency: 'weekly', weekday: 7 }, ['body', 'weekday']],
    ['weekday -1', { frequency: 'weekly', weekday: -1 }, ['body', 'weekday']],
    ['no recipient', { recipient_emails: [] }, ['body', 'recipient_emails']],
    ['an invalid recipient', { recipient_emails: ['ok@example.com', 'not-an-email'] }, ['body', 'recipient_emails', 1]],
    ['an invalid cc', { cc_emails: ['x@'] }, ['body', 'cc_emails', 0]],
    ['51 recipients and cc together', { recipient_emails: Array.from({ length: 30 }, (_, i) => `r${i}@example.com`), cc_emails: Array.from({ length: 21 }, (_, i) => `c${i}@example.com`) }, ['body', 'cc_emails']],
    ['last_sent_at (platform only)', { last_sent_at: '2026-01-01T00:00:00Z' }, ['body']],
  ];
  it.each(cases)('%s', async (_name, over, loc) => {
    const res = await req(org, 'POST', '/v2/report-configs', valid(over));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect(res.body.errors.map((e: any) => e.loc)).toContainEqual(loc);
    expect(await configCount(org)).toBe(0);
  });

  it('accepts exactly 50 recipients and cc together, and a weekly config with its weekday (then cleans up)', async () => {
    const fifty = await req(org, 'POST', '/v2/report-configs', valid({ recipient_emails: Array.from({ length: 25 }, (_, i) => `r${i}@example.com`), cc_emails: Array.from({ length: 25 }, (_, i) => `c${i}@example.com`) }));
    expect(fifty.status).toBe(200);
    expect((await req(org, 'DELETE', `/v2/report-configs/${fifty.body.id}`)).status).toBe(204);
    const weekly = await req(org, 'POST', '/v2/report-configs', valid({ frequency: 'weekly', weekday: 6, time: '23:00' }));
    expect(weekly.status).toBe(200);
    expect(weekly.body).toMatchObject({ object: 'report_config', frequency: 'weekly', weekday: 6, cc_emails: [], is_enabled: true, last_sent_at: null });
    // PATCH is checked against the rules on the config as it would be stored
    const toDaily = await req(org, 'PATCH', `/v2/report-configs/${weekly.body.id}`, { frequency: 'daily', weekday: 3 });
    expect(toDaily.status).toBe(422);
    expect(toDaily.body.errors[0].loc).toEqual(['body', 'weekday']);
    const half = await req(org, 'PATCH', `/v2/report-configs/${weekly.body.id}`, { time: '07:45' });
    expect(half.status).toBe(422);
    expect(half.body.errors[0].loc).toEqual(['body', 'time']);
    const lastSent = await req(org, 'PATCH', `/v2/report-configs/${weekly.body.id}`, { last_sent_at: '2026-01-01T00:00:00Z' });
    expect(lastSent.status).toBe(422);
    expect((await req(org, 'GET', `/v2/report-configs/${weekly.body.id}`)).body).toMatchObject({ frequency: 'weekly', weekday: 6, time: '23:00', last_sent_at: null });
    // weekly → daily drops the weekday
    const daily = await req(org, 'PATCH', `/v2/report-configs/${weekly.body.id}`, { frequency: 'daily' });
    expect(daily.body).toMatchObject({ frequency: 'daily', weekday: null });
    const weeklyAgain = await req(org, 'PATCH', `/v2/report-configs/${weekly.body.id}`, { frequency: 'weekly' });
    expect(weeklyAgain.status).toBe(422);
    expect(weeklyAgain.body.errors[0].loc).toEqual(['body', 'weekday']);
    expect((await req(org, 'DELETE', `/v2/report-configs/${weekly.body.id}`)).status).toBe(204);
  });
});

describe('one config per report type per organization', () => {
  it('refuses a second config of a type with 409, also when two creates race (one config, one 409)', async () => {
    const results = await Promise.all([0, 1, 2].map(() => req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report' }))));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const conflict = results.find((r) => r.status === 409)!;
    expect(conflict.body).toMatchObject({ type: 'conflict', status: 409, title: expect.any(String) });
    const list = await req(org, 'GET', '/v2/report-configs');
    expect(list.body.data.filter((c: any) => c.report_type === 'integration_sync_report')).toHaveLength(1);
    const again = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', frequency: 'monthly' }));
    expect(again.status).toBe(409);
    // another organization has its own
    const theirs = await req(other, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report' }));
    expect(theirs.status).toBe(200);
    const created = results.find((r) => r.status === 200)!.body;
    expect((await schedule(org, 'integration_sync_report').describe()).action).toMatchObject({ args: [{ configId: created.id }] });
    await req(org, 'DELETE', `/v2/report-configs/${created.id}`);
    await req(other, 'DELETE', `/v2/report-configs/${theirs.body.id}`);
  });
});

describe('Temporal Schedules of report configs', () => {
  it('creates, updates, pauses, moves to a new timezone and deletes the Schedule with its config', async () => {
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', frequency: 'weekly', weekday: 0, time: '06:00' }));
    expect(created.status).toBe(200);
    const handle = schedule(org, 'integration_sync_report');
    let d = await handle.describe();
    expect(d.scheduleId).toBe(`report-${org.organizationId}-integration_sync_report`);
    expect(d.spec.timezone).toBe('Europe/Berlin');
    expect(d.spec.calendars).toHaveLength(1);
    expect(d.spec.calendars![0]).toMatchObject({ hour: [{ start: 6, end: 6, step: 1 }], minute: [{ start: 0, end: 0, step: 1 }], dayOfWeek: [{ start: 'MONDAY', end: 'MONDAY', step: 1 }] });
    expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(d.policies.catchupWindow).toBe(6 * 3600 * 1000);
    expect(d.state.paused).toBe(false);
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledReport', taskQueue: 'admin', workflowId: scheduledReportWorkflowId(created.body.id) });
    // every next action is a Monday 06:00 in Berlin
    for (const t of d.info.nextActionTimes) {
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t)).toBe('Monday 06:00');
    }

    // PATCH → the spec follows; disabling pauses it
    const patched = await req(org, 'PATCH', `/v2/report-configs/${created.body.id}`, { frequency: 'monthly', time: '18:30', is_enabled: false });
    expect(patched.status).toBe(200);
    d = await handle.describe();
    expect(d.spec.calendars![0]).toMatchObject({ hour: [{ start: 18, end: 18, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }], dayOfMonth: [{ start: 1, end: 1, step: 1 }] });
    expect(d.state.paused).toBe(true);
    expect((await req(org, 'PATCH', `/v2/report-configs/${created.body.id}`, { is_enabled: true })).body.is_enabled).toBe(true);
    expect((await handle.describe()).state.paused).toBe(false);

    // The organization's timezone moves every Schedule of the organization (same local time), through the
    // reconcile workflow started after the commit
    const reconciled = () => temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(org.organizationId)).result();
    const bad = await req(org, 'PATCH', '/v2/organization', { timezone: 'Mars/Olympus' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'timezone']);
    // a zone the runtime still resolves but the tz database dropped (Temporal's Schedules refuse it)
    const dropped = await req(org, 'PATCH', '/v2/organization', { timezone: 'SystemV/AST4' });
    expect(dropped.status).toBe(422);
    expect(dropped.body.errors[0].loc).toEqual(['body', 'timezone']);
    expect((await req(org, 'GET', '/v2/organization')).body.timezone).toBe('Europe/Berlin');
    const tz = await req(org, 'PATCH', '/v2/organization', { timezone: 'America/New_York' });
    expect(tz.status).toBe(200);
    expect(tz.body).toMatchObject({ object: 'organization', timezone: 'America/New_York' });
    await reconciled();
    d = await handle.describe();
    expect(d.spec.timezone).toBe('America/New_York');
    for (const t of d.info.nextActionTimes) {
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t)).toBe('1, 18:30');
    }
    // stored and scheduled in the canonical spelling (Temporal's zone names are case-sensitive)
    expect((await req(org, 'PATCH', '/v2/organization', { timezone: 'europe/berlin' })).body.timezone).toBe('Europe/Berlin');
    await reconciled();
    expect((await handle.describe()).spec.timezone).toBe('Europe/Berlin');
    // another organization's Schedules are untouched by it
    expect((await req(other, 'GET', '/v2/organization')).body.timezone).toBe('Europe/Berlin');

    // DELETE → the Schedule is gone
    expect((await req(org, 'DELETE', `/v2/report-configs/${created.body.id}`)).status).toBe(204);
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await req(org, 'GET', `/v2/report-configs/${created.body.id}`)).status).toBe(404);
  });

  it('runs a daily 07:30 Europe/Berlin report at 07:30 local time on both sides of the daylight-saving changes', async () => {
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', is_enabled: false }));
    const d = await schedule(org, 'integration_sync_report').describe();
    // The Schedule's own spec, evaluated from dates that straddle the changes (Temporal computes the times).
    const local = (t: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
    for (const [startAt, expected] of [
      ['2027-03-26T00:00:00Z', ['2027-03-26T06:30:00.000Z', '2027-03-27T06:30:00.000Z', '2027-03-28T05:30:00.000Z', '2027-03-29T05:30:00.000Z']],
      ['2027-10-29T00:00:00Z', ['2027-10-29T05:30:00.000Z', '2027-10-30T05:30:00.000Z', '2027-10-31T06:30:00.000Z', '2027-11-01T06:30:00.000Z']],
    ] as const) {
      const probeId = `dst-probe-${randomBytes(4).toString('hex')}`;
      const probe = await temporal.client.schedule.create({
        scheduleId: probeId,
        spec: { calendars: d.spec.calendars, timezone: d.spec.timezone, startAt: new Date(startAt) },
        action: { type: 'startWorkflow', workflowType: 'scheduledReport', taskQueue: 'dst-probe-nobody-polls', args: [] },
        state: { paused: true },
      });
      try {
        const times = (await probe.describe()).info.nextActionTimes.slice(0, 4);
        expect(times.map((t) => t.toISOString())).toEqual(expected);
        expect(times.map(local)).toEqual(['07:30', '07:30', '07:30', '07:30']);
      } finally {
        await probe.delete();
      }
    }
    await req(org, 'DELETE', `/v2/report-configs/${created.body.id}`);
  });
});

describe('sending reports', () => {
  let configId: string;
  let to: string;
  let cc: string;

  beforeAll(async () => {
    to = mailbox();
    cc = mailbox();
    const res = await req(org, 'POST', '/v2/report-configs', valid({ recipient_emails: [to], cc_emails: [cc] }));
    expect(res.status).toBe(200);
    configId = res.body.id;
  });

  it('send-now runs the workflow and emails the summary with the XLSX and CSV attached', async () => {
    const sent = await req(org, 'POST', `/v2/report-configs/${configId}/send`);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ object: 'report_run', config_id: configId, trigger: 'manual', status: 'running', report_type: 'ar_aging_report' });
    const handle = temporal.client.workflow.getHandle(scheduledReportWorkflowId(configId, sent.body.id));
    expect(await handle.result()).toMatchObject({ status: 'sent', runId: sent.body.id });
    const run = await waitForRun(org, configId, sent.body.id);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date(run.scheduled_for));
    expect(run).toMatchObject({ as_of_date: today, row_count: 2, counts: { customers: 2, total_open_lc_cents: 10500 }, sent_at: expect.any(String), error: null });
    expect(run.files).toEqual([
      { filename: `report-${today}.xlsx`, size: expect.any(Number), mode: 'attached' },
      { filename: `report-${today}.csv`, size: CSV.length, mode: 'attached' },
    ]);
    // the build got the organization's timezone and the previous local day as its period
    const input = builds.find((b) => b.runId === sent.body.id)!;
    expect(input).toMatchObject({ organizationId: org.organizationId, configId, timezone: 'Europe/Berlin', asOfDate: today, periodEnd: run.period_end, periodStart: run.period_start });
    expect(new Date(run.period_end).getTime() - new Date(run.period_start).getTime()).toBeGreaterThanOrEqual(23 * 3600 * 1000);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(run.period_end))).toBe('00:00');

    const [mail] = await waitForMail(to);
    expect(mail.subject).toBe(`Report Org: AR aging report as of ${today}`);
    expect(mail.cc.map((c: any) => c.address)).toEqual([cc]);
    expect(mail.messageId).toMatch(/^<?[0-9a-f-]+@receivables\.local>?$/);
    // the summary table, escaped
    expect(mail.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(mail.html).toContain('1 &amp; 2');
    expect(mail.html).not.toContain('<script>');
    expect(mail.attachments.map((a: any) => [a.fileName, a.contentType])).toEqual([
      [`report-${today}.xlsx`, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
      [`report-${today}.csv`, 'text/csv'],
    ]);
    expect((await attachment(mail, `report-${today}.csv`)).toString()).toBe(CSV);
    expect((await attachment(mail, `report-${today}.xlsx`)).subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');

    const config = await req(org, 'GET', `/v2/report-configs/${configId}`);
    expect(config.body.last_sent_at).toBe(run.sent_at);

    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'scheduled-report-send-now.json');
  });

  it('links a file over 10 MB with a presigned URL and its expiry instead of attaching it', async () => {
    largeCsv = true;
    try {
      const sent = await req(org, 'POST', `/v2/report-configs/${configId}/send`);
      const run = await waitForRun(org, configId, sent.body.id);
      expect(run.files[0]).toMatchObject({ mode: 'attached' });
      expect(run.files[1]).toMatchObject({ mode: 'linked', size: CSV.length + 11 * 1024 * 1024, link_expires_at: expect.any(String) });
      const mails = await waitForMail(to, { count: 2 });
      const mail = mails.find((m: any) => m.attachments?.length === 1)!;
      expect(mail.attachments.map((a: any) => a.fileName)).toEqual([run.files[0].filename]);
      const link = /<a href="([^"]+)">Download ([^<]+)<\/a>/.exec(mail.html)!;
      expect(link[2]).toBe(run.files[1].filename);
      expect(mail.html).toContain(`the link expires ${run.files[1].link_expires_at}`);
      const url = link[1].replace(/&amp;/g, '&');
      const got = await fetch(url);
      expect(got.status).toBe(200);
      expect(Number(got.headers.get('content-length'))).toBe(run.files[1].size);
      await got.body?.cancel();
      // about 7 days (REPORT_LINK_TTL_SECONDS default)
      const ttl = new Date(run.files[1].link_expires_at).getTime() - Date.now();
      expect(ttl).toBeGreaterThan(6.9 * 24 * 3600 * 1000);
      expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
    } finally {
      largeCsv = false;
    }
  });

  it('a scheduled time is sent exactly once: the Schedule\'s action for yesterday 07:30, run twice, gives one run and one email', async () => {
    const handle = schedule(org, 'ar_aging_report');
    const next = (await handle.describe()).info.nextActionTimes[0]!;
    const previous = new Date(next.getTime() - 24 * 3600 * 1000); // no DST change in late November
    const before = (await waitForMail(to, { count: 99, timeoutMs: 300 })).length;
    const backfill = () => handle.backfill({ start: new Date(previous.getTime() - 60_000), end: new Date(previous.getTime() + 60_000), overlap: ScheduleOverlapPolicy.ALLOW_ALL });
    await backfill();
    let run: any;
    for (let i = 0; i < 240 && !run; i++) {
      const runs = await req(org, 'GET', `/v2/report-configs/${configId}/runs`);
      run = runs.body.data.find((r: any) => r.trigger === 'schedule' && r.status === 'sent');
      if (!run) await new Promise((r) => setTimeout(r, 250));
    }
    expect(run).toMatchObject({ scheduled_for: previous.toISOString(), as_of_date: new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(previous) });
    const workflowId = `${scheduledReportWorkflowId(configId)}-${previous.toISOString().replace('.000Z', 'Z')}`;
    const first = temporal.client.workflow.getHandle(workflowId);
    expect(await first.result()).toMatchObject({ status: 'sent', runId: run.id });
    await replayHistory(stack, workflowId, await first.fetchHistory(), 'scheduled-report-schedule.json');
    const firstRunId = (await first.describe()).runId;

    await backfill(); // the same scheduled time again (an operator's backfill, a re-delivered action)
    let second = await temporal.client.workflow.getHandle(workflowId).describe();
    for (let i = 0; i < 120 && second.runId === firstRunId; i++) {
      await new Promise((r) => setTimeout(r, 250));
      second = await temporal.client.workflow.getHandle(workflowId).describe();
    }
    expect(second.runId).not.toBe(firstRunId);
    expect(await temporal.client.workflow.getHandle(workflowId, second.runId).result()).toEqual({ status: 'already-sent', runId: run.id });
    const runs = await req(org, 'GET', `/v2/report-configs/${configId}/runs`);
    expect(runs.body.data.filter((r: any) => r.trigger === 'schedule')).toHaveLength(1);
    expect(await waitForMail(to, { count: before + 2, timeoutMs: 1000 })).toHaveLength(before + 1);
  });

  it('sends once when the worker dies after the SMTP server accepted, before the activity reported', async () => {
    // A second admin worker whose delivery activity, once it has sent (and recorded "sent"), never reports
    // its completion, as a worker killed at that moment; it is then shut down and the regular worker resumes.
    await stack.workers.admin!.close();
    const config = loadAdminConfig(stack.env);
    const db = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
    const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
    const activities = await adminModule.activities({ config, db, temporal: t, log: createLogger('dying-admin-worker', 'silent') });
    let accepted!: () => void;
    const acceptedOnce = new Promise<void>((r) => (accepted = r));
    class DieAfterDelivery implements ActivityInboundCallsInterceptor {
      constructor(private readonly type: string) {}
      async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
        const result = await next(input);
        if (this.type === 'deliverReportEmail') {
          accepted();
          await new Promise(() => {}); // never reports
        }
        return result;
      }
    }
    const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS });
    const dying = await Worker.create({
      connection,
      namespace: stack.namespace,
      taskQueue: 'admin',
      activities,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      interceptors: { activity: [(ctx) => ({ inbound: new DieAfterDelivery(ctx.info.activityType) })] },
      shutdownForceTime: '1 second',
    });
    const running = dying.run();
    const target = mailbox();
    await req(org, 'PATCH', `/v2/report-configs/${configId}`, { recipient_emails: [target] });
    let runId: string;
    try {
      const sent = await req(org, 'POST', `/v2/report-configs/${configId}/send`);
      runId = sent.body.id;
      await acceptedOnce;
      expect(await waitForMail(target)).toHaveLength(1);
    } finally {
      dying.shutdown();
      await running.catch(() => {});
      await connection.close();
      await t.close();
      await db.destroy();
      await stack.startWorker('admin');
    }
    // The attempt times out (heartbeat) and is retried on the regular worker: it finds the email sent.
    const handle = temporal.client.workflow.getHandle(scheduledReportWorkflowId(configId, runId));
    expect(await handle.result()).toMatchObject({ status: 'sent', runId });
    await waitForRun(org, configId, runId);
    // Before the immediate "sent" write, the retried attempt sent a second email.
    expect(await waitForMail(target, { count: 2, timeoutMs: 1500 })).toHaveLength(1);
    const history = await handle.fetchHistory();
    const deliveries = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverReportEmail');
    expect(deliveries).toHaveLength(1);
    const completed = history.events!.find((e) => e.activityTaskCompletedEventAttributes && e.eventId && deliveries[0]!.eventId && Number(e.activityTaskCompletedEventAttributes.scheduledEventId) === Number(deliveries[0]!.eventId));
    const startedAttempt = history.events!.find((e) => e.activityTaskStartedEventAttributes && Number(e.activityTaskStartedEventAttributes.scheduledEventId) === Number(deliveries[0]!.eventId));
    expect(completed).toBeDefined();
    expect(startedAttempt!.activityTaskStartedEventAttributes!.attempt).toBeGreaterThanOrEqual(2);
  });
});

describe('failures and orphans', () => {
  it('records a failed run with the build\'s error (in words) and sends nothing', async () => {
    const to = mailbox();
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', recipient_emails: [to] }));
    failBuild = 'The organization has no integration connection to report on.';
    try {
      const sent = await req(org, 'POST', `/v2/report-configs/${created.body.id}/send`);
      const result = await temporal.client.workflow.getHandle(scheduledReportWorkflowId(created.body.id, sent.body.id)).result();
      expect(result).toEqual({ status: 'failed', runId: sent.body.id, error: failBuild });
      const run = await waitForRun(org, created.body.id, sent.body.id, 'failed');
      expect(run).toMatchObject({ error: failBuild, sent_at: null });
      expect((await req(org, 'GET', `/v2/report-configs/${created.body.id}`)).body.last_sent_at).toBeNull();
      expect(await waitForMail(to, { timeoutMs: 500 })).toHaveLength(0);
    } finally {
      failBuild = null;
      await req(org, 'DELETE', `/v2/report-configs/${created.body.id}`);
    }
  });

  it('a Schedule whose config is gone deletes itself at its next action and sends nothing', async () => {
    const to = mailbox();
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', recipient_emails: [to] }));
    // SQL set-up (see the header): the row vanishes, the Schedule stays.
    await stack.sql('DELETE FROM admin.report_configs WHERE id = $1', [created.body.id]);
    const handle = schedule(org, 'integration_sync_report');
    await handle.trigger();
    let gone = false;
    for (let i = 0; i < 120 && !gone; i++) {
      gone = await handle.describe().then(() => false, (err) => err instanceof ScheduleNotFoundError);
      if (!gone) await new Promise((r) => setTimeout(r, 250));
    }
    expect(gone).toBe(true);
    expect(await waitForMail(to, { timeoutMs: 500 })).toHaveLength(0);
    // and a new config of the type gets its Schedule again
    const again = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report' }));
    expect(again.status).toBe(200);
    expect((await handle.describe()).action).toMatchObject({ args: [{ configId: again.body.id }] });
    await req(org, 'DELETE', `/v2/report-configs/${again.body.id}`);
  });

  it('an action of a disabled config\'s Schedule (an operator\'s trigger) sends nothing', async () => {
    const to = mailbox();
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', recipient_emails: [to], is_enabled: false }));
    const handle = schedule(org, 'integration_sync_report');
    await handle.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 120 && !workflowId; i++) {
      const action = (await handle.describe()).info.recentActions[0]?.action;
      workflowId = action?.type === 'startWorkflow' ? action.workflow.workflowId : undefined;
      if (!workflowId) await new Promise((r) => setTimeout(r, 250));
    }
    expect(await temporal.client.workflow.getHandle(workflowId!).result()).toEqual({ status: 'skipped', reason: 'the report config is disabled' });
    expect((await req(org, 'GET', `/v2/report-configs/${created.body.id}/runs`)).body.total_records).toBe(0);
    expect(await waitForMail(to, { timeoutMs: 500 })).toHaveLength(0);
    await req(org, 'DELETE', `/v2/report-configs/${created.body.id}`);
  });

  it('lets members read report configs but not write them or send them (403)', async () => {
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report' }));
    const m = await req(org, 'POST', '/v2/users', { email: `member.${randomBytes(3).toString('hex')}@example.com`, name: 'Mia Member', role: 'member', business_unit_ids: [], permissions: [] });
    expect(m.status).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const { token } = (await runCli(['token', 'issue', '--org', org.organizationId, '--user', m.body.id], stack.env)) as { token: string };
    const member = { ...org, token };
    expect((await req(member, 'GET', `/v2/report-configs/${created.body.id}`)).status).toBe(200);
    expect((await req(member, 'GET', '/v2/report-configs')).status).toBe(200);
    expect((await req(member, 'POST', '/v2/report-configs', valid())).status).toBe(403);
    expect((await req(member, 'PATCH', `/v2/report-configs/${created.body.id}`, { time: '09:00' })).status).toBe(403);
    expect((await req(member, 'POST', `/v2/report-configs/${created.body.id}/send`)).status).toBe(403);
    expect((await req(member, 'DELETE', `/v2/report-configs/${created.body.id}`)).status).toBe(403);
    expect((await req(member, 'PATCH', '/v2/organization', { timezone: 'UTC' })).status).toBe(403);
    expect((await req(org, 'GET', '/v2/organization')).body.timezone).toBe('Europe/Berlin');
    await req(org, 'DELETE', `/v2/report-configs/${created.body.id}`);
  });
});

describe('Temporal unreachable', () => {
  // A timezone change commits without Temporal and converges later (test/organization-timezone.test.ts).
  it('answers 503 and changes nothing: config and Schedule stay consistent', async () => {
    const created = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report', time: '05:00' }));
    expect(created.status).toBe(200);
    const id = created.body.id;
    const before = await configCount(org);
    await temporalOutage.stop();
    try {
      const attempts = [
        await req(other, 'POST', '/v2/report-configs', valid()), // the other organization has no AR aging config yet
        await req(org, 'PATCH', `/v2/report-configs/${id}`, { time: '06:30', is_enabled: false }),
        await req(org, 'POST', `/v2/report-configs/${id}/send`),
      ];
      for (const res of attempts) {
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ type: 'service-unavailable', status: 503 });
        expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|UNAVAILABLE|DEADLINE/);
      }
    } finally {
      await temporalOutage.start();
    }
    expect(await configCount(org)).toBe(before);
    expect(await configCount(other)).toBe(0);
    expect((await req(org, 'GET', `/v2/report-configs/${id}`)).body).toMatchObject({ time: '05:00', is_enabled: true });
    expect((await req(org, 'GET', '/v2/organization')).body.timezone).toBe('Europe/Berlin');
    expect((await req(org, 'GET', `/v2/report-configs/${id}/runs`)).body.total_records).toBe(0);
    const d = await schedule(org, 'integration_sync_report').describe();
    expect(d.state.paused).toBe(false);
    expect(d.spec.timezone).toBe('Europe/Berlin');
    expect(d.spec.calendars![0]).toMatchObject({ hour: [{ start: 5, end: 5, step: 1 }] });
    await expect(schedule(other, 'ar_aging_report').describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    await req(org, 'DELETE', `/v2/report-configs/${id}`);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another organization\'s config on every endpoint and lists only one\'s own', async () => {
    const mine = await req(org, 'POST', '/v2/report-configs', valid({ report_type: 'integration_sync_report' }));
    expect(mine.status).toBe(200);
    const id = mine.body.id;
    for (const [method, path, body] of [
      ['GET', `/v2/report-configs/${id}`],
      ['PATCH', `/v2/report-configs/${id}`, { time: '08:00' }],
      ['POST', `/v2/report-configs/${id}/send`],
      ['GET', `/v2/report-configs/${id}/runs`],
      ['DELETE', `/v2/report-configs/${id}`],
    ] as [string, string, unknown?][]) {
      const res = await req(other, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    }
    expect((await req(other, 'GET', '/v2/report-configs')).body.data.map((c: any) => c.id)).not.toContain(id);
    const still = await req(org, 'GET', `/v2/report-configs/${id}`);
    expect(still.body).toMatchObject({ time: '07:30' });
    expect((await req(org, 'GET', `/v2/report-configs/${id}/runs`)).body.total_records).toBe(0);
    await schedule(org, 'integration_sync_report').describe(); // still there
    expect((await req(org, 'GET', '/v2/report-configs/not-a-uuid')).status).toBe(422);
    expect((await stack.request('GET', '/v2/report-configs')).status).toBe(401);
    await req(org, 'DELETE', `/v2/report-configs/${id}`);
  });
});
