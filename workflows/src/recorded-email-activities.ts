/**
 * The recorded-email activity family built from per-kind handlers, for the services' workers (never
 * imported by workflow code): admin's worker serves `welcome` and `invite`, cash-app's `receipt` and `remittance-request`,
 * each on its own task queue under the family's one set of names (recorded-email.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { WelcomeEmailInput } from './admin/welcome-email.js';
import type { UserInviteInput } from './admin/user-invite.js';
import type { PaymentReceiptInput } from './cash-app/payment-receipt.js';
import type { RemittanceRequestInput } from './cash-app/remittance-request.js';
import type { WebhookDisabledEmailInput } from './admin/webhook-endpoint-delivery.js';
import type { DeliverRecordedEmailResult, PrepareRecordedEmailResult, RecordedEmailActivities, RecordedEmailKind } from './recorded-email.js';

/** The workflow input each kind's activities receive. */
export interface RecordedEmailInputs {
  welcome: WelcomeEmailInput;
  invite: UserInviteInput;
  receipt: PaymentReceiptInput;
  'remittance-request': RemittanceRequestInput;
  'webhook-disabled': WebhookDisabledEmailInput;
}

/** What a service implements for one kind: the three steps of the family (see RecordedEmailActivities). */
export interface RecordedEmailHandler<I> {
  prepare(input: I): Promise<PrepareRecordedEmailResult>;
  deliver(input: I, emailId: string): Promise<DeliverRecordedEmailResult>;
  recordSent(sent: { organizationId: string; emailId: string; messageId: string }): Promise<void>;
}

export type RecordedEmailHandlers<K extends RecordedEmailKind> = { [k in K]: RecordedEmailHandler<RecordedEmailInputs[k]> };

/** Failure type of a call for a kind this worker does not serve: a workflow started on the wrong task queue, a defect (never retried). */
export const RECORDED_EMAIL_KIND_NOT_SERVED = 'RecordedEmailKindNotServed';

/** The family's three activities, dispatching on `kind` to the handlers of the kinds this worker serves. */
export function recordedEmailActivities<K extends RecordedEmailKind>(handlers: RecordedEmailHandlers<K>): RecordedEmailActivities {
  const served = handlers as Partial<Record<RecordedEmailKind, RecordedEmailHandler<unknown>>>;
  function handler(kind: RecordedEmailKind): RecordedEmailHandler<unknown> {
    const found = Object.hasOwn(served, kind) ? served[kind] : undefined;
    if (!found) throw ApplicationFailure.nonRetryable(`this worker does not send recorded emails of kind ${JSON.stringify(kind)}`, RECORDED_EMAIL_KIND_NOT_SERVED);
    return found;
  }
  return {
    prepareRecordedEmail: async ({ kind, input }) => handler(kind).prepare(input),
    deliverRecordedEmail: async ({ kind, input, emailId }) => handler(kind).deliver(input, emailId),
    recordRecordedEmailSent: async ({ kind, organizationId, emailId, messageId }) => handler(kind).recordSent({ organizationId, emailId, messageId }),
  };
}
