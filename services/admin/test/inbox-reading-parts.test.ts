// The readers' parts on their own (domain/inbox/reading): dates as customers write them in five
// languages (absolute, numeric, relative) resolved against the organization's today, amounts in
// the usual locale formats, invoice and customer numbers, the sender's own words of a reply, and the
// signature company. Pure.
import { describe, expect, it } from 'vitest';
import { findAmounts, parseDecimal } from '../src/domain/inbox/reading/amounts.js';
import { findDates } from '../src/domain/inbox/reading/dates.js';
import { bareNumbersIn, customerNumbersIn, invoiceNumbersIn } from '../src/domain/inbox/reading/numbers.js';
import { readSignatureCompany } from '../src/domain/inbox/reading/signature.js';
import { ownWords } from '../src/domain/inbox/reading/text.js';

const today = '2026-11-27'; // a Friday
const first = (text: string) => findDates(text, today)[0]?.date ?? null;

describe('dates', () => {
  it.each([
    ['on 2026-12-05', '2026-12-05'],
    ['am 05.12.2026', '2026-12-05'],
    ['am 5.12.', '2026-12-05'],
    ['le 05/12/2026', '2026-12-05'],
    ['on 12/15/2026 (US)', '2026-12-15'],
    ['on 5 December', '2026-12-05'],
    ['on December 5th, 2026', '2026-12-05'],
    ['am 5. Dezember 2026', '2026-12-05'],
    ['le 5 décembre', '2026-12-05'],
    ['el 5 de diciembre de 2026', '2026-12-05'],
    ['op 5 december', '2026-12-05'],
    ['on 15 January', '2027-01-15'],
    ['tomorrow', '2026-11-28'],
    ['morgen', '2026-11-28'],
    ['demain', '2026-11-28'],
    ['mañana', '2026-11-28'],
    ['übermorgen', '2026-11-29'],
    ['next Friday', '2026-12-04'],
    ['on Tuesday', '2026-12-01'],
    ['nächsten Mittwoch', '2026-12-02'],
    ['vendredi prochain', '2026-12-04'],
    ['el próximo lunes', '2026-11-30'],
    ['volgende week dinsdag', '2026-12-01'],
    ['by the end of the month', '2026-11-30'],
    ['Ende des Monats', '2026-11-30'],
    ['fin du mois prochain', '2026-12-31'],
    ['a final de mes', '2026-11-30'],
    ['eind van de maand', '2026-11-30'],
    ['next week', '2026-12-04'],
    ['in two weeks', '2026-12-11'],
    ['in 10 Tagen', '2026-12-07'],
    ['dans trois jours', '2026-11-30'],
    ['en dos semanas', '2026-12-11'],
    ['binnen 5 werkdagen', '2026-12-04'],
  ])('%s → %s', (text, date) => {
    expect(first(text)).toBe(date);
  });

  it('a day and month that could be read either way are flagged ambiguous; a greeting is no date', () => {
    expect(findDates('on 03/04/2027', today)[0]).toMatchObject({ date: '2027-04-03', ambiguous: true });
    expect(findDates('Guten Morgen, wir zahlen', today)).toEqual([]);
    expect(findDates('Betrag 1.234,56 EUR', today)).toEqual([]);
  });
});

describe('amounts', () => {
  it.each([
    ['EUR 1,234.56', '1234.56', 'EUR'],
    ['1.234,56 €', '1234.56', 'EUR'],
    ['1 234,56 EUR', '1234.56', 'EUR'],
    ["CHF 1'234.50", '1234.50', 'CHF'],
    ['$500', '500', 'USD'],
    ['£ 99.9', '99.90', 'GBP'],
  ])('%s', (text, amount, currency) => {
    expect(findAmounts(`pay ${text} today`)).toEqual([expect.objectContaining({ amount, currency })]);
  });

  it('a number without a currency is no amount; INV letters are no currency', () => {
    expect(findAmounts('invoice 4711 of 12 items')).toEqual([]);
    expect(findAmounts('INV 4711 EUR 100')).toEqual([expect.objectContaining({ amount: '100', currency: 'EUR' })]);
    expect(parseDecimal('1.234.567,8')).toBe('1234567.80');
  });
});

describe('numbers', () => {
  it('invoice numbers after keywords in five languages, lists, and prefixed references', () => {
    expect(invoiceNumbersIn('invoices 4711, 4712 and 4713')).toEqual(['4711', '4712', '4713']);
    expect(invoiceNumbersIn('Rechnung Nr. RE-2026-001 und Rechnungsnummer 88812')).toEqual(['RE-2026-001', '88812']);
    expect(invoiceNumbersIn('vos factures F-12 et F-13')).toEqual(['F-12', 'F-13']);
    expect(invoiceNumbersIn('la factura nº 2026/77')).toEqual(['2026/77']);
    expect(invoiceNumbersIn('factuurnummer EU/2026/002236')).toEqual(['EU/2026/002236']);
    expect(invoiceNumbersIn('see INV-10023 attached')).toEqual(['INV-10023']);
    expect(invoiceNumbersIn('invoice dated 12.11.2026 for 1.234,56')).toEqual([]);
  });

  it('customer numbers, and bare digits outside phone lines and years', () => {
    expect(customerNumbersIn('Kundennummer: 10023 / customer no. C-7781')).toEqual(['10023', 'C-7781']);
    expect(bareNumbersIn('9000010149 - 5.000,00\nTel. +49 89 1234567\nin 2026')).toEqual(['9000010149']);
  });
});

describe('own words and signature', () => {
  it('cuts quoted replies in each language and keeps a forwarded message', () => {
    expect(ownWords('Paid today.\n\nOn Mon, 23 Nov 2026 at 10:00, AR <ar@x.test> wrote:\n> please pay 4711')).toBe('Paid today.');
    expect(ownWords('Bezahlt.\n\nAm 23.11.2026 um 10:00 schrieb AR <ar@x.test>:\n> bitte zahlen')).toBe('Bezahlt.');
    expect(ownWords('Réglé.\n\nLe lun. 23 nov. 2026, AR <ar@x.test> a écrit :\n> merci')).toBe('Réglé.');
    expect(ownWords('Pagado.\n\nEl lun, 23 nov 2026, AR <ar@x.test> escribió:\n> gracias')).toBe('Pagado.');
    expect(ownWords('Betaald.\n\nOp ma 23 nov. 2026 schreef AR <ar@x.test>:\n> dank')).toBe('Betaald.');
    expect(ownWords('Done.\n\nFrom: AR <ar@x.test>\nSent: Monday\nSubject: Reminder\n\nPlease pay')).toBe('Done.');
    expect(ownWords('FYI\n\n---------- Forwarded message ---------\nFrom: Bank <b@x.test>\n\nPayment executed')).toContain('Payment executed');
    expect(ownWords('FYI\n\nFrom: Bank <b@x.test>\nDate: today\n\nPayment executed', 'Fwd: Payment')).toContain('Payment executed');
  });

  it('reads the company from the signature, the display name or a notice', () => {
    expect(readSignatureCompany('We paid.\n\nKind regards\nJane Doe\nAccounts Payable\nAcme Holding Ltd', null)).toBe('Acme Holding Ltd');
    expect(readSignatureCompany('Bezahlt.\n\nMit freundlichen Grüßen\nMax Muster\nMuster Bau GmbH & Co. KG\nHauptstr. 1', null)).toBe('Muster Bau GmbH & Co. KG');
    expect(readSignatureCompany('Betaald.\n\nMet vriendelijke groet,\nJan\nDe Groot Techniek B.V.', null)).toBe('De Groot Techniek B.V.');
    expect(readSignatureCompany('Paid.', { address: 'ap@x.test', name: 'Jane Doe | Dupont SARL' })).toBe('Dupont SARL');
    expect(readSignatureCompany('You have received a payment advice from Services Martin SAS.\nReference: 1', null)).toBe('Services Martin SAS');
    expect(readSignatureCompany('Executed.\nBeneficiary: Nordlicht Vertrieb GmbH', null)).toBeNull();
  });
});
