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
