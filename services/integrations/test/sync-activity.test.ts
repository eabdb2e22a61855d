/**
 * The syncModel activity in a MockActivityEnvironment: real Postgres, the fake QuickBooks on
 * loopback; heartbeats, resume from heartbeat details, cancellation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { createDb, createLogger, migrate, newId, OutboundPolicy, type Db } from '@rp/platform';
import type { SyncHeartbeat } from '@rp/workflows';
import { integrationsMigrations } from '@rp/integrations';
import { createConnectionSyncActivities } from '../src/activities/sync.js';
import { createSyncRuns, getSyncRun, readEnabledModels } from '../src/store/sync-runs.js';
import { createTestDatabase } from '../../../test/support/stack.js';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks } from '../../../test/support/fake-quickbooks.js';

/** The fakes run on loopback: the guarded client may reach it in these tests. */
const LOOPBACK = OutboundPolicy.parse('127.0.0.0/8,::1');

let db: Db;
let fake: FakeQuickbooks;
const orgId = newId();
const connectionId = newId();

beforeAll(async () => {
  fake = await startFakeQuickbooks();
  fake.accessTokens.add('token-1');
  fake.records.Customer = Array.from({ length: 150 }, (_, i) => qboCustomer(i + 1, '2026-01-01T00:00:00Z'));
  fake.records.Invoice = Array.from({ length: 120 }, (_, i) => qboInvoice(i + 1, 1, '2026-01-01T00:00:00Z', [{ qty: 2, unitPrice: 0.05, amount: 0.1 }], { TotalAmt: 0.1, Balance: 0.1 }));
  db = createDb({ url: await createTestDatabase(), schema: 'integrations', poolMax: 3 });
  await migrate(db, 'integrations', integrationsMigrations);
  await db('connections').insert({ id: connectionId, organization_id: orgId, provider_name: 'quickbooks_online', name: 'qbo', is_authentication_pending: false });
  await db('connection_models').insert(
    ['customers', 'invoices', 'credit_memos'].map((name) => ({ id: newId(), organization_id: orgId, connection_id: connectionId, name, display_name: name })),
  );
});
afterAll(async () => {
  await db?.destroy();
  await fake?.close();
});

const activities = () =>
  createConnectionSyncActivities({
    db,
    log: createLogger('t', 'silent'),
    temporal: {} as Client,
    getAccess: async () => ({ accessToken: 'token-1', realmId: fake.realmId, apiBaseUrl: fake.url, outbound: LOOPBACK }),
    heartbeatEveryMs: 50,
  });

async function newRun(modelName: string): Promise<string> {
  const models = (await readEnabledModels(db, orgId, connectionId)).filter((m) => m.name === modelName);
  const [run] = await createSyncRuns(db, { organizationId: orgId, connectionId, batchId: newId(), isOneOff: true, workflowId: null, models });
  return run!.id;
}

describe('syncModel activity', () => {
  it('heartbeats its pagination state after each committed page', async () => {
    const runId = await newRun('customers');
    const env = new MockActivityEnvironment({ attempt: 1 });
    const beats: SyncHeartbeat[] = [];
    env.on('heartbeat', (d: SyncHeartbeat) => beats.push(d));
    const result = await env.run(activities().syncModel, { organizationId: orgId, connectionId, runId });
    expect(result).toEqual({ runId, recordsSynced: 150, pages: 2 });
    expect(beats[0]).toEqual({ runId, pagination_state: { max_results: 100 }, records_synced: 0 });
    const second = { mode: 'full', phase: 'query', since: '2026-01-01T00:00:00Z', seen: Array.from({ length: 100 }, (_, i) => String(i + 1)), max_results: 100 };
    expect(beats).toContainEqual({ runId, pagination_state: second, records_synced: 100 });
    expect(beats.at(-1)).toEqual({ runId, pagination_state: null, records_synced: 150 });
    const run = await getSyncRun(db, orgId, runId);
    expect(run).toMatchObject({ status: 'completed', attempt: 1, records_synced: 150, pagination_state: { ...second, done: true } });
    const [model] = await db('connection_models').where({ id: run!.model_id }).select('sync_cursor');
    expect(model.sync_cursor.toISOString()).toBe(run!.timerange_end!.toISOString());
  });

  it('resumes from the heartbeat details of the previous attempt when the run has no stored state', async () => {
    const runId = await newRun('invoices');
    const before = fake.queries.length;
    const state = { mode: 'full', phase: 'query', since: '2026-01-01T00:00:00Z', seen: Array.from({ length: 100 }, (_, i) => String(i + 1)), max_results: 100 };
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { runId, pagination_state: state, records_synced: 100 } satisfies SyncHeartbeat });
    const result = await env.run(activities().syncModel, { organizationId: orgId, connectionId, runId });
    expect(result).toEqual({ runId, recordsSynced: 120, pages: 1 });
    expect(fake.queries.slice(before).map((q) => [q.since, q.maxResults])).toEqual([['2026-01-01T00:00:00Z', 200]]);
    expect(await getSyncRun(db, orgId, runId)).toMatchObject({ status: 'completed', attempt: 2, records_synced: 120 });
  });

  it('stops on cancellation without failing the run, its committed state kept for the next attempt', { timeout: 20_000 }, async () => {
    // Start over (an initial sync again) so the run has a second page to be interrupted on.
    await db('connection_models').where({ connection_id: connectionId, name: 'customers' }).update({ sync_cursor: null });
    const runId = await newRun('customers');
    const block = fake.block('Customer', (q) => q.since !== null);
    const env = new MockActivityEnvironment({ attempt: 1 });
    const running = env.run(activities().syncModel, { organizationId: orgId, connectionId, runId });
    await block.reached;
    env.cancel('CANCELLED');
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    block.release();
    expect(await getSyncRun(db, orgId, runId)).toMatchObject({ status: 'running', error: null, records_synced: 100, pagination_state: { mode: 'full', since: '2026-01-01T00:00:00Z', max_results: 100 } });
  });
});
