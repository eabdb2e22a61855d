/**
 * Branches of the promise-to-pay workflow on a real Temporal dev server with fake activities (see
 * support/workflow-env.ts): a promise whose recording never committed ends the workflow without a
 * check; a covered promise ends kept after one check, asking cash-app (on its own task queue) for
 * the payments between the promise and its deadline; an uncovered one is checked again when its
 * deadline comes, not only after the (longer) recheck interval; a cancellation ends the workflow
 * during its wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { PaymentsAppliedInput, PromiseToPayActivities, PromiseToPayInput, PromiseToPayState, PromiseCoverageActivities, promiseToPay } from '../src/admin/promise-to-pay.js';
import { promiseToPayWorkflowId } from '../src/admin/collections-contract.js';
import { TASK_QUEUES } from '../src/task-queues.js';
import { createWorkflowTestEnv, uniqueId, uniqueTaskQueue, withWorkers } from './support/workflow-env.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createWorkflowTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

type Settle = PromiseToPayActivities['settlePromiseToPay'];

async function run(state: () => PromiseToPayState, settle: Settle, asked: PaymentsAppliedInput[], during?: (input: PromiseToPayInput) => Promise<void>) {
  const taskQueue = uniqueTaskQueue('admin');
  const input: PromiseToPayInput = { organizationId: uniqueId('org'), promiseId: uniqueId('promise') };
  const admin: PromiseToPayActivities = { promiseToPayState: async () => state(), settlePromiseToPay: settle };
  const cash: PromiseCoverageActivities = {
    paymentsAppliedToInvoices: async (i) => {
      asked.push(i);
      return { 'inv-1': '100' };
    },
  };
  return withWorkers(
    env,
    [
      { taskQueue, activities: admin, workflows: true },
      { taskQueue: TASK_QUEUES.cashApp, activities: cash },
    ],
    async () => {
      const handle = await env.client.workflow.start<typeof promiseToPay>('promiseToPay', { taskQueue, workflowId: promiseToPayWorkflowId(input.promiseId), args: [input] });
      if (during) await during(input);
      return handle.result();
    },
  );
}

const open = (deadlineInMs: number, recheckSeconds = 3600): Extract<PromiseToPayState, { status: 'open' | 'kept' | 'broken' | 'cancelled' }> => ({
  status: 'open',
  invoiceIds: ['inv-1'],
  createdAt: '2026-11-26T10:00:00.000Z',
  deadline: new Date(Date.now() + deadlineInMs).toISOString(),
  recheckSeconds,
});

describe('promiseToPay', () => {
  it('ends without a check when the promise was never recorded', async () => {
    const asked: PaymentsAppliedInput[] = [];
    const settled: string[] = [];
    const result = await run(() => ({ status: 'missing' }), async () => (settled.push('settle'), { status: 'kept' }), asked);
    expect(result).toBe('missing');
    expect(asked).toEqual([]);
    expect(settled).toEqual([]);
  });

  it('asks cash-app for the payments between the promise and its deadline and ends kept when covered', async () => {
    const asked: PaymentsAppliedInput[] = [];
    const seen: Record<string, string>[] = [];
    const state = open(60_000);
    const result = await run(() => state, async (i) => (seen.push(i.paidByInvoice), { status: 'kept' }), asked);
    expect(result).toBe('kept');
    expect(asked).toEqual([{ organizationId: expect.any(String), invoiceIds: ['inv-1'], since: state.createdAt, until: state.deadline }]);
    expect(seen).toEqual([{ 'inv-1': '100' }]);
  });

  it('checks again when the deadline comes, not only after the recheck interval, and ends broken', async () => {
    const asked: PaymentsAppliedInput[] = [];
    const state = open(1500, 3600);
    let checks = 0;
    const result = await run(
      () => state,
      async () => {
        checks++;
        return { status: checks === 1 ? 'open' : 'broken' };
      },
      asked,
    );
    expect(result).toBe('broken');
    expect(checks).toBe(2);
  });

  it('ends cancelled when cancelled during its wait', async () => {
    const asked: PaymentsAppliedInput[] = [];
    let checked!: () => void;
    const firstCheck = new Promise<void>((r) => (checked = r));
    const outcome = run(
      () => open(3_600_000),
      async () => {
        checked();
        return { status: 'open' };
      },
      asked,
      async (input) => {
        await firstCheck;
        await env.client.workflow.getHandle(promiseToPayWorkflowId(input.promiseId)).cancel();
      },
    );
    const err = await outcome.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  });
});
