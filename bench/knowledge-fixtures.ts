/**
 * Generator of the binary documents of the knowledge evaluation set (test/fixtures/knowledge/):
 * the AR playbook PDF (pdf-lib) and the short-payment procedure DOCX (docx), written for this
 * project; and of the generated 200-page PDF playbook the knowledge bench times the pipeline on.
 *
 *   npx tsx bench/knowledge-fixtures.ts     (re)writes ar-playbook.pdf and short-payment-procedure.docx
 *
 * The text of both documents is below; their hand labels are the *.labels.json next to them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { AlignmentType, Document, HeadingLevel, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow, TextRun, WidthType } from 'docx';

export type Block = { h: string } | { p: string } | { ol: string[] } | { ul: string[] } | { table: string[][] } | { pageBreak: true };

export const FIXTURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'knowledge');

export const PLAYBOOK: Block[] = [
  { h: 'Accounts Receivable Playbook' },
  { h: 'Payment terms' },
  {
    p:
      'Our standard payment terms are net 30 days from the invoice date. Key Accounts customers receive net 45 days when approved by the credit manager. ' +
      'An early payment discount of 2% applies when an invoice is paid within 10 days. Late payment interest of 1.5% per month is charged on overdue balances above EUR 5,000.',
  },
  { h: 'Dunning' },
  { p: 'To send the dunning sequence for an overdue invoice:' },
  {
    ol: [
      'Send the first reminder email 3 days after the due date.',
      "Call the customer's accounts payable contact 10 days after the due date.",
      'Send a final notice 21 days after the due date.',
      'Escalate to the credit manager 30 days after the due date and place the account on credit hold.',
    ],
  },
  { p: 'Reminders are never sent to customers with an open dispute on the same invoice.' },
  { pageBreak: true },
  { h: 'Customer specifics' },
  {
    p:
      'Acme Foods pays by ACH on the 15th and the 30th of each month. Acme Foods always takes a 2% early payment discount, even when it pays late. ' +
      'Globex Retail requires a purchase order number on every invoice, or the invoice is rejected. ' +
      'Initech Software GmbH pays by SEPA credit transfer and quotes the invoice number in the remittance. ' +
      'Northwind Traders sends remittance advice by email one day before the payment arrives. ' +
      'The customer with account number C-50020 may only be contacted by phone before noon.',
  },
  { h: 'Credit holds' },
  {
    p:
      'A credit hold blocks new sales orders but does not stop deliveries already scheduled. ' +
      'The credit manager can release a credit hold after the customer signs a payment plan.',
  },
  { pageBreak: true },
  { h: 'Deductions' },
  {
    p:
      'Deductions under USD 50 are written off automatically without investigation. ' +
      'Deductions of USD 50 or more need a claim number and proof of delivery before they are accepted.',
  },
  { p: 'To process a pricing deduction:' },
  {
    ul: [
      'Check the deduction against the agreed price list.',
      "Request the customer's claim documentation.",
      'Create a credit memo when the claim is valid.',
      'Re-invoice the difference when the claim is invalid.',
    ],
  },
  { h: 'Escalation contacts' },
  {
    table: [
      ['Role', 'Name', 'Email'],
      ['Credit manager', 'Dana Whitfield', 'dana.whitfield@example.com'],
      ['Collections lead', 'Marco Ruiz', 'marco.ruiz@example.com'],
    ],
  },
];

export const PROCEDURE: Block[] = [
  { h: 'Short payment procedure' },
  { p: 'This procedure applies to all customers except the Public Sector segment.' },
  { p: 'When a payment is short by more than USD 25, follow these steps:' },
  {
    ol: [
      'Match the payment to the open invoices named in the remittance.',
      'Record the difference as a deduction with reason code SHORT.',
      "Email the customer's accounts payable contact within 2 business days asking for the reason.",
      'If there is no answer after 10 days, route the deduction to the collections team.',
    ],
  },
  {
    p:
      'Globex Retail short pays freight charges on every order; these are valid and are written off with reason code FREIGHT. ' +
      'Short payments from Stark Hardware Supply Co. must be reviewed by the credit manager before any write-off. ' +
      'Deductions below USD 50 are written off automatically without investigation.',
  },
  { h: 'Reason codes' },
  {
    table: [
      ['Reason code', 'Meaning', 'Owner'],
      ['SHORT', 'Unexplained short payment', 'Cash application'],
      ['FREIGHT', 'Freight charge not accepted', 'Cash application'],
      ['PRICE', 'Price difference', 'Sales operations'],
    ],
  },
];

const PAGE = { width: 595, height: 842, margin: 56, size: 11, leading: 15, wrap: 95 };

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines;
}

/** The PDF of `blocks`: Helvetica, wrapped at PAGE.wrap characters, lists numbered or bulleted with "-", tables as "a | b | c" rows. */
export async function renderPdf(blocks: Block[], title: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  doc.setCreationDate(new Date('2026-01-15T00:00:00Z'));
  doc.setModificationDate(new Date('2026-01-15T00:00:00Z'));
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  let page: PDFPage = doc.addPage([PAGE.width, PAGE.height]);
  let y = PAGE.height - PAGE.margin;
  const newPage = () => {
    page = doc.addPage([PAGE.width, PAGE.height]);
    y = PAGE.height - PAGE.margin;
  };
  const line = (text: string, f: PDFFont, indent = 0) => {
    if (y < PAGE.margin) newPage();
    page.drawText(text, { x: PAGE.margin + indent, y, size: PAGE.size, font: f });
    y -= PAGE.leading;
  };
  for (const b of blocks) {
    if ('pageBreak' in b) newPage();
    else if ('h' in b) {
      y -= 6;
      line(b.h, bold);
    } else if ('p' in b) for (const l of wrap(b.p, PAGE.wrap)) line(l, font);
    else if ('ol' in b) b.ol.forEach((item, i) => wrap(`${i + 1}. ${item}`, PAGE.wrap).forEach((l, n) => line(l, font, n ? 14 : 0)));
    else if ('ul' in b) b.ul.forEach((item) => wrap(`- ${item}`, PAGE.wrap).forEach((l, n) => line(l, font, n ? 10 : 0)));
    else if ('table' in b) for (const row of b.table) line(row.join(' | '), font);
    y -= 4;
  }
  return doc.save();
}

export async function renderDocx(blocks: Block[]): Promise<Uint8Array> {
  const children: (Paragraph | Table)[] = [];
  let listInstance = 0;
  for (const b of blocks) {
    if ('pageBreak' in b) children.push(new Paragraph({ pageBreakBefore: true }));
    else if ('h' in b) children.push(new Paragraph({ text: b.h, heading: HeadingLevel.HEADING_1 }));
    else if ('p' in b) children.push(new Paragraph({ children: [new TextRun(b.p)] }));
    else if ('ol' in b) {
      listInstance++;
      for (const item of b.ol) children.push(new Paragraph({ text: item, numbering: { reference: 'steps', level: 0, instance: listInstance } }));
    } else if ('ul' in b) for (const item of b.ul) children.push(new Paragraph({ text: item, bullet: { level: 0 } }));
    else if ('table' in b)
      children.push(
        new Table({
          width: { size: 100, type: WidthType.PERCENTAGE },
          rows: b.table.map((row, i) => new TableRow({ tableHeader: i === 0, children: row.map((c) => new TableCell({ children: [new Paragraph(c)] })) })),
        }),
      );
  }
  const doc = new Document({
    creator: 'receivables-platform fixtures',
    numbering: { config: [{ reference: 'steps', levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', alignment: AlignmentType.START }] }] },
    sections: [{ children }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

const CUSTOMERS = ['Acme Foods', 'Globex Retail', 'Initech', 'Umbrella Pharmacies', 'Stark Hardware', 'Wayne Logistics', 'Hooli Cloud', 'Vandelay Imports'];

/** A generated playbook of about `pages` pages: the sections of PLAYBOOK repeated with varying numbers, customers and wording. */
export async function generatedPlaybookPdf(pages: number): Promise<Uint8Array> {
  const blocks: Block[] = [];
  for (let i = 0; i < pages; i++) {
    const c = CUSTOMERS[i % CUSTOMERS.length]!;
    const days = 15 + (i % 7) * 5;
    blocks.push(
      { h: `Chapter ${i + 1}: ${c}` },
      {
        p:
          `${c} pays invoices on average ${days} days after the invoice date. Region ${i + 1} applies payment terms of net ${days + 15} days to new orders. ` +
          `An early payment discount of ${(i % 3) + 1}% applies when ${c} pays within ${5 + (i % 10)} days. Credit limit reviews for region ${i + 1} happen every ${3 + (i % 9)} months. ` +
          `Late payment interest of ${((i % 4) + 1) * 0.5}% per month applies to balances above EUR ${(i + 1) * 1000}.`,
      },
      { p: `To collect an overdue invoice in region ${i + 1}:` },
      {
        ol: [
          `Send the first reminder ${2 + (i % 5)} days after the due date.`,
          `Call the accounts payable contact of ${c} after ${7 + (i % 6)} days.`,
          `Send a final notice after ${20 + (i % 8)} days.`,
          'Escalate to the credit manager and place the account on credit hold.',
        ],
      },
      {
        p:
          `Deductions under USD ${25 * ((i % 4) + 1)} from ${c} are written off without investigation. Disputes raised by ${c} are answered within ${2 + (i % 3)} business days. ` +
          `Reminders for region ${i + 1} are sent in the customer's language. The collections lead for region ${i + 1} reviews promises to pay every Monday.`,
      },
      { table: [['Role', 'Name', 'Phone'], [`Region ${i + 1} lead`, `Agent ${i + 1}`, `+1 555 ${String(1000 + i).padStart(4, '0')}`]] },
    );
    if (i + 1 < pages) blocks.push({ pageBreak: true });
  }
  return renderPdf(blocks, 'Generated AR playbook');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(path.join(FIXTURES_DIR, 'ar-playbook.pdf'), await renderPdf(PLAYBOOK, 'Accounts Receivable Playbook'));
  writeFileSync(path.join(FIXTURES_DIR, 'short-payment-procedure.docx'), await renderDocx(PROCEDURE));
  process.stdout.write(`wrote ar-playbook.pdf and short-payment-procedure.docx to ${FIXTURES_DIR}\n`);
}
