/**
 * paymentsAppliedToInvoices (contract PromiseCoverageActivities, workflows/src/admin/promise-to-pay.ts),
 * on the cash-app task queue: admin's promise-to-pay workflow asks what approved payments applied to
 * a promise's invoices since it was made, without reading cash-app's schema (DESIGN §4).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Logger } from '@rp/platform';
import { BUSINESS_ERROR, type PaymentsAppliedInput, type PromiseCoverageActivities } from '@rp/workflows';
import { appliedToInvoices } from '../store/promise-coverage.js';

export function createPromiseCoverageActivities(deps: { db: Db; log: Logger }): PromiseCoverageActivities {
  return {
    async paymentsAppliedToInvoices(input: PaymentsAppliedInput): Promise<Record<string, string>> {
      const since = new Date(input.since);
      const until = new Date(input.until);
      if (Number.isNaN(since.getTime()) || Number.isNaN(until.getTime()) || input.invoiceIds.length > 1000) {
        throw ApplicationFailure.create({ message: 'paymentsAppliedToInvoices: since/until must be ISO instants and at most 1000 invoices', type: BUSINESS_ERROR, nonRetryable: true });
      }
      const applied = await appliedToInvoices(deps.db, input.organizationId, input.invoiceIds, since, until);
      deps.log.debug({ organization_id: input.organizationId, invoices: input.invoiceIds.length, with_payments: applied.size }, 'payments applied to promised invoices');
      return Object.fromEntries(applied);
    },
  };
}
