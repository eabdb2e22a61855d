/**
 * Branches of the cash-app workflows (bank statement processing, payment receipt) on a real Temporal
 * dev server with fake activities (see support/workflow-env.ts): a deleted statement's processing
 * stops, failures after the retries are recorded for users, a failed record never resends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { bankStatement } from '../src/cash-app/bank-statement.js';
import type { paymentReceipt } from '../src/cash-app/payment-receipt.js';
import {
  bankStatementWorkflowId,
  STATEMENT_PROCESSING_FAILED,
  type BankStatementActivities,
  type BankStatementInput,
} from '../src/cash-app/bank-statement.js';
import type { MatchingActivities } from '../src/cash-app/matching.js';
import type { AutoApprovalActivities } from '../src/cash-app/auto-approval.js';
import { paymentReceiptWorkflowId, SMTP_UNAVAILABLE, type PaymentReceiptActivities, type PaymentReceiptInput } from '../src/cash-app/payment-receipt.js';
import type { RecordedEmailActivities } from '../src/recorded-email.js';
import { recordedEmailActivities, type RecordedEmailHandler } from '../src/recorded-email-activities.js';
import {
  createWorkflowTestEnv,
  deferred,
  failingExternally,
  outageOnFirstAttempt,
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

describe('bankStatement', () => {
  const input = (): BankStatementInput => ({ organizationId: uniqueId('org'), statementId: uniqueId('stmt') });

  type StatementActivities = BankStatementActivities & MatchingActivities & AutoApprovalActivities;

  /** Fake activities recording each call; `store`, `classify` and `propose` define the branch. */
  function fakes(calls: string[], over: Partial<StatementActivities>): StatementActivities {
    return {
      storeStatementTransactions: async () => ({ missing: false, total: 3, stored: 3 }),
      classifyStatementDeposits: async () => ({ payments: 2, nonPayments: 1 }),
      proposePayments: async () => ({ proposed: 1, unmatched: 1 }),
      autoApproveProposals: async () => {
        calls.push('autoApproveProposals');
        return { approved: 0, refused: 0 };
      },
      markStatementReady: async () => {
        calls.push('markStatementReady');
      },
      markStatementFailed: async ({ error }) => {
        calls.push(`markStatementFailed:${error}`);
      },
      ...over,
    };
  }

  it('stops a deleted statement: the cancellation reaches the storing activity, which stops before the workflow ends CANCELLED; nothing is marked', async () => {
    const calls: string[] = [];
    const started = deferred();
    const taskQueue = uniqueTaskQueue('cash-app');
    const activities = fakes(calls, {
      storeStatementTransactions: () => runUntilCancelled(calls, 'store', started),
      classifyStatementDeposits: async () => {
        calls.push('classify');
        return { payments: 0, nonPayments: 0 };
      },
    });
    await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      const handle = await env.client.workflow.start<typeof bankStatement>('bankStatement', { taskQueue, workflowId: bankStatementWorkflowId(i.statementId), args: [i] });
      await started.promise;
      await handle.cancel();
      const failure = await workflowFailure(handle.result());
      // the delete removes the rows only after the workflow closed: by then the activity has stopped writing
      expect(calls).toEqual(['store:stopped']);
      expect(failure.cause).toBeInstanceOf(CancelledFailure);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
    });
    expect(calls).toEqual(['store:stopped']);
  });

  it('marks the statement failed with the parser\'s words when its file cannot be parsed (never retried)', async () => {
    const calls: string[] = [];
    let attempts = 0;
    const taskQueue = uniqueTaskQueue('cash-app');
    const activities = fakes(calls, {
      storeStatementTransactions: async () => {
        attempts++;
        throw ApplicationFailure.nonRetryable('line 3: amount missing', 'StatementParseError');
      },
    });
    const result = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      return await env.client.workflow.execute<typeof bankStatement>('bankStatement', { taskQueue, workflowId: bankStatementWorkflowId(i.statementId), args: [i] });
    });
    expect(result).toEqual({ status: 'failed', error: 'line 3: amount missing' });
    expect(attempts).toBe(1);
    expect(calls).toEqual(['markStatementFailed:line 3: amount missing']);
  });

  it('marks the statement failed with an actionable message, not the technical text, when matching fails for good', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('cash-app');
    const activities = fakes(calls, { proposePayments: async () => unexpectedFailure("Cannot read properties of undefined (reading 'amount')") });
    const result = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      return await env.client.workflow.execute<typeof bankStatement>('bankStatement', { taskQueue, workflowId: bankStatementWorkflowId(i.statementId), args: [i] });
    });
    expect(result).toEqual({ status: 'failed', error: STATEMENT_PROCESSING_FAILED });
    expect(calls).toEqual([`markStatementFailed:${STATEMENT_PROCESSING_FAILED}`]);
  });

  it('rides out an outage of the database (retried) and ends ready; a statement deleted before processing ends missing', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('cash-app');
    let classifyAttempts = 0;
    let deleted = false;
    const activities = fakes(calls, {
      storeStatementTransactions: async () => (deleted ? { missing: true, total: 0, stored: 0 } : { missing: false, total: 3, stored: 3 }),
      classifyStatementDeposits: async () => {
        classifyAttempts++;
        outageOnFirstAttempt();
        return { payments: 2, nonPayments: 1 };
      },
    });
    const [ready, missing] = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const a = input();
      const ready = await env.client.workflow.execute<typeof bankStatement>('bankStatement', { taskQueue, workflowId: bankStatementWorkflowId(a.statementId), args: [a] });
      deleted = true;
      const b = input();
      const missing = await env.client.workflow.execute<typeof bankStatement>('bankStatement', { taskQueue, workflowId: bankStatementWorkflowId(b.statementId), args: [b] });
      return [ready, missing];
    });
    expect(ready).toEqual({ status: 'ready', total: 3, stored: 3, payments: 2, proposed: 1, unmatched: 1 });
    expect(classifyAttempts).toBe(2);
    expect(missing).toEqual({ status: 'missing' });
    // the organization's automatic approval runs after matching, before the statement is ready
    expect(calls).toEqual(['autoApproveProposals', 'markStatementReady']);
  });
});

describe('paymentReceipt', () => {
  const input = (maximumAttempts = 2): PaymentReceiptInput => ({
    organizationId: uniqueId('org'),
    outreachId: uniqueId('outreach'),
    paymentId: uniqueId('pay'),
    retry: { maximumAttempts, initialIntervalSeconds: 1 },
  });

  type ReceiptFakes = RecordedEmailActivities & Pick<PaymentReceiptActivities, 'markPaymentReceiptFailed'>;

  /** The recorded-email family (kind `receipt`) over a fake handler, beside the receipt's failure record; the activities of earlier workflow versions are not registered, so new workflows never schedule them. */
  function fakes(calls: string[], over: Partial<RecordedEmailHandler<PaymentReceiptInput>>): ReceiptFakes {
    return {
      ...recordedEmailActivities({
        receipt: {
          prepare: async (i) => {
            calls.push('prepare');
            return { status: 'ready', emailId: i.outreachId };
          },
          deliver: async (_i, emailId) => {
            calls.push('deliver');
            return { status: 'delivered', emailId, messageId: '<m1@test>' };
          },
          recordSent: async ({ messageId }) => {
            calls.push(`recordSent:${messageId}`);
          },
          ...over,
        },
      }),
      markPaymentReceiptFailed: async ({ error }) => {
        calls.push(`markFailed:${error}`);
      },
    };
  }

  async function run(activities: ReceiptFakes, i: PaymentReceiptInput) {
    const taskQueue = uniqueTaskQueue('cash-app');
    return await withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
      env.client.workflow.execute<typeof paymentReceipt>('paymentReceipt', { taskQueue, workflowId: paymentReceiptWorkflowId(i.paymentId), args: [i] }),
    );
  }

  it('records the receipt failed with the email server\'s answer once the configured SMTP attempts are used up', async () => {
    const calls: string[] = [];
    const message = 'The email server could not be reached.';
    const activities = fakes(calls, {
      deliver: async () => {
        calls.push('deliver');
        return failingExternally(SMTP_UNAVAILABLE, message, 2);
      },
    });
    const result = await run(activities, input(2));
    expect(result).toEqual({ status: 'failed', error: message });
    expect(calls).toEqual(['prepare', 'deliver', 'deliver', `markFailed:${message}`]);
  });

  it('records the receipt failed at once when the email server rejects the message for good', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      deliver: async () => {
        calls.push('deliver');
        throw ApplicationFailure.nonRetryable('550 mailbox unavailable', 'SmtpRejected');
      },
    });
    const result = await run(activities, input(5));
    expect(result).toEqual({ status: 'failed', error: '550 mailbox unavailable' });
    expect(calls).toEqual(['prepare', 'deliver', 'markFailed:550 mailbox unavailable']);
  });

  it('retries only the record when recording "sent" fails: the email goes out once and the receipt is sent', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      recordSent: async ({ messageId }) => {
        calls.push(`recordSent:${messageId}`);
        outageOnFirstAttempt();
      },
    });
    const result = await run(activities, input());
    expect(result).toEqual({ status: 'sent', emailId: '<m1@test>' });
    expect(calls).toEqual(['prepare', 'deliver', 'recordSent:<m1@test>', 'recordSent:<m1@test>']);
  });

  it('sends nothing when the intent cannot be recorded as ready (e.g. no recipient), and says why', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      prepare: async () => {
        calls.push('prepare');
        return { status: 'skipped', reason: 'the customer has no email address' };
      },
    });
    const result = await run(activities, input());
    expect(result).toEqual({ status: 'skipped', reason: 'the customer has no email address' });
    expect(calls).toEqual(['prepare']);
  });
});
