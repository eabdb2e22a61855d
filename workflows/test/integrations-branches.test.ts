/**
 * Branches of the integrations workflows (connection sync, payment posting) on a real Temporal dev
 * server with fake activities (see support/workflow-env.ts): a cancelled sync marks its unfinished
 * runs cancelled after the page activity stopped, a model that fails does not stop the next one, an
 * ERP call that gives up ends the posting failed and records it on the payment, and a queued posting
 * waits for the middleware's signal rather than its hourly read.
 *
 * The fake activities cap an external system's attempts at 2 (the real ones use
 * SYNC_PROVIDER_ATTEMPTS / POSTING_PROVIDER_ATTEMPTS) so the branch is reached in seconds; the
 * workflow's handling does not depend on the number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { connectionSync } from '../src/integrations/connection-sync.js';
import type { paymentPosting } from '../src/integrations/payment-posting.js';
import { connectionSyncWorkflowId, SYNC_RUN_FAILED, type ConnectionSyncActivities, type ConnectionSyncInput } from '../src/integrations/connection-sync.js';
import {
  paymentPostingWorkflowId,
  postingReportedSignal,
  type CashAppPostingActivities,
  type IntegrationsPostingActivities,
  type PaymentForPosting,
  type PaymentPostingInput,
  type PostingOutcome,
} from '../src/integrations/payment-posting.js';
import { TASK_QUEUES } from '../src/task-queues.js';
import {
  createWorkflowTestEnv,
  deferred,
  failingExternally,
  runUntilCancelled,
  uniqueId,
  uniqueTaskQueue,
  unexpectedFailure,
  withWorkers,
  workflowFailure,
} from './support/workflow-env.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createWorkflowTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

describe('connectionSync', () => {
  const input = (): ConnectionSyncInput => ({ organizationId: uniqueId('org'), connectionId: uniqueId('conn'), isOneOff: true });
  const RUNS = [
    { runId: 'run-partners', modelId: 'm1', modelName: 'partners' },
    { runId: 'run-invoices', modelId: 'm2', modelName: 'invoices' },
  ];

  function fakes(calls: string[], over: Partial<ConnectionSyncActivities>): ConnectionSyncActivities {
    return {
      prepareSyncRuns: async () => ({ status: 'prepared', batchId: 'batch-1', runs: RUNS }),
      syncModel: async ({ runId }) => {
        calls.push(`sync:${runId}`);
        return { runId, recordsSynced: 10, pages: 1 };
      },
      failSyncRun: async ({ runId, error }) => {
        calls.push(`fail:${runId}:${error}`);
      },
      cancelSyncRuns: async ({ batchId }) => {
        calls.push(`cancelRuns:${batchId}`);
      },
      ...over,
    };
  }

  async function run(activities: ConnectionSyncActivities) {
    const taskQueue = uniqueTaskQueue('integrations');
    const i = input();
    return await withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
      env.client.workflow.execute<typeof connectionSync>('connectionSync', { taskQueue, workflowId: connectionSyncWorkflowId(i.connectionId, 'batch-1'), args: [i] }),
    );
  }

  it('cancelled mid-page: the page activity stops first, then the unfinished runs are marked cancelled and the workflow ends CANCELLED', async () => {
    const calls: string[] = [];
    const started = deferred();
    const taskQueue = uniqueTaskQueue('integrations');
    const activities = fakes(calls, {
      syncModel: async ({ runId }) => {
        calls.push(`sync:${runId}`);
        return await runUntilCancelled(calls, 'sync', started);
      },
    });
    await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      const handle = await env.client.workflow.start<typeof connectionSync>('connectionSync', { taskQueue, workflowId: connectionSyncWorkflowId(i.connectionId, 'batch-1'), args: [i] });
      await started.promise;
      await handle.cancel();
      const failure = await workflowFailure(handle.result());
      expect(failure.cause).toBeInstanceOf(CancelledFailure);
      expect(calls).toEqual(['sync:run-partners', 'sync:stopped', 'cancelRuns:batch-1']);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
    });
  });

  it('marks a model failed with the provider\'s answer once its attempts are used up, and still syncs the next model', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      syncModel: async ({ runId }) => {
        calls.push(`sync:${runId}`);
        if (runId === 'run-partners') return failingExternally('RateLimited', 'The provider answered 429 Too Many Requests.', 2);
        return { runId, recordsSynced: 7, pages: 1 };
      },
    });
    const result = await run(activities);
    const error = 'RateLimited: The provider answered 429 Too Many Requests.';
    expect(result).toEqual({
      batchId: 'batch-1',
      runs: [
        { runId: 'run-partners', modelName: 'partners', status: 'failed', error },
        { runId: 'run-invoices', modelName: 'invoices', status: 'completed', recordsSynced: 7 },
      ],
    });
    expect(calls).toEqual(['sync:run-partners', 'sync:run-partners', `fail:run-partners:${error}`, 'sync:run-invoices']);
  });

  it('marks a model failed at once when the provider refuses the request, and with an actionable message on a defect', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      syncModel: async ({ runId }) => {
        calls.push(`sync:${runId}`);
        if (runId === 'run-partners') throw ApplicationFailure.create({ type: 'ProviderRequestRejected', message: 'The provider refused the query (400).' });
        return unexpectedFailure('rows is not iterable');
      },
    });
    const result = await run(activities);
    expect(result.runs.map((r) => [r.runId, r.status, r.error])).toEqual([
      ['run-partners', 'failed', 'ProviderRequestRejected: The provider refused the query (400).'],
      ['run-invoices', 'failed', SYNC_RUN_FAILED],
    ]);
    // ProviderRequestRejected is never retried: one attempt each
    expect(calls).toEqual([
      'sync:run-partners',
      'fail:run-partners:ProviderRequestRejected: The provider refused the query (400).',
      'sync:run-invoices',
      `fail:run-invoices:${SYNC_RUN_FAILED}`,
    ]);
  });

  it('syncs nothing when the connection has nothing to sync, and says why', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, { prepareSyncRuns: async () => ({ status: 'skipped', reason: 'the connection is paused' }) });
    expect(await run(activities)).toEqual({ batchId: null, skipped: 'the connection is paused', runs: [] });
    expect(calls).toEqual([]);
  });
});

describe('paymentPosting', () => {
  const payment = (over: Partial<PaymentForPosting> = {}): PaymentForPosting => ({
    paymentId: 'pay-1',
    status: 'approved',
    postingStatus: 'pending',
    postingId: null,
    amount: '100.00',
    currency: 'EUR',
    paymentDate: '2026-11-20',
    bankReference: 'REF-1',
    partner: { id: 'p1', origin: 'connection:c1', remoteId: '42', name: 'Acme' },
    lines: [],
    unallocatedAmount: '100.00',
    ...over,
  });
  const posted: PostingOutcome = {
    status: 'posted',
    postingId: 'posting-1',
    provider: 'quickbooks',
    canUnpost: true,
    erpPaymentId: '901',
    erpDocumentNumber: null,
    postedAt: '2026-11-20T10:00:00.000Z',
  };

  function fakes(calls: string[], loaded: PaymentForPosting | null, over: Partial<IntegrationsPostingActivities> = {}) {
    const cashApp: CashAppPostingActivities = {
      loadPaymentForPosting: async () => loaded,
      recordPaymentPosting: async ({ operation, outcome }) => {
        calls.push(`record:${operation}:${JSON.stringify(outcome)}`);
      },
    };
    const integrations: IntegrationsPostingActivities = {
      preparePaymentPosting: async () => {
        calls.push('prepare');
        return { mode: 'direct', postingId: 'posting-1', provider: 'quickbooks' };
      },
      submitPaymentPosting: async () => {
        calls.push('submit');
        return posted;
      },
      failPaymentPosting: async ({ postingId, error }) => {
        calls.push(`fail:${error}`);
        return { status: 'failed', postingId, provider: 'quickbooks', error };
      },
      readPaymentPosting: async () => null,
      unpostPayment: async () => {
        calls.push('unpost');
        return { status: 'unposted', postingId: 'posting-1' };
      },
      ...over,
    };
    return { cashApp, integrations };
  }

  /** The workflow and its own activities on one task queue; cash-app's activities on cash-app's (fixed in the workflow). */
  async function run(calls: { cashApp: CashAppPostingActivities; integrations: IntegrationsPostingActivities }, i: PaymentPostingInput, during?: (handle: { signal: (id: string) => Promise<void> }) => Promise<void>) {
    const taskQueue = uniqueTaskQueue('integrations');
    return await withWorkers(
      env,
      [
        { taskQueue, activities: calls.integrations, workflows: true },
        { taskQueue: TASK_QUEUES.cashApp, activities: calls.cashApp },
      ],
      async () => {
        const handle = await env.client.workflow.start<typeof paymentPosting>('paymentPosting', { taskQueue, workflowId: paymentPostingWorkflowId(uniqueId('pay')), args: [i] });
        if (during) await during({ signal: (postingId) => handle.signal(postingReportedSignal, { postingId }) });
        return await handle.result();
      },
    );
  }

  const input = (operation: 'post' | 'unpost' = 'post'): PaymentPostingInput => ({ organizationId: uniqueId('org'), paymentId: 'pay-1', operation });

  it('ends failed with the ERP\'s answer once the ERP call used up its attempts, and records that on the payment', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, payment(), {
      submitPaymentPosting: async () => {
        calls.push('submit');
        return failingExternally('ProviderUnavailable', 'QuickBooks answered 503 Service Unavailable.', 2);
      },
    });
    const result = await run(activities, input());
    const error = 'ProviderUnavailable: QuickBooks answered 503 Service Unavailable.';
    const failed = { status: 'failed', postingId: 'posting-1', provider: 'quickbooks', error };
    expect(result).toEqual(failed);
    expect(calls).toEqual(['prepare', 'submit', 'submit', `fail:${error}`, `record:post:${JSON.stringify(failed)}`]);
  });

  it('ends failed after one attempt when the ERP refuses the credentials (never retried)', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, payment(), {
      submitPaymentPosting: async () => {
        calls.push('submit');
        throw ApplicationFailure.create({ type: 'AuthenticationRequired', message: 'Reconnect QuickBooks: its authorization expired.', nonRetryable: true });
      },
    });
    const result = await run(activities, input());
    expect(result).toMatchObject({ status: 'failed', error: 'AuthenticationRequired: Reconnect QuickBooks: its authorization expired.' });
    expect(calls.filter((c) => c === 'submit')).toHaveLength(1);
    expect(calls.at(-1)).toMatch(/^record:post:.*"status":"failed"/);
  });

  it('records an unpost the ERP cannot do as unpost_failed on the payment', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, payment({ postingStatus: 'unposting', postingId: 'posting-1' }), {
      unpostPayment: async () => {
        calls.push('unpost');
        throw ApplicationFailure.create({ type: 'ProviderMisconfigured', message: 'The connection has no ERP company selected.', nonRetryable: true });
      },
    });
    const result = await run(activities, input('unpost'));
    const outcome = { status: 'unpost_failed', postingId: 'posting-1', error: 'ProviderMisconfigured: The connection has no ERP company selected.' };
    expect(result).toEqual(outcome);
    expect(calls).toEqual(['unpost', `record:unpost:${JSON.stringify(outcome)}`]);
  });

  it('waits for a queued posting\'s answer: the middleware\'s signal ends the wait (not the hourly read), and the answer is recorded', async () => {
    const calls: string[] = [];
    const firstRead = deferred();
    let answered = false;
    const activities = fakes(calls, payment(), {
      preparePaymentPosting: async () => {
        calls.push('prepare');
        return { mode: 'queue', postingId: 'posting-1', provider: 'middleware' };
      },
      readPaymentPosting: async () => {
        calls.push('read');
        firstRead.resolve();
        return answered ? { ...posted, provider: 'middleware' } : null;
      },
    });
    const result = await run(activities, input(), async ({ signal }) => {
      await firstRead.promise;
      answered = true; // the middleware endpoint stores the answer, then signals
      await signal('posting-1');
    });
    expect(result).toEqual({ ...posted, provider: 'middleware' });
    expect(calls).toEqual(['prepare', 'read', 'read', `record:post:${JSON.stringify({ ...posted, provider: 'middleware' })}`]);
  });

  it('posts nothing for a payment that is gone or not approved, and says why', async () => {
    const gone: string[] = [];
    expect(await run(fakes(gone, null), input())).toEqual({ status: 'skipped', reason: 'the payment no longer exists' });
    const unapproved: string[] = [];
    expect(await run(fakes(unapproved, payment({ status: 'unapproved' })), input())).toEqual({ status: 'skipped', reason: 'the payment is unapproved with posting pending' });
    expect([...gone, ...unapproved]).toEqual([]);
  });
});
