/**
 * The remittance-request email, recorded on its outreach record before it is sent and sent once: the
 * `remittance-request` kind of the recorded-email family (the same steps and send as a payment
 * receipt's, activities/outreach-email.ts) and the request's failure record.
 *
 * The email goes to the customer the request names (its address recorded as the intent), from
 * MAIL_FROM with Reply-To `ar@<the organization's inbound host>` (kernel inbound-host.ts) so the
 * answer reaches the AR inbox, which threads it back to this record by its Message-ID
 * (`outreach_records.email_id`, view `outbound_messages`).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  arReplyAddress,
  defaultEmailTemplate,
  exchangeRatesToBase,
  getOrganizationProfile,
  getPartner,
  openInvoicesOfPartner,
  TemplatePoolBusyError,
  type Db,
  type LedgerPartner,
  type Mailer,
  type TemplatePool,
} from '@rp/platform';
import type { DeliverRecordedEmailResult, PrepareRecordedEmailResult, RecordedEmailHandler, RemittanceRequestActivities, RemittanceRequestInput } from '@rp/workflows';
import type { Logger } from 'pino';
import { recordReceiptFailed, recordReceiptSent } from '../domain/outreach.js';
import { receiptTemplateContext, renderReceiptTemplate } from '../domain/receipts.js';
import { renderRemittanceRequest, type RemittanceRequestDeposit } from '../domain/remittance-request-email.js';
import { requestAddress } from '../domain/remittance-requests.js';
import { markIntent, markSkipped, type OutreachRow } from '../store/outreach.js';
import { approvedPaymentOf, getRequestDeposit } from '../store/remittance-requests.js';
import { pendingOutreach, sendOutreachEmail, smtpCapped, type OutreachNotPending } from './outreach-email.js';

export interface RemittanceRequestDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  /** the From address (MAIL_FROM) */
  from: string;
  /** REMITTANCE_REQUEST_TEMPLATE_FOLDER: the folder whose default email template (admin) renders the request, when there is one */
  templateFolder: string;
  /** MAIL_INBOUND_DOMAIN: the inbound host of an organization without its own is `<org id>.<this>` */
  inboundDomain: string;
  /** the worker's Liquid render threads (kernel TemplatePool) */
  templates: TemplatePool;
}

type Target = { record: OutreachRow; to: string; partner: LedgerPartner; deposit: RemittanceRequestDeposit };

function remittanceRequestParts(deps: RemittanceRequestDeps) {
  const logFor = (input: RemittanceRequestInput) =>
    deps.log.child({ request_id: input.requestId, organization_id: input.organizationId, activity: Context.current().info.activityType, outreach_id: input.outreachId });

  const notSent = (input: RemittanceRequestInput, r: OutreachNotPending) =>
    r.status === 'already-sent' ? { status: 'already-sent' as const, emailId: input.outreachId, messageId: r.messageId } : r;

  /** Why nothing is sent for a pending record, or null: the deposit is gone or applied meanwhile, the customer gone or without an address. */
  async function skipReason(input: RemittanceRequestInput, record: OutreachRow): Promise<string | null> {
    const deposit = await getRequestDeposit(deps.db, input.organizationId, input.bankTransactionId);
    if (!deposit) return 'the bank transaction no longer exists';
    if (await approvedPaymentOf(deps.db, input.organizationId, deposit.id)) return 'the deposit was applied by an approved payment meanwhile';
    if (!record.partner_id) return 'no recipient: the request names no customer';
    const partner = await getPartner(deps.db, input.organizationId, record.partner_id);
    if (!partner) return 'no recipient: the customer no longer exists';
    if (!requestAddress(partner)) return 'no recipient: the customer has no valid email address';
    return null;
  }

  /** The pending record with its recipient, customer and deposit; or the answer instead (not pending, or skipped now with the reason). */
  async function target(input: RemittanceRequestInput, log: Logger): Promise<Target | OutreachNotPending> {
    const record = await pendingOutreach(deps.db, input.organizationId, input.outreachId);
    if (!('id' in record)) return record;
    const reason = await skipReason(input, record);
    if (reason) {
      await markSkipped(deps.db, record.id, reason);
      log.info({ reason }, 'remittance request skipped');
      return { status: 'skipped', reason };
    }
    const partner = (await getPartner(deps.db, input.organizationId, record.partner_id!))!;
    const deposit = (await getRequestDeposit(deps.db, input.organizationId, input.bankTransactionId))!;
    return {
      record,
      to: requestAddress(partner)!,
      partner,
      deposit: {
        amount: deposit.amount,
        currency: deposit.currency,
        date: deposit.booking_date ?? deposit.value_date,
        reference: deposit.bank_reference ?? deposit.end_to_end_id,
        details: deposit.remittance_information,
      },
    };
  }

  /**
   * The message: the organization's default template of the configured folder (admin's, read through
   * the kernel) rendered with the receipt's variables (`payment` = the deposit, `invoices` = the
   * customer's open invoices); else the built-in request.
   */
  async function render(input: RemittanceRequestInput, t: Target) {
    const [org, open, template] = await Promise.all([
      getOrganizationProfile(deps.db, input.organizationId),
      openInvoicesOfPartner(deps.db, input.organizationId, t.partner.id),
      defaultEmailTemplate(deps.db, input.organizationId, deps.templateFolder),
    ]);
    const organizationName = org?.name ?? 'Accounts receivable';
    if (!template) {
      return renderRemittanceRequest({
        organizationName,
        partnerName: t.partner.name,
        deposit: t.deposit,
        openInvoices: open.map((d) => ({ number: d.document_number, due_date: d.net_due_date, currency: d.currency.trim(), amount_open: d.amount_open })),
      });
    }
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: org?.timezone ?? 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
    const base = org?.base_currency ?? t.deposit.currency;
    const rates = await exchangeRatesToBase(deps.db, input.organizationId, base, today, open.map((d) => d.currency.trim()));
    const p = t.partner;
    const context = receiptTemplateContext({
      customer: { name: p.name, legal_name: p.legal_name, account_number: p.account_number, email: p.email, phone: p.phone },
      invoices: open.map((d) => ({ number: d.document_number, document_date: d.document_date, due_date: d.net_due_date, currency: d.currency.trim(), amount: d.amount_in_document_currency, amount_open: d.amount_open })),
      organization: { name: organizationName, base_currency: base },
      sender: { name: organizationName, email: deps.from.match(/<([^>]+)>/)?.[1] ?? deps.from },
      payment: { amount: t.deposit.amount, currency: t.deposit.currency, date: t.deposit.date, reference: t.deposit.reference },
      today,
      rates,
    });
    try {
      return await renderReceiptTemplate(deps.templates, template, context);
    } catch (err) {
      if (err instanceof TemplatePoolBusyError) throw ApplicationFailure.retryable(err.detail ?? err.message, 'TemplateRenderBusy');
      throw ApplicationFailure.nonRetryable(`The remittance-request template (folder ${JSON.stringify(deps.templateFolder)}) does not render: ${(err as Error).message}`, 'RemittanceRequestTemplateInvalid');
    }
  }

  const handler: RecordedEmailHandler<RemittanceRequestInput> = {
    async prepare(input): Promise<PrepareRecordedEmailResult> {
      const t = await target(input, logFor(input));
      if (!('record' in t)) return notSent(input, t);
      await markIntent(deps.db, t.record.id, t.to, t.partner.id);
      return { status: 'ready', emailId: t.record.id };
    },

    deliver: (input) =>
      smtpCapped(input.retry.maximumAttempts, async (): Promise<DeliverRecordedEmailResult> => {
        const log = logFor(input);
        const t = await target(input, log);
        if (!('record' in t)) return notSent(input, t);
        const message = await render(input, t);
        const replyTo = await arReplyAddress(deps.db, input.organizationId, deps.inboundDomain);
        // "sent" is written at once, best effort, one try (recordSent records it for sure)
        const sent = await sendOutreachEmail(deps, t.record, t.record.recipient ?? t.to, { ...message, headers: { 'Reply-To': replyTo } }, log, { sentWriteTries: 1, what: 'remittance request' });
        if (sent.status === 'already-sent') return { status: 'already-sent', emailId: t.record.id, messageId: sent.messageId };
        log.info({ bank_transaction_id: input.bankTransactionId, message_id: sent.messageId }, 'remittance request delivered to the SMTP server');
        return { status: 'delivered', emailId: t.record.id, messageId: sent.messageId };
      }),

    async recordSent(sent): Promise<void> {
      await recordReceiptSent(deps.db, sent.emailId, sent.messageId);
    },
  };

  const activities: RemittanceRequestActivities = {
    async markRemittanceRequestFailed(input) {
      await recordReceiptFailed(deps.db, input.organizationId, input.outreachId, input.error);
      deps.log.warn({ organization_id: input.organizationId, outreach_id: input.outreachId, error: input.error }, 'remittance request failed');
    },
  };
  return { handler, activities };
}

/** The `remittance-request` kind of the recorded-email family. */
export function remittanceRequestHandler(deps: RemittanceRequestDeps): RecordedEmailHandler<RemittanceRequestInput> {
  return remittanceRequestParts(deps).handler;
}

/** The request's failure record (the workflow's own activity beside the family). */
export function createRemittanceRequestActivities(deps: RemittanceRequestDeps): RemittanceRequestActivities {
  return remittanceRequestParts(deps).activities;
}
