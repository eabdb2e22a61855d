/**
 * The labelled corpus of the inbox benchmark (`npm run bench -- inbox`), deterministic for a seed:
 * remittance advice from every payer house style (bench/inbox/styles-*.ts) and the rest of an AR
 * inbox (bench/inbox/conversation.ts), each message with its truth: the customer (or none), the
 * category, the remittance lines (invoice number, amount paid, discount, withholding), the promise,
 * dispute or bounce. Each invoice is paid by at most one advice and no promised or disputed invoice
 * is paid, so the labels never contradict each other.
 */
import { Rng } from '../matching/random.js';
import { autoReplyParts, bounceRaw, DISPUTE_TEXTS, disputeParts, otherParts, promiseParts, questionParts, type TalkContext } from './conversation.js';
import { dec } from './format.js';
import { addDays, generateLedger, type InboxCustomer, type InboxInvoice, type InboxLedger } from './ledger.js';
import { FILE_STYLES } from './styles-files.js';
import { FORWARD_STYLES } from './styles-forward.js';
import { TEXT_STYLES } from './styles-text.js';
import { OUR_ORGANIZATION, reminderPlaceholder, type Addr, type CorpusMessage, type HouseStyle, type MessageLabel, type MessageSpec, type PaidLine } from './types.js';

export const DEFAULT_SEED = 2611;
export const HOUSE_STYLES: HouseStyle[] = [...TEXT_STYLES, ...FILE_STYLES, ...FORWARD_STYLES];

export interface CorpusOptions {
  /** remittance messages per house style */
  perStyle: number;
  promises: number;
  disputes: number;
  questions: number;
  autoReplies: number;
  bounces: number;
  other: number;
}

export const FULL: CorpusOptions = { perStyle: 14, promises: 40, disputes: 30, questions: 24, autoReplies: 30, bounces: 20, other: 20 };

export interface Corpus {
  seed: number;
  ledger: InboxLedger;
  messages: CorpusMessage[];
}

const FIRST_NAMES = ['anna', 'jonas', 'claire', 'pieter', 'sarah', 'thomas', 'julia', 'marc', 'sophie', 'daan'];

function senderOf(r: Rng, c: InboxCustomer): Addr {
  if (c.freeMail) return { name: c.clerk, address: c.email };
  const x = r.float();
  if (x < 0.3) return { name: c.clerk, address: c.email };
  const [first, ...rest] = c.clerk.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').split(' ');
  if (x < 0.85) return { name: c.clerk, address: `${first}.${rest.join('').replace(/[^a-z]/g, '')}@${c.mailDomain}` };
  return { name: c.clerk, address: `${r.pick(FIRST_NAMES)}.${r.letters(1).toLowerCase()}@${c.mailDomain}` };
}

/** An instant on the day (business hours, UTC). */
const at = (r: Rng, day: string) => `${day}T${String(r.int(6, 16)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}Z`;

function deduct(r: Rng, inv: InboxInvoice, mode: HouseStyle['deductions']): PaidLine {
  const kind = mode === 'mixed' ? r.pick(['none', 'none', 'discount', 'withholding'] as const) : mode === 'none' ? 'none' : r.chance(0.55) ? mode : 'none';
  if (kind === 'discount') {
    const discount = Math.round((inv.amount * r.pick([2, 2, 3])) / 100);
    return { invoice: inv, paid: inv.amount - discount, discount, withheld: 0 };
  }
  if (kind === 'withholding') {
    const withheld = Math.round((inv.amount * r.pick([10, 15, 5])) / 100);
    return { invoice: inv, paid: inv.amount - withheld, discount: 0, withheld };
  }
  return { invoice: inv, paid: inv.amount, discount: 0, withheld: 0 };
}

function emptyLabel(id: string, spec: MessageSpec, style: string, language: string, category: MessageLabel['category'], customer: string | null): MessageLabel {
  return { id, message_id: spec.messageId, style, language, category, customer, reply_to_reminder: null, remittance: null, promise: null, dispute: null, bounce: null };
}

export function generateCorpus(seed = DEFAULT_SEED, options: CorpusOptions = FULL): Corpus {
  const ledger = generateLedger(seed);
  const r = new Rng(seed * 7919 + 17);
  const unused = new Map<string, InboxInvoice[]>();
  for (const inv of ledger.invoices) if (inv.statusOpen) unused.set(inv.customer, [...(unused.get(inv.customer) ?? []), inv]);
  const take = (c: InboxCustomer, n: number): InboxInvoice[] => {
    const pool = unused.get(c.code) ?? [];
    const out: InboxInvoice[] = [];
    while (out.length < n && pool.length) out.push(pool.splice(r.int(0, pool.length - 1), 1)[0]!);
    return out;
  };
  const us: Addr = { name: 'Accounts Receivable', address: OUR_ORGANIZATION.ar };
  const made: CorpusMessage[] = [];
  let seq = 0;
  const messageId = (domain: string) => `<${(++seq).toString(36)}.${r.digits(8)}@${domain}>`;
  const pickCustomer = (fits: (c: InboxCustomer) => boolean, need: number) => {
    for (let tries = 0; tries < 500; tries++) {
      const c = r.pick(ledger.customers);
      if (fits(c) && (unused.get(c.code)?.length ?? 0) >= need) return c;
    }
    throw new Error('no customer left with open invoices');
  };

  for (const style of HOUSE_STYLES) {
    for (let k = 0; k < options.perStyle; k++) {
      const customer = pickCustomer(style.fits ?? (() => true), 1);
      const want = Math.min(style.maxLines, 1 + Math.floor(r.float() ** 2 * style.maxLines));
      const lines = take(customer, want).map((inv) => deduct(r, inv, style.deductions));
      const paymentDate = addDays('2026-11-16', r.int(0, 9));
      const sender = senderOf(r, customer);
      const replyTo = style.reply ? reminderPlaceholder(customer.code) : null;
      const total = lines.reduce((s, l) => s + l.paid, 0);
      const parts = style.build({ r, ledger, customer, lines, currency: customer.currency, total, paymentDate, sender, us, replyTo });
      const spec: MessageSpec = {
        messageId: messageId(parts.from.address.split('@')[1]!),
        date: at(r, addDays(paymentDate, r.int(0, 1))),
        to: [us],
        ...parts,
        ...(replyTo ? { inReplyTo: replyTo, references: [replyTo] } : {}),
      };
      const label = emptyLabel('', spec, style.name, style.name === 'inline_sentence' || style.name === 'freemail_informal' ? customer.language : style.language, 'remittance', customer.code);
      label.reply_to_reminder = replyTo ? customer.code : null;
      label.remittance = {
        currency: customer.currency,
        payment_date: paymentDate,
        total: dec(total),
        lines: lines.map((l) => ({ invoice_number: l.invoice.number, amount_paid: dec(l.paid), amount_discount: dec(l.discount), amount_withheld: dec(l.withheld) })),
      };
      made.push({ spec, label });
    }
  }

  const talk = (n: number, build: (c: TalkContext, i: number) => { parts: ReturnType<typeof promiseParts>; label: (l: MessageLabel) => void; style: string; language?: string }, invoices = 1, category: MessageLabel['category']) => {
    for (let i = 0; i < n; i++) {
      const customer = pickCustomer(() => true, invoices);
      const sentAt = at(r, addDays('2026-11-16', r.int(0, 10)));
      const replyTo = r.chance(0.4) ? reminderPlaceholder(customer.code) : null;
      const ctx: TalkContext = { r, customer, sender: senderOf(r, customer), invoices: take(customer, r.int(1, invoices)), sentAt, replyTo };
      const { parts, label: fill, style, language } = build(ctx, i);
      const spec: MessageSpec = { messageId: messageId(parts.from.address.split('@')[1]!), date: sentAt, to: [us], ...parts, ...(replyTo ? { inReplyTo: replyTo, references: [replyTo] } : {}) };
      const label = emptyLabel('', spec, style, language ?? customer.language, category, customer.code);
      label.reply_to_reminder = replyTo ? customer.code : null;
      fill(label);
      made.push({ spec, label });
    }
  };

  talk(options.promises, (c) => {
    const promised = addDays(c.sentAt.slice(0, 10), r.int(5, 25));
    const amount = c.invoices.length === 1 && r.chance(0.3) ? Math.round(c.invoices[0]!.amount / 2) : null;
    return {
      parts: promiseParts(c, promised, amount),
      style: `promise_${c.customer.language}`,
      label: (l) => (l.promise = { invoice_numbers: c.invoices.map((i) => i.number), amount: amount === null ? null : dec(amount), date: promised }),
    };
  }, 3, 'promise_to_pay');
  const reasons = Object.keys(DISPUTE_TEXTS);
  talk(options.disputes, (c, i) => {
    const reason = reasons[i % reasons.length]!;
    c.invoices = c.invoices.slice(0, 1);
    return { parts: disputeParts(c, reason), style: `dispute_${c.customer.language}`, label: (l) => (l.dispute = { invoice_numbers: [c.invoices[0]!.number], reason_code: reason }) };
  }, 1, 'dispute');
  talk(options.questions, (c, i) => ({ parts: questionParts(c, (['copy', 'balance', 'bank'] as const)[i % 3]!), style: `question_${c.customer.language}`, label: () => {} }), 1, 'question');
  const langs = ['en', 'de', 'fr', 'es', 'nl'];
  const signals = ['auto-submitted', 'phrasing', 'x-autoreply', 'phrasing', 'precedence', 'auto-submitted'] as const;
  talk(options.autoReplies, (c, i) => {
    const lang = langs[i % langs.length]!;
    const signal = signals[Math.floor(i / langs.length) % signals.length]!;
    return { parts: autoReplyParts(c, lang, signal), style: signal === 'phrasing' ? 'auto_reply_phrasing' : 'auto_reply_header', language: lang, label: () => {} };
  }, 1, 'auto_reply');

  const bounceKinds = ['dsn', 'postfix_text', 'exchange_ndr', 'gmail'] as const;
  for (let i = 0; i < options.bounces; i++) {
    const customer = r.pick(ledger.customers.filter((c) => !c.freeMail));
    const kind = bounceKinds[i % bounceKinds.length]!;
    const sentAt = at(r, addDays('2026-11-16', r.int(0, 10)));
    const id = messageId(kind === 'gmail' ? 'mx.google.example' : kind === 'exchange_ndr' ? customer.mailDomain : `mail.${OUR_ORGANIZATION.domain}`);
    const original = reminderPlaceholder(customer.code);
    const raw = bounceRaw(kind, customer.email, id, sentAt, original, r);
    const spec: MessageSpec = { messageId: id, date: sentAt, from: { address: 'mailer-daemon' }, to: [us], subject: 'bounce', raw };
    const label = emptyLabel('', spec, kind === 'dsn' ? 'bounce_dsn' : 'bounce_nonstandard', 'en', 'bounce', customer.code);
    label.reply_to_reminder = customer.code;
    label.bounce = { address: customer.email };
    made.push({ spec, label });
  }
  for (let i = 0; i < options.other; i++) {
    if (i % 5 === 4) {
      // a customer's thank-you: no question, no payment, no promise
      const customer = r.pick(ledger.customers);
      const sender = senderOf(r, customer);
      const spec: MessageSpec = { messageId: messageId(sender.address.split('@')[1]!), date: at(r, addDays('2026-11-16', r.int(0, 10))), from: sender, to: [us], subject: 'Re: Account statement', text: `Thank you, we received the statement.\n\n${customer.clerk}\n${customer.name}`, inReplyTo: reminderPlaceholder(customer.code), references: [reminderPlaceholder(customer.code)] };
      const label = emptyLabel('', spec, 'other_customer', 'en', 'other', customer.code);
      label.reply_to_reminder = customer.code;
      made.push({ spec, label });
      continue;
    }
    const parts = otherParts(i, r);
    const spec: MessageSpec = { messageId: messageId(parts.from.address.split('@')[1]!), date: at(r, addDays('2026-11-16', r.int(0, 10))), to: [us], ...parts };
    made.push({ spec, label: emptyLabel('', spec, 'other_no_customer', 'en', 'other', null) });
  }

  // interleave the styles as a real inbox does, then number the messages in that order
  r.shuffle(made);
  made.forEach((m, i) => (m.label.id = `m${String(i + 1).padStart(4, '0')}`));
  return { seed, ledger, messages: made };
}
