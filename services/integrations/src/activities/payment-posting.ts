/**
 * The posting of applied cash to the ERP (workflow payment-posting-<paymentId>): QuickBooks Online
 * Payments created or deleted directly, middleware postings queued for the middleware to answer.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, Money, type Db, type TemporalHandle } from '@rp/platform';
import type { Logger } from 'pino';
import { POSTING_PROVIDER_ATTEMPTS, type IntegrationsPostingActivities, type PaymentForPosting, type PostingOutcome, type PreparedPosting } from '@rp/workflows';
import { ProviderApiError, type ProviderAccess } from '../adapters/adapter.js';
import { createQboPayment, deleteQboPayment, findQboPaymentsByRef, type QboPayment, type QboPaymentFound } from '../adapters/quickbooks-online-payments.js';
import type { IntegrationsConfig } from '../config.js';
import { getProviderAccess } from '../domain/connection-auth.js';
import { DIRECT_POSTING_PROVIDERS, MIDDLEWARE_ORIGIN, outcomeOf, postingKey, postingOrigin, postingPayload, postingRefusal } from '../domain/payment-posting.js';
import { CASH_APP_FEATURES } from '../domain/providers.js';
import { getConnection } from '../store/connections.js';
import {
  getPosting,
  insertPosting,
  livePostingOf,
  lockPaymentPostings,
  markFailed,
  markPosted,
  markUnposted,
  markUnposting,
  revertUnposting,
  type PostingRow,
} from '../store/payment-postings.js';

export interface PaymentPostingDeps {
  db: Db;
  log: Logger;
  /** A usable token, realm and API base URL for the connection (connection-auth's getProviderAccess). */
  getAccess(organizationId: string, connectionId: string): Promise<ProviderAccess>;
}

/** Provider errors as Temporal failures: refusals and credential problems are not retried, outages are. */
function toFailure(err: unknown): unknown {
  if (err instanceof ProviderApiError) {
    if (err.kind === 'authentication_required') return ApplicationFailure.create({ type: 'AuthenticationRequired', message: err.message, nonRetryable: true });
    if (err.kind === 'misconfigured') return ApplicationFailure.create({ type: 'ProviderMisconfigured', message: err.message, nonRetryable: true });
    return ApplicationFailure.create({
      type: err.kind === 'rate_limited' ? 'RateLimited' : 'ProviderUnavailable',
      message: err.message,
      nextRetryDelay: err.retryAfterSeconds !== null ? `${Math.max(1, err.retryAfterSeconds)} seconds` : undefined,
    });
  }
  const e = err as { code?: string; nonRetryable?: boolean };
  if (err instanceof Error && typeof e.code === 'string' && typeof e.nonRetryable === 'boolean') {
    const type = e.code === 'authentication_required' ? 'AuthenticationRequired' : e.code === 'misconfigured' ? 'ProviderMisconfigured' : 'ProviderUnavailable';
    return ApplicationFailure.create({ type, message: err.message, nonRetryable: e.nonRetryable });
  }
  return err;
}

/**
 * Why the Payment found by the posting key is not this posting (another customer or total: the
 * payment was changed after the attempt that stored it), or null when it is.
 */
function adoptionMismatch(found: QboPaymentFound, p: PostingRow['payload']): string | null {
  const customer = found.CustomerRef?.value;
  if (customer !== undefined && customer !== p.customer?.remote_id) return `Payment ${found.Id} of another customer (${customer})`;
  if (found.TotalAmt !== undefined && !new Money(found.TotalAmt).eq(p.amount)) return `Payment ${found.Id} of ${found.TotalAmt} instead of ${p.amount}`;
  return null;
}

function notFound(postingId: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'PostingNotFound', message: `Posting ${postingId} does not exist.`, nonRetryable: true });
}

/**
 * The integrations side of workflow payment-posting-<paymentId>. Side effects once: the posting
 * row is written before the ERP call and its id is the call's idempotency key (QuickBooks
 * `requestid`); the result is written after. A failure between the two (or of the result write)
 * retries the activity, and the repeated call returns the same ERP payment. Because QuickBooks
 * remembers a request id only for a while and a repost (POST /v2/payments/{id}/post after a
 * failure) is a new row with a new id, every attempt first searches QuickBooks for a Payment
 * carrying the payment's posting key (PaymentRefNum) and adopts it when found: a Payment stored by
 * an attempt whose answer was lost (a timeout or 5xx, then 401 or the retries used up) is never
 * created twice.
 */
export function createPaymentPostingActivities(deps: PaymentPostingDeps): IntegrationsPostingActivities {
  const { db } = deps;

  async function accessFor(row: PostingRow): Promise<ProviderAccess> {
    if (!row.connection_id) throw ApplicationFailure.create({ type: 'ProviderMisconfigured', message: `Posting ${row.id} has no connection.`, nonRetryable: true });
    return deps.getAccess(row.organization_id, row.connection_id);
  }

  return {
    async preparePaymentPosting({ organizationId, payment }: { organizationId: string; payment: PaymentForPosting }): Promise<PreparedPosting> {
      const refused = (error: string): PreparedPosting => ({ mode: 'done', outcome: { status: 'failed', postingId: null, provider: null, error } });
      return db.transaction(async (trx) => {
        await lockPaymentPostings(trx, organizationId, payment.paymentId);
        const live = await livePostingOf(trx, organizationId, payment.paymentId);
        if (live) {
          // a retried prepare, or a retry after a crash: continue with the same idempotency key
          if (live.status === 'posting') return { mode: 'direct', postingId: live.id, provider: live.provider_name };
          if (live.status === 'ready_to_post') return { mode: 'queue', postingId: live.id, provider: live.provider_name };
          return { mode: 'done', outcome: outcomeOf(live)! };
        }
        const target = postingOrigin(payment);
        if ('error' in target) return refused(target.error);
        let provider = 'middleware';
        if (target.origin !== MIDDLEWARE_ORIGIN) {
          const connection = await getConnection(trx, organizationId, target.connectionId!);
          if (!connection) return refused(`The connection ${target.connectionId} the invoices were synced from no longer exists.`);
          provider = connection.provider_name;
        }
        const refusal = postingRefusal(provider, target.origin, payment);
        if (refusal) return refused(refusal);
        const direct = DIRECT_POSTING_PROVIDERS.has(provider);
        const row = await insertPosting(trx, {
          organizationId,
          paymentId: payment.paymentId,
          origin: target.origin,
          providerName: provider,
          connectionId: target.connectionId,
          status: direct ? 'posting' : 'ready_to_post',
          payload: postingPayload(payment),
        });
        deps.log.info({ organization_id: organizationId, payment_id: payment.paymentId, posting_id: row.id, provider }, 'payment posting prepared');
        return direct ? { mode: 'direct', postingId: row.id, provider } : { mode: 'queue', postingId: row.id, provider };
      });
    },

    async submitPaymentPosting({ organizationId, postingId }: { organizationId: string; postingId: string }): Promise<PostingOutcome> {
      const row = await getPosting(db, organizationId, postingId);
      if (!row) throw notFound(postingId);
      if (row.status !== 'posting') {
        const done = outcomeOf(row);
        if (done) return done;
        throw ApplicationFailure.create({ type: 'PostingNotDirect', message: `Posting ${postingId} is ${row.status}.`, nonRetryable: true });
      }
      const p = row.payload;
      const key = postingKey(organizationId, row.payment_id);
      let created: QboPayment & { PrivateNote?: string };
      let adopted = false;
      try {
        const access = await accessFor(row);
        const earlier = await findQboPaymentsByRef(access, key);
        if (earlier.length > 0) {
          const mismatch = earlier.length > 1 ? `${earlier.length} Payments` : adoptionMismatch(earlier[0]!, p);
          if (mismatch) {
            const error =
              `QuickBooks Online already holds ${mismatch} with this payment's reference ${key} (an earlier posting attempt); ` +
              'nothing was posted again. Correct or delete it in QuickBooks, then post again.';
            const failed = await markFailed(db, organizationId, row.id, error);
            deps.log.warn({ organization_id: organizationId, posting_id: row.id, posting_key: key }, 'payment posting found a differing ERP payment');
            return outcomeOf(failed ?? (await getPosting(db, organizationId, row.id))!)!;
          }
          created = earlier[0]!;
          // this attempt's own create, answered late (its id is in the note), is not an adoption
          adopted = !(created.PrivateNote ?? '').includes(row.id);
        } else {
          created = await createQboPayment(access, row.id, {
            customerId: p.customer!.remote_id,
            currency: p.currency,
            totalAmount: p.amount,
            txnDate: p.payment_date,
            reference: key,
            privateNote: `Receivables platform payment ${p.payment_id}, posting ${row.id}${p.bank_reference ? `; bank reference ${p.bank_reference}` : ''}`,
            lines: p.lines
              .filter((l) => !new Money(l.amount_paid).isZero())
              .map((l) => ({ invoiceId: l.remote_id!, txnType: l.kind === 'credit_memo' ? ('CreditMemo' as const) : ('Invoice' as const), amount: l.amount_paid })),
          });
        }
      } catch (err) {
        if (err instanceof ProviderApiError && err.kind === 'rejected') {
          // the ERP refused the payment: that is the outcome, stored as the posting error
          const failed = await markFailed(db, organizationId, row.id, err.message);
          deps.log.warn({ organization_id: organizationId, posting_id: row.id, err: err.message }, 'payment posting refused by the ERP');
          return outcomeOf(failed ?? (await getPosting(db, organizationId, row.id))!)!;
        }
        // the ERP's deliberate attempt cap; outages of our database never count against it alone
        throw capExternalFailure(toFailure(err), Context.current().info.attempt, POSTING_PROVIDER_ATTEMPTS);
      }
      const posted = await markPosted(db, organizationId, row.id, { erpPaymentId: created.Id, erpDocumentNumber: created.PaymentRefNum ?? key, erpSyncToken: created.SyncToken, adopted });
      deps.log.info({ organization_id: organizationId, posting_id: row.id, erp_payment_id: created.Id, adopted }, adopted ? 'payment posting adopted the ERP payment of an earlier attempt' : 'payment posted to the ERP');
      return outcomeOf(posted ?? (await getPosting(db, organizationId, row.id))!)!;
    },

    async failPaymentPosting({ organizationId, postingId, error }: { organizationId: string; postingId: string; error: string }): Promise<PostingOutcome> {
      await markFailed(db, organizationId, postingId, error);
      const row = await getPosting(db, organizationId, postingId);
      if (!row) throw notFound(postingId);
      return outcomeOf(row) ?? { status: 'failed', postingId, provider: row.provider_name, error };
    },

    async readPaymentPosting({ organizationId, postingId }: { organizationId: string; postingId: string }): Promise<PostingOutcome | null> {
      const row = await getPosting(db, organizationId, postingId);
      if (!row) throw notFound(postingId);
      return outcomeOf(row);
    },

    async unpostPayment({ organizationId, paymentId }: { organizationId: string; paymentId: string }): Promise<PostingOutcome> {
      const live = await livePostingOf(db, organizationId, paymentId);
      if (!live || (live.status !== 'posted' && live.status !== 'unposting')) {
        return { status: 'unpost_failed', postingId: live?.id ?? null, error: 'The payment has no posting in the ERP to remove.' };
      }
      if (!CASH_APP_FEATURES[live.provider_name]?.can_unpost_payment || !DIRECT_POSTING_PROVIDERS.has(live.provider_name)) {
        return { status: 'unpost_failed', postingId: live.id, error: `Provider ${live.provider_name} cannot remove a posted payment.` };
      }
      await markUnposting(db, organizationId, live.id);
      try {
        const access = await accessFor(live);
        if (live.erp_payment_id) await deleteQboPayment(access, `${live.id}-del`, live.erp_payment_id);
      } catch (err) {
        if (err instanceof ProviderApiError && err.kind === 'rejected') {
          await revertUnposting(db, organizationId, live.id, err.message);
          return { status: 'unpost_failed', postingId: live.id, error: err.message };
        }
        // the ERP's deliberate attempt cap; outages of our database never count against it alone
        throw capExternalFailure(toFailure(err), Context.current().info.attempt, POSTING_PROVIDER_ATTEMPTS);
      }
      await markUnposted(db, organizationId, live.id);
      deps.log.info({ organization_id: organizationId, posting_id: live.id, erp_payment_id: live.erp_payment_id }, 'payment removed from the ERP');
      return { status: 'unposted', postingId: live.id };
    },
  };
}

/** The activities wired to the real provider access (token refresh). */
export function paymentPostingActivities(base: { db: Db; config: IntegrationsConfig; log: Logger; temporal: TemporalHandle }): IntegrationsPostingActivities {
  const { db, config, log } = base;
  const deps = { db, config, temporal: base.temporal.client };
  return createPaymentPostingActivities({ db, log, getAccess: (organizationId, connectionId) => getProviderAccess(deps, organizationId, connectionId) });
}
