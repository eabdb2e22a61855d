/**
 * Test-only workflow: calls cash-app's recordInboundRemittances on cash-app's task queue the way
 * the inbox workflow does, so tests reach the activity through the real cash-app worker. Run by a
 * test worker on its own task queue (test/inbound-remittances.test.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { InboundRemittanceActivities, InboundRemittanceInput, InboundRemittanceResult } from '../../workflows/src/admin/inbox-contract.js';

export async function recordInboundRemittancesForTest(taskQueue: string, input: InboundRemittanceInput): Promise<InboundRemittanceResult> {
  const acts = proxyActivities<InboundRemittanceActivities>({ taskQueue, startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 1 } });
  return acts.recordInboundRemittances(input);
}
