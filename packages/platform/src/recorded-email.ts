import type { Logger } from 'pino';
import type { Mailer } from './mail.js';

/**
 * One email sent at most once per intent, as far as a database and SMTP allow: every emailing
 * activity of the platform (payment receipt, welcome email, user invite) sends through
 * `sendRecordedEmail`. The workflow side (prepare → deliver → record, one activity family for every
 * kind) is workflows/src/recorded-email.ts.
 *
 * The intent is a row of the calling service (its idempotency record), written before any SMTP call
 * by an earlier activity. A send then runs these steps in order:
 *
 * 1. **Claim.** `store.beginAttempt` checks that the intent is not yet recorded sent and counts the
 *    attempt, in one statement. If it is already sent, the helper answers `already-sent` and makes no
 *    SMTP call.
 * 2. **Send.** The SMTP call uses the Message-ID `<intent id@from-domain>` (`recordedMessageId`). It
 *    is deterministic, so every copy of the intent carries the same Message-ID.
 * 3. **Record at once.** Right after the SMTP server accepted, `store.markSent` runs, best effort:
 *    `sentWriteTries` tries, default one. If that write fails, it is logged and swallowed, never
 *    thrown. Throwing would fail the activity and send again on the retry. The workflow's separate
 *    record activity still records "sent" for sure.
 *
 * Step 3 closes the window in which a worker killed after the SMTP server accepted, but before the
 * activity reported completion, made the retried attempt send again. That attempt now finds the
 * intent sent at step 1.
 *
 * **Residual risk.** The process can die after the SMTP server accepted but before the step-3 write
 * commits: a few milliseconds with no await but that write. The retried attempt then sends a second
 * copy, and that copy has the same Message-ID. Receiving systems that de-duplicate on Message-ID
 * (many do, and so can any downstream check) collapse it. Only the sender can close that window,
 * with a provider API that takes an idempotency key, such as the domain-send HTTP APIs that accept a
 * key per message. With such a key, the provider itself refuses a second send of the same intent id
 * within its retention. Plain SMTP has no such key. The alternative would be never to resend after
 * an attempt with an unknown outcome, and that trades duplicates for lost emails.
 */
export interface RecordedEmailStore {
  /**
   * Right before the SMTP call, in one statement: if the intent is not recorded sent, count the
   * attempt and answer `{ sent: false }`. Otherwise answer `{ sent: true, messageId }` with the
   * Message-ID it was recorded with.
   */
  beginAttempt(): Promise<{ sent: false } | { sent: true; messageId: string | null }>;
  /** Records the intent sent with the Message-ID the SMTP server accepted. Must be idempotent. */
  markSent(messageId: string): Promise<void>;
}

export type RecordedEmailMessage = Omit<Parameters<Mailer['send']>[0], 'messageId'>;

export type RecordedEmailResult = { status: 'delivered'; messageId: string } | { status: 'already-sent'; messageId: string | null };

/** The domain of a From address (`Name <a@b.example>` or `a@b.example`); `receivables.local` when there is none. */
export function fromDomain(from: string): string {
  return from.match(/@([^>\s]+)/)?.[1] ?? 'receivables.local';
}

/** The deterministic Message-ID of an intent: `<intentId@domain of from>`. */
export function recordedMessageId(intentId: string, from: string): string {
  return `<${intentId}@${fromDomain(from)}>`;
}

/**
 * Sends `message` for the intent `intentId` once (see the module comment). An error of the SMTP call
 * is thrown as `smtpFailure` makes it (it may record the error first); a failed claim (step 1) is
 * thrown unchanged (nothing was sent); a failed sent-write (step 3) is never thrown.
 */
export async function sendRecordedEmail(opts: {
  mailer: Mailer;
  log: Logger;
  intentId: string;
  message: RecordedEmailMessage;
  store: RecordedEmailStore;
  /** What is thrown for an error of the SMTP call (e.g. an ApplicationFailure by SMTP reply code); may record it first. */
  smtpFailure: (err: Error & { responseCode?: number }) => unknown;
  /** tries of the immediate sent-write (default 1; the workflow's record activity follows) */
  sentWriteTries?: number;
}): Promise<RecordedEmailResult> {
  const claim = await opts.store.beginAttempt();
  if (claim.sent) return { status: 'already-sent', messageId: claim.messageId };
  let sent: { messageId: string };
  try {
    sent = await opts.mailer.send({ ...opts.message, messageId: recordedMessageId(opts.intentId, opts.message.from) });
  } catch (err) {
    throw await opts.smtpFailure(err instanceof Error ? err : new Error(String(err)));
  }
  await recordSentBestEffort(() => opts.store.markSent(sent.messageId), opts.log.child({ email_intent_id: opts.intentId }), opts.sentWriteTries ?? 1);
  return { status: 'delivered', messageId: sent.messageId };
}

/** `record` tried up to `tries` times, 200 ms × try apart; a last failure is logged, never thrown. */
export async function recordSentBestEffort(record: () => Promise<void>, log: Logger, tries = 1): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await record();
    } catch (err) {
      if (i >= tries) {
        log.error({ err }, 'the email was accepted by the SMTP server but could not be recorded as sent yet');
        return;
      }
      await new Promise((r) => setTimeout(r, 200 * i));
    }
  }
}
