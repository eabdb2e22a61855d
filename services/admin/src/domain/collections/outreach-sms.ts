/**
 * Doing one planned SMS action, exactly once: the step's SMS template rendered like an email's
 * (customer, totals, action), the text's intent recorded (collection_messages: To in E.164, the
 * platform's sender number, the segments it costs) before the provider call, the provider's message
 * id and segments recorded after; the call carries the intent id as its Idempotency-Key, so a retry
 * after a lost answer is answered with the message the provider already accepted.
 *
 * Quiet hours: no text goes out from 20:00 to 08:00 in the organization's timezone; a text due then
 * waits (the run's workflow sleeps on a durable timer until 08:00), it is not skipped.
 */
import { getOrganizationProfile, quietHoursEnd, smsMetrics, SmsProviderError, type SmsProvider } from '@rp/platform';
import * as actions from '../../store/collections/actions.js';
import { failAction, recordActionSent, renderOrFail, type DoOutcome, type Lookups, type OutreachDeps } from './outreach.js';

export interface SmsDeps extends Pick<OutreachDeps, 'db' | 'log' | 'templates'> {
  sms: SmsProvider;
  /** SMS_FROM: the sender number (E.164) */
  smsFrom: string;
}

/** Milliseconds until the organization's quiet hours end, or 0 outside them. */
export async function quietWaitMs(deps: Pick<OutreachDeps, 'db'>, organizationId: string, now = new Date()): Promise<number> {
  const org = await getOrganizationProfile(deps.db, organizationId);
  const end = quietHoursEnd(now, org?.timezone ?? 'UTC');
  return end ? Math.max(1000, end.getTime() - now.getTime()) : 0;
}

/** Does one planned SMS action outside quiet hours (the caller checks them; see the module comment). */
export async function doSmsAction(deps: SmsDeps, a: actions.ActionRow, asOf: string, lastPass: boolean, lookups: Lookups, known?: actions.MessageRow | null): Promise<DoOutcome> {
  // `known`: the batch's prefetched message of this action (null: none yet); undefined: look it up
  let message = known === undefined ? await actions.messageOfAction(deps.db, a.id) : (known ?? undefined);
  if (!message) {
    const rendered = await renderOrFail(deps, a, asOf, lookups, 'The customer has no phone number in E.164.');
    if (!rendered) return { status: 'failed' };
    message = await actions.messageIntent(deps.db, {
      organization_id: a.organization_id,
      action_id: a.id,
      partner_id: a.partner_id,
      business_unit_id: a.business_unit_id,
      channel: 'sms',
      to_address: rendered.to,
      from_address: deps.smsFrom,
      reply_to: null,
      subject: null,
      body: rendered.body,
      segments: smsMetrics(rendered.body).estimated_segment_count,
    });
  }
  const intent = message;
  const claim = await actions.beginMessageAttempt(deps.db, intent.id);
  if (claim.sent) {
    await recordActionSent(deps.db, a.organization_id, a.id, { messageId: null, providerMessageId: claim.messageId, segments: intent.segments }, intent.id);
    return { status: 'already-done' };
  }
  let sent: Awaited<ReturnType<SmsProvider['send']>>;
  try {
    sent = await deps.sms.send({ from: intent.from_address, to: intent.to_address, body: intent.body, idempotencyKey: intent.id });
  } catch (err) {
    if (!(err instanceof SmsProviderError)) throw err;
    const error = err.retryable ? `The SMS provider could not take the text yet: ${err.message}` : `The SMS provider refused the text: ${err.message}`;
    if (!err.retryable || lastPass) {
      await failAction(deps.db, a.organization_id, a.id, error);
      return { status: 'failed' };
    }
    await actions.markMessageError(deps.db, intent.id, error, false);
    return { status: 'retry', error };
  }
  const result = { messageId: null, providerMessageId: sent.sid, segments: sent.segments };
  try {
    await recordActionSent(deps.db, a.organization_id, a.id, result, intent.id);
    return { status: 'sent' };
  } catch (err) {
    // the provider accepted: never fail the send for its record; the workflow's record step writes it
    deps.log.error({ err, action_id: a.id }, 'the SMS was accepted but could not be recorded as sent yet');
    return { status: 'unrecorded', ...result };
  }
}
