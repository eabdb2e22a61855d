/**
 * Changing the organization's timezone (PATCH /v2/organization) moves every report Schedule to it through
 * the workflow `organization-schedules-<organization id>`, started after the commit; each Schedule step is
 * retried until it succeeds, so the Schedules converge on the committed timezone even when Temporal is
 * away at the change or in the middle of the reconcile. Real Postgres and Temporal; the path from the
 * admin API and from the reconcile's activities to Temporal runs through a TCP proxy the test stops and
 * starts (test/support/outage.ts). The reconcile runs on an admin worker of this file (the regular admin
 * activities; those of the reconcile reach Temporal through the proxy). No SQL.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { adminModule, loadAdminConfig } from '@rp/admin';
import { connectTemporal, createDb, createLogger, startServiceApi, type CommonConfig, type Db, type ServiceModule, type TemporalHandle } from '@rp/platform';
import { organizationSchedulesWorkflowId, reportScheduleId } from '@rp/workflows';
import { createOrganizationScheduleActivities } from '../services/admin/src/activities/organization-schedules.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { tcpProxy, type TcpOutage } from './support/outage.js';
import { SERVICE_MODULES } from '../scripts/local/services.js';

let stack: TestStack;
let temporal: TemporalHandle;
let behindProxy: TemporalHandle;
let outage: TcpOutage;
let db: Db;

beforeAll(async () => {
  stack = await startStack();
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  const [host, port] = stack.env.TEMPORAL_ADDRESS.split(':');
  outage = await tcpProxy({ host: host!, port: Number(port) });
  behindProxy = await connectTemporal({ address: `127.0.0.1:${outage.port}`, namespace: stack.namespace });
  const apiPort = stack.apis.admin.port;
  await stack.apis.admin.close();
  stack.apis.admin = await startServiceApi(
    SERVICE_MODULES.admin.module as ServiceModule<CommonConfig, unknown>,
    SERVICE_MODULES.admin.config({ ...stack.env, TEMPORAL_ADDRESS: `127.0.0.1:${outage.port}` }),
    { port: apiPort },
  );
  db = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
}, 180_000);
afterAll(async () => {
  await db?.destroy();
  await behindProxy?.close();
  await temporal?.close();
  await outage?.start().catch(() => {});
  await stack?.close();
  await outage?.close();
});

const req = (o: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: o.token, body });

/** An admin worker whose reconcile activities reach Temporal through the proxy (the other activities directly). */
async function reconcileWorker(): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS });
  const log = createLogger('reconcile-worker', 'silent');
  const worker = await Worker.create({
    connection,
    namespace: stack.namespace,
    taskQueue: 'admin',
    activities: {
      ...(await adminModule.activities({ config: loadAdminConfig(stack.env), db, temporal, log })),
      ...createOrganizationScheduleActivities({ db, log, temporal: behindProxy.client }),
    },
    workflowBundle: { codePath: inject('workflowBundlePath') },
    shutdownForceTime: '1 second',
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running.catch(() => {});
      await connection.close();
    },
  };
}

async function orgWithTwoConfigs(name: string): Promise<Org> {
  const o = await stack.onboard(name);
  for (const report_type of ['ar_aging_report', 'integration_sync_report']) {
    const res = await req(o, 'POST', '/v2/report-configs', { report_type, frequency: 'daily', time: '07:30', recipient_emails: [`tz.${randomBytes(3).toString('hex')}@example.com`] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return o;
}

async function scheduleZones(o: Org): Promise<string[]> {
  return Promise.all(['ar_aging_report', 'integration_sync_report'].map(async (t) => (await temporal.client.schedule.getHandle(reportScheduleId(o.organizationId, t)).describe()).spec.timezone!));
}

describe('organization timezone → report Schedules', () => {
  it('a Schedule update that fails (Temporal away mid-reconcile) is retried until every Schedule is in the new timezone', async () => {
    const o = await orgWithTwoConfigs('TZ retry');
    expect(await scheduleZones(o)).toEqual(['Europe/Berlin', 'Europe/Berlin']);
    const changed = await req(o, 'PATCH', '/v2/organization', { timezone: 'Asia/Tokyo' });
    expect(changed.status).toBe(200);
    expect(changed.body.timezone).toBe('Asia/Tokyo');

    // Temporal goes away for the reconcile's Schedule updates before they run; the workflow's step fails and is retried
    await outage.stop();
    const worker = await reconcileWorker();
    const handle = temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(o.organizationId));
    try {
      for (let i = 0; ; i++) {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        if (pending.some((a) => a.activityType?.name === 'reconcileReportSchedule' && (a.attempt ?? 0) >= 2)) break;
        if (i > 240) throw new Error('the reconcile step never failed');
        await new Promise((r) => setTimeout(r, 250));
      }
      await outage.start();
      await handle.result();
    } finally {
      await outage.start().catch(() => {});
      await worker.stop();
    }
    expect(await scheduleZones(o)).toEqual(['Asia/Tokyo', 'Asia/Tokyo']);
    const d = await temporal.client.schedule.getHandle(reportScheduleId(o.organizationId, 'ar_aging_report')).describe();
    expect(d.spec.calendars![0]).toMatchObject({ hour: [{ start: 7, end: 7, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] });
  });

  it('a change made while Temporal is away is kept (200), and the Schedules converge at the next PATCH', async () => {
    const o = await orgWithTwoConfigs('TZ outage');
    await outage.stop();
    let changed;
    try {
      changed = await req(o, 'PATCH', '/v2/organization', { timezone: 'America/New_York' });
    } finally {
      await outage.start();
    }
    expect(changed.status).toBe(200);
    expect((await req(o, 'GET', '/v2/organization')).body.timezone).toBe('America/New_York');

    const worker = await reconcileWorker();
    try {
      // sending the same timezone again starts the reconcile the outage prevented
      expect((await req(o, 'PATCH', '/v2/organization', { timezone: 'America/New_York' })).status).toBe(200);
      await temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(o.organizationId)).result();
    } finally {
      await worker.stop();
    }
    expect(await scheduleZones(o)).toEqual(['America/New_York', 'America/New_York']);
  });

  it('a Schedule still in the old timezone (the start failed and no PATCH followed) starts the reconcile at its next action', async () => {
    const o = await orgWithTwoConfigs('TZ heal');
    await outage.stop();
    try {
      expect((await req(o, 'PATCH', '/v2/organization', { timezone: 'Australia/Sydney' })).status).toBe(200);
    } finally {
      await outage.start();
    }
    expect(await scheduleZones(o)).toEqual(['Europe/Berlin', 'Europe/Berlin']);
    const worker = await reconcileWorker();
    try {
      // an action of one stale Schedule (as its next calendar time would start it)
      await temporal.client.schedule.getHandle(reportScheduleId(o.organizationId, 'integration_sync_report')).trigger();
      const handle = temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(o.organizationId));
      for (let i = 0; ; i++) {
        const started = await handle.describe().then(() => true, () => false);
        if (started) break;
        if (i > 240) throw new Error('the reconcile was never started');
        await new Promise((r) => setTimeout(r, 250));
      }
      await handle.result();
    } finally {
      await worker.stop();
    }
    expect(await scheduleZones(o)).toEqual(['Australia/Sydney', 'Australia/Sydney']);
  });

  it('a Schedule whose daylight-saving entries are out of date (written long ago) is rewritten at its next action', async () => {
    const o = await stack.onboard('TZ entries');
    const created = await req(o, 'POST', '/v2/report-configs', { report_type: 'ar_aging_report', frequency: 'daily', time: '02:30', recipient_emails: ['tz.entries@example.com'] });
    expect(created.status).toBe(200);
    const schedule = temporal.client.schedule.getHandle(reportScheduleId(o.organizationId, 'ar_aging_report'));
    const written = (await schedule.describe()).spec.calendars!;
    // 02:30 Europe/Berlin is skipped once a year: entries dated last year to two years ahead
    expect(written.length).toBeGreaterThanOrEqual(4);
    // set-up through Temporal: the Schedule as it was written years ago (its dated entries all in the past)
    await schedule.update((prev) => ({ ...prev, spec: { ...prev.spec, calendars: [prev.spec.calendars![0]!] } }));
    const worker = await reconcileWorker();
    try {
      await schedule.trigger();
      const handle = temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(o.organizationId));
      for (let i = 0; ; i++) {
        if (await handle.describe().then(() => true, () => false)) break;
        if (i > 200) throw new Error('the reconcile was never started');
        await new Promise((r) => setTimeout(r, 250));
      }
      await handle.result();
    } finally {
      await worker.stop();
    }
    expect((await schedule.describe()).spec.calendars!.map((c) => c.comment)).toEqual(written.map((c) => c.comment));
  });
});
