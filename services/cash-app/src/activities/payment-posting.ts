import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { documentOrigins, getPartner, Money, type Db } from '@rp/platform';
import type { Logger } from 'pino';
import type { CashAppPostingActivities, PaymentForPosting, PostingOperation, PostingOutcome } from '@rp/workflows';
import { allocationsOf, getPayment, type PaymentRow } from '../store/payments.js';
import { cashOf } from '../domain/payments.js';
import { recordPostingOutcome } from '../store/payment-posting.js';
import { recordPaymentEvents, type PaymentEventType } from '../domain/events.js';

export interface CashAppPostingDeps {
  db: Db;
  log: Logger;
  /** how long one attempt of loadPaymentForPosting waits for an uncommitted request (default 1 s) */
  uncommittedWaitMs?: number;
}

/** Attempts of loadPaymentForPosting that wait for the request's commit (start-then-commit, see domain commitWithPosting). */
const UNCOMMITTED_ATTEMPTS = 2;
const UNCOMMITTED_POLL_MS = 100;

/** The event of each posting outcome that has one (an unposting's outcomes have none in the catalogue). */
const OUTCOME_EVENTS: Partial<Record<PostingOutcome['status'], PaymentEventType>> = { posted: 'payment.posted', failed: 'payment.posting_failed' };

/** Whether the payment is in the state a committed `operation` request leaves it in. */
function requested(payment: PaymentRow, operation: PostingOperation): boolean {
  return operation === 'post' ? payment.status === 'approved' && payment.posting_status === 'pending' : payment.posting_status === 'unposting';
}

/** The attempt number of the running activity (1 outside an activity). */
function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/**
 * cash-app's side of workflow payment-posting-<paymentId> (which runs on the integrations task
 * queue): hand the payment, its allocations and the ERP identity of its invoices and customer to
 * integrations, and store the posting's outcome on the payment. Neither service reads the other's
 * schema; the ledger is read through the kernel's read module.
 */
export function createPaymentPostingActivities(deps: CashAppPostingDeps): CashAppPostingActivities {
  const { db } = deps;
  const uncommittedWaitMs = deps.uncommittedWaitMs ?? 1_000;
  return {
    async loadPaymentForPosting({ organizationId, paymentId, operation }: { organizationId: string; paymentId: string; operation?: PostingOperation }): Promise<PaymentForPosting | null> {
      let payment = await getPayment(db, organizationId, paymentId);
      if (!payment) return null;
      if (operation && !requested(payment, operation)) {
        // The request starts this workflow before it commits the payment's new state: wait briefly for it.
        for (let waited = 0; waited < uncommittedWaitMs && payment && !requested(payment, operation); waited += UNCOMMITTED_POLL_MS) {
          await new Promise((r) => setTimeout(r, UNCOMMITTED_POLL_MS));
          payment = await getPayment(db, organizationId, paymentId);
        }
        if (!payment) return null;
        if (!requested(payment, operation) && attempt() < UNCOMMITTED_ATTEMPTS) {
          throw ApplicationFailure.retryable(`the ${operation} request of payment ${paymentId} is not committed yet`, 'PostingNotCommitted');
        }
        // Never committed (the request failed or crashed after the start) or changed meanwhile: the workflow skips it.
      }
      const allocations = await allocationsOf(db, organizationId, [paymentId]);
      const [origins, partner] = await Promise.all([
        documentOrigins(db, organizationId, allocations.map((a) => a.invoice_id)),
        payment.partner_id ? getPartner(db, organizationId, payment.partner_id) : Promise.resolve(null),
      ]);
      // the cash the allocations apply: invoices paid less the credit of memos
      const allocated = cashOf(allocations);
      return {
        paymentId: payment.id,
        status: payment.status,
        postingStatus: payment.posting_status,
        postingId: payment.posting_id,
        amount: new Money(payment.amount).toFixed(),
        currency: payment.currency.trim(),
        paymentDate: payment.payment_date,
        bankReference: payment.tx_bank_reference,
        partner: partner ? { id: partner.id, origin: partner.origin, remoteId: partner.remote_id, name: partner.name } : null,
        lines: allocations.map((a) => {
          const doc = origins.get(a.invoice_id);
          return {
            invoiceId: a.invoice_id,
            kind: a.document_kind,
            origin: doc?.origin ?? 'unknown',
            remoteId: doc?.remote_id ?? null,
            documentNumber: doc?.document_number ?? a.invoice_id,
            companyCode: doc?.company_code ?? '',
            fiscalYear: doc?.fiscal_year ?? '',
            amountPaid: new Money(a.amount_paid).toFixed(),
            amountDiscount: new Money(a.amount_discount).toFixed(),
            amountWithheld: new Money(a.amount_withheld).toFixed(),
            adjustmentAmount: new Money(a.adjustment_amount).toFixed(),
          };
        }),
        unallocatedAmount: new Money(payment.amount).minus(allocated).toFixed(),
      };
    },

    /**
     * The outcome and its event (payment.posted / payment.posting_failed) commit together, and only
     * when the outcome changed the payment: a retried activity whose write committed records nothing.
     */
    async recordPaymentPosting(input: { organizationId: string; paymentId: string; operation: PostingOperation; outcome: PostingOutcome }): Promise<void> {
      const changed = await db.transaction(async (trx) => {
        const n = await recordPostingOutcome(trx, input.organizationId, input.paymentId, input.operation, input.outcome);
        const type = n > 0 ? OUTCOME_EVENTS[input.outcome.status] : undefined;
        if (type) await recordPaymentEvents(trx, input.organizationId, type, [input.paymentId]);
        return n;
      });
      deps.log.info(
        { organization_id: input.organizationId, payment_id: input.paymentId, operation: input.operation, outcome: input.outcome.status, changed },
        'payment posting outcome recorded',
      );
    },
  };
}
