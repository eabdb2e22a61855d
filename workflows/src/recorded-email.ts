/**
 * The recorded once-only email of the workflows (welcome email, user invitation, payment receipt):
 * its activity contract, one family of three activities discriminated by `kind`, and the one
 * workflow helper that runs prepare → deliver → record. The SMTP side of the send is the kernel's
 * recorded-email.ts; each service implements the family for its own kinds (recorded-email-activities.ts).
 */
import { ActivityFailure, proxyActivities, type ActivityOptions } from '@temporalio/workflow';

/** The emails sent through the family; each kind runs on the task queue of the service that owns it (welcome, invite, webhook-disabled: admin; receipt, remittance-request: cash-app). */
export type RecordedEmailKind = 'welcome' | 'invite' | 'receipt' | 'webhook-disabled' | 'remittance-request';

export type RecordedEmailResult =
  | { status: 'sent'; emailId: string; messageId: string }
  | { status: 'already-sent'; emailId: string; messageId: string | null }
  | { status: 'skipped'; reason: string };

/** `emailId` is the id of the intent (the service's idempotency row), which also makes the Message-ID. */
export type PrepareRecordedEmailResult = { status: 'ready'; emailId: string } | Exclude<RecordedEmailResult, { status: 'sent' }>;
export type DeliverRecordedEmailResult = { status: 'delivered'; emailId: string; messageId: string } | Exclude<RecordedEmailResult, { status: 'sent' }>;

/** One call of the family: the kind says which service's handler answers, `input` is that kind's workflow input. */
export interface RecordedEmailCall<I = unknown> {
  kind: RecordedEmailKind;
  input: I;
}

/**
 * Activity contract of the family. The names are the same on every task queue; a service's worker
 * serves only its own kinds (recordedEmailActivities), so no two workers of a queue disagree.
 */
export interface RecordedEmailActivities {
  /** Records the intent (the service's idempotency row), or says why nothing is sent. */
  prepareRecordedEmail(call: RecordedEmailCall): Promise<PrepareRecordedEmailResult>;
  /** The send (the kernel's sendRecordedEmail): checks the intent and counts the attempt before the SMTP call, writes "sent" at once after it, best effort (a failed write never fails the activity, which would resend). */
  deliverRecordedEmail(call: RecordedEmailCall & { emailId: string }): Promise<DeliverRecordedEmailResult>;
  /** Marks the intent sent with the Message-ID the SMTP server accepted; retried on its own, never resending. */
  recordRecordedEmailSent(call: { kind: RecordedEmailKind; organizationId: string; emailId: string; messageId: string }): Promise<void>;
}

/** The retry policy of each step, as the workflow of the kind sets it (the SMTP server's policy for the delivery). */
export interface RecordedEmailOptions {
  prepare: ActivityOptions;
  deliver: ActivityOptions;
  record: ActivityOptions;
}

/**
 * The three steps as activity calls. The family's are built by recordedEmailSteps; a workflow whose
 * recorded histories scheduled activities of other names (before the family) builds its own, so
 * those histories replay through the same helper.
 */
export interface RecordedEmailSteps {
  prepare(): Promise<PrepareRecordedEmailResult>;
  deliver(emailId: string): Promise<DeliverRecordedEmailResult>;
  recordSent(emailId: string, messageId: string): Promise<void>;
}

/** The family's activities for `kind`, each step with its own options. */
export function recordedEmailSteps<I extends { organizationId: string }>(kind: RecordedEmailKind, input: I, options: RecordedEmailOptions): RecordedEmailSteps {
  const { prepareRecordedEmail } = proxyActivities<RecordedEmailActivities>(options.prepare);
  const { deliverRecordedEmail } = proxyActivities<RecordedEmailActivities>(options.deliver);
  const { recordRecordedEmailSent } = proxyActivities<RecordedEmailActivities>(options.record);
  return {
    prepare: () => prepareRecordedEmail({ kind, input }),
    deliver: (emailId) => deliverRecordedEmail({ kind, input, emailId }),
    recordSent: (emailId, messageId) => recordRecordedEmailSent({ kind, organizationId: input.organizationId, emailId, messageId }),
  };
}

/**
 * Sends once: the intent is recorded first, the SMTP send is its own activity, and recording "sent"
 * is a separate activity whose failure retries only the recording, never the send.
 *
 * `onSendFailure` answers for an activity failure of prepare or deliver (the email did not go out),
 * e.g. by recording the failure for users; without it such a failure fails the workflow. A failure to
 * record "sent" is never handed to it: the email went out, so it is not a failed email.
 */
export async function runRecordedEmail<F = never>(steps: RecordedEmailSteps, onSendFailure?: (err: ActivityFailure) => Promise<F>): Promise<RecordedEmailResult | F> {
  let delivered: DeliverRecordedEmailResult;
  try {
    const prepared = await steps.prepare();
    if (prepared.status !== 'ready') return prepared;
    delivered = await steps.deliver(prepared.emailId);
  } catch (err) {
    if (!onSendFailure || !(err instanceof ActivityFailure)) throw err;
    return await onSendFailure(err);
  }
  if (delivered.status !== 'delivered') return delivered;
  await steps.recordSent(delivered.emailId, delivered.messageId);
  return { status: 'sent', emailId: delivered.emailId, messageId: delivered.messageId };
}

/** The recorded email of `kind` through the family (see runRecordedEmail). */
export function recordedEmail<I extends { organizationId: string }, F = never>(
  kind: RecordedEmailKind,
  input: I,
  options: RecordedEmailOptions,
  onSendFailure?: (err: ActivityFailure) => Promise<F>,
): Promise<RecordedEmailResult | F> {
  return runRecordedEmail(recordedEmailSteps(kind, input, options), onSendFailure);
}
