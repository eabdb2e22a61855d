/**
 * The organization's daily collections run Schedule (`collections-<organization id>`), read back from Temporal:
 * created when the first policy is, at `collections_run_time` (PATCH /v2/organization, default 08:00) in the
 * organization's timezone, starting `scheduledCollectionRun` ({organizationId}) on admin's task queue with
 * overlap SKIP; it follows PATCHes of the run time and the timezone, is paused while no policy is enabled and
 * removed with the last policy. Each change is written by the organization-schedules reconcile workflow, run by
 * the stack's admin worker; its history replays against today's workflow code. No SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { collectionsScheduleId, organizationSchedulesWorkflowId } from '@rp/workflows';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';

let stack: TestStack;
let temporal: TemporalHandle;
let org: Org;
let other: Org;

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  [org, other] = await Promise.all([stack.onboard(), stack.onboard()]);
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

const req = (o: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: o.token, body });
async function ok(p: Promise<{ status: number; body: any }>, status = 200) {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}
/** Waits until the reconcile started (or signalled) by the last committed change has finished its passes. */
const reconciled = (o: Org) => temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(o.organizationId)).result();
const schedule = (o: Org) => temporal.client.schedule.getHandle(collectionsScheduleId(o.organizationId));
const at = (hour: number, minute: number) => ({ hour: [{ start: hour, end: hour, step: 1 }], minute: [{ start: minute, end: minute, step: 1 }] });
const taskStep = [{ offset_days: 1, channel: 'task' }];

describe('the daily collections Schedule', () => {
  it('collections_run_time: 08:00 by default, HH:MM only (422 changes nothing), answered by GET and PATCH', async () => {
    expect(await ok(req(org, 'GET', '/v2/organization'))).toMatchObject({ collections_run_time: '08:00', timezone: 'Europe/Berlin' });
    for (const bad of ['8:00', '24:00', '12:60', '12:00:00', '', 7, null]) {
      const res = await req(org, 'PATCH', '/v2/organization', { collections_run_time: bad });
      expect(res.status, String(bad)).toBe(422);
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) expect(e.loc).toEqual(['body', 'collections_run_time']);
    }
    expect((await ok(req(org, 'GET', '/v2/organization'))).collections_run_time).toBe('08:00');
  });

  it('exists from the first policy on: paused while none is enabled, at the run time in the organization timezone', async () => {
    await ok(req(org, 'PATCH', '/v2/organization', { collections_run_time: '07:15' }));
    await reconciled(org);
    // no policy yet: no Schedule
    await expect(schedule(org).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

    const p = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Default', segment_id: null, is_enabled: false, steps: taskStep }));
    await reconciled(org);
    let d = await schedule(org).describe();
    expect(d.state.paused).toBe(true);
    expect(d.spec.timezone).toBe('Europe/Berlin');
    expect(d.spec.calendars![0]).toMatchObject(at(7, 15));
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledCollectionRun', taskQueue: 'admin', args: [{ organizationId: org.organizationId }] });
    expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);

    await ok(req(org, 'PATCH', `/v2/collection-policies/${p.id}`, { is_enabled: true }));
    await reconciled(org);
    d = await schedule(org).describe();
    expect(d.state.paused).toBe(false);
    // another organization without policies has none
    await expect(schedule(other).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  it('follows the run time and the timezone, alone and together', async () => {
    await ok(req(org, 'PATCH', '/v2/organization', { collections_run_time: '06:45' }));
    await reconciled(org);
    let d = await schedule(org).describe();
    expect(d.spec.calendars![0]).toMatchObject(at(6, 45));
    expect(d.spec.timezone).toBe('Europe/Berlin');

    expect(await ok(req(org, 'PATCH', '/v2/organization', { timezone: 'America/New_York' }))).toMatchObject({ timezone: 'America/New_York', collections_run_time: '06:45' });
    await reconciled(org);
    d = await schedule(org).describe();
    expect(d.spec.timezone).toBe('America/New_York');
    expect(d.spec.calendars![0]).toMatchObject(at(6, 45));

    expect(await ok(req(org, 'PATCH', '/v2/organization', { timezone: 'Asia/Tokyo', collections_run_time: '21:05' }))).toMatchObject({ collections_run_time: '21:05' });
    await reconciled(org);
    d = await schedule(org).describe();
    expect(d.spec.timezone).toBe('Asia/Tokyo');
    expect(d.spec.calendars![0]).toMatchObject(at(21, 5));
    expect(d.state.paused).toBe(false);
  });

  it('runs at the local time on both sides of a daylight-saving change, once a day (a skipped time at the end of the gap)', async () => {
    await ok(req(org, 'PATCH', '/v2/organization', { timezone: 'Europe/Berlin', collections_run_time: '02:30' }));
    await reconciled(org);
    const d = await schedule(org).describe();
    const local = (t: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
    const day = (t: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(t);
    // Temporal computes the times from the Schedule's own spec, from a date before each change of 2027
    for (const [startAt, expected] of [
      // 2027-03-28: clocks go forward at 02:00 to 03:00, so 02:30 does not exist; the run is at 03:00, the gap's end
      ['2027-03-26T12:00:00Z', ['2027-03-27 02:30', '2027-03-28 03:00', '2027-03-29 02:30', '2027-03-30 02:30']],
      // 2027-10-31: clocks go back at 03:00 to 02:00, so 02:30 occurs twice; one run that day
      ['2027-10-29T12:00:00Z', ['2027-10-30 02:30', '2027-10-31 02:30', '2027-11-01 02:30', '2027-11-02 02:30']],
    ] as const) {
      const probe = await temporal.client.schedule.create({
        scheduleId: `collections-dst-probe-${Math.random().toString(36).slice(2)}`,
        spec: { calendars: d.spec.calendars, timezone: d.spec.timezone, startAt: new Date(startAt) },
        action: { type: 'startWorkflow', workflowType: 'scheduledCollectionRun', taskQueue: 'dst-probe-nobody-polls', args: [] },
        state: { paused: true },
      });
      try {
        const times = (await probe.describe()).info.nextActionTimes.slice(0, 4);
        expect(times.map((t) => `${day(t)} ${local(t)}`)).toEqual(expected);
      } finally {
        await probe.delete();
      }
    }
  });

  it('is paused when every policy is disabled and removed with the last policy', async () => {
    const seg = await ok(req(org, 'POST', '/v2/customer-segments', { name: 'Big', priority: 1, conditions: { field: 'name', op: 'eq', value: 'x' } }));
    const second = await ok(req(org, 'POST', '/v2/collection-policies', { name: 'Big ones', segment_id: seg.id, is_enabled: true, steps: taskStep }));
    const first = (await ok(req(org, 'GET', '/v2/collection-policies'))).data.find((p: { segment_id: string | null }) => p.segment_id === null);
    await ok(req(org, 'PATCH', `/v2/collection-policies/${first.id}`, { is_enabled: false }));
    await reconciled(org);
    expect((await schedule(org).describe()).state.paused).toBe(false);
    await ok(req(org, 'PATCH', `/v2/collection-policies/${second.id}`, { is_enabled: false }));
    await reconciled(org);
    expect((await schedule(org).describe()).state.paused).toBe(true);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${second.id}`), 204);
    await reconciled(org);
    expect((await schedule(org).describe()).state.paused).toBe(true);
    await ok(req(org, 'DELETE', `/v2/collection-policies/${first.id}`), 204);
    await reconciled(org);
    await expect(schedule(org).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

    const handle = temporal.client.workflow.getHandle(organizationSchedulesWorkflowId(org.organizationId));
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'organization-schedules-collections.json');
  });
});
