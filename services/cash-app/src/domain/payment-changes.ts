/**
 * Changes to payments that the API makes: approval (with the start of its ERP posting). Each runs
 * under the organization's payment lock, so approvals, edits and statement deletes of one
 * organization never interleave.
 */
import { ConflictError, getDocuments, isUuid, Money, NotFoundError, type Db } from '@rp/platform';
import type { Client } from '@temporalio/client';
import { normalizeAccount } from './matching.js';
import { formatInCurrency, openAmount, relievedBy } from './payments.js';
import { awaitPostingWorkflowClosed, commitWithPosting, type PostingHooks } from './payment-posting.js';
import { markPostingPending } from '../store/payment-posting.js';
import { allocationsOf, getPayment, learnPartnerAccount, lockOrganizationPayments, markApproved, relievedByInvoice } from '../store/payments.js';

/**
 * Approve an unapproved payment and start its ERP posting (`posting_status` `pending`, workflow
 * `payment-posting-<id>`). The approval and the start are atomic in effect (commitWithPosting: the
 * transaction commits after the start): a crash between them leaves the payment unapproved, never
 * approved and `pending` without a workflow. 404 unknown; 409 already approved, nothing to approve,
 * or an invoice no longer open enough.
 */
export async function approvePayment(
  deps: { db: Db; temporal: Client },
  request: { organizationId: string; userId: string | null; paymentId: string; onAccount: boolean; requestId?: string },
  hooks: PostingHooks = {},
): Promise<void> {
  const { organizationId: org, paymentId } = request;
  if (!isUuid(paymentId) || !(await getPayment(deps.db, org, paymentId))) throw new NotFoundError(`No payment ${paymentId}.`);
  // A posting workflow of the payment that is still closing (an unposting that made it unapproved
  // again) is given a few seconds before the start; if it still runs, the start records that as
  // the posting error.
  await awaitPostingWorkflowClosed(deps.temporal, paymentId);
  await commitWithPosting(
    deps,
    { organizationId: org, paymentId, operation: 'post', requestId: request.requestId },
    async (trx) => {
      await lockOrganizationPayments(trx, org);
      const payment = await getPayment(trx, org, paymentId, { forUpdate: true });
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
        if (!inv || !inv.status_open) throw new ConflictError(`Invoice ${inv?.document_number ?? a.invoice_id} is no longer open; change the allocations first.`);
        const open = openAmount(inv.amount_open, relievedElsewhere.get(inv.id));
        if (relievedBy(a).gt(open)) {
          throw new ConflictError(`Invoice ${inv.document_number} has only ${formatInCurrency(Money.max(open, 0), payment.currency)} open after other approved payments; change the allocations first.`);
        }
      }
      const partners = [...new Set(invoiceIds.map((id) => invoices.get(id)?.partner_id ?? null))];
      const partnerId = payment.partner_id ?? (partners.length === 1 ? partners[0]! : null);
      await markApproved(trx, org, payment.id, request.userId, partnerId);
      await markPostingPending(trx, org, payment.id);
      const account = normalizeAccount(payment.tx_counterparty_iban) ?? normalizeAccount(payment.tx_counterparty_account);
      if (partnerId && account) await learnPartnerAccount(trx, org, partnerId, account);
    },
    hooks,
  );
}
