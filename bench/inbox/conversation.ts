/**
 * The rest of an AR inbox: promises to pay, disputes and questions in English, German, French and
 * Dutch (some replying to our reminder), auto-replies (RFC 3834 headers, or only out-of-office
 * phrasing, in English, German, French, Spanish and Dutch), bounces (RFC 3464 DSNs and the
 * non-standard kinds: a Postfix text bounce, an Exchange NDR, a Gmail "Address not found") and mail
 * that belongs to no customer (newsletters, a software vendor's pitch, a phishing attempt).
 */
import type { Rng } from '../matching/random.js';
import { date, money, rfc5322 } from './format.js';
import type { InboxCustomer, InboxInvoice } from './ledger.js';
import { OUR_ORGANIZATION, type Addr, type MessageSpec } from './types.js';

export interface TalkContext {
  r: Rng;
  customer: InboxCustomer;
  sender: Addr;
  /** open invoices the message is about */
  invoices: InboxInvoice[];
  /** the Date of the message (ISO instant) */
  sentAt: string;
  /** our reminder it answers, when it is a reply */
  replyTo: string | null;
}

export type TalkParts = Pick<MessageSpec, 'from' | 'subject' | 'text' | 'headers' | 'html'>;

const nums = (c: TalkContext) => c.invoices.map((i) => i.number);
const list = (c: TalkContext, and: string) => (c.invoices.length > 1 ? `${nums(c).slice(0, -1).join(', ')} ${and} ${nums(c).at(-1)}` : nums(c)[0]!);
const reSubject = (c: TalkContext, s: string) => (c.replyTo ? `Re: ${c.customer.language === 'de' ? 'Zahlungserinnerung' : c.customer.language === 'fr' ? 'Relance de paiement' : c.customer.language === 'nl' ? 'Betalingsherinnering' : 'Payment reminder'}` : s);

/** Promise texts per language; `date` is the promised date (ISO), amount null = the invoices' open amount. */
export function promiseParts(c: TalkContext, promised: string, amount: number | null): TalkParts {
  const cur = c.customer.currency;
  switch (c.customer.language) {
    case 'de':
      return {
        from: c.sender,
        subject: reSubject(c, `Zahlung Rechnung ${nums(c)[0]}`),
        text: `Guten Tag,\n\nwir werden ${c.invoices.length > 1 ? `die Rechnungen ${list(c, 'und')}` : `die Rechnung ${list(c, 'und')}`} am ${date(promised, c.r.chance(0.5) ? 'dotted' : 'long-de')} ${amount === null ? 'begleichen' : `mit ${money(amount, cur, 'de', 'code-after')} begleichen`}. Wir bitten um Geduld.\n\nMit freundlichen Grüßen\n${c.customer.clerk}\n${c.customer.name}`,
      };
    case 'fr':
      return {
        from: c.sender,
        subject: reSubject(c, `Règlement facture ${nums(c)[0]}`),
        text: `Bonjour,\n\nNous procéderons au règlement de ${c.invoices.length > 1 ? `vos factures ${list(c, 'et')}` : `votre facture ${list(c, 'et')}`} le ${date(promised, c.r.chance(0.5) ? 'slashed' : 'long-fr')}${amount === null ? '' : ` pour ${money(amount, cur, 'fr', 'code-after')}`}.\n\nCordialement,\n${c.customer.clerk}\n${c.customer.name}`,
      };
    case 'nl':
      return {
        from: c.sender,
        subject: reSubject(c, `Betaling factuur ${nums(c)[0]}`),
        text: `Beste,\n\nWij zullen ${c.invoices.length > 1 ? `de facturen ${list(c, 'en')}` : `factuur ${list(c, 'en')}`} op ${date(promised, c.r.chance(0.5) ? 'dotted' : 'long-nl')} betalen${amount === null ? '' : ` (${money(amount, cur, 'de', 'code-before')})`}.\n\nMet vriendelijke groet,\n${c.customer.clerk}\n${c.customer.name}`,
      };
    default:
      return {
        from: c.sender,
        subject: reSubject(c, `Invoice ${nums(c)[0]}`),
        text: `Hello,\n\nWe will pay ${c.invoices.length > 1 ? `invoices ${list(c, 'and')}` : `invoice ${list(c, 'and')}`} on ${date(promised, c.r.chance(0.5) ? 'long-en' : 'iso')}${amount === null ? '' : `, ${money(amount, cur, 'en', 'code-before')}`}. Sorry for the delay, our payment run was postponed.\n\nBest regards,\n${c.customer.clerk}\n${c.customer.name}`,
      };
  }
}

export const DISPUTE_TEXTS: Record<string, Record<InboxCustomer['language'], string>> = {
  damaged: {
    en: 'the goods arrived damaged and we cannot accept them',
    de: 'die Ware ist beschädigt bei uns angekommen',
    fr: 'la marchandise est arrivée endommagée',
    nl: 'de goederen zijn beschadigd aangekomen',
  },
  pricing: {
    en: 'the unit price is higher than agreed in our contract',
    de: 'der berechnete Preis entspricht nicht dem vereinbarten Preis',
    fr: 'le prix facturé ne correspond pas au prix convenu',
    nl: 'de gefactureerde prijs komt niet overeen met de afgesproken prijs',
  },
  quantity: {
    en: 'you invoiced 120 units but we only received 100',
    de: 'die berechnete Menge stimmt nicht, wir haben nur 100 statt 120 Stück erhalten',
    fr: 'la quantité facturée est incorrecte, nous avons reçu 100 pièces au lieu de 120',
    nl: 'de gefactureerde hoeveelheid klopt niet, wij hebben 100 in plaats van 120 stuks ontvangen',
  },
  not_received: {
    en: 'we never received the goods on this invoice',
    de: 'wir haben die Lieferung zu dieser Rechnung nie erhalten',
    fr: "nous n'avons jamais reçu la livraison correspondant à cette facture",
    nl: 'wij hebben de levering van deze factuur nooit ontvangen',
  },
  duplicate_billing: {
    en: 'this invoice is a duplicate, we were billed twice for the same delivery',
    de: 'diese Rechnung wurde doppelt gestellt, die Lieferung wurde bereits berechnet',
    fr: 'cette facture est un doublon, la même livraison a été facturée deux fois',
    nl: 'deze factuur is dubbel verstuurd, dezelfde levering is twee keer gefactureerd',
  },
};

export function disputeParts(c: TalkContext, reason: string): TalkParts {
  const why = DISPUTE_TEXTS[reason]![c.customer.language];
  const n = nums(c)[0]!;
  switch (c.customer.language) {
    case 'de':
      return { from: c.sender, subject: reSubject(c, `Reklamation Rechnung ${n}`), text: `Sehr geehrte Damen und Herren,\n\nwir widersprechen Ihrer Rechnung ${n}: ${why}. Bitte senden Sie uns eine Gutschrift. Bis zur Klärung halten wir die Zahlung zurück.\n\nMit freundlichen Grüßen\n${c.customer.clerk}\n${c.customer.name}` };
    case 'fr':
      return { from: c.sender, subject: reSubject(c, `Contestation facture ${n}`), text: `Bonjour,\n\nNous contestons votre facture ${n} : ${why}. Merci de nous adresser un avoir. Le paiement est suspendu dans l'attente.\n\nCordialement,\n${c.customer.clerk}\n${c.customer.name}` };
    case 'nl':
      return { from: c.sender, subject: reSubject(c, `Bezwaar factuur ${n}`), text: `Geachte heer/mevrouw,\n\nWij gaan niet akkoord met factuur ${n}: ${why}. Graag ontvangen wij een creditnota. Tot die tijd houden wij de betaling aan.\n\nMet vriendelijke groet,\n${c.customer.clerk}\n${c.customer.name}` };
    default:
      return { from: c.sender, subject: reSubject(c, `Invoice ${n} disputed`), text: `Hello,\n\nWe dispute invoice ${n}: ${why}. Please issue a credit note; we are holding the payment until this is resolved.\n\nRegards,\n${c.customer.clerk}\n${c.customer.name}` };
  }
}

export function questionParts(c: TalkContext, kind: 'copy' | 'balance' | 'bank'): TalkParts {
  const n = nums(c)[0]!;
  const t: Record<InboxCustomer['language'], Record<typeof kind, [string, string]>> = {
    en: {
      copy: [`Copy of invoice ${n}`, `Hello,\n\ncould you please send us a copy of invoice ${n}? We cannot find it in our system.\n\nThank you,\n${c.customer.clerk}`],
      balance: ['Account statement', `Hi,\n\ncan you send us a statement of our account with all open items? We would like to reconcile before year end.\n\nThanks,\n${c.customer.clerk}\n${c.customer.name}`],
      bank: ['Bank details', `Hello,\n\nwhich bank account should we use for payments in ${c.customer.currency}? Is the IBAN on invoice ${n} still valid?\n\nRegards,\n${c.customer.clerk}`],
    },
    de: {
      copy: [`Kopie Rechnung ${n}`, `Hallo,\n\nkönnten Sie uns bitte eine Kopie der Rechnung ${n} zusenden? Das Original liegt uns nicht vor.\n\nDanke und Gruß\n${c.customer.clerk}`],
      balance: ['Kontoauszug', `Guten Tag,\n\nbitte senden Sie uns einen aktuellen Kontoauszug mit allen offenen Posten. Wie hoch ist unser Saldo?\n\nViele Grüße\n${c.customer.clerk}\n${c.customer.name}`],
      bank: ['Bankverbindung', `Guten Tag,\n\nist die Bankverbindung auf Rechnung ${n} noch aktuell? Wohin sollen wir überweisen?\n\nGruß\n${c.customer.clerk}`],
    },
    fr: {
      copy: [`Copie de la facture ${n}`, `Bonjour,\n\npourriez-vous nous envoyer une copie de la facture ${n} ? Nous ne la retrouvons pas.\n\nMerci,\n${c.customer.clerk}`],
      balance: ['Relevé de compte', `Bonjour,\n\npouvez-vous nous transmettre un relevé de compte avec les factures ouvertes ? Quel est notre solde ?\n\nCordialement,\n${c.customer.clerk}\n${c.customer.name}`],
      bank: ['Coordonnées bancaires', `Bonjour,\n\nles coordonnées bancaires indiquées sur la facture ${n} sont-elles toujours valables ?\n\nCordialement,\n${c.customer.clerk}`],
    },
    nl: {
      copy: [`Kopie factuur ${n}`, `Goedemorgen,\n\nkunt u ons een kopie van factuur ${n} sturen? Wij kunnen deze niet vinden.\n\nBedankt,\n${c.customer.clerk}`],
      balance: ['Rekeningoverzicht', `Beste,\n\nkunt u ons een overzicht van de openstaande posten sturen? Wat is ons saldo?\n\nGroet,\n${c.customer.clerk}\n${c.customer.name}`],
      bank: ['Bankgegevens', `Beste,\n\nis het rekeningnummer op factuur ${n} nog juist? Waar moeten wij naar overmaken?\n\nGroet,\n${c.customer.clerk}`],
    },
  };
  const [subject, text] = t[c.customer.language][kind];
  return { from: c.sender, subject: reSubject(c, subject), text };
}

const OOO: Record<string, { subject: string; text: (name: string, back: string) => string }> = {
  en: { subject: 'Automatic reply: ', text: (n, b) => `Thank you for your email. I am out of the office until ${date(b, 'long-en')} with limited access to email. For urgent matters please contact our accounts team.\n\n${n}` },
  de: { subject: 'Abwesenheitsnotiz: ', text: (n, b) => `Vielen Dank für Ihre Nachricht. Ich bin bis einschließlich ${date(b, 'dotted')} nicht im Büro und habe keinen Zugriff auf meine E-Mails. In dringenden Fällen wenden Sie sich bitte an meine Kollegen.\n\n${n}` },
  fr: { subject: 'Réponse automatique : ', text: (n, b) => `Bonjour,\n\nJe suis absent(e) du bureau jusqu'au ${date(b, 'slashed')} inclus. Je prendrai connaissance de votre message à mon retour.\n\n${n}` },
  es: { subject: 'Respuesta automática: ', text: (n, b) => `Gracias por su mensaje. Estaré fuera de la oficina hasta el ${date(b, 'slashed')}. Responderé a su correo a mi regreso.\n\n${n}` },
  nl: { subject: 'Automatisch antwoord: ', text: (n, b) => `Dank voor uw bericht. Ik ben afwezig tot en met ${date(b, 'dotted')} en heb beperkt toegang tot mijn e-mail. Voor dringende zaken kunt u contact opnemen met mijn collega's.\n\n${n}` },
};

/** An out-of-office reply; `signal` = how it says it is automatic (headers, or only its wording). */
export function autoReplyParts(c: TalkContext, lang: string, signal: 'auto-submitted' | 'x-autoreply' | 'precedence' | 'phrasing'): TalkParts {
  const o = OOO[lang]!;
  const headers: Record<string, string> =
    signal === 'auto-submitted' ? { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' } : signal === 'x-autoreply' ? { 'X-Autoreply': 'yes' } : signal === 'precedence' ? { Precedence: 'auto_reply' } : {};
  const back = new Date(Date.parse(c.sentAt) + c.r.int(3, 20) * 86_400_000).toISOString().slice(0, 10);
  return { from: { name: c.customer.clerk, address: c.sender.address }, subject: `${o.subject}${c.replyTo ? 'Payment reminder' : 'Invoice'}`, text: o.text(c.customer.clerk, back), headers };
}

const MAILER = `MAILER-DAEMON@mail.${OUR_ORGANIZATION.domain}`;

/** A bounce of our reminder to `address`: an RFC 3464 report, or one of the non-standard shapes (hand-written MIME). */
export function bounceRaw(kind: 'dsn' | 'postfix_text' | 'exchange_ndr' | 'gmail', address: string, messageId: string, sentAt: string, original: string, r: Rng): string {
  const boundary = `bounce-${r.digits(8)}`;
  const date = rfc5322(sentAt);
  const originalHeaders = `Message-ID: ${original}\r\nFrom: ${OUR_ORGANIZATION.name} <${OUR_ORGANIZATION.ar}>\r\nTo: ${address}\r\nSubject: Payment reminder\r\n`;
  const head = (from: string, subject: string, contentType: string, extra = '') =>
    `From: ${from}\r\nTo: ${OUR_ORGANIZATION.ar}\r\nSubject: ${subject}\r\nDate: ${date}\r\nMessage-ID: ${messageId}\r\nMIME-Version: 1.0\r\n${extra}Content-Type: ${contentType}\r\n\r\n`;
  switch (kind) {
    case 'dsn':
      return (
        head(`Mail Delivery System <${MAILER}>`, 'Undelivered Mail Returned to Sender', `multipart/report; report-type=delivery-status; boundary="${boundary}"`, 'Auto-Submitted: auto-replied\r\n') +
        `--${boundary}\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nThis is the mail system at host mail.${OUR_ORGANIZATION.domain}.\r\n\r\nI'm sorry to have to inform you that your message could not\r\nbe delivered to one or more recipients.\r\n\r\n<${address}>: host mx.${address.split('@')[1]} said: 550 5.1.1 User unknown\r\n\r\n` +
        `--${boundary}\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mail.${OUR_ORGANIZATION.domain}\r\nArrival-Date: ${date}\r\n\r\nFinal-Recipient: rfc822; ${address}\r\nOriginal-Recipient: rfc822; ${address}\r\nAction: failed\r\nStatus: 5.1.1\r\nRemote-MTA: dns; mx.${address.split('@')[1]}\r\nDiagnostic-Code: smtp; 550 5.1.1 <${address}>: Recipient address rejected: User unknown\r\n\r\n` +
        `--${boundary}\r\nContent-Type: text/rfc822-headers\r\n\r\n${originalHeaders}\r\n--${boundary}--\r\n`
      );
    case 'postfix_text':
      return (
        head(`MAILER-DAEMON <${MAILER}>`, 'Undelivered Mail Returned to Sender', 'text/plain; charset=us-ascii') +
        `This is the mail system at host relay.${OUR_ORGANIZATION.domain}.\r\n\r\nI'm sorry to have to inform you that your message could not be delivered\r\nto one or more recipients. It's attached below.\r\n\r\n<${address}>: host mx.${address.split('@')[1]} said: 550 5.1.1 mailbox unavailable\r\n\r\n--- original message headers ---\r\n${originalHeaders}`
      );
    case 'exchange_ndr':
      return (
        head(`Microsoft Outlook <postmaster@${address.split('@')[1]}>`, 'Undeliverable: Payment reminder', 'text/plain; charset=utf-8', `X-MS-Exchange-Message-Is-Ndr: \r\nIn-Reply-To: ${original}\r\n`) +
        `Delivery has failed to these recipients or groups:\r\n\r\n${address}\r\nThe email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.\r\n\r\nDiagnostic information for administrators:\r\nRemote Server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'\r\n`
      );
    case 'gmail':
      return (
        head(`Mail Delivery Subsystem <mailer-daemon@googlemail.com>`, 'Delivery Status Notification (Failure)', 'text/plain; charset=UTF-8', `References: ${original}\r\nIn-Reply-To: ${original}\r\n`) +
        `** Address not found **\r\n\r\nYour message wasn't delivered to ${address} because the address couldn't be found, or is unable to receive mail.\r\n\r\nThe response from the remote server was:\r\n550 5.1.1 The email account that you tried to reach does not exist.\r\n`
      );
  }
}

/** Mail that is no customer's: a newsletter, a vendor's pitch, a phishing attempt, a colleague's note. */
export function otherParts(kind: number, r: Rng): TalkParts & { headers: Record<string, string> } {
  switch (kind % 4) {
    case 0:
      return {
        from: { name: 'Logistics Weekly', address: 'newsletter@logistics-weekly.example' },
        subject: `Logistics Weekly #${r.int(100, 200)}: freight rates fall again`,
        text: 'This week: freight rates, port congestion in Rotterdam, and five tips for your year-end inventory.\n\nUnsubscribe: https://logistics-weekly.example/u',
        headers: { 'List-Unsubscribe': '<https://logistics-weekly.example/u>', Precedence: 'bulk' },
      };
    case 1:
      return {
        from: { name: 'Jenny from InvoiceBoost', address: 'jenny@invoiceboost.example' },
        subject: 'Get paid 3x faster with InvoiceBoost',
        text: `Hi there,\n\nCompanies like ${OUR_ORGANIZATION.name} reduce DSO by 30% with InvoiceBoost. Do you have 15 minutes next week?\n\nJenny`,
        headers: {},
      };
    case 2:
      return {
        from: { name: 'IT Service Desk', address: `helpdesk@${r.letters(6).toLowerCase()}-secure.example` },
        subject: 'Your mailbox is almost full',
        text: 'Your mailbox has exceeded its storage limit. Click here to verify your account within 24 hours or it will be suspended.',
        headers: {},
      };
    default:
      return {
        from: { name: 'Lisa Vogel', address: `lisa.vogel@${OUR_ORGANIZATION.domain}` },
        subject: 'Team lunch on Friday',
        text: 'Hi all,\n\nwe are meeting at 12:30 on Friday at the Italian place. Please tell me by Thursday if you join.\n\nLisa',
        headers: {},
      };
  }
}
