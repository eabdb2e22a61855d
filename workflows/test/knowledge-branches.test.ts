/**
 * Branches of the playbook extraction workflow on a real Temporal dev server with fake activities
 * (see support/workflow-env.ts): a job cancelled through POST …/cancel stops its running stage and is
 * marked failed with error `cancelled`, a job whose input cannot be processed is marked failed with the
 * reason, an onboarding job hands the cash-app habits' reference to extraction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { playbookExtraction } from '../src/knowledge/playbook-extraction.js';
import {
  EXTRACTION_CANCELLED,
  EXTRACTION_ERROR,
  EXTRACTION_PROCESSING_FAILED,
  playbookExtractionWorkflowId,
  type PlaybookExtractionActivities,
  type PlaybookExtractionInput,
} from '../src/knowledge/playbook-extraction.js';
import { CUSTOMER_HABITS_TASK_QUEUE, type CustomerHabitsActivities, type CustomerHabitsObject } from '../src/knowledge/contracts.js';
import { createWorkflowTestEnv, deferred, runUntilCancelled, uniqueId, uniqueTaskQueue, unexpectedFailure, withWorkers, workflowFailure } from './support/workflow-env.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createWorkflowTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

describe('playbookExtraction', () => {
  const input = (extractionType: PlaybookExtractionInput['extractionType'] = 'file'): PlaybookExtractionInput => ({ organizationId: uniqueId('org'), jobId: uniqueId('job'), extractionType });
  const stage = { missing: false, done: 4, total: 4 };
  const habits: CustomerHabitsObject = { window_start: '2025-11-26', window_end: '2026-11-26', objectKey: 'knowledge/o/extractions/j/cash-habits.jsonl', customers: 2, size: 512, sha256: 'ab'.repeat(32) };

  function fakes(calls: string[], over: Partial<PlaybookExtractionActivities & CustomerHabitsActivities> = {}) {
    const all: PlaybookExtractionActivities & CustomerHabitsActivities = {
      customerPaymentHabits: async () => {
        calls.push('habits');
        return habits;
      },
      extractMemories: async (i) => {
        calls.push(i.cashHabits ? `extract:${i.cashHabits.objectKey}` : 'extract');
        return stage;
      },
      dedupeMemories: async () => {
        calls.push('dedupe');
        return stage;
      },
      enrichMemories: async () => {
        calls.push('enrich');
        return stage;
      },
      synthesizeProposals: async () => {
        calls.push('synthesize');
        return stage;
      },
      completeExtraction: async () => {
        calls.push('complete');
        return { memories: 4, proposals: 2 };
      },
      failExtraction: async ({ error }) => {
        calls.push(`fail:${error}`);
      },
      ...over,
    };
    const { customerPaymentHabits, ...knowledge } = all;
    return { knowledge, cashApp: { customerPaymentHabits } };
  }

  /** The workflow and its stages on one task queue; the habits on cash-app's (fixed in the workflow). */
  const workers = (taskQueue: string, activities: ReturnType<typeof fakes>) => [
    { taskQueue, activities: activities.knowledge, workflows: true },
    { taskQueue: CUSTOMER_HABITS_TASK_QUEUE, activities: activities.cashApp },
  ];

  async function run(activities: ReturnType<typeof fakes>, i: PlaybookExtractionInput) {
    const taskQueue = uniqueTaskQueue('knowledge');
    return await withWorkers(env, workers(taskQueue, activities), () =>
      env.client.workflow.execute<typeof playbookExtraction>('playbookExtraction', { taskQueue, workflowId: playbookExtractionWorkflowId(i.jobId), args: [i] }),
    );
  }

  it('cancelled mid-stage: the stage stops first, then the job is marked failed with error "cancelled" and the workflow ends CANCELLED', async () => {
    const calls: string[] = [];
    const started = deferred();
    const taskQueue = uniqueTaskQueue('knowledge');
    const activities = fakes(calls, {
      dedupeMemories: async () => {
        calls.push('dedupe');
        return await runUntilCancelled(calls, 'dedupe', started);
      },
    });
    await withWorkers(env, workers(taskQueue, activities), async () => {
      const i = input();
      const handle = await env.client.workflow.start<typeof playbookExtraction>('playbookExtraction', { taskQueue, workflowId: playbookExtractionWorkflowId(i.jobId), args: [i] });
      await started.promise;
      await handle.cancel();
      const failure = await workflowFailure(handle.result());
      expect(failure.cause).toBeInstanceOf(CancelledFailure);
      expect(calls).toEqual(['extract', 'dedupe', 'dedupe:stopped', `fail:${EXTRACTION_CANCELLED}`]);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
    });
  });

  it('marks the job failed with the reason when its file cannot be processed (never retried), and runs no later stage', async () => {
    const calls: string[] = [];
    let attempts = 0;
    const activities = fakes(calls, {
      extractMemories: async () => {
        attempts++;
        throw ApplicationFailure.create({ type: EXTRACTION_ERROR, message: 'The file is not a PDF, DOCX or text file.', nonRetryable: true });
      },
    });
    expect(await run(activities, input())).toEqual({ status: 'failed', error: 'The file is not a PDF, DOCX or text file.' });
    expect(attempts).toBe(1);
    expect(calls).toEqual(['fail:The file is not a PDF, DOCX or text file.']);
  });

  it('onboarding: hands the cash-app habits\' reference to extraction and completes; a defect in the habits marks the job failed with an actionable message', async () => {
    const calls: string[] = [];
    expect(await run(fakes(calls), input('onboarding'))).toEqual({ status: 'complete', memories: 4, proposals: 2 });
    expect(calls).toEqual(['habits', `extract:${habits.objectKey}`, 'dedupe', 'enrich', 'synthesize', 'complete']);

    const failing: string[] = [];
    const activities = fakes(failing, { customerPaymentHabits: async () => unexpectedFailure('relation "payments" does not exist') });
    expect(await run(activities, input('onboarding'))).toEqual({ status: 'failed', error: EXTRACTION_PROCESSING_FAILED });
    expect(failing).toEqual([`fail:${EXTRACTION_PROCESSING_FAILED}`]);
  });

  it('ends missing, running no later stage, when the job row was never committed', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      extractMemories: async () => {
        calls.push('extract');
        return { missing: true, done: 0, total: 0 };
      },
    });
    expect(await run(activities, input())).toEqual({ status: 'missing' });
    expect(calls).toEqual(['extract']);
  });
});
