// The deterministic readers of an inbound message (domain/inbox/reading): category, bounce,
// auto-reply, promise to pay, dispute, referenced numbers and signature company, on realistic
// messages in English, German, French, Spanish and Dutch. Pure: no stack needed.
import { describe, expect, it } from 'vitest';
import type { ParsedAttachment, ParsedInboundMessage } from '../src/domain-types/inbox.js';
import { readMessage } from '../src/domain/inbox/reading/index.js';

const ctx = { today: '2026-11-27', timezone: 'Europe/Berlin' }; // a Friday

function message(subject: string, text: string, extra: Partial<ParsedInboundMessage> = {}): ParsedInboundMessage {
  return {
    messageId: '<m1@customer.test>',
    inReplyTo: null,
    references: [],
    from: { address: 'ap@customer.test', name: 'Jane Doe' },
    to: [{ address: 'ar@ours.test', name: null }],
    cc: [],
    subject,
    date: '2026-11-27T09:00:00.000Z',
    headers: {},
    text,
    html: null,
    attachments: [],
    deliveryStatus: null,
    unsupported: [],
    ...extra,
  };
}

describe('promises to pay', () => {
  it('English: invoice, written date, signature company; the quoted reminder below is not read', () => {
    const r = readMessage(
      message(
        'Re: Reminder invoice 4711',
        'Hi,\n\nwe will pay invoice 4711 on 5 December.\n\nKind regards\nJane Doe\nAccounts Payable\nAcme GmbH\n\nOn Mon, 23 Nov 2026, AR <ar@ours.test> wrote:\n> Invoice 4711 is overdue. Could you tell us when you pay?',
      ),
      ctx,
    );
    expect(r.category).toBe('promise_to_pay');
    expect(r.promise).toMatchObject({ invoice_numbers: ['4711'], promised_date: '2026-12-05', amount: null });
    expect(r.promise!.confidence).toBeGreaterThanOrEqual(70);
    expect(r.signature_company).toBe('Acme GmbH');
    expect(r.referenced_numbers).toContain('4711');
  });

  it('German: numeric date without a year, passive wording', () => {
    const r = readMessage(message('AW: Rechnung RE-2026-001', 'Sehr geehrte Damen und Herren,\n\ndie Rechnung RE-2026-001 wird am 15.12. überwiesen.\n\nMit freundlichen Grüßen\nMax Muster\nMuster AG'), ctx);
    expect(r.category).toBe('promise_to_pay');
    expect(r.promise).toMatchObject({ invoice_numbers: ['RE-2026-001'], promised_date: '2026-12-15' });
    expect(r.signature_company).toBe('Muster AG');
  });

  it('Spanish: "el próximo viernes" is the coming Friday', () => {
    const r = readMessage(message('Factura 2026-77', 'Buenos días,\npagaremos la factura 2026-77 el próximo viernes.\nSaludos'), ctx);
    expect(r.category).toBe('promise_to_pay');
    expect(r.promise).toMatchObject({ invoice_numbers: ['2026-77'], promised_date: '2026-12-04' });
  });

  it('Dutch: "volgende week" is the Friday of next week', () => {
    const r = readMessage(message('Factuur 4711', 'Wij betalen factuur 4711 volgende week.\nMet vriendelijke groet\nJan\nVan Dijk B.V.'), ctx);
    expect(r.category).toBe('promise_to_pay');
    expect(r.promise).toMatchObject({ invoice_numbers: ['4711'], promised_date: '2026-12-04' });
    expect(r.signature_company).toBe('Van Dijk B.V.');
  });
});

describe('disputes', () => {
  it('French: damaged goods', () => {
    const r = readMessage(message('Facture F-12', 'Bonjour,\nla facture F-12 est erronée, les marchandises sont arrivées endommagées.\nCordialement\nPierre\nDupont SARL'), ctx);
    expect(r.category).toBe('dispute');
    expect(r.dispute).toMatchObject({ invoice_numbers: ['F-12'], reason_code: 'damaged' });
    expect(r.signature_company).toBe('Dupont SARL');
  });
});

describe('remittance advice, questions', () => {
  it('a body table of invoices and amounts', () => {
    const r = readMessage(message('Remittance advice', 'Please find below our payment:\nInvoice 4711   1.234,56\nInvoice 4712   200,00\nTotal 1.434,56 EUR'), ctx);
    expect(r.category).toBe('remittance');
    expect(r.referenced_numbers).toEqual(expect.arrayContaining(['4711', '4712']));
  });

  it('a request for a copy is a question', () => {
    const r = readMessage(message('Invoice copy', 'Could you send us a copy of invoice 4711? Thanks'), ctx);
    expect(r.category).toBe('question');
  });
});

describe('auto-replies and bounces', () => {
  it('an out-of-office subject and wording', () => {
    const r = readMessage(message('Automatic reply: invoice 4711', 'I am currently out of the office and will be back on 3 December.'), ctx);
    expect(r.category).toBe('auto_reply');
    expect(r.promise).toBeNull();
  });

  it('an RFC 3464 delivery-status notification', () => {
    const r = readMessage(
      message('Undelivered Mail Returned to Sender', 'This is the mail system at host mx.customer.test.', {
        from: { address: 'MAILER-DAEMON@mx.customer.test', name: 'Mail Delivery System' },
        deliveryStatus: { reportingMta: 'dns; mx.customer.test', recipients: [{ address: 'old@customer.test', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' }] },
      }),
      ctx,
    );
    expect(r.category).toBe('bounce');
    expect(r.bounce!.recipients).toEqual([expect.objectContaining({ address: 'old@customer.test', action: 'failed', status: '5.1.1' })]);
  });

  it('an attachment-only advice still reads as remittance', () => {
    const pdf: ParsedAttachment = { position: 0, name: 'Zahlungsavis_2026-11.pdf', mime_type: 'application/pdf', size: 1000, object_key: 'k', content_id: null, disposition: 'attachment', text: 'Zahlungsavis\nRechnung Betrag\nRE-100 1.000,00\nRE-101 250,00', rows: null };
    const r = readMessage(message('Zahlung', 'Anbei unser Zahlungsavis.', { attachments: [pdf] }), ctx);
    expect(r.category).toBe('remittance');
    expect(r.referenced_numbers).toEqual(expect.arrayContaining(['RE-100', 'RE-101']));
  });
});

describe('more promises, in every language', () => {
  it.each([
    ['en', 'Re: statement', "We'll settle invoices INV-1001 and INV-1002 by the end of the month.", ['INV-1001', 'INV-1002'], '2026-11-30', null],
    ['en', 'Invoice 4711', 'Payment for invoice 4711 is scheduled for 12/15/2026.', ['4711'], '2026-12-15', null],
    ['de', 'Rechnung 2026-0042', 'Wir überweisen den Betrag von 1.234,56 EUR für Rechnung 2026-0042 nächsten Freitag.', ['2026-0042'], '2026-12-04', '1234.56'],
    ['fr', 'Facture F2026-118', "Nous réglerons la facture F2026-118 d'ici le 10 décembre.", ['F2026-118'], '2026-12-10', null],
    ['fr', 'Relance', 'Le virement pour la facture n° 7781 sera effectué fin du mois prochain.', ['7781'], '2026-12-31', null],
    ['es', 'Factura FV-2026-300', 'El pago de la factura FV-2026-300 se realizará el 15/12/2026.', ['FV-2026-300'], '2026-12-15', null],
    ['es', 'Recordatorio', 'Pagaremos la factura 4711 en dos semanas.', ['4711'], '2026-12-11', null],
    ['nl', 'Herinnering', 'De betaling van factuur 2026-77 wordt morgen uitgevoerd.', ['2026-77'], '2026-11-28', null],
  ])('%s: %s', (_lang, subject, text, invoices, date, amount) => {
    const r = readMessage(message(subject, `${text}\n\nRegards`), ctx);
    expect(r.category).toBe('promise_to_pay');
    expect(r.promise).toMatchObject({ invoice_numbers: invoices, promised_date: date, amount });
    expect(r.promise!.confidence).toBeGreaterThanOrEqual(70);
  });

  it('without a date or an invoice the promise is read with low confidence (a suggestion, not a record)', () => {
    const noDate = readMessage(message('Reminder', 'We will pay invoice 4711 as soon as our customer pays us.'), ctx);
    expect(noDate.category).toBe('promise_to_pay');
    expect(noDate.promise).toMatchObject({ promised_date: null });
    expect(noDate.promise!.confidence).toBeLessThan(70);
    const noInvoice = readMessage(message('Reminder', 'We will pay next Friday.'), ctx);
    expect(noInvoice.promise!.confidence).toBeLessThan(70);
  });

  it('a refusal to pay is no promise', () => {
    const r = readMessage(message('Invoice 4711', 'We will not pay invoice 4711 until we receive a credit note for the damaged pallets.'), ctx);
    expect(r.category).toBe('dispute');
    expect(r.promise).toBeNull();
    expect(r.dispute).toMatchObject({ invoice_numbers: ['4711'], reason_code: 'damaged' });
  });
});

describe('more disputes, with their reason', () => {
  it.each([
    ['Invoice 4711', 'Invoice 4711 charges 120 units but we only received 100 units.', 'quantity'],
    ['Rechnung RE-2026-1', 'Die Rechnung RE-2026-1 enthält einen falschen Preis, vereinbart waren 12,50 € pro Stück.', 'pricing'],
    ['Factura 2026-55', 'No hemos recibido la mercancía de la factura 2026-55.', 'not_received'],
    ['Factuur 4711', 'Factuur 4711: de goederen zijn nooit aangekomen.', 'not_received'],
    ['Facture F-9', 'Le taux de TVA appliqué sur la facture F-9 est incorrect.', 'tax'],
    ['Invoice 4711', 'You charged us twice: invoice 4711 duplicates invoice 4705.', 'duplicate_billing'],
    ['Rechnung 4711', 'Die gelieferte Ware zu Rechnung 4711 ist mangelhaft, wir reklamieren.', 'quality'],
    ['Factuur 4711', 'Wij betwisten factuur 4711.', 'other'],
  ])('%s → %s', (subject, text, reason) => {
    const r = readMessage(message(subject, text), ctx);
    expect(r.category).toBe('dispute');
    expect(r.dispute!.reason_code).toBe(reason);
    expect(r.dispute!.invoice_numbers).toContain(subject.split(' ').at(-1));
  });
});

describe('more auto-replies: headers and out-of-office wording in five languages', () => {
  it.each([
    ['headers Auto-Submitted', { 'auto-submitted': 'auto-replied' }, 'Thanks, your message was received.'],
    ['X-Autoreply', { 'x-autoreply': 'yes' }, 'Danke für Ihre Nachricht.'],
    ['Precedence auto_reply', { precedence: 'auto_reply' }, 'Merci pour votre message.'],
    ['en', {}, 'Thank you for your email. I am currently out of the office until 4 December with limited access to email.'],
    ['de', {}, 'Vielen Dank für Ihre Nachricht. Ich bin bis zum 05.12.2026 nicht im Büro und habe keinen Zugriff auf meine E-Mails.'],
    ['fr', {}, "Bonjour, je suis absente du bureau jusqu'au 4 décembre. En cas d'urgence, contactez ma collègue."],
    ['es', {}, 'Gracias por su mensaje. Estoy fuera de la oficina hasta el 3 de diciembre.'],
    ['nl', {}, 'Dank voor uw bericht. Ik ben afwezig tot en met 4 december en heb beperkt toegang tot mijn e-mail.'],
  ])('%s', (_what, headers, text) => {
    const r = readMessage(message('Re: Invoice 4711', `${text}\n\nWe will pay invoice 4711 on 5 December.`, { headers }), ctx);
    expect(r.category).toBe('auto_reply');
    expect(r.promise).toBeNull();
  });

  it('an ordinary reply that mentions an absence is not an auto-reply', () => {
    const r = readMessage(message('Re: Invoice 4711', 'Sorry, I was out of the office last week. We will pay invoice 4711 on 5 December.'), ctx);
    expect(r.category).toBe('promise_to_pay');
  });

  it('an auto-generated payables advice is an advice; a bulk newsletter is other; an auto-generated notice is an automatic message', () => {
    const advice = readMessage(message('Payment advice 2026-11', 'Payment advice\nInvoice 4711  EUR 1,190.00\nInvoice 4712  EUR 500.00\nTotal EUR 1,690.00\n\nThis is an automated message, please do not reply.', { headers: { 'auto-submitted': 'auto-generated' } }), ctx);
    expect(advice.category).toBe('remittance');
    const newsletter = readMessage(message('Logistics Weekly #12', 'Freight rates fall again.\nUnsubscribe: https://news.example/u', { headers: { precedence: 'bulk' } }), ctx);
    expect(newsletter.category).toBe('other');
    const notice = readMessage(message('Your password expires', 'Your portal password expires in 3 days.', { headers: { 'auto-submitted': 'auto-generated' } }), ctx);
    expect(notice.category).toBe('auto_reply');
  });
});

describe('more bounces', () => {
  const daemon = (subject: string, text: string, extra: Partial<ParsedInboundMessage> = {}) =>
    readMessage(message(subject, text, { from: { address: 'postmaster@mx.customer.test', name: 'Mail Delivery System' }, ...extra }), ctx);

  it('Exchange "Undeliverable" with the address in the text (our own address is not taken for it)', () => {
    const r = daemon('Undeliverable: Payment reminder', 'Delivery has failed to these recipients or groups:\n\njohn.old@customer.test\nThe email address you entered couldn\'t be found.\n\nDiagnostic information for administrators:\nRemote Server returned \'550 5.1.1 RESOLVER.ADR.RecipNotFound; not found\'\n\nFrom: AR <ar@ours.test>');
    expect(r.category).toBe('bounce');
    expect(r.bounce!.recipients).toEqual([expect.objectContaining({ address: 'john.old@customer.test', action: 'failed', status: '5.1.1' })]);
  });

  it('Gmail "Delivery Status Notification (Failure)", Exim X-Failed-Recipients, a delay notice', () => {
    const gmail = daemon('Delivery Status Notification (Failure)', "Address not found\n\nYour message wasn't delivered to jane@customer.test because the address couldn't be found.", { from: { address: 'mailer-daemon@googlemail.com', name: null } });
    expect(gmail.bounce!.recipients.map((x) => x.address)).toEqual(['jane@customer.test']);
    const exim = daemon('Mail delivery failed: returning message to sender', 'This message was created automatically by mail delivery software.', { headers: { 'x-failed-recipients': 'ap@customer.test' } });
    expect(exim.bounce!.recipients).toEqual([expect.objectContaining({ address: 'ap@customer.test', action: 'failed' })]);
    const delay = daemon('Delivery Status Notification (Delay)', 'Delivery to the following recipient has been delayed:\n\n     ap@customer.test\n\nMessage will be retried for 2 more day(s)');
    expect(delay.category).toBe('bounce');
    expect(delay.bounce!.recipients).toEqual([expect.objectContaining({ address: 'ap@customer.test', action: 'delayed' })]);
  });

  it('a customer writing about a returned letter is not a bounce', () => {
    const r = readMessage(message('Returned mail?', 'Hi, our old address ap@customer.test no longer works, please use ap2@customer.test. Could you update it?'), ctx);
    expect(r.category).toBe('question');
  });
});

describe('more remittances and questions', () => {
  it.each([
    ['de', 'Zahlung', 'Hallo,\nwir haben heute die Rechnungen 9000011092 und 9000011056 über 1.247,58 EUR überwiesen.\nGruß'],
    ['fr', 'Paiement', 'Bonjour,\nnous avons effectué le virement pour les factures F-12 (1 200,00 EUR) et F-13 (300,00 EUR).\nCordialement'],
    ['es', 'Pago', 'Hola,\nhemos realizado la transferencia de la factura 2026-77 por 450,00 EUR.\nSaludos'],
    ['nl', 'Betaling', 'Beste,\nwij hebben vandaag de volgende facturen betaald:\n4711  1.190,00\n4712  500,00\nMet vriendelijke groet'],
    ['de, a long sentence', 'Zahlung', 'Hallo,\nwir haben heute die Rechnungen 9000010952 (161,86 CHF); 9000010955 (2.500,00 CHF) und 9000010948 (74,07 CHF) über insgesamt 2.735,93 CHF überwiesen.\nGruß'],
    ['nl, a long sentence', 'Betaling', 'Goedemiddag,\nVandaag hebben wij de facturen 9000010205 (90,65 EUR); 9000010223 (21.454,35 EUR) en 9000010219 (2.985,54 EUR) voldaan, totaal EUR 24.530,54.\nGroet'],
  ])('%s advice', (_lang, subject, text) => {
    expect(readMessage(message(subject, text), ctx).category).toBe('remittance');
  });

  it('a CSV export attached is an advice', () => {
    const csv: ParsedAttachment = { position: 0, name: 'payment_20261127.csv', mime_type: 'text/csv', size: 100, object_key: 'k', content_id: null, disposition: 'attachment', text: 'invoice;amount\nINV-1;100,00\nINV-2;200,00', rows: [['invoice', 'amount'], ['INV-1', '100,00'], ['INV-2', '200,00']] };
    expect(readMessage(message('Payment', 'See attached.', { attachments: [csv] }), ctx).category).toBe('remittance');
  });

  it.each([
    ['de', 'Können Sie mir bitte die Rechnung 4711 als PDF schicken?'],
    ['fr', 'Pourriez-vous nous envoyer une copie de la facture F-12 ?'],
    ['es', '¿Podrían enviarnos una copia de la factura 2026-12?'],
    ['nl', 'Kunt u ons een kopie van factuur 4711 sturen?'],
  ])('%s question', (_lang, text) => {
    expect(readMessage(message('Rechnung / facture / factura / factuur', text), ctx).category).toBe('question');
  });

  it('a thank-you is other', () => {
    expect(readMessage(message('Re: Receipt', 'Thanks, noted.'), ctx).category).toBe('other');
  });
});

describe('odd input', () => {
  it.each([
    ['empty', ''],
    ['NUL and control characters', 'invoice\u0000 4711\u0007 will pay\u0000'],
    ['a long digit run', '1'.repeat(300_000)],
    ['a long list', '4711, '.repeat(50_000)],
    ['dots and digits', '1.'.repeat(100_000)],
    ['only quotes', '> > >\n>'.repeat(1000)],
  ])('%s: a reading, never an error', (_what, text) => {
    const r = readMessage(message('', text, { subject: null, from: null }), ctx);
    expect(r.category).toMatch(/^(remittance|promise_to_pay|dispute|question|auto_reply|bounce|other)$/);
    expect(r.category_confidence).toBeGreaterThanOrEqual(0);
    expect(r.category_confidence).toBeLessThanOrEqual(100);
    expect(r.referenced_numbers.length).toBeLessThanOrEqual(50);
  });
});
