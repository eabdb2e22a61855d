/**
 * The deterministic readers of an inbound message: its category (remittance, promise_to_pay,
 * dispute, question, auto_reply, bounce, other) with a 0..100 confidence and the reasons, the
 * bounce, the promise to pay, the dispute, the referenced invoice/customer numbers and the
 * signature company. Pure: the same message and day give the same reading.
 */
import type { MessageReading, ParsedInboundMessage } from '../../../domain-types/inbox.js';
import { readAutoReply } from './auto-reply.js';
import { readBounce } from './bounce.js';
import { classify } from './classify.js';
import { readDispute } from './dispute.js';
import { bareNumbersIn, customerNumbersIn, invoiceNumbersIn } from './numbers.js';
import { readPromise } from './promise.js';
import { readSignatureCompany } from './signature.js';
import { normalize, ownWords } from './text.js';

export interface ReadingContext {
  /** YYYY-MM-DD in the organization's timezone */
  today: string;
  timezone: string;
}

const MAX_REFERENCED = 50;
const MAX_TEXT = 200_000;

function referencedNumbers(subject: string, own: string, full: string, attachments: string): string[] {
  const out: string[] = [];
  const add = (list: string[]) => {
    for (const n of list) if (out.length < MAX_REFERENCED && !out.some((o) => o.toLowerCase() === n.toLowerCase())) out.push(n);
  };
  for (const text of [subject, own, full, attachments]) {
    add(invoiceNumbersIn(text));
    add(customerNumbersIn(text));
  }
  for (const text of [subject, own, attachments]) add(bareNumbersIn(text));
  return out;
}

export function readMessage(msg: ParsedInboundMessage, ctx: ReadingContext): MessageReading {
  const subject = normalize((msg.subject ?? '').slice(0, 2000));
  // the readers look at the first 200,000 characters: a message's meaning is at its start
  const full = normalize((msg.text ?? '').slice(0, MAX_TEXT));
  const own = ownWords(full, subject);
  const attachmentsText = normalize(
    msg.attachments
      .map((a) => a.text ?? '')
      .filter(Boolean)
      .join('\n')
      .slice(0, 200_000),
  );
  const bounce = readBounce(msg);
  const autoReply = bounce ? null : readAutoReply(msg, own);
  const promise = bounce || (autoReply && !autoReply.generatedOnly) ? null : readPromise(own, subject, ctx.today, attachmentsText);
  const dispute = bounce || (autoReply && !autoReply.generatedOnly) ? null : readDispute(own, subject);
  const verdict = classify({ msg, subject, own, full, attachmentsText, bounce, autoReply, promise, dispute });
  return {
    category: verdict.category,
    category_confidence: verdict.confidence,
    category_reasons: verdict.reasons,
    bounce: verdict.category === 'bounce' ? (bounce?.bounce ?? null) : null,
    promise: verdict.category === 'promise_to_pay' || (promise && verdict.category !== 'auto_reply' && verdict.category !== 'bounce') ? promise : null,
    dispute: verdict.category === 'dispute' || (dispute && verdict.category !== 'auto_reply' && verdict.category !== 'bounce') ? dispute : null,
    // a bounce's returned copy and an auto-reply's quoted subject still name the invoices: they help the matcher
    referenced_numbers: referencedNumbers(subject, own, full, attachmentsText),
    signature_company: verdict.category === 'bounce' ? null : readSignatureCompany(own, msg.from),
  };
}

export type { MessageReading } from '../../../domain-types/inbox.js';
