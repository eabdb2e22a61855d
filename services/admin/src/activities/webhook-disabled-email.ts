/**
 * The email telling an organization's admins that delivery disabled one of their webhook endpoints:
 * the `webhook-disabled` kind of the recorded-email family. The intent (outbound-email row) is
 * written with the disabling itself (store/webhooks/notices.ts); the send goes through the kernel's
 * sendRecordedEmail, so each disabling is emailed once.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { capExternalFailure, sendRecordedEmail, type Db, type Mailer } from '@rp/platform';
import type { Logger } from 'pino';
import { WEBHOOK_DISABLED_SMTP_ATTEMPTS, type RecordedEmailHandler, type WebhookDisabledEmailInput } from '@rp/workflows';
import { getEmail, markError, markSent, outboundEmailIntent } from '../store/emails.js';
import { getEndpointForDelivery } from '../store/webhooks/queue.js';

export interface WebhookDisabledEmailDeps {
  db: Db;
  mailer: Mailer;
  log: Logger;
  from: string;
  publicBaseUrl: string;
}

export function webhookDisabledEmailHandler(deps: WebhookDisabledEmailDeps): RecordedEmailHandler<WebhookDisabledEmailInput> {
  return {
    async prepare(input) {
      const email = await deps.db('outbound_emails').where({ idempotency_key: input.emailKey, organization_id: input.organizationId }).first();
      if (!email) return { status: 'skipped', reason: 'no notice was recorded for this disabling' };
      if (email.status === 'sent') return { status: 'already-sent', emailId: email.id, messageId: email.message_id };
      return { status: 'ready', emailId: email.id };
    },

    async deliver(input, emailId) {
      const email = await getEmail(deps.db, emailId);
      if (!email) throw ApplicationFailure.nonRetryable(`outbound email ${emailId} does not exist`, 'EmailNotFound');
      if (email.status === 'sent') return { status: 'already-sent', emailId, messageId: email.message_id };
      const endpoint = await getEndpointForDelivery(deps.db, input.endpointId);
      const reason = endpoint?.disabled_reason ?? 'Delivery failed.';
      const url = endpoint?.url ?? 'a webhook endpoint (since deleted)';
      const text = [
        `Your webhook endpoint ${url} (id ${input.endpointId}) was disabled:`,
        reason,
        '',
        'Its pending deliveries are paused. Fix the receiver, then re-enable the endpoint',
        `(PATCH ${deps.publicBaseUrl}/v2/webhook-endpoints/${input.endpointId} with {"is_enabled": true}) to resume them.`,
        `Events recorded meanwhile are listed by GET ${deps.publicBaseUrl}/v2/events.`,
      ].join('\n');
      const log = deps.log.child({ organization_id: input.organizationId, endpoint_id: input.endpointId });
      const sent = await sendRecordedEmail({
        mailer: deps.mailer,
        log,
        intentId: email.id,
        message: { from: deps.from, to: email.to_address, subject: email.subject, text },
        store: outboundEmailIntent(deps.db, email.id),
        smtpFailure: async (e) => {
          await markError(deps.db, email.id, e.message);
          const failure = ApplicationFailure.create({ type: e.responseCode && e.responseCode >= 500 ? 'SmtpRejected' : 'SmtpUnavailable', message: e.message, cause: e });
          return capExternalFailure(failure, Context.current().info.attempt, WEBHOOK_DISABLED_SMTP_ATTEMPTS);
        },
      });
      if (sent.status === 'already-sent') return { status: 'already-sent', emailId, messageId: sent.messageId };
      log.info({ email_id: email.id }, 'webhook-disabled notice delivered to the SMTP server');
      return { status: 'delivered', emailId, messageId: sent.messageId };
    },

    async recordSent(sent) {
      await markSent(deps.db, sent.emailId, sent.messageId);
    },
  };
}
