import { ApplicationFailure } from '@temporalio/common';
import { getDocuments, getOrganizationProfile, getPartner, type Db, type Mailer } from '@rp/platform';
import type { Logger } from 'pino';
import type { PaymentReceiptActivities, PaymentReceiptInput, SendPaymentReceiptResult } from '@rp/workflows';
import { renderPaymentReceipt } from '../domain/receipts.js';
import { getOutreach, getReceiptPayment, markAttemptError, markFailed, markSending, markSent, markSkipped } from '../store/outreach.js';

export interface PaymentReceiptDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  /** the From address (MAIL_FROM) */
  from: string;
}

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/**
 * The send is guarded by the outreach record itself, the email's idempotency row: the attempt is
 * recorded on it before the SMTP call and it is marked `sent` (with the Message-ID as `email_id`)
 * after. A retried or re-run activity finds it sent and never sends again. The Message-ID is
 * derived from the record id, so a receiving server can de-duplicate the one window (a crash after
 * the SMTP server accepted, before the record was marked) that cannot be closed.
 */
export function createPaymentReceiptActivities(deps: PaymentReceiptDeps): PaymentReceiptActivities {
  return {
    async sendPaymentReceipt(input: PaymentReceiptInput): Promise<SendPaymentReceiptResult> {
      const log = deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: 'sendPaymentReceipt', outreach_id: input.outreachId });
      const record = await getOutreach(deps.db, input.organizationId, input.outreachId);
      if (!record) return { status: 'skipped', reason: 'the outreach record no longer exists' };
      if (record.status === 'sent') return { status: 'already-sent', emailId: record.email_id };
      if (record.status === 'skipped') return { status: 'skipped', reason: record.skip_reason ?? 'skipped' };
      if (record.status === 'failed') throw ApplicationFailure.nonRetryable(record.error ?? 'the receipt already failed', 'ReceiptFailed');

      const skip = async (reason: string): Promise<SendPaymentReceiptResult> => {
        await markSkipped(deps.db, record.id, reason);
        log.info({ reason }, 'payment receipt skipped');
        return { status: 'skipped', reason };
      };
      const payment = await getReceiptPayment(deps.db, input.organizationId, input.paymentId);
      if (!payment) return skip('the payment no longer exists');
      if (!payment.partner_id) return skip('no recipient: the payment has no customer');
      const partner = await getPartner(deps.db, input.organizationId, payment.partner_id);
      if (!partner) return skip('no recipient: the customer no longer exists');
      const to = partner.email?.trim();
      if (!to) return skip('no recipient: the customer has no email address');
      if (!EMAIL.test(to)) return skip(`no recipient: the customer's email address ${JSON.stringify(to)} is not valid`);

      const [invoices, org] = await Promise.all([
        getDocuments(deps.db, input.organizationId, payment.allocations.map((a) => a.invoice_id)),
        getOrganizationProfile(deps.db, input.organizationId),
      ]);
      const message = renderPaymentReceipt({
        organizationName: org?.name ?? 'Accounts receivable',
        partnerName: partner.name,
        amount: payment.amount,
        currency: payment.currency,
        paymentDate: payment.payment_date,
        reference: payment.bank_reference,
        lines: payment.allocations.map((a) => {
          const invoice = invoices.get(a.invoice_id);
          return {
            invoice_number: invoice?.document_number ?? a.invoice_id,
            currency: invoice?.currency ?? payment.currency,
            amount_paid: a.amount_paid,
            amount_discount: a.amount_discount,
            amount_withheld: a.amount_withheld,
          };
        }),
      });

      // The customer may have been changed on the payment since the receipt was requested: record whom it went to.
      await markSending(deps.db, record.id, to, partner.id);
      const domain = deps.from.match(/@([^>\s]+)/)?.[1] ?? 'receivables.local';
      try {
        const sent = await deps.mailer.send({
          from: deps.from,
          to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${record.id}@${domain}>`,
        });
        await markSent(deps.db, record.id, sent.messageId);
        log.info({ payment_id: payment.id }, 'payment receipt sent');
        return { status: 'sent', emailId: sent.messageId };
      } catch (err) {
        const e = err as Error & { responseCode?: number };
        await markAttemptError(deps.db, record.id, e.message);
        log.warn({ err }, 'payment receipt not sent');
        // A permanent SMTP rejection (5xx, e.g. unknown mailbox) will not get better by retrying.
        if (e.responseCode && e.responseCode >= 500 && e.responseCode < 600) throw ApplicationFailure.nonRetryable(e.message, 'SmtpRejected');
        throw err;
      }
    },

    async markPaymentReceiptFailed(input): Promise<void> {
      await markFailed(deps.db, input.organizationId, input.outreachId, input.error);
      deps.log.warn({ organization_id: input.organizationId, outreach_id: input.outreachId, error: input.error }, 'payment receipt failed');
    },
  };
}
