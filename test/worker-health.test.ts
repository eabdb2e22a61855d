/**
 * A worker's health server (WORKER_HEALTH_PORT), which docker-compose.yml's worker healthchecks
 * probe: /healthz while the worker runs, /readyz while it also reaches PostgreSQL and Temporal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../scripts/local/components.js';
import { startStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let port: number;

beforeAll(async () => {
  [port] = (await freePorts(1)) as [number];
  stack = await startStack({ workers: ['knowledge'], env: { WORKER_HEALTH_PORT: String(port) } });
});
afterAll(async () => stack?.close());

describe('worker health server', () => {
  it('answers /healthz and /readyz while the worker polls', async () => {
    expect(stack.workers.knowledge!.healthPort).toBe(port);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', service: 'knowledge-worker', checks: { worker: 'ok' } });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', service: 'knowledge-worker', checks: { worker: 'ok', database: 'ok', temporal: 'ok' } });
  });

  it('serves nothing else', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'not-found', status: 404 });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'POST' })).status).toBe(404);
  });

  it('answers 503 once the worker stopped, and stops listening with it', async () => {
    const w = stack.workers.knowledge!;
    w.worker.shutdown();
    await w.done.catch(() => {});
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'not-running', checks: { worker: 'stopped' } });
    await w.close();
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
