/**
 * Changes to payments that the API makes: a manual payment for a deposit, replacing a payment's
 * allocations, and approval (with the start of its ERP posting). Each runs
 * under the organization's payment lock, so approvals, edits and statement deletes of one
 * organization never interleave.
 */
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import { ConflictError, getDocuments, getPartner, isUuid, Money, NotFoundError, ValidationError, type BusinessUnitScope, type Db } from '@rp/platform';
import { normalizeAccount } from './matching/index.js';
import { checkAllocations, documentOpen, formatInCurrency, openAmount, relievedBy, shortfallOf, type AllocationDraft } from './payments.js';
import { awaitPostingWorkflowClosed, commitWithPosting, type PostingHooks } from './payment-posting.js';
import { ensureSystemAdjustments } from './system-adjustments.js';
import { recordPaymentEvents } from './events.js';
import { markPostingPending } from '../store/payment-posting.js';
import {
  activeAdjustmentIds,
  allocationsOf,
  getPayment,
  insertManualPayment,
  learnPartnerAccount,
  lockOrganizationPayments,
  lockTransaction,
  markApproved,
  replaceAllocations,
} from '../store/payments.js';
import { relievedByInvoice } from './open-amounts.js';

/**
 * Validate allocations for a payment of a transaction (amount, currency) and write them, with the
 * shortfall they leave (shortfallOf) and the payer: `partnerId` when given (must be a partner of the organization), else the invoices' partner
 * when they all have the same one, else the payment's current payer. Throws 422 with every problem found.
 * Invoices and partners outside the caller's business units count as unknown (422, like another
 * organization's).
 */
async function writeAllocations(
  trx: Knex.Transaction,
  org: string,
  payment: { id: string; tx_amount: string; tx_currency: string; partner_id: string | null },
  drafts: AllocationDraft[],
  partnerId: string | null | undefined,
  scope: BusinessUnitScope,
): Promise<void> {
  const invoiceIds = drafts.map((d) => d.invoice_id);
  const [invoices, relievedElsewhere, activeAdjustments] = await Promise.all([
    getDocuments(trx, org, invoiceIds, scope),
    relievedByInvoice(trx, org, ['approved'], { invoiceIds, excludePaymentId: payment.id }),
    activeAdjustmentIds(trx, org, drafts.flatMap((d) => (d.adjustment_id ? [d.adjustment_id] : []))),
  ]);
  let payer = payment.partner_id;
  let partnerIssue = false;
  if (partnerId !== undefined) {
    partnerIssue = partnerId !== null && !(await getPartner(trx, org, partnerId, scope));
    payer = partnerId;
  } else {
    const partners = [...new Set([...invoices.values()].filter((d) => invoiceIds.includes(d.id)).map((d) => d.partner_id))];
    if (partners.length === 1 && partners[0]) payer = partners[0];
  }
  const issues = checkAllocations({ allocations: drafts, transactionAmount: payment.tx_amount, currency: payment.tx_currency, invoices, relievedElsewhere, activeAdjustments, payerId: payer });
  if (partnerIssue) issues.push({ loc: ['body', 'partner_id'], msg: 'is not a partner of this organization', type: 'value_error.not_found' });
  if (issues.length > 0) throw new ValidationError(issues);
  await replaceAllocations(trx, org, payment.id, drafts, payer, new Map([...invoices.values()].map((d) => [d.id, d.kind])), shortfallOf(drafts, invoices, relievedElsewhere, payment.tx_currency));
}

/**
 * A new unapproved payment for a deposit of the organization that has none, with optional
 * allocations (same rules as replacePaymentAllocations). 422 when the transaction is not a deposit
 * of the organization; 409 when it already has a payment. Returns the payment id.
 */
export async function createPayment(
  db: Db,
  request: { organizationId: string; bankTransactionId: string; allocations: AllocationDraft[]; partnerId: string | null | undefined; scope?: BusinessUnitScope },
): Promise<string> {
  const org = request.organizationId;
  await ensureSystemAdjustments(db, org);
  return db.transaction(async (trx) => {
    await lockOrganizationPayments(trx, org);
    const tx = await lockTransaction(trx, org, request.bankTransactionId);
    if (!tx) throw new ValidationError([{ loc: ['body', 'bank_transaction_id'], msg: 'is not a bank transaction of this organization', type: 'value_error.not_found' }]);
    if (!new Money(tx.amount).gt(0)) throw new ValidationError([{ loc: ['body', 'bank_transaction_id'], msg: 'is not a deposit (its amount is not positive)', type: 'value_error.not_deposit' }]);
    if (tx.has_payment) throw new ConflictError('This transaction already has a payment; change that payment\'s allocations instead.');
    const paymentId = await insertManualPayment(trx, org, tx);
    await writeAllocations(trx, org, { id: paymentId, tx_amount: tx.amount, tx_currency: tx.currency, partner_id: null }, request.allocations, request.partnerId, request.scope ?? '*');
    // a user's payment proposes the deposit's application, as matching's proposal does
    await recordPaymentEvents(trx, org, 'payment.proposed', [paymentId]);
    return paymentId;
  });
}

/** Replace all allocations (and possibly the payer) of an unapproved payment. 404 unknown; 409 approved; 422 invalid allocations. */
export async function replacePaymentAllocations(
  db: Db,
  request: { organizationId: string; paymentId: string; allocations: AllocationDraft[]; partnerId: string | null | undefined; scope?: BusinessUnitScope },
): Promise<void> {
  const org = request.organizationId;
  if (!isUuid(request.paymentId)) throw new NotFoundError(`No payment ${request.paymentId}.`);
  await ensureSystemAdjustments(db, org);
  await db.transaction(async (trx) => {
    await lockOrganizationPayments(trx, org);
    const payment = await getPayment(trx, org, request.paymentId, { forUpdate: true, scope: request.scope });
    if (!payment) throw new NotFoundError(`No payment ${request.paymentId}.`);
    if (payment.status === 'approved') throw new ConflictError('The payment is approved; its allocations cannot be changed.');
    await writeAllocations(trx, org, payment, request.allocations, request.partnerId, request.scope ?? '*');
  });
}


/**
 * Approve an unapproved payment (a user's approval, or the organization's automatic approval with
 * `auto`: the same checks and effects) and start its ERP posting (`posting_status` `pending`, workflow
 * `payment-posting-<id>`). The approval and the start are atomic in effect (commitWithPosting: the
 * transaction commits after the start): a crash between them leaves the payment unapproved, never
 * approved and `pending` without a workflow. 404 unknown; 409 already approved, nothing to approve,
 * or an invoice no longer open enough. payment.approved is recorded in the same transaction, after
 * the start, with the payment as it commits (commitWithPosting).
 */
export async function approvePayment(
  deps: { db: Db; temporal: Client },
  request: {
    organizationId: string;
    userId: string | null;
    paymentId: string;
    onAccount: boolean;
    requestId?: string;
    scope?: BusinessUnitScope;
    /** approved by the organization's auto_approve_threshold, not by a user (recorded as `auto_approved`) */
    auto?: boolean;
  },
  hooks: PostingHooks = {},
): Promise<void> {
  const { organizationId: org, paymentId } = request;
  if (!isUuid(paymentId) || !(await getPayment(deps.db, org, paymentId, { scope: request.scope }))) throw new NotFoundError(`No payment ${paymentId}.`);
  // A posting workflow of the payment that is still closing (an unposting that made it unapproved
  // again) is given a few seconds before the start; if it still runs, the start records that as
  // the posting error.
  await awaitPostingWorkflowClosed(deps.temporal, paymentId);
  await commitWithPosting(
    deps,
    { organizationId: org, paymentId, operation: 'post', requestId: request.requestId },
    async (trx) => {
      await lockOrganizationPayments(trx, org);
      const payment = await getPayment(trx, org, paymentId, { forUpdate: true, scope: request.scope });
      if (!payment) throw new NotFoundError(`No payment ${paymentId}.`);
      if (payment.status === 'approved') throw new ConflictError('The payment is already approved.');
      const allocations = await allocationsOf(trx, org, [payment.id]);
      const onAccount = allocations.length === 0 && request.onAccount && payment.partner_id !== null;
      if (allocations.length === 0 && !onAccount) {
        throw new ConflictError('The payment has no allocations; allocate it to invoices before approving it (or approve it on account of its payer with {"on_account": true}).');
      }
      const invoiceIds = allocations.map((a) => a.invoice_id);
      const [invoices, relievedElsewhere] = await Promise.all([
        getDocuments(trx, org, invoiceIds),
        relievedByInvoice(trx, org, ['approved'], { invoiceIds, excludePaymentId: payment.id }),
      ]);
      for (const a of allocations) {
        const inv = invoices.get(a.invoice_id);
        if (!inv || !inv.status_open) throw new ConflictError(`${inv?.kind === 'credit_memo' ? 'Credit memo' : 'Invoice'} ${inv?.document_number ?? a.invoice_id} is no longer open; change the allocations first.`);
        const open = openAmount(documentOpen(inv), relievedElsewhere.get(inv.id));
        if (relievedBy(a).gt(open)) {
          const what = inv.kind === 'credit_memo' ? 'Credit memo' : 'Invoice';
          throw new ConflictError(`${what} ${inv.document_number} has only ${formatInCurrency(Money.max(open, 0), payment.currency)} open after other approved payments; change the allocations first.`);
        }
      }
      const partners = [...new Set(invoiceIds.map((id) => invoices.get(id)?.partner_id ?? null))];
      const partnerId = payment.partner_id ?? (partners.length === 1 ? partners[0]! : null);
      await markApproved(trx, org, payment.id, request.userId, partnerId, request.auto === true);
      await markPostingPending(trx, org, payment.id);
      const account = normalizeAccount(payment.tx_counterparty_iban) ?? normalizeAccount(payment.tx_counterparty_account);
      if (partnerId && account) await learnPartnerAccount(trx, org, partnerId, account);
    },
    hooks,
    ['payment.approved'],
  );
}
