/**
 * Harness of the workflow branch tests: Temporal's test environment on the dev server that vitest's
 * globalSetup starts from the existing `temporal` binary (test/global-setup.ts; the time-skipping
 * server is downloaded on demand and is not available offline), one fresh namespace per test file,
 * and workers that run the real workflow bundle with FAKE activities written in the test, so every
 * branch (cancellation, a failure after the retries, a signal ending a wait) is driven deterministically.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { capExternalFailure, ensureNamespace } from '@rp/platform';
import { TRANSIENT_INFRA_ERROR, UNEXPECTED_ERROR } from '../../src/activity-options.js';

/**
 * The workers' routine lines (state changes, and a warning for every activity failure these tests
 * provoke on purpose) would bury the test output; errors stay. The tests assert the outcomes.
 */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // already installed in this process (another file of the same fork)
  }
}

export async function createWorkflowTestEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const namespace = `wf-${randomBytes(6).toString('hex')}`;
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: inject('temporalAddress'), namespace });
  await ensureNamespace(env.connection, namespace);
  return env;
}

/** A task queue of its own for each test: nothing a previous test left behind reaches its workers. */
export function uniqueTaskQueue(name: string): string {
  return `${name}-${randomBytes(4).toString('hex')}`;
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export interface WorkerSpec {
  taskQueue: string;
  activities?: object;
  /** polls workflow tasks too (the workflow's own task queue) */
  workflows?: boolean;
}

/**
 * Runs `fn` while workers poll the given task queues, then shuts them down. A worker that crashes
 * fails the test instead of leaving it waiting.
 */
export async function withWorkers<T>(env: TestWorkflowEnvironment, specs: WorkerSpec[], fn: () => Promise<T>): Promise<T> {
  const workers = await Promise.all(
    specs.map((s) =>
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue: s.taskQueue,
        ...(s.activities ? { activities: s.activities } : {}),
        ...(s.workflows ? { workflowBundle: { codePath: inject('workflowBundlePath') } } : {}),
        // Heartbeats reach the server at once, so a cancellation reaches a heartbeating activity at once.
        maxHeartbeatThrottleInterval: '100 milliseconds',
        defaultHeartbeatThrottleInterval: '100 milliseconds',
      }),
    ),
  );
  const runs = workers.map((w) => w.run());
  const crashed = Promise.race(runs.map((r) => r.then(() => new Promise<never>(() => {}))));
  try {
    return await Promise.race([fn(), crashed]);
  } finally {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(runs);
  }
}

/** Resolved from outside (an activity telling the test it started). */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A long activity that heartbeats until it is cancelled; on cancellation it takes a moment to stop
 * (as a real one finishing its page or chunk), records that it stopped, and acknowledges. A workflow
 * that waits for the acknowledgement (WAIT_CANCELLATION_COMPLETED) only closes after the record.
 */
export async function runUntilCancelled(calls: string[], name: string, started: { resolve: () => void }): Promise<never> {
  const ctx = Context.current();
  started.resolve();
  for (;;) {
    ctx.heartbeat();
    try {
      await ctx.sleep(50);
    } catch (err) {
      if (!(err instanceof CancelledFailure)) throw err;
      await new Promise((r) => setTimeout(r, 300));
      calls.push(`${name}:stopped`);
      throw err;
    }
  }
}

/**
 * An external system failing every attempt (retryable, as an SMTP server or an ERP that cannot be
 * reached), under the kernel's attempt cap: the last allowed attempt's failure is non-retryable.
 */
export function failingExternally(type: string, message: string, maxAttempts: number): never {
  throw capExternalFailure(ApplicationFailure.create({ type, message }), Context.current().info.attempt, maxAttempts);
}

/** A defect in an activity once the kernel gave up on it (technical message, never shown to users). */
export function unexpectedFailure(message: string): never {
  throw ApplicationFailure.create({ type: UNEXPECTED_ERROR, message, nonRetryable: true });
}

/** An infrastructure outage on the first attempt (retried by the policy), success afterwards. */
export function outageOnFirstAttempt(): void {
  if (Context.current().info.attempt === 1) throw ApplicationFailure.create({ type: TRANSIENT_INFRA_ERROR, message: 'connect ECONNREFUSED 127.0.0.1:5433' });
}

/** The failure a workflow ended with (its handle's result rejects with WorkflowFailedError). */
export async function workflowFailure(result: Promise<unknown>): Promise<WorkflowFailedError> {
  const err = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowFailedError)) throw new Error(`expected the workflow to fail, got ${String(err)}`);
  return err;
}
