// Workflow histories in end-to-end tests: a finished workflow's history must replay against today's
// workflow code, and `RECORD_HISTORIES=1` saves it for workflows/test/replay.test.ts.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { inject } from 'vitest';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { findTemporalCli } from '../../scripts/local/temporal-cli.mjs';
import type { TestStack } from './stack.js';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Replays `history` of `workflowId` (determinism check); with RECORD_HISTORIES set, records it as workflows/test/histories/<recordAs>. */
export async function replayHistory(stack: Pick<TestStack, 'env' | 'namespace'>, workflowId: string, history: History, recordAs?: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, workflowId);
  if (recordAs && process.env.RECORD_HISTORIES) {
    const json = execFileSync(findTemporalCli()!, ['workflow', 'show', '--address', stack.env.TEMPORAL_ADDRESS, '--namespace', stack.namespace, '-w', workflowId, '-o', 'json']);
    writeFileSync(`workflows/test/histories/${recordAs}`, json);
  }
}
