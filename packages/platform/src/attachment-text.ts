/**
 * The readable content of an email attachment or body part (pure: bytes in, text and table rows
 * out), shared by the inbox (admin: customer matching and categories read numbers and names from
 * attachments) and cash application (remittance advice read from PDF, CSV and XLSX files), so both
 * read a file the same way.
 *
 * - PDF (`unpdf`): the text of every page, pages separated by a blank line; at most `maxPages`.
 * - CSV (`csv-parse`; `,` `;` or tab, whichever the first line uses most): `rows`, and `text` as
 *   the rows joined by tabs.
 * - XLSX (`exceljs`): the rows of every worksheet (cells as displayed text), worksheets one after
 *   the other; `text` as the rows joined by tabs.
 * - HTML (`html-to-text`, tables as aligned rows): `text`.
 * - Plain text: `text` as is (BOM dropped, CRLF → LF).
 * - TNEF (`winmail.dat`, application/ms-tnef) is reported `unsupported: 'tnef'`; other types
 *   (images, archives…) `unsupported: 'type'`; a file that fails to parse `unsupported: 'unreadable'`.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { convert } from 'html-to-text';
import { extractText, getDocumentProxy } from 'unpdf';

export type AttachmentKind = 'pdf' | 'csv' | 'xlsx' | 'html' | 'text';

export type AttachmentText =
  | { kind: AttachmentKind; text: string; rows: string[][] | null }
  | { kind: null; unsupported: 'tnef' | 'type' | 'unreadable'; detail: string };

export interface AttachmentTextLimits {
  /** PDF pages read (later pages ignored) */
  maxPages: number;
  /** characters of text kept */
  maxChars: number;
  /** table rows kept (CSV, XLSX) */
  maxRows: number;
}

export const DEFAULT_ATTACHMENT_TEXT_LIMITS: AttachmentTextLimits = { maxPages: 50, maxChars: 1_000_000, maxRows: 20_000 };

/** Which reader a file gets, by its MIME type first and its name's extension second. */
export function attachmentKind(mimeType: string, name: string | null): AttachmentKind | 'tnef' | null {
  const mime = mimeType.toLowerCase().split(';')[0]!.trim();
  const ext = (name ?? '').toLowerCase().match(/\.([a-z0-9]+)$/)?.[1] ?? '';
  if (mime === 'application/ms-tnef' || mime === 'application/vnd.ms-tnef' || (name ?? '').toLowerCase() === 'winmail.dat') return 'tnef';
  if (mime === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (mime === 'text/csv' || mime === 'application/csv' || ext === 'csv') return 'csv';
  if (mime === 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' || ext === 'xlsx') return 'xlsx';
  if (mime === 'text/html' || ext === 'html' || ext === 'htm') return 'html';
  if (mime === 'text/plain' || ext === 'txt') return 'text';
  return null;
}

export function cleanText(s: string): string {
  return s
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** HTML as text: no word wrap, links without their targets, images and scripts dropped, tables as aligned rows. */
export function htmlToText(html: string): string {
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, colSpacing: 3, maxColumnWidth: 200 } },
    ],
  });
  return cleanText(text);
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes);
}

function rowsText(rows: string[][]): string {
  return rows.map((r) => r.join('\t')).join('\n');
}

function csvRows(text: string, maxRows: number): string[][] {
  const body = text.replace(/^\uFEFF/, '');
  const first = body.split(/\r?\n/, 1)[0] ?? '';
  const counts: [string, number][] = [',', ';', '\t'].map((d) => [d, first.split(d).length - 1]);
  const delimiter = counts.sort((a, b) => b[1] - a[1])[0]![0];
  const rows = parseCsv(body, { delimiter, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true, to: maxRows }) as string[][];
  return rows;
}

async function xlsxRows(bytes: Uint8Array, maxRows: number): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as unknown as ArrayBuffer);
  const rows: string[][] = [];
  workbook.eachSheet((sheet) => {
    sheet.eachRow({ includeEmpty: false }, (row) => {
      if (rows.length >= maxRows) return;
      const cells: string[] = [];
      for (let c = 1; c <= row.cellCount; c++) cells.push((row.getCell(c).text ?? '').trim());
      rows.push(cells);
    });
  });
  return rows;
}

async function pdfText(bytes: Uint8Array, maxPages: number): Promise<string> {
  // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    return text.slice(0, maxPages).map(cleanText).join('\n\n');
  } finally {
    await pdf.destroy();
  }
}

/** The attachment's text (and table rows for CSV and XLSX), or why it has none. */
export async function attachmentText(bytes: Uint8Array, mimeType: string, name: string | null, limits: AttachmentTextLimits = DEFAULT_ATTACHMENT_TEXT_LIMITS): Promise<AttachmentText> {
  const kind = attachmentKind(mimeType, name);
  if (kind === 'tnef') return { kind: null, unsupported: 'tnef', detail: 'TNEF (winmail.dat) attachments are not supported; ask the sender to send the files as ordinary attachments.' };
  if (kind === null) return { kind: null, unsupported: 'type', detail: `${mimeType} is not read as text.` };
  try {
    const clip = (t: string) => t.slice(0, limits.maxChars);
    switch (kind) {
      case 'pdf':
        return { kind, text: clip(await pdfText(bytes, limits.maxPages)), rows: null };
      case 'csv': {
        const rows = csvRows(decode(bytes), limits.maxRows);
        return { kind, text: clip(rowsText(rows)), rows };
      }
      case 'xlsx': {
        const rows = await xlsxRows(bytes, limits.maxRows);
        return { kind, text: clip(rowsText(rows)), rows };
      }
      case 'html':
        return { kind, text: clip(htmlToText(decode(bytes))), rows: null };
      case 'text':
        return { kind, text: clip(cleanText(decode(bytes))), rows: null };
    }
  } catch (err) {
    return { kind: null, unsupported: 'unreadable', detail: `the ${kind.toUpperCase()} file could not be read: ${err instanceof Error ? err.message : String(err)}` };
  }
}
