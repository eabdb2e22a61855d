/**
 * After a Temporal outage the platform's connections notice promptly that it is back: the client connection
 * of connectTemporal (the
 * one behind every API's /readyz and workflow starts) and a worker's NativeConnection.
 *
 * The shared Temporal of the run must not be stopped, so this file starts its own dev server on a
 * file database (it keeps the namespace and the workflows across the restart). The worker runs the
 * real workflow bundle's welcomeEmail workflow with a stand-in prepareRecordedEmail activity that
 * answers "skipped": what is tested is that the worker polls again, not the activity.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkTemporal, connectTemporal, type TemporalHandle } from '@rp/platform';
import { freePorts, startTemporalDevServer, type TemporalDevServer } from '../scripts/local/components.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-reconnect-'));
let port = 0;
let server: TemporalDevServer | null = null;
let handle: TemporalHandle;
let worker: Worker;
let workerDone: Promise<void>;
let workerConnection: NativeConnection;
const taskQueue = 'reconnect-test';

async function startServer(): Promise<void> {
  server = await startTemporalDevServer({ port, uiPort: null, dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'temporal.log') });
}

async function ready(): Promise<boolean> {
  try {
    await checkTemporal(handle.connection);
    return true;
  } catch {
    return false;
  }
}

function runWelcome(id: string) {
  return handle.client.workflow.execute('welcomeEmail', {
    taskQueue,
    workflowId: `reconnect-${id}`,
    args: [{ organizationId: 'org', userId: id }],
    workflowExecutionTimeout: '2 minutes',
  });
}

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  [port] = (await freePorts(1)) as [number];
  await startServer();
  handle = await connectTemporal({ address: `127.0.0.1:${port}`, namespace: 'default' });
  workerConnection = await NativeConnection.connect({ address: `127.0.0.1:${port}` });
  worker = await Worker.create({
    connection: workerConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: { prepareRecordedEmail: async () => ({ status: 'skipped', reason: 'reconnect test' }) },
  });
  workerDone = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await workerDone?.catch(() => {});
  await workerConnection?.close().catch(() => {});
  await handle?.close().catch(() => {});
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('Temporal comes back after an outage', () => {
  it('the readiness check answers within seconds once Temporal listens again, and the worker polls again', async () => {
    expect(await ready()).toBe(true);
    expect(await runWelcome('before')).toEqual({ status: 'skipped', reason: 'reconnect test' });

    await server!.stop();
    // 30 s of failed checks: grpc-js's default reconnect backoff (1 s ×1.6, up to 120 s) would by
    // now wait more than 10 s between attempts; ours waits at most 2 s.
    const outageEnds = Date.now() + 30_000;
    while (Date.now() < outageEnds) {
      expect(await ready()).toBe(false);
      await new Promise((r) => setTimeout(r, 1000));
    }
    await startServer();

    // Temporal listens again: within 6 s (the 2 s backoff cap, a call, slack for a busy machine).
    let attempts = 0;
    const deadline = Date.now() + 6000;
    while (!(await ready())) {
      attempts++;
      expect(Date.now(), `still not ready after ${attempts} checks`).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }

    // the worker polls again (no restart of it): a workflow started now completes
    expect(await runWelcome('after')).toEqual({ status: 'skipped', reason: 'reconnect test' });
    expect(worker.getState()).toBe('RUNNING');
  }, 150_000);
});
