/**
 * Which customer a received message is from, with the reasons and a confidence 0..100.
 *
 * Rules, each giving evidence (a weight 0..1) for one customer:
 * - `reply_to_outbound` (0.97): In-Reply-To/References name one of our own emails — a collection
 *   action's (collection_messages) or cash-app's receipt or remittance request (kernel
 *   cashAppOutboundMessages) — about that customer. Also gives `in_reply_to`.
 * - `same_thread` (0.85): no email of ours is in the thread, but an earlier message of it was matched
 *   to the customer with a confidence of at least SAME_THREAD_MIN_CONFIDENCE (or by a user).
 * - `known_contact` (0.92): the sender address was taught to belong to the customer: a user's
 *   correction of an earlier message's customer, or an earlier confident reply to our own email.
 * - `customer_email` (0.9): the sender address is one of the customer's email addresses in the ledger.
 * - `sender_domain` (0.7): the sender's domain is the email domain of exactly one customer; shared
 *   domains (several customers) and free-mail providers give nothing.
 * - `invoice_number` (0.75 for one invoice, 0.85 for several of one customer): invoice numbers read
 *   in the subject, body and attachments resolve in the ledger to that customer's invoices.
 * - `customer_number` (0.7): a customer number read in the message is the customer's.
 * - `signature_company` (0.55): the company name read from the signature is the customer's name.
 *
 * A customer's confidence combines its evidence as independent signals, 1 − Π(1 − w); a second
 * customer with evidence of its own takes half its confidence off the best one (conflicting
 * evidence is never auto-assigned on the strength of one rule). `matching_guidelines` is free text
 * for the optional language-model path only; the deterministic rules above do not read it.
 */
import {
  cashAppOutboundMessages,
  findPartnersByEmail,
  findPartnersByName,
  invoicesByNumbers,
  partnersByCustomerNumbers,
  partnersByEmailDomain,
  type Db,
} from '@rp/platform';
import type { InboxRef, MessageReading, ParsedInboundMessage } from '../../domain-types/inbox.js';
import { collectionMessagesByMessageIds, knownContact, matchedInboxMessagesByMessageIds, type MatchReason } from '../../store/inbox/messages.js';

export const MATCH_WEIGHTS = {
  reply_to_outbound: 0.97,
  known_contact: 0.92,
  same_thread: 0.85,
  customer_email: 0.9,
  sender_domain: 0.7,
  invoice_number: 0.75,
  invoice_numbers: 0.85,
  customer_number: 0.7,
  signature_company: 0.55,
  bounced_recipient: 0.9,
} as const;

/** Mail systems' own senders: never a customer's contact, whatever they answer (a bounce threads to the email it returns). */
export const SYSTEM_SENDER = /^(?:mailer-daemon|postmaster|mail-daemon|no-?reply|do-?not-?reply)@/i;

/** How sure the match of an earlier message of the thread must have been to count for its replies. */
export const SAME_THREAD_MIN_CONFIDENCE = 80;

/** Mail providers whose domain says nothing about the company behind an address. */
const FREE_MAIL_DOMAINS = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'icloud.com', 'me.com', 'aol.com',
  'gmx.de', 'gmx.net', 'web.de', 't-online.de', 'mail.de', 'freenet.de', 'posteo.de', 'orange.fr', 'free.fr', 'laposte.net', 'wanadoo.fr',
  'proton.me', 'protonmail.com', 'yandex.com', 'mail.com', 'zoho.com', 'ziggo.nl', 'kpnmail.nl', 'hetnet.nl',
]);

export interface MatchResult {
  partner_id: string | null;
  /** 0..100 */
  confidence: number;
  reasons: MatchReason[];
  in_reply_to: InboxRef | null;
  /** the deposit a replied-to remittance request was about */
  bank_transaction_id: string | null;
}

interface Evidence {
  partnerId: string;
  rule: string;
  detail: string;
  weight: number;
}

async function threadEvidence(db: Db, organizationId: string, msg: ParsedInboundMessage) {
  const ids = [...(msg.inReplyTo ? [msg.inReplyTo] : []), ...[...msg.references].reverse()];
  if (!ids.length) return { evidence: [] as Evidence[], inReplyTo: null as InboxRef | null, bankTransactionId: null as string | null };
  const [ours, cash] = await Promise.all([collectionMessagesByMessageIds(db, organizationId, ids), cashAppOutboundMessages(db, organizationId, ids)]);
  // the nearest message of the thread first: In-Reply-To, then References newest first
  const rank = (id: string) => ids.indexOf(id);
  const found = [
    ...ours.map((m) => ({ messageId: m.message_id, partnerId: m.partner_id as string | null, ref: { object: 'collection_action', id: m.action_id }, what: 'a collection email', bank: null as string | null })),
    ...cash.map((m) => ({
      messageId: m.message_id,
      partnerId: m.partner_id,
      ref: { object: 'outreach_record', id: m.ref_id },
      what: m.outreach_type === 'payment_receipt' ? 'a payment receipt' : 'a remittance request',
      bank: m.bank_transaction_id,
    })),
  ].sort((a, b) => rank(a.messageId) - rank(b.messageId));
  const first = found[0];
  if (!first) return { evidence: await earlierInThread(db, organizationId, ids), inReplyTo: null, bankTransactionId: null };
  const evidence = first.partnerId
    ? [{ partnerId: first.partnerId, rule: 'reply_to_outbound', detail: `Replies to ${first.what} we sent (${first.messageId}).`, weight: MATCH_WEIGHTS.reply_to_outbound }]
    : [];
  return { evidence, inReplyTo: first.ref, bankTransactionId: first.bank };
}

/** The nearest earlier message of the thread that was confidently matched (see `same_thread`). */
async function earlierInThread(db: Db, organizationId: string, ids: readonly string[]): Promise<Evidence[]> {
  const earlier = (await matchedInboxMessagesByMessageIds(db, organizationId, ids))
    .filter((m) => m.match_confidence >= SAME_THREAD_MIN_CONFIDENCE)
    .sort((a, b) => ids.indexOf(a.message_id) - ids.indexOf(b.message_id))[0];
  return earlier ? [{ partnerId: earlier.partner_id, rule: 'same_thread', detail: `Continues a thread whose earlier message ${earlier.message_id} is this customer's.`, weight: MATCH_WEIGHTS.same_thread }] : [];
}

async function senderEvidence(db: Db, organizationId: string, address: string): Promise<Evidence[]> {
  const out: Evidence[] = [];
  const known = await knownContact(db, organizationId, address);
  if (known) out.push({ partnerId: known.partner_id, rule: 'known_contact', detail: `${address} is a known contact of this customer (${known.source === 'manual' ? 'taught by a correction' : 'from an earlier reply'}).`, weight: MATCH_WEIGHTS.known_contact });
  const exact = await findPartnersByEmail(db, organizationId, address);
  if (exact.length === 1) out.push({ partnerId: exact[0]!.id, rule: 'customer_email', detail: `${address} is the customer's email address in the ledger.`, weight: MATCH_WEIGHTS.customer_email });
  const domain = address.split('@').pop()!.toLowerCase();
  if (!exact.length && domain && !FREE_MAIL_DOMAINS.has(domain)) {
    const byDomain = await partnersByEmailDomain(db, organizationId, domain);
    if (byDomain.length === 1) out.push({ partnerId: byDomain[0]!.id, rule: 'sender_domain', detail: `The sender's domain ${domain} is this customer's email domain.`, weight: MATCH_WEIGHTS.sender_domain });
  }
  return out;
}

/** A bounce is the customer's whose ledger address failed (a DSN's failed recipients; exactly one customer). */
async function bounceEvidence(db: Db, organizationId: string, bounce: MessageReading['bounce']): Promise<Evidence[]> {
  const failed = [...new Set((bounce?.recipients ?? []).filter((r) => r.action === 'failed').map((r) => r.address))].slice(0, 10);
  const found = new Map<string, string>();
  for (const address of failed) for (const p of await findPartnersByEmail(db, organizationId, address)) found.set(p.id, address);
  if (found.size !== 1) return [];
  const [[partnerId, address]] = [...found];
  return [{ partnerId: partnerId!, rule: 'bounced_recipient', detail: `The delivery to ${address}, this customer's address in the ledger, failed.`, weight: MATCH_WEIGHTS.bounced_recipient }];
}

async function contentEvidence(db: Db, organizationId: string, reading: Pick<MessageReading, 'referenced_numbers' | 'signature_company'>): Promise<Evidence[]> {
  const out: Evidence[] = [];
  const numbers = reading.referenced_numbers;
  if (numbers.length) {
    const invoices = await invoicesByNumbers(db, organizationId, numbers);
    const byPartner = new Map<string, string[]>();
    for (const inv of invoices) {
      if (!inv.partner_id) continue;
      const list = byPartner.get(inv.partner_id) ?? [];
      if (!list.includes(inv.document_number)) list.push(inv.document_number);
      byPartner.set(inv.partner_id, list);
    }
    for (const [partnerId, nums] of byPartner) {
      out.push({
        partnerId,
        rule: 'invoice_number',
        detail: `Invoice${nums.length > 1 ? 's' : ''} ${nums.slice(0, 5).join(', ')}${nums.length > 5 ? ', …' : ''} of this customer named in the message.`,
        weight: nums.length > 1 ? MATCH_WEIGHTS.invoice_numbers : MATCH_WEIGHTS.invoice_number,
      });
    }
    const customers = await partnersByCustomerNumbers(db, organizationId, numbers);
    for (const c of customers) {
      out.push({ partnerId: c.id, rule: 'customer_number', detail: `Customer number ${c.account_number ?? c.remote_id} named in the message.`, weight: MATCH_WEIGHTS.customer_number });
    }
  }
  if (reading.signature_company) {
    const named = await findPartnersByName(db, organizationId, reading.signature_company);
    if (named.length === 1) out.push({ partnerId: named[0]!.id, rule: 'signature_company', detail: `The signature names ${reading.signature_company}.`, weight: MATCH_WEIGHTS.signature_company });
  }
  return out;
}

/** Combines evidence per customer (see the module comment). */
export function scoreEvidence(evidence: readonly Evidence[]): { partnerId: string | null; confidence: number; reasons: MatchReason[] } {
  const per = new Map<string, Evidence[]>();
  for (const e of evidence) per.set(e.partnerId, [...(per.get(e.partnerId) ?? []), e]);
  const scored = [...per.entries()]
    .map(([partnerId, list]) => ({ partnerId, list, score: 1 - list.reduce((p, e) => p * (1 - e.weight), 1) }))
    .sort((a, b) => b.score - a.score || a.partnerId.localeCompare(b.partnerId));
  const best = scored[0];
  if (!best) return { partnerId: null, confidence: 0, reasons: [] };
  const second = scored[1];
  const penalty = second ? Math.round(second.score * 50) : 0;
  const confidence = Math.max(0, Math.min(100, Math.round(best.score * 100) - penalty));
  const reasons: MatchReason[] = best.list.map((e) => ({ rule: e.rule, detail: e.detail, weight: Math.round(e.weight * 100) }));
  if (second) reasons.push({ rule: 'conflict', detail: `Another customer also fits (${second.list.map((e) => e.rule).join(', ')}); confidence lowered.`, weight: -penalty });
  return { partnerId: best.partnerId, confidence, reasons };
}

/** Matches a parsed, read message to a customer of the organization. */
export async function matchMessage(db: Db, organizationId: string, msg: ParsedInboundMessage, reading: Pick<MessageReading, 'referenced_numbers' | 'signature_company' | 'bounce'>): Promise<MatchResult> {
  const thread = await threadEvidence(db, organizationId, msg);
  const sender = msg.from?.address && !SYSTEM_SENDER.test(msg.from.address) ? await senderEvidence(db, organizationId, msg.from.address) : [];
  const content = await contentEvidence(db, organizationId, reading);
  const bounced = await bounceEvidence(db, organizationId, reading.bounce);
  const { partnerId, confidence, reasons } = scoreEvidence([...thread.evidence, ...sender, ...content, ...bounced]);
  return { partner_id: partnerId, confidence, reasons, in_reply_to: thread.inReplyTo, bank_transaction_id: thread.bankTransactionId };
}
