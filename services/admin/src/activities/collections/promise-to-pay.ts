/** Activities of the promise-to-pay workflow (contract workflows/src/admin/promise-to-pay.ts): read the promise for a check, and judge it. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Logger } from '@rp/platform';
import type { PromiseToPayActivities, PromiseToPayInput, PromiseToPayState, SettlePromiseToPayInput } from '@rp/workflows';
import { promiseForCheck, settlePromise, type PromiseCheckConfig } from '../../domain/collections/promise-settlement.js';

export interface PromiseToPayDeps {
  db: Db;
  log: Logger;
  config: PromiseCheckConfig;
}

export function createPromiseToPayActivities(deps: PromiseToPayDeps): PromiseToPayActivities {
  return {
    async promiseToPayState(input: PromiseToPayInput): Promise<PromiseToPayState> {
      const found = await promiseForCheck(deps.db, deps.config, input.organizationId, input.promiseId);
      if (!found) {
        // Started inside the recording transaction: give it a few attempts to commit.
        if (Context.current().info.attempt < 4) throw ApplicationFailure.retryable('promise not visible yet', 'PromiseNotFound');
        return { status: 'missing' };
      }
      return {
        status: found.row.status,
        invoiceIds: found.row.invoice_ids,
        createdAt: found.row.created_at.toISOString(),
        deadline: found.deadline.toISOString(),
        recheckSeconds: deps.config.PROMISE_RECHECK_SECONDS,
      };
    },
    async settlePromiseToPay(input: SettlePromiseToPayInput) {
      const status = await settlePromise(deps.db, deps.config, input);
      if (status !== 'open') deps.log.info({ organization_id: input.organizationId, promise_id: input.promiseId, status }, 'promise to pay settled');
      return { status };
    },
  };
}
