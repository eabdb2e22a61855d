/**
 * Remittance house styles that send the advice as a file (PDF layouts drawn with pdf-lib, CSV
 * exports with `,` and `;`, XLSX exports with numeric cells).
 */
import { amount, date, money } from './format.js';
import { signature } from './styles-text.js';
import { OUR_ORGANIZATION, type HouseStyle, type PaidLine, type PdfCell, type PdfSpec } from './types.js';

const gross = (l: PaidLine) => l.paid + l.discount + l.withheld;

interface Column {
  title: string;
  x: number;
  right?: boolean;
  value: (l: PaidLine) => string;
}

function pdfTable(columns: Column[], lines: PaidLine[]): PdfCell[][] {
  return [columns.map((c) => ({ x: c.x, text: c.title, bold: true, right: c.right })), ...lines.map((l) => columns.map((c) => ({ x: c.x, text: c.value(l), right: c.right })))];
}

const row = (...cells: [number, string, boolean?][]): PdfCell[] => cells.map(([x, text, bold]) => ({ x, text, bold }));

function pdf(font: PdfSpec['font'], size: number, rows: PdfCell[][]): PdfSpec {
  return { font, size, rows };
}

const csvCell = (s: string, sep: string) => (s.includes(sep) || s.includes('"') ? `"${s.replace(/"/g, '""')}"` : s);
const csv = (rows: string[][], sep: string) => rows.map((r) => r.map((c) => csvCell(c, sep)).join(sep)).join('\r\n') + '\r\n';

export const FILE_STYLES: HouseStyle[] = [
  {
    name: 'pdf_en_classic',
    language: 'en',
    deductions: 'discount',
    maxLines: 14,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Remittance Advice ${ctx.customer.name}`,
      text: `Dear Sir/Madam,\n\nPlease find attached our remittance advice for payment dated ${date(ctx.paymentDate, 'long-en')}.\n\nRegards,\n${signature(ctx)}`,
      attachments: [
        {
          filename: `Remittance_${ctx.paymentDate.replace(/-/g, '')}.pdf`,
          contentType: 'application/pdf',
          pdf: pdf('Helvetica', 10, [
            row([0, ctx.customer.name, true]),
            row([0, 'REMITTANCE ADVICE', true]),
            [],
            row([0, `To: ${OUR_ORGANIZATION.name}`], [280, `Payment date: ${date(ctx.paymentDate, 'short-en')}`]),
            row([0, `Payment reference: PAY-${ctx.r.digits(7)}`], [280, `Currency: ${ctx.currency}`]),
            [],
            ...pdfTable(
              [
                { title: 'Invoice Number', x: 0, value: (l) => l.invoice.number },
                { title: 'Invoice Date', x: 120, value: (l) => date(l.invoice.documentDate, 'short-en') },
                { title: 'Amount', x: 290, right: true, value: (l) => amount(gross(l), 'en') },
                { title: 'Discount', x: 370, right: true, value: (l) => amount(l.discount, 'en') },
                { title: 'Paid', x: 460, right: true, value: (l) => amount(l.paid, 'en') },
              ],
              ctx.lines,
            ),
            [],
            [{ x: 300, text: 'Total paid', bold: true }, { x: 460, text: amount(ctx.total, 'en'), bold: true, right: true }],
          ]),
        },
      ],
    }),
  },
  {
    name: 'pdf_de_sap',
    language: 'de',
    deductions: 'mixed',
    maxLines: 20,
    build: (ctx) => {
      const doc = `15000${ctx.r.digits(5)}`;
      return {
        from: { name: 'Kreditorenbuchhaltung', address: ctx.sender.address },
        subject: `Zahlungsavis ${doc}`,
        text: `Sehr geehrte Damen und Herren,\n\nim Anhang finden Sie unser Zahlungsavis Nr. ${doc}.\n\nMit freundlichen Grüßen\n${ctx.customer.name}`,
        attachments: [
          {
            filename: `ZAHLUNGSAVIS_${doc}.pdf`,
            contentType: 'application/pdf',
            pdf: pdf('Courier', 9, [
              row([0, ctx.customer.name], [330, 'Zahlungsavis', true]),
              row([0, 'Industriestraße 12, 70565 Stuttgart'], [330, `Beleg ${doc}`]),
              row([330, `Datum ${date(ctx.paymentDate, 'dotted')}`]),
              row([0, OUR_ORGANIZATION.name]),
              row([0, 'Am Hafen 5, 20457 Hamburg']),
              [],
              row([0, `Unsere Lieferantennr.: 7${ctx.r.digits(5)}   Zahlweg: Überweisung   Währung: ${ctx.currency}`]),
              [],
              ...pdfTable(
                [
                  { title: 'Re.-Nr.', x: 0, value: (l) => l.invoice.number },
                  { title: 'Re.-Datum', x: 110, value: (l) => date(l.invoice.documentDate, 'dotted') },
                  { title: 'Brutto', x: 260, right: true, value: (l) => amount(gross(l), 'de') },
                  { title: 'Skonto', x: 330, right: true, value: (l) => amount(l.discount, 'de') },
                  { title: 'Einbehalt', x: 410, right: true, value: (l) => amount(l.withheld, 'de') },
                  { title: 'Zahlbetrag', x: 490, right: true, value: (l) => amount(l.paid, 'de') },
                ],
                ctx.lines,
              ),
              [],
              [{ x: 300, text: 'Summe Zahlbetrag' }, { x: 490, text: amount(ctx.total, 'de'), right: true }],
            ]),
          },
        ],
      };
    },
  },
  {
    name: 'pdf_fr_retenue',
    language: 'fr',
    deductions: 'withholding',
    maxLines: 10,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Avis de virement ${date(ctx.paymentDate, 'slashed')}`,
      text: `Bonjour,\n\nVeuillez trouver ci-joint notre avis de virement.\n\nCordialement,\n${signature(ctx, 'Comptabilité')}`,
      attachments: [
        {
          filename: 'avis_de_virement.pdf',
          contentType: 'application/pdf',
          pdf: pdf('TimesRoman', 11, [
            row([0, 'AVIS DE RÈGLEMENT', true]),
            row([0, `Émetteur : ${ctx.customer.name}`]),
            row([0, `Bénéficiaire : ${OUR_ORGANIZATION.name}`]),
            row([0, `Date de valeur : ${date(ctx.paymentDate, 'long-fr')}`]),
            [],
            ...pdfTable(
              [
                { title: 'Facture', x: 0, value: (l) => l.invoice.number },
                { title: 'Montant TTC', x: 230, right: true, value: (l) => amount(gross(l), 'fr') },
                { title: 'Retenue à la source', x: 360, right: true, value: (l) => amount(l.withheld, 'fr') },
                { title: 'Net réglé', x: 460, right: true, value: (l) => amount(l.paid, 'fr') },
              ],
              ctx.lines,
            ),
            [],
            [{ x: 250, text: 'Total net réglé', bold: true }, { x: 460, text: `${amount(ctx.total, 'fr')} ${ctx.currency}`, right: true, bold: true }],
          ]),
        },
      ],
    }),
  },
  {
    name: 'pdf_bank_network',
    language: 'en',
    deductions: 'none',
    maxLines: 12,
    build: (ctx) => {
      const ref = `PN${ctx.r.digits(10)}`;
      return {
        from: { name: 'PaymentsNetwork Notifications', address: 'no-reply@notify.paymentsnetwork.example' },
        subject: `Payment Advice ${ref} from ${ctx.customer.name}`,
        text: `You have received a payment advice from ${ctx.customer.name}.\nPayment reference: ${ref}\n\nThe advice is attached as a PDF document.\n\nPaymentsNetwork - do not reply to this message.`,
        attachments: [
          {
            filename: `${ref}.pdf`,
            contentType: 'application/pdf',
            pdf: pdf('Helvetica', 9, [
              row([0, 'PaymentsNetwork', true], [330, 'PAYMENT ADVICE', true]),
              [],
              row([0, `Payer: ${ctx.customer.name}`], [330, `Advice no.: ${ref}`]),
              row([0, `Payee: ${OUR_ORGANIZATION.name}`], [330, `Value date: ${date(ctx.paymentDate, 'iso')}`]),
              row([0, `Payer account ref: ${ctx.customer.code}`], [330, `Amount: ${money(ctx.total, ctx.currency, 'en', 'code-before')}`]),
              [],
              ...pdfTable(
                [
                  { title: 'Payer Document', x: 0, value: () => `51${ctx.r.digits(8)}` },
                  { title: 'Invoice Reference', x: 110, value: (l) => l.invoice.number },
                  { title: 'PO Number', x: 240, value: (l) => l.invoice.po ?? '' },
                  { title: 'Amount', x: 460, right: true, value: (l) => amount(l.paid, 'en') },
                ],
                ctx.lines,
              ),
            ]),
          },
        ],
      };
    },
  },
  {
    name: 'pdf_nl_specificatie',
    language: 'nl',
    deductions: 'discount',
    maxLines: 12,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Betaalspecificatie ${ctx.customer.name}`,
      text: `Beste,\n\nIn de bijlage vindt u de specificatie van onze betaling.\n\nMet vriendelijke groet,\n${signature(ctx, 'Crediteurenadministratie')}`,
      attachments: [
        {
          filename: 'betaalspecificatie.pdf',
          contentType: 'application/pdf',
          pdf: pdf('Helvetica', 10, [
            row([0, 'Betalingsspecificatie', true]),
            row([0, `${ctx.customer.name}`], [300, `Betaaldatum: ${date(ctx.paymentDate, 'dotted')}`]),
            row([0, `Aan: ${OUR_ORGANIZATION.name}`], [300, `Valuta: ${ctx.currency}`]),
            [],
            ...pdfTable(
              [
                { title: 'Factuurnr.', x: 0, value: (l) => l.invoice.number },
                { title: 'Datum', x: 130, value: (l) => date(l.invoice.documentDate, 'dotted') },
                { title: 'Bedrag', x: 300, right: true, value: (l) => amount(gross(l), 'de') },
                { title: 'Korting', x: 380, right: true, value: (l) => amount(l.discount, 'de') },
                { title: 'Betaald', x: 460, right: true, value: (l) => amount(l.paid, 'de') },
              ],
              ctx.lines,
            ),
            [],
            [{ x: 300, text: 'Totaal' }, { x: 460, text: amount(ctx.total, 'de'), right: true }],
          ]),
        },
      ],
    }),
  },
  {
    name: 'csv_en_export',
    language: 'en',
    deductions: 'discount',
    maxLines: 25,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Payment details ${date(ctx.paymentDate, 'iso')}`,
      text: `Hello,\n\nAttached is the detail of our payment of ${money(ctx.total, ctx.currency, 'en', 'code-before')}.\n\n${signature(ctx)}`,
      attachments: [
        {
          filename: `payment_${ctx.paymentDate}.csv`,
          contentType: 'text/csv',
          text: csv(
            [
              ['Invoice Number', 'Invoice Date', 'Invoice Amount', 'Discount', 'Amount Paid', 'Currency'],
              ...ctx.lines.map((l) => [l.invoice.number, l.invoice.documentDate, amount(gross(l), 'plain'), amount(l.discount, 'plain'), amount(l.paid, 'plain'), ctx.currency]),
            ],
            ',',
          ),
        },
      ],
    }),
  },
  {
    name: 'csv_de_semicolon',
    language: 'de',
    deductions: 'discount',
    maxLines: 25,
    build: (ctx) => ({
      from: ctx.sender,
      subject: 'Zahlungsavis als CSV',
      text: `Guten Tag,\n\nanbei das Zahlungsavis zu unserer Überweisung vom ${date(ctx.paymentDate, 'dotted')} als CSV-Datei.\n\nViele Grüße\n${signature(ctx, 'Buchhaltung')}`,
      attachments: [
        {
          filename: 'Zahlungsavis.csv',
          contentType: 'text/csv',
          text: csv(
            [
              ['Rechnungsnummer', 'Rechnungsdatum', 'Bruttobetrag', 'Skonto', 'Zahlbetrag', 'Waehrung'],
              ...ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'dotted'), amount(gross(l), 'de'), amount(l.discount, 'de'), amount(l.paid, 'de'), ctx.currency]),
              ['Summe', '', '', '', amount(ctx.total, 'de'), ctx.currency],
            ],
            ';',
          ),
        },
      ],
    }),
  },
  {
    name: 'xlsx_en_export',
    language: 'en',
    deductions: 'discount',
    maxLines: 25,
    build: (ctx) => ({
      from: ctx.sender,
      subject: 'Remittance - see attached spreadsheet',
      text: `Hi,\n\nPlease see the attached spreadsheet for the invoices included in today's payment.\n\n${signature(ctx)}`,
      attachments: [
        {
          filename: 'remittance.xlsx',
          contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          xlsx: {
            sheet: 'Remittance',
            numFmt: '#,##0.00',
            rows: [
              ['Remittance Advice', null, null, null],
              ['Payer', ctx.customer.name, null, null],
              ['Payment date', ctx.paymentDate, null, null],
              ['Currency', ctx.currency, null, null],
              [null, null, null, null],
              ['Invoice', 'Gross', 'Discount', 'Net paid'],
              ...ctx.lines.map((l) => [l.invoice.number, gross(l) / 100, l.discount / 100, l.paid / 100]),
              ['Total', null, null, ctx.total / 100],
            ],
          },
        },
      ],
    }),
  },
  {
    name: 'xlsx_nl_inhouding',
    language: 'nl',
    deductions: 'mixed',
    maxLines: 20,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Betalingsoverzicht ${date(ctx.paymentDate, 'dotted')}`,
      text: `Goedendag,\n\nBijgaand het overzicht van de betaalde facturen.\n\nMet vriendelijke groet,\n${signature(ctx, 'Financiële administratie')}`,
      attachments: [
        {
          filename: 'betalingsoverzicht.xlsx',
          contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          xlsx: {
            sheet: 'Overzicht',
            numFmt: '#,##0.00',
            rows: [
              ['Factuurnummer', 'Factuurdatum', 'Bruto', 'Korting', 'Inhouding', 'Netto betaald'],
              ...ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'dotted'), gross(l) / 100, l.discount / 100, l.withheld / 100, l.paid / 100]),
            ],
          },
        },
      ],
    }),
  },
];
