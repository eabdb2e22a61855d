/** The payment receipt email, recorded on its outreach record before it is sent and sent once: the `receipt` kind of the recorded-email family, the receipt's failure record, and the activity names of receipt workflows started before the family. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { defaultEmailTemplate, exchangeRatesToBase, getDocuments, getOrganizationProfile, getPartner, TemplatePoolBusyError, type Db, type Mailer, type TemplatePool } from '@rp/platform';
import type { Logger } from 'pino';
import {
  type DeliverRecordedEmailResult,
  type PaymentReceiptActivities,
  type PaymentReceiptInput,
  type PrepareRecordedEmailResult,
  type RecordedEmailHandler,
  type RecordedEmailResult,
  type SendPaymentReceiptResult,
} from '@rp/workflows';
import { receiptTemplateContext, renderPaymentReceipt, renderReceiptTemplate } from '../domain/receipts.js';
import { recordReceiptFailed, recordReceiptSent } from '../domain/outreach.js';
import { getReceiptPayment, markIntent, markSkipped, type OutreachRow, type ReceiptPayment } from '../store/outreach.js';
import { pendingOutreach, sendOutreachEmail, smtpCapped as smtpCappedTo } from './outreach-email.js';

export interface PaymentReceiptDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  /** the From address (MAIL_FROM) */
  from: string;
  /** PAYMENT_RECEIPT_TEMPLATE_FOLDER: the folder whose default email template (admin) renders the receipt, when there is one */
  templateFolder: string;
  /** the worker's Liquid render threads (kernel TemplatePool) */
  templates: TemplatePool;
}

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

type ReceiptPartner = { id: string; name: string; legal_name: string | null; account_number: string | null; email: string | null; phone: string | null };
type Recipient = { kind: 'ok'; to: string; partner: ReceiptPartner; payment: ReceiptPayment } | { kind: 'skip'; reason: string };

/**
 * The outreach record is the email's idempotency row: its id is the idempotency key and makes the
 * Message-ID (`<record id@from-domain>`), so a receiving server can de-duplicate the one window no
 * database can close (the worker dies after the SMTP server accepted, before the activity reported).
 *
 * The workflow runs the family's three steps: prepare records the intent (recipient) or why nothing
 * is sent; deliver sends through the kernel's sendRecordedEmail (the record is checked and the
 * attempt counted before the SMTP call, "sent" is written at once after the SMTP server accepted,
 * best effort); recordSent marks the record sent for sure and is retried on its own. A failure to
 * record "sent" therefore never sends the email again. `sendOnce` is the single activity of
 * workflows started before the three steps (they still run it).
 */
function paymentReceiptParts(deps: PaymentReceiptDeps) {
  // `activity` names the activity type that runs the step (the family's, or a name of workflows started before it)
  const logFor = (input: PaymentReceiptInput) =>
    deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: Context.current().info.activityType, outreach_id: input.outreachId });

  /** The record, or the final answer when it is no longer pending. */
  async function pendingRecord(input: PaymentReceiptInput): Promise<OutreachRow | Exclude<SendPaymentReceiptResult, { status: 'sent' }>> {
    const record = await pendingOutreach(deps.db, input.organizationId, input.outreachId);
    return 'id' in record ? record : record.status === 'already-sent' ? { status: 'already-sent', emailId: record.messageId } : record;
  }

  async function recipientOf(input: PaymentReceiptInput): Promise<Recipient> {
    const payment = await getReceiptPayment(deps.db, input.organizationId, input.paymentId);
    if (!payment) return { kind: 'skip', reason: 'the payment no longer exists' };
    if (payment.status !== 'approved') return { kind: 'skip', reason: 'the payment is not approved' };
    if (!payment.partner_id) return { kind: 'skip', reason: 'no recipient: the payment has no customer' };
    const partner = await getPartner(deps.db, input.organizationId, payment.partner_id);
    if (!partner) return { kind: 'skip', reason: 'no recipient: the customer no longer exists' };
    const to = partner.email?.trim();
    if (!to) return { kind: 'skip', reason: 'no recipient: the customer has no email address' };
    if (!EMAIL.test(to)) return { kind: 'skip', reason: `no recipient: the customer's email address ${JSON.stringify(to)} is not valid` };
    return {
      kind: 'ok',
      to,
      partner: { id: partner.id, name: partner.name, legal_name: partner.legal_name, account_number: partner.account_number, email: partner.email, phone: partner.phone },
      payment,
    };
  }

  /**
   * The pending record and its recipient, or what the activity answers instead: the record is no
   * longer pending (already sent), or there is nobody to send to (the record is marked skipped).
   */
  async function receiptTarget(input: PaymentReceiptInput, log: Logger) {
    const record = await pendingRecord(input);
    if (!('id' in record)) return record;
    const recipient = await recipientOf(input);
    if (recipient.kind === 'skip') {
      await markSkipped(deps.db, record.id, recipient.reason);
      log.info({ reason: recipient.reason }, 'payment receipt skipped');
      return { status: 'skipped' as const, reason: recipient.reason };
    }
    return { record, recipient };
  }

  /**
   * The message: the organization's default template of the configured folder (admin's, read
   * through the kernel), rendered with the receipt's variables; else the built-in receipt.
   */
  async function render(input: PaymentReceiptInput, partner: ReceiptPartner, payment: ReceiptPayment) {
    const [invoices, org, template] = await Promise.all([
      getDocuments(deps.db, input.organizationId, payment.allocations.map((a) => a.invoice_id)),
      getOrganizationProfile(deps.db, input.organizationId),
      defaultEmailTemplate(deps.db, input.organizationId, deps.templateFolder),
    ]);
    const organizationName = org?.name ?? 'Accounts receivable';
    if (template) {
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: org?.timezone ?? 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
      // the template's `invoices` are the invoices paid; a credit memo the payment applied is not one of them
      const paid = payment.allocations.filter((a) => a.document_kind !== 'credit_memo').map((a) => invoices.get(a.invoice_id)).filter((d) => d !== undefined);
      const base = org?.base_currency ?? payment.currency;
      const rates = await exchangeRatesToBase(deps.db, input.organizationId, base, today, paid.map((d) => d.currency));
      const context = receiptTemplateContext({
        customer: { name: partner.name, legal_name: partner.legal_name, account_number: partner.account_number, email: partner.email, phone: partner.phone },
        invoices: paid.map((d) => ({
          number: d.document_number,
          document_date: d.document_date,
          due_date: d.net_due_date,
          currency: d.currency,
          amount: d.amount_in_document_currency,
          amount_open: d.amount_open,
        })),
        organization: { name: organizationName, base_currency: base },
        sender: { name: organizationName, email: deps.from.match(/<([^>]+)>/)?.[1] ?? deps.from },
        payment: { amount: payment.amount, currency: payment.currency, date: payment.payment_date, reference: payment.bank_reference },
        today,
        rates,
      });
      try {
        return await renderReceiptTemplate(deps.templates, template, context);
      } catch (err) {
        if (err instanceof TemplatePoolBusyError) throw ApplicationFailure.retryable(err.detail ?? err.message, 'TemplateRenderBusy');
        // admin validated the template against its catalogue; real data can still exceed a limit
        throw ApplicationFailure.nonRetryable(`The payment-receipt template (folder ${JSON.stringify(deps.templateFolder)}) does not render: ${(err as Error).message}`, 'ReceiptTemplateInvalid');
      }
    }
    return renderPaymentReceipt({
      organizationName,
      partnerName: partner.name,
      amount: payment.amount,
      currency: payment.currency,
      paymentDate: payment.payment_date,
      reference: payment.bank_reference,
      lines: payment.allocations.map((a) => {
        const invoice = invoices.get(a.invoice_id);
        return {
          kind: a.document_kind,
          invoice_number: invoice?.document_number ?? a.invoice_id,
          currency: invoice?.currency ?? payment.currency,
          amount_paid: a.amount_paid,
          amount_discount: a.amount_discount,
          amount_withheld: a.amount_withheld,
        };
      }),
    });
  }

  /** The send (see sendOutreachEmail). */
  function smtp(
    record: OutreachRow,
    to: string,
    message: { subject: string; text: string; html: string },
    log: Logger,
    opts: { sentWriteTries: number; recipient?: { to: string; partnerId: string } },
  ) {
    return sendOutreachEmail(deps, record, to, message, log, { ...opts, what: 'payment receipt' });
  }

  const smtpCapped = <T>(input: PaymentReceiptInput, run: () => Promise<T>): Promise<T> => smtpCappedTo(input.retry.maximumAttempts, run);

  /** The family's answer for a record that is no longer pending or has nobody to send to (the outreach record is the intent). */
  function notSent(input: PaymentReceiptInput, r: Exclude<SendPaymentReceiptResult, { status: 'sent' }>): Exclude<RecordedEmailResult, { status: 'sent' }> {
    return r.status === 'already-sent' ? { status: 'already-sent', emailId: input.outreachId, messageId: r.emailId } : r;
  }

  const handler: RecordedEmailHandler<PaymentReceiptInput> = {
    async prepare(input): Promise<PrepareRecordedEmailResult> {
      const log = logFor(input);
      const target = await receiptTarget(input, log);
      if (!('record' in target)) return notSent(input, target);
      const { record, recipient } = target;
      // The customer may have been changed on the payment since the receipt was requested: record whom it goes to.
      await markIntent(deps.db, record.id, recipient.to, recipient.partner.id);
      return { status: 'ready', emailId: record.id };
    },

    deliver: (input) => smtpCapped(input, async (): Promise<DeliverRecordedEmailResult> => {
      const log = logFor(input);
      const target = await receiptTarget(input, log);
      if (!('record' in target)) return notSent(input, target);
      const { record, recipient } = target;
      const to = record.recipient ?? recipient.to;
      const message = await render(input, recipient.partner, recipient.payment);
      // "sent" is written at once, best effort, one try (recordSent records it for sure): a worker
      // killed between the SMTP server's acceptance and the activity's completion does not send
      // again on the retry.
      const sent = await smtp(record, to, message, log, { sentWriteTries: 1 });
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId: record.id, messageId: sent.messageId };
      log.info({ payment_id: input.paymentId, message_id: sent.messageId }, 'payment receipt delivered to the SMTP server');
      return { status: 'delivered', emailId: record.id, messageId: sent.messageId };
    }),

    async recordSent(sent): Promise<void> {
      await recordReceiptSent(deps.db, sent.emailId, sent.messageId);
      deps.log.info({ organization_id: sent.organizationId, outreach_id: sent.emailId }, 'payment receipt recorded as sent');
    },
  };

  /** Before the three-step send: renders, sends and records in one activity. */
  const sendOnce = (input: PaymentReceiptInput) =>
    smtpCapped(input, async (): Promise<SendPaymentReceiptResult> => {
      const log = logFor(input);
      const target = await receiptTarget(input, log);
      if (!('record' in target)) return target;
      const { record, recipient } = target;
      const message = await render(input, recipient.partner, recipient.payment);
      // Accepted: a failure to record it must not fail the activity (a retry would send it again); three tries.
      const sent = await smtp(record, recipient.to, message, log, { sentWriteTries: 3, recipient: { to: recipient.to, partnerId: recipient.partner.id } });
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId: sent.messageId };
      log.info({ payment_id: input.paymentId }, 'payment receipt sent');
      return { status: 'sent', emailId: sent.messageId };
    });

  async function markFailedForUsers(input: { organizationId: string; outreachId: string; error: string }): Promise<void> {
    await recordReceiptFailed(deps.db, input.organizationId, input.outreachId, input.error);
    deps.log.warn({ organization_id: input.organizationId, outreach_id: input.outreachId, error: input.error }, 'payment receipt failed');
  }

  return { handler, sendOnce, markFailedForUsers };
}

/** The `receipt` kind of the recorded-email family. */
export function paymentReceiptHandler(deps: PaymentReceiptDeps): RecordedEmailHandler<PaymentReceiptInput> {
  return paymentReceiptParts(deps).handler;
}

/** The receipt's failure record, and the activity names of receipt workflows started before the recorded-email family (registered while recorded or running workflows may call them). */
export function createPaymentReceiptActivities(deps: PaymentReceiptDeps): PaymentReceiptActivities {
  const { handler, sendOnce, markFailedForUsers } = paymentReceiptParts(deps);
  const answer = (r: Exclude<RecordedEmailResult, { status: 'sent' }>): Exclude<SendPaymentReceiptResult, { status: 'sent' }> =>
    r.status === 'already-sent' ? { status: 'already-sent', emailId: r.messageId } : r;
  return {
    markPaymentReceiptFailed: markFailedForUsers,
    sendPaymentReceipt: sendOnce,
    preparePaymentReceipt: async (input) => {
      const prepared = await handler.prepare(input);
      return prepared.status === 'ready' ? { status: 'ready' } : answer(prepared);
    },
    deliverPaymentReceipt: async (input) => {
      const delivered = await handler.deliver(input, input.outreachId);
      return delivered.status === 'delivered' ? { status: 'delivered', messageId: delivered.messageId } : answer(delivered);
    },
    recordPaymentReceiptSent: ({ organizationId, outreachId, messageId }) => handler.recordSent({ organizationId, emailId: outreachId, messageId }),
  };
}
