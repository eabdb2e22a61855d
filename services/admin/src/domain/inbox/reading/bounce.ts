/**
 * Bounces: an RFC 3464 delivery-status notification (the parse stage's `deliveryStatus`), or the
 * common non-standard shapes — a mailer-daemon/postmaster sender, subjects such as "Undelivered Mail
 * Returned to Sender", "Delivery Status Notification (Failure)", "Undeliverable:", "Unzustellbar",
 * "Non remis", an `X-Failed-Recipients` header — with the failed addresses read from the text. Pure.
 */
import type { DeliveryStatus, ParsedInboundMessage } from '../../../domain-types/inbox.js';
import { fold } from './text.js';

export interface BounceReading {
  bounce: DeliveryStatus;
  confidence: number;
  reasons: string[];
}

const DAEMON_SENDER = /^(mailer-daemon|mail-daemon|postmaster|mailerdaemon|mdaemon|bounce[s]?|mail\.delivery\.system)@/i;
const DAEMON_NAME = /^(mail delivery (system|subsystem)|mail administrator|microsoft outlook|postmaster|mailer-daemon|mail delivery)$/i;
const BOUNCE_SUBJECT =
  /(undelivered mail|returned mail|return(ed)? to sender|undeliverable|delivery status notification \((failure|delay)\)|delivery (status notification|failure|has failed|incomplete)|mail delivery failed|failure notice|could not be delivered|not delivered|message not delivered|unzustellbar|nicht zustellbar|zustellung fehlgeschlagen|non remis|echec de (la )?(remise|distribution)|message non distribue|no se puede entregar|no entregado|error en la entrega|onbestelbaar|niet afgeleverd|kan niet worden bezorgd)/;
const DELAY_SUBJECT = /(\(delay\)|delayed|verzogert|retard|retrasad|vertraagd|warning: message .* delayed)/;
const FAILURE_TEXT =
  /(user unknown|unknown user|no such user|mailbox (unavailable|not found|does not exist|is full)|address rejected|recipient (address )?rejected|does not exist|could not be delivered|permanent(ly)? fail|delivery has failed|undeliverable|unzustellbar|n'existe pas|no existe|bestaat niet|550[ -]|5\.\d{1,3}\.\d{1,3})/;
const EMAIL = /(?<![a-z0-9._%+'-])[a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,}/gi;
const STATUS_CODE = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

function statusAction(code: string | null, delayed: boolean): string {
  if (code?.startsWith('2')) return 'delivered';
  if (code?.startsWith('4') || (delayed && !code?.startsWith('5'))) return 'delayed';
  return 'failed';
}

/** The failed addresses a non-standard bounce names in its text (not the sender's own, nor ours). */
function addressesFromText(msg: ParsedInboundMessage, text: string): string[] {
  const exclude = new Set([msg.from?.address, ...msg.to.map((t) => t.address), ...msg.cc.map((t) => t.address)].filter(Boolean).map((a) => a!.toLowerCase()));
  const failed = msg.headers['x-failed-recipients'];
  if (failed) {
    const list = (failed.match(EMAIL) ?? []).map((a) => a.toLowerCase());
    if (list.length) return [...new Set(list)];
  }
  const finalRecipients = [...text.matchAll(/(?:final|original)-recipient:\s*(?:rfc822;)?\s*<?([^\s>;]+@[^\s>;]+)>?/gi)].map((m) => m[1].toLowerCase());
  if (finalRecipients.length) return [...new Set(finalRecipients)];
  const found: string[] = [];
  for (const m of text.matchAll(EMAIL)) {
    const address = m[0].toLowerCase().replace(/\.$/, '');
    if (exclude.has(address) || DAEMON_SENDER.test(address) || found.includes(address)) continue;
    found.push(address);
    if (found.length >= 5) break;
  }
  return found;
}

/** The message's bounce, or null when it is not one. */
export function readBounce(msg: ParsedInboundMessage): BounceReading | null {
  const subject = fold(msg.subject ?? '');
  const reasons: string[] = [];
  if (msg.deliveryStatus && msg.deliveryStatus.recipients.length > 0) {
    const recipients = msg.deliveryStatus.recipients.map((r) => ({ ...r, address: r.address.toLowerCase() }));
    const failed = recipients.filter((r) => r.action === 'failed');
    reasons.push(
      `Delivery-status notification (RFC 3464): ${recipients.map((r) => `${r.address} ${r.action}${r.status ? ` (${r.status})` : ''}`).join(', ')}`,
    );
    if (!recipients.some((r) => r.action === 'failed' || r.action === 'delayed')) return null;
    return { bounce: { reportingMta: msg.deliveryStatus.reportingMta, recipients }, confidence: failed.length ? 99 : 90, reasons };
  }
  const sender = msg.from?.address ?? '';
  const daemon = DAEMON_SENDER.test(sender) || DAEMON_NAME.test((msg.from?.name ?? '').trim());
  const contentType = fold(msg.headers['content-type'] ?? '');
  const report = /multipart\/report/.test(contentType) && /delivery-status/.test(contentType);
  const subjectSays = BOUNCE_SUBJECT.test(subject);
  const text = msg.text.slice(0, 20_000);
  const textSays = FAILURE_TEXT.test(fold(text));
  let score = 0;
  if (daemon) {
    score += 45;
    reasons.push(`Sent by a mail system (${sender || msg.from?.name})`);
  }
  if (report) {
    score += 45;
    reasons.push('Content-Type multipart/report; report-type=delivery-status');
  }
  if (subjectSays) {
    score += 40;
    reasons.push(`Subject reads as a delivery failure: "${msg.subject}"`);
  }
  if (msg.headers['x-failed-recipients']) {
    score += 40;
    reasons.push(`X-Failed-Recipients: ${msg.headers['x-failed-recipients']}`);
  }
  if (textSays && score > 0) {
    score += 15;
    reasons.push('The text reports a failed delivery');
  }
  if (score < 55) return null;
  const code = STATUS_CODE.exec(text)?.[0] ?? null;
  const delayed = DELAY_SUBJECT.test(subject) && !/(failure|failed|undeliver)/.test(subject);
  const diagnostic = /^.*(user unknown|no such user|does not exist|mailbox (unavailable|not found|is full)|rejected|550).*$/im.exec(text)?.[0].trim().slice(0, 300) ?? null;
  const recipients = addressesFromText(msg, text).map((address) => ({ address, action: statusAction(code, delayed), status: code, diagnostic }));
  return { bounce: { reportingMta: null, recipients }, confidence: Math.min(97, score), reasons };
}
