/**
 * Webhook delivery survives a killed worker (spec §3 Durable, §5): the admin worker runs as a child
 * process, is killed with SIGKILL in the middle of a burst, and another takes over; the receiver
 * sees every event at least once (a request sent but not yet recorded is sent again, with the same
 * webhook-id), and every delivery ends succeeded.
 *
 * The endpoint is made through the webhook-endpoint API as the org's admin and its deliveries are
 * counted with GET …/deliveries?status=succeeded (test/support/webhooks.ts). The burst of two
 * thousand `payment.approved` events is recorded with the kernel's recordEvents in the cash_app
 * schema, as a service records them (no API call of this stack emits them). No SQL set-up; the one
 * SQL read is the dispatcher's start (test/support/webhooks.ts dispatcherReady), which no API shows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { createEndpoint, deliveryCount, dispatcherReady, paymentEvent, recordTestEvents, startReceiver, type Receiver } from './support/webhooks.js';

let stack: TestStack;
let org: Org;
let rx: Receiver;
const children: ChildProcess[] = [];

function startWorkerProcess(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/admin/src/worker.ts'], {
    env: { ...process.env, ...stack.env, WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'), NODE_OPTIONS: '' },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

beforeAll(async () => {
  stack = await startStack({ workers: [], env: { WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1,1,1,1,1', WEBHOOK_TIMEOUT_MS: '3000' } });
  org = await stack.onboard('Killed Worker Hooks Org');
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rx?.close();
  await stack?.close();
});

it('delivers every event of a burst at least once although the worker is killed mid-burst', { timeout: 180_000 }, async () => {
  const first = startWorkerProcess();
  await dispatcherReady(stack, 90_000);
  const secrets: string[] = [];
  rx = await startReceiver(() => secrets);
  rx.delayMs = 50;
  const { id: endpointId, secret } = await createEndpoint(stack, org, { url: rx.url });
  secrets.push(secret);
  const ids: string[] = [];
  for (let batch = 0; batch < 4; batch++) {
    ids.push(...(await recordTestEvents(stack, Array.from({ length: 500 }, (_, i) => paymentEvent(org.organizationId, `pay-${batch}-${i}`, 'burst')))));
  }
  await rx.waitFor((r) => r.length >= 200, 90_000);
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const seenAtKill = new Set(rx.received.map((r) => r.id)).size;
  expect(seenAtKill).toBeLessThan(ids.length);

  startWorkerProcess();
  const wanted = new Set(ids);
  await rx.waitFor((r) => new Set(r.filter((x) => wanted.has(x.id)).map((x) => x.id)).size === ids.length, 150_000);
  expect(rx.received.every((r) => r.verified)).toBe(true);
  await expect.poll(async () => deliveryCount(stack, org, endpointId, 'succeeded'), { timeout: 30_000 }).toBe(ids.length);
});
