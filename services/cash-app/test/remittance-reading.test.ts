/**
 * The remittance-advice reader on realistic advices, one per format and language: the text and
 * rows a file gives through the kernel's attachmentText (PDF made with pdf-lib, CSV, XLSX made with
 * exceljs, HTML), read into invoice lines, the stated total and the payment's own fields. Pure and
 * fast: no database.
 */
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { attachmentText, htmlToText } from '@rp/platform';
import { amountsIn, cellAmount, datesIn, parseNumber } from '../src/domain/remittance-reading/amounts.js';
import { adviceParts, bodyPart, type PartText } from '../src/domain/remittance-reading/parts.js';
import { readAdvice } from '../src/domain/remittance-reading/read.js';

const line = (invoice_number: string, amount_paid: string, amount_discount = '0', amount_withheld = '0') => ({ invoice_number, amount_paid, amount_discount, amount_withheld });

async function pdf(rows: { text: string; x: number }[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  let y = 800;
  for (const row of rows) {
    for (const cell of row) page.drawText(cell.text, { x: cell.x, y, size: 9, font });
    y -= 14;
  }
  return doc.save();
}
const at = (xs: number[], texts: string[]) => texts.map((text, i) => ({ text, x: xs[i]! })).filter((c) => c.text !== '');

async function text(bytes: Uint8Array, mime: string, name: string) {
  const t = await attachmentText(bytes, mime, name);
  if (t.kind === null) throw new Error(t.detail);
  return { text: t.text, rows: t.rows };
}

describe('amounts as payers write them', () => {
  it('reads the four thousands conventions exactly, with currencies and signs', () => {
    expect(amountsIn('EUR 1.234,56 / $1,234.56 / 1 234,56 € / CHF 1\'234.56 / 1\u202F234,56').map((a) => a.value)).toEqual(['1234.56', '1234.56', '1234.56', '1234.56', '1234.56']);
    expect(amountsIn('Gutschrift -45,00 und (12.50) und 7,10-').map((a) => a.value)).toEqual(['-45', '-12.5', '-7.1']);
    expect(cellAmount('1.190,00 €')).toBe('1190');
    expect(cellAmount('USD 0.10')).toBe('0.1');
    expect(cellAmount('2026-10-14')).toBeNull();
  });

  it('never takes dates, percentages or invoice numbers for amounts', () => {
    expect(amountsIn('Rechnung 9000001 vom 01.09.2026, 2,5 % Skonto, Beleg 2026/0042')).toEqual([]);
  });

  it('reads a lone separator before three digits by the document\'s decimal mark', () => {
    expect(parseNumber('1,234')).toBe('1234');
    expect(parseNumber('1.234')).toBe('1234');
    expect(parseNumber('1,234', ',')).toBe('1.234');
    expect(parseNumber('12,5')).toBe('12.5');
    expect(parseNumber('1.234.567,891')).toBe('1234567.891');
    expect(parseNumber('1,23,456.00')).toBeNull();
  });

  it('reads dates in the five languages', () => {
    expect(datesIn('14.10.2026 · 14/10/2026 · 2026-10-14 · 14 octobre 2026 · Oct 14, 2026 · 14. Oktober 2026 · 14 de octubre de 2026').map((d) => d.value)).toEqual(
      Array(6).fill('2026-10-14'),
    );
  });
});

describe('readAdvice', () => {
  it('reads a sentence naming each invoice with its own amount, ending with the total it adds up to', () => {
    const r = readAdvice({ text: 'Hallo,\n\nwir haben heute die Rechnungen 4711 (11.298,03 EUR) und 4712 (6.292,45 EUR) über insgesamt 17.590,48 EUR überwiesen.' }, { known: new Map([['4711', '4711'], ['4712', '4712']]) });
    expect(r.lines.map((l) => [l.invoice_number, l.amount_paid])).toEqual([['4711', '11298.03'], ['4712', '6292.45']]);
    const en = readAdvice({ text: 'We paid invoices INV-1 (772.75 USD) and INV-2 (8,683.21 USD) today, USD 9,455.96 in total.' });
    expect(en.lines.map((l) => [l.invoice_number, l.amount_paid])).toEqual([['INV-1', '772.75'], ['INV-2', '8683.21']]);
  });

  it('German PDF advice: gross, Skonto and Zahlbetrag columns, an empty Skonto cell, the total and the payment fields', async () => {
    const xs = [40, 120, 200, 300, 380, 460];
    const bytes = await pdf([
      at([40], ['Muster Industrie AG · Zahlungsavis']),
      at([40, 300], ['Zahlungsdatum: 14.10.2026', 'Zahlungsreferenz: AV-2026-1014']),
      at([40, 300], ['Zahlungsart: SEPA-Überweisung', 'Betrag: EUR 2.345,60']),
      at(xs, ['Rechnungsnr.', 'Datum', 'Rechnungsbetrag', 'Skonto', 'Einbehalt', 'Zahlbetrag']),
      at(xs, ['9000001', '01.09.2026', '1.190,00', '23,80', '', '1.166,20']),
      at(xs, ['9000002', '05.09.2026', '1.179,40', '', '', '1.179,40']),
      at(xs, ['Summe', '', '', '23,80', '', '2.345,60']),
    ]);
    const r = readAdvice(await text(bytes, 'application/pdf', 'avis.pdf'));
    expect(r.lines).toEqual([line('9000001', '1166.2', '23.8'), line('9000002', '1179.4')]);
    expect(r.stated_total).toBe('2345.6');
    expect(r.fields).toEqual({ payment_date: '2026-10-14', amount: '2345.6', currency: 'EUR', reference: 'AV-2026-1014', payer: null, method: 'bank_transfer' });
    expect(r.is_advice).toBe(true);
    expect(r.uncertainties).toEqual([]);
  });

  it('English plain-text body: a list with inline discount and withholding, and a total that does not add up', () => {
    const r = readAdvice({
      text: [
        'Hi team,',
        '',
        'Please find below our remittance for the wire sent on Oct 14, 2026.',
        'Payer: Globex Corporation',
        '',
        '- Invoice INV-1001: USD 1,234.56',
        '- Invoice INV-1002: USD 1,000.00 less discount 20.00, paid 980.00',
        '- Invoice INV-1003: 500.00, withholding tax 50.00, paid 450.00',
        '',
        'Total paid: USD 2,674.56',
        '',
        'Best regards,',
        'Jane Doe',
      ].join('\n'),
    });
    expect(r.lines).toEqual([line('INV-1001', '1234.56'), line('INV-1002', '980', '20'), line('INV-1003', '450', '0', '50')]);
    expect(r.stated_total).toBe('2674.56');
    expect(r.uncertainties).toEqual(['total_differs: total 2674.56, lines 2664.56']);
    expect(r.fields).toMatchObject({ payer: 'Globex Corporation', currency: 'USD', method: 'wire' });
  });

  it('Dutch HTML table: empty cells keep their column (inhouding, not korting)', () => {
    const html =
      '<p>Geachte heer/mevrouw, hierbij ons betalingsadvies.</p><table><tr><th>Factuurnummer</th><th>Factuurbedrag</th><th>Korting</th><th>Inhouding</th><th>Betaald</th></tr>' +
      '<tr><td>F-2026-0042</td><td>1.190,00</td><td></td><td>19,00</td><td>1.171,00</td></tr>' +
      '<tr><td>F-2026-0043</td><td>500,00</td><td>10,00</td><td></td><td>490,00</td></tr>' +
      '<tr><td>Totaal</td><td></td><td></td><td></td><td>1.661,00</td></tr></table><p>Betaaldatum: 14-10-2026</p>';
    const r = readAdvice(bodyPart('', html));
    expect(r.lines).toEqual([line('F-2026-0042', '1171', '0', '19'), line('F-2026-0043', '490', '10')]);
    expect(r.stated_total).toBe('1661');
    expect(r.fields.payment_date).toBe('2026-10-14');
    expect(r.uncertainties).toEqual([]);
  });

  it('French CSV export: semicolons, spaces as thousands separators, accented headers', async () => {
    const csv = 'N° facture;Date facture;Montant facture;Escompte;Montant payé\n' + 'FA-77001;01/09/2026;1 190,00;23,80;1 166,20\n' + 'FA-77002;03/09/2026;12 500,00;;12 500,00\n' + 'Total;;;23,80;13 666,20\n';
    const r = readAdvice(await text(Buffer.from(csv, 'utf8'), 'text/csv', 'reglement.csv'));
    expect(r.lines).toEqual([line('FA-77001', '1166.2', '23.8'), line('FA-77002', '12500')]);
    expect(r.stated_total).toBe('13666.2');
    expect(r.is_advice).toBe(true);
  });

  it('Spanish XLSX: numeric cells, a retención column, a payment date as a label', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Pagos');
    ws.addRow(['Aviso de pago']);
    ws.addRow(['Fecha de pago', '14/10/2026']);
    ws.addRow(['Factura', 'Importe factura', 'Retención', 'Importe pagado']);
    ws.addRow(['2026/0042', 1000, 150, 850]);
    ws.addRow(['2026/0043', 2345.6, 0, 2345.6]);
    const r = readAdvice(await text(new Uint8Array(await wb.xlsx.writeBuffer()), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'pago.xlsx'));
    expect(r.lines).toEqual([line('2026/0042', '850', '0', '150'), line('2026/0043', '2345.6')]);
    expect(r.fields.payment_date).toBe('2026-10-14');
  });

  it('Swiss text table with apostrophes, and an English CSV whose "Amount" is the invoice amount beside "Paid"', async () => {
    const swiss = readAdvice({ text: "Zahlungsavis\nRechnung      Betrag\n9000001       CHF 1'234.50\n9000002       CHF 10'000.00\nTotal         CHF 11'234.50" });
    expect(swiss.lines).toEqual([line('9000001', '1234.5'), line('9000002', '10000')]);
    const csv = 'Invoice No.,Invoice Date,Amount,Discount,Paid\n9000001,2026-09-01,1190.00,23.80,1166.20\n9000002,2026-09-02,"1,179.40",,"1,179.40"\n';
    expect(readAdvice(await text(Buffer.from(csv), 'text/csv', 'a.csv')).lines).toEqual([line('9000001', '1166.2', '23.8'), line('9000002', '1179.4')]);
  });

  it('prefers the number the ledger knows over a PO number on the same row, and writes it the ledger\'s way', () => {
    const known = new Map([['9000001', '9000001']]);
    const r = readAdvice({ text: 'Payment advice\nPO 4500012345 / INV-9000001 paid 1,190.00' }, { known });
    expect(r.lines).toEqual([line('9000001', '1190')]);
  });

  it('an invoice copy is not advice, and a covering note repeating the attachment is not a second advice', () => {
    const invoice: PartText = { part: 'attachment:0', text: 'INVOICE\nInvoice 9000001\nTotal due 1,190.00', rows: null, kind: 'pdf', attachment: null };
    expect(adviceParts([invoice], new Map())).toEqual([]);
    const body: PartText = { part: 'body', text: 'We have paid invoice 9000001: 1,190.00 EUR, see attachment.', rows: null, kind: 'text', attachment: null };
    const file: PartText = { part: 'attachment:1', text: '', rows: [['Invoice', 'Paid'], ['9000001', '1190.00']], kind: 'csv', attachment: null };
    expect(adviceParts([body, file], new Map()).map((p) => p.part)).toEqual(['attachment:1']);
    expect(adviceParts([body], new Map()).map((p) => p.part)).toEqual(['body']);
  });

  it('records written down the page, and a forwarded advice quoted with ">"', () => {
    const r = readAdvice({
      text: [
        'Payment notification',
        'Invoice no.: 9000001',
        'Invoice amount: 1,190.00',
        'Discount: 23.80',
        'Paid: 1,166.20',
        '',
        'Invoice no.: 9000002',
        'Paid: 595.00',
        '',
        'Payment amount: 1,761.20',
      ].join('\n'),
    });
    expect(r.lines).toEqual([line('9000001', '1166.2', '23.8'), line('9000002', '595')]);
    expect(r.fields.amount).toBe('1761.2');
    const fwd = readAdvice({ text: '---------- Forwarded message ---------\nFrom: AP <ap@globex.example>\n\n> We have paid the following invoices:\n> Invoice 9000003 EUR 300,00\n> 9000004 EUR 1.500,00\n' });
    expect(fwd.lines).toEqual([line('9000003', '300'), line('9000004', '1500')]);
  });

  it('a total paid for several named invoices is split by their open amounts, only when it equals their sum', () => {
    const known = new Map([['9000011092', '9000011092'], ['9000011056', '9000011056']]);
    const openAmounts = new Map([['9000011092', '1129.46'], ['9000011056', '118.12']]);
    const text = 'Hallo,\n\nwir haben heute die Rechnungen 9000011092 und 9000011056 über 1.247,58 EUR überwiesen.\n\nGruß';
    expect(readAdvice({ text }, { known, openAmounts }).lines).toEqual([line('9000011092', '1129.46'), line('9000011056', '118.12')]);
    const short = readAdvice({ text: text.replace('1.247,58', '1.200,00') }, { known, openAmounts });
    expect(short.lines).toEqual([]);
    expect(short.uncertainties).toEqual(['amount_not_split: 1200.00 for 9000011092, 9000011056']);
  });

  it('a bank\'s payment notice forwarded: its amount for the invoice its remittance information names', () => {
    const text =
      'FYI, see below.\n\n---------- Forwarded message ---------\nFrom: Online Banking <noreply@bank.example>\nSubject: Payment executed\n\n' +
      'Your payment order has been executed.\nBeneficiary: Nordlicht Vertrieb GmbH\nAmount: USD 3,000.00\nRemittance information: INV-410272\nExecution date: 2026-11-18\n';
    const r = readAdvice({ text }, { known: new Map([['INV410272', 'INV-410272']]) });
    expect(r.lines).toEqual([line('INV-410272', '3000')]);
    expect(r.fields).toMatchObject({ amount: '3000', currency: 'USD', payment_date: '2026-11-18' });
  });

  it('the quoted history of a reply (our own reminder) is not the sender\'s advice', () => {
    const text =
      'Hello,\n\nthe following invoices were paid on 17 November 2026:\n9000010750  EUR 11,513.63\n\nPieter\n\n' +
      '> On 12 November 2026, Nordlicht Vertrieb GmbH <ar@nordlicht.example> wrote:\n> according to our records the following invoices are overdue:\n' +
      '> 9000010750  11,513.63 EUR  due 2026-09-16\n> 9000010721  656.93 EUR  due 2026-11-10\n';
    expect(adviceParts([bodyPart(text, null)], new Map()).flatMap((p) => p.reading.lines)).toEqual([line('9000010750', '11513.63')]);
  });

  it('reads the plain text of a body when it holds more than its HTML (a forwarded advice the HTML lacks)', () => {
    const text = 'FYI\n\n---------- Forwarded message ---------\nRemittance advice\nInvoice 9000001: EUR 100,00\n';
    expect(adviceParts([bodyPart(text, '<p>FYI</p>')], new Map()).flatMap((p) => p.reading.lines)).toEqual([line('9000001', '100')]);
  });

  it('reads nothing from a message without invoice lines', () => {
    const r = readAdvice({ text: 'Thanks for your reminder, we will look into it next week.' });
    expect(r.lines).toEqual([]);
    expect(r.stated_total).toBeNull();
  });
});

describe('htmlToText tables stay columns', () => {
  it('keeps the header on one line', () => {
    expect(htmlToText('<table><tr><th>Invoice</th><th>Paid</th></tr><tr><td>1</td><td>2</td></tr></table>').split('\n')[0]).toMatch(/^Invoice\s+Paid$/);
  });
});
