/**
 * The kernel's events module against a real PostgreSQL: recorded in the change's transaction (a
 * rollback leaves nothing), read back newest first within business units, and handed to delivery
 * in commit-safe order (an event of a transaction still running holds later ones back rather than
 * being skipped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDb,
  createEventsTable,
  currentEventCursor,
  eventBodies,
  getEvent,
  listEvents,
  migrate,
  newId,
  pruneOwnEvents,
  readEventsAfter,
  recordEvent,
  recordEvents,
  type Db,
} from '@rp/platform';
import { createTestDatabase } from '../../../test/support/stack.js';

let cash: Db;
let admin: Db;
const org = newId();
const otherOrg = newId();
const buA = newId();
const buB = newId();

beforeAll(async () => {
  const url = await createTestDatabase();
  cash = createDb({ url, schema: 'cash_app', poolMax: 4 });
  admin = createDb({ url, schema: 'admin', poolMax: 2 });
  const events = [{ name: '001_events', up: createEventsTable }];
  await migrate(cash, 'cash_app', events);
  await migrate(admin, 'admin', events);
});
afterAll(async () => {
  await cash?.destroy();
  await admin?.destroy();
});

const payment = (id: string, extra: object = {}) => ({ object: 'payment', id, zeta: 1, amount: '10.00', alpha: 'first key order kept', ...extra });

describe('recording', () => {
  it('records with the committed change and nothing for a rolled-back one', async () => {
    const kept = newId();
    const lost = newId();
    await cash.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'payment.approved', resourceId: kept, object: payment(kept) }));
    await expect(
      cash.transaction(async (trx) => {
        await recordEvent(trx, { organizationId: org, type: 'payment.approved', resourceId: lost, object: payment(lost) });
        throw new Error('the change failed after the event was written');
      }),
    ).rejects.toThrow('the change failed');
    const { rows } = await listEvents(admin, { organizationId: org, scope: '*', types: ['payment.approved'], offset: 0, limit: 50 });
    expect(rows.map((r) => r.resource_id)).toContain(kept);
    expect(rows.map((r) => r.resource_id)).not.toContain(lost);
  });

  it('lists newest first across sources, per organization and business unit, and gets one by id', async () => {
    const [a, b, c] = [newId(), newId(), newId()];
    await cash.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'payment.proposed', resourceId: a, object: payment(a), businessUnitId: buA }));
    await admin.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'report.sent', resourceId: b, object: { object: 'report_run', id: b } }));
    await cash.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'payment.proposed', resourceId: c, object: payment(c), businessUnitId: buB }));
    await cash.transaction((trx) => recordEvent(trx, { organizationId: otherOrg, type: 'payment.proposed', resourceId: newId(), object: payment('x') }));

    const all = await listEvents(admin, { organizationId: org, scope: '*', types: ['payment.proposed', 'report.sent'], offset: 0, limit: 50 });
    expect(all.rows.map((r) => r.resource_id)).toEqual([c, b, a]);
    expect(all.total).toBe(3);
    const memberOfA = await listEvents(admin, { organizationId: org, scope: [buA], types: ['payment.proposed', 'report.sent'], offset: 0, limit: 50 });
    expect(memberOfA.rows.map((r) => r.resource_id)).toEqual([b, a]);

    const one = await getEvent(admin, org, '*', all.rows[0].id);
    expect(one?.data).toEqual(payment(c));
    expect(await getEvent(admin, org, [buA], all.rows[0].id)).toBeNull();
    expect(await getEvent(admin, otherOrg, '*', all.rows[0].id)).toBeNull();
  });
});

describe('reading for delivery', () => {
  it('never skips an event whose transaction commits after a later one', async () => {
    const start = await currentEventCursor(admin, 'cash_app');
    const early = newId();
    const late = newId();
    // Transaction 1 records first and stays open; transaction 2 records and commits meanwhile.
    let commitFirst!: () => void;
    const held = new Promise<void>((r) => (commitFirst = r));
    let recorded!: () => void;
    const firstRecorded = new Promise<void>((r) => (recorded = r));
    const first = cash.transaction(async (trx) => {
      await recordEvent(trx, { organizationId: org, type: 'payment.approved', resourceId: early, object: payment(early) });
      recorded();
      await held;
    });
    await firstRecorded;
    await cash.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'payment.posted', resourceId: late, object: payment(late) }));

    // While the first is open, neither is handed out: the committed one waits behind the open one.
    expect((await readEventsAfter(admin, 'cash_app', start, 100)).map((e) => e.resource_id)).toEqual([]);
    commitFirst();
    await first;
    const after = await readEventsAfter(admin, 'cash_app', start, 100);
    expect(after.map((e) => e.resource_id)).toEqual([early, late]);
    // From the last one read, nothing is read twice.
    const last = after[after.length - 1];
    expect(await readEventsAfter(admin, 'cash_app', { txid: last.txid, seq: last.seq }, 100)).toEqual([]);
  });

  it('builds each webhook body from the stored text, key order and all, the same on every read', async () => {
    const id = newId();
    const [ev] = await cash.transaction((trx) =>
      recordEvents(trx, [{ organizationId: org, type: 'payment.approved', resourceId: id, object: payment(id, { note: 'ü "quoted"' }), previousAttributes: { status: 'proposed' } }]),
    );
    const first = (await eventBodies(admin, 'cash_app', [ev.id])).get(ev.id)!;
    const again = (await eventBodies(admin, 'cash_app', [ev.id])).get(ev.id)!;
    expect(again).toBe(first);
    const body = JSON.parse(first);
    expect(Object.keys(body.data.object)).toEqual(['object', 'id', 'zeta', 'amount', 'alpha', 'note']);
    expect(body).toMatchObject({ id: ev.id, object: 'event', type: 'payment.approved', data: { object: { note: 'ü "quoted"' } }, previous_attributes: { status: 'proposed' } });
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
  });

  it('prunes only its own schema\'s events older than the cut-off', async () => {
    const id = newId();
    await admin.transaction((trx) => recordEvent(trx, { organizationId: org, type: 'report.failed', resourceId: id, object: { object: 'report_run', id } }));
    expect(await pruneOwnEvents(admin, new Date(Date.now() - 60_000))).toBe(0);
    const pruned = await pruneOwnEvents(admin, new Date(Date.now() + 60_000));
    expect(pruned).toBeGreaterThan(0);
    expect((await listEvents(admin, { organizationId: org, scope: '*', types: ['report.failed', 'report.sent'], offset: 0, limit: 50 })).total).toBe(0);
    expect((await listEvents(admin, { organizationId: org, scope: '*', types: ['payment.approved'], offset: 0, limit: 50 })).total).toBeGreaterThan(0);
  });
});
