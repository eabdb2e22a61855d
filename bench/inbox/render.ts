/**
 * A corpus message rendered to the bytes a mail server receives: MIME by nodemailer's MailComposer
 * (multipart boundaries derived from the Message-ID so the text parts are the same on every run),
 * PDFs drawn with pdf-lib (fixed creation dates), XLSX written with exceljs. DSNs and the other
 * hand-written messages are taken as they are.
 */
import { createHash } from 'node:crypto';
import ExcelJS from 'exceljs';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { PDFDocument, StandardFonts, type PDFFont } from 'pdf-lib';
import type { Addr, AttachmentSpec, MessageSpec, PdfSpec, XlsxSpec } from './types.js';

const FIXED = new Date('2026-11-20T08:00:00Z');
const FONTS: Record<PdfSpec['font'], [StandardFonts, StandardFonts]> = {
  Helvetica: [StandardFonts.Helvetica, StandardFonts.HelveticaBold],
  Courier: [StandardFonts.Courier, StandardFonts.CourierBold],
  TimesRoman: [StandardFonts.TimesRoman, StandardFonts.TimesRomanBold],
};

export async function renderPdf(spec: PdfSpec): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setCreationDate(FIXED);
  doc.setModificationDate(FIXED);
  doc.setProducer('bench/inbox');
  doc.setCreator('bench/inbox');
  const [regular, bold] = await Promise.all(FONTS[spec.font].map((f) => doc.embedFont(f))) as [PDFFont, PDFFont];
  const margin = 50;
  const lineHeight = spec.size * 1.6;
  let page = doc.addPage([595, 842]);
  let y = 842 - margin;
  for (const row of spec.rows) {
    if (y < margin + lineHeight) {
      page = doc.addPage([595, 842]);
      y = 842 - margin;
    }
    for (const cell of row) {
      const font = cell.bold ? bold : regular;
      const x = cell.right ? margin + cell.x - font.widthOfTextAtSize(cell.text, spec.size) : margin + cell.x;
      page.drawText(cell.text, { x, y, size: spec.size, font });
    }
    y -= lineHeight;
  }
  return doc.save();
}

export async function renderXlsx(spec: XlsxSpec): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  wb.created = FIXED;
  wb.modified = FIXED;
  wb.creator = 'bench/inbox';
  const ws = wb.addWorksheet(spec.sheet);
  for (const values of spec.rows) {
    const row = ws.addRow(values);
    row.eachCell((cell) => {
      if (typeof cell.value === 'number') cell.numFmt = spec.numFmt;
    });
  }
  return Buffer.from(await wb.xlsx.writeBuffer());
}

const addr = (a: Addr) => (a.name ? { name: a.name, address: a.address } : a.address);

async function renderAttachment(a: AttachmentSpec): Promise<Mail.Attachment> {
  if (a.pdf) return { filename: a.filename, contentType: a.contentType, content: Buffer.from(await renderPdf(a.pdf)) };
  if (a.xlsx) return { filename: a.filename, contentType: a.contentType, content: await renderXlsx(a.xlsx) };
  if (a.eml) return { filename: a.filename, contentType: 'message/rfc822', content: await renderMessage(a.eml) };
  return { filename: a.filename, contentType: a.contentType, content: Buffer.from(a.text ?? '', 'utf8') };
}

/** The raw RFC 5322 bytes of a message. */
export async function renderMessage(spec: MessageSpec): Promise<Buffer> {
  if (spec.raw) return Buffer.from(spec.raw, 'utf8');
  const options: Mail.Options & { baseBoundary: string } = {
    messageId: spec.messageId,
    date: new Date(spec.date),
    from: addr(spec.from),
    to: spec.to.map(addr),
    ...(spec.cc ? { cc: spec.cc.map(addr) } : {}),
    subject: spec.subject,
    ...(spec.text !== undefined ? { text: spec.text } : {}),
    ...(spec.html !== undefined ? { html: spec.html } : {}),
    ...(spec.inReplyTo ? { inReplyTo: spec.inReplyTo } : {}),
    ...(spec.references ? { references: spec.references } : {}),
    headers: spec.headers ?? {},
    attachments: await Promise.all((spec.attachments ?? []).map(renderAttachment)),
    baseBoundary: createHash('sha256').update(spec.messageId).digest('hex').slice(0, 16),
  };
  return new MailComposer(options).compile().build();
}
