/**
 * Text with page numbers from an uploaded file (pure: bytes in, pages out). Page numbering per format:
 *  - PDF (`unpdf`): one SourcePage per PDF page, numbered from 1.
 *  - DOCX (`mammoth` to HTML, then the HTML rendering below, so numbered lists keep their numbers and
 *    tables their rows): one page.
 *  - EML (`postal-mime`): page 1 is the newest message (subject and body), pages 2… the earlier
 *    messages quoted in the thread, newest first, with their quote markers ("> ") removed.
 *  - HTML (`html-to-text`, no word wrap, links and images dropped, tables as rows): one page.
 *  - CSV (`csv-parse`, first row = headers): one page, each data row one line "Header: value; …"
 *    (empty cells left out).
 *  - Plain text and Markdown: one page, as is (UTF-8, BOM dropped, CRLF → LF).
 */
import { extractText, getDocumentProxy } from 'unpdf';
import mammoth from 'mammoth';
import PostalMime from 'postal-mime';
import { convert } from 'html-to-text';
import { parse as parseCsv } from 'csv-parse/sync';
import JSZip from 'jszip';
import { cleanText } from '@rp/platform';
import { DEFAULT_EXTRACTION_LIMITS, ExtractionLimitError, type ExtractionLimits, type SourcePage, type SupportedMimeType } from './types.js';

export class UnreadableDocumentError extends Error {
  constructor(mime: string, cause: unknown) {
    super(`the ${mime} document could not be read: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'UnreadableDocumentError';
  }
}

/**
 * The document's pages. A PDF of more than `limits.pdfPages` pages, or a DOCX whose zip entries inflate
 * to more than `limits.docxInflatedBytes` (as declared in the zip, or as actually inflated: the inflation
 * stops at the limit), throws ExtractionLimitError before its text is extracted.
 */
export async function extractPages(bytes: Uint8Array, mime: SupportedMimeType, limits: Pick<ExtractionLimits, 'pdfPages' | 'docxInflatedBytes'> = DEFAULT_EXTRACTION_LIMITS): Promise<SourcePage[]> {
  try {
    switch (mime) {
      case 'application/pdf':
        return await pdfPages(bytes, limits.pdfPages);
      case 'application/vnd.openxmlformats-officedocument.wordprocessingml.document':
        await checkInflatedSize(bytes, limits.docxInflatedBytes);
        return await docxPages(bytes);
      case 'message/rfc822':
        return await emailPages(bytes);
      case 'text/html':
        return [{ page: 1, text: htmlText(decodeUtf8(bytes)) }];
      case 'text/csv':
        return [{ page: 1, text: csvText(decodeUtf8(bytes)) }];
      case 'text/plain':
      case 'text/markdown':
        return [{ page: 1, text: cleanText(decodeUtf8(bytes)) }];
    }
  } catch (err) {
    if (err instanceof ExtractionLimitError) throw err;
    throw new UnreadableDocumentError(mime, err);
  }
  throw new UnreadableDocumentError(mime, new Error('unsupported type'));
}

function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes);
}

async function pdfPages(bytes: Uint8Array, maxPages: number): Promise<SourcePage[]> {
  // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    if (pdf.numPages > maxPages) throw new ExtractionLimitError('too_many_pages', `the PDF has ${pdf.numPages} pages; at most ${maxPages} are extracted. Split it into smaller documents.`);
    const { text } = await extractText(pdf, { mergePages: false });
    return text.map((t, i) => ({ page: i + 1, text: cleanText(t) }));
  } finally {
    await pdf.destroy();
  }
}

/** Internal field of a JSZip entry: the uncompressed size its zip headers declare. */
interface ZipEntryData {
  _data?: { uncompressedSize?: number };
}

/** JSZip's chunked inflation stream of an entry (public in its docs as `internalStream`, absent from its typings). */
interface ZipEntryStreams {
  internalStream(type: 'uint8array'): ZipStream;
}

interface ZipStream {
  on(event: 'data', cb: (chunk: Uint8Array) => void): ZipStream;
  on(event: 'error', cb: (err: Error) => void): ZipStream;
  on(event: 'end', cb: () => void): ZipStream;
  pause(): ZipStream;
  resume(): ZipStream;
}

/**
 * Refuses a zip (DOCX) that inflates to more than `max` bytes: first by the sizes its central directory
 * declares, then by inflating every entry and counting the bytes as they come, stopping at the limit (a
 * zip bomb may declare small sizes; nothing beyond `max` is ever held).
 */
export async function checkInflatedSize(bytes: Uint8Array, max: number): Promise<void> {
  const tooLarge = (n: number | string) => new ExtractionLimitError('docx_too_large', `the DOCX inflates to ${n} bytes; at most ${max} are read. Remove embedded media or split the document.`);
  const zip = await JSZip.loadAsync(bytes);
  const entries = Object.values(zip.files).filter((f) => !f.dir);
  const declared = entries.reduce((sum, f) => sum + ((f as unknown as ZipEntryData)._data?.uncompressedSize ?? 0), 0);
  if (declared > max) throw tooLarge(declared);
  let total = 0;
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const stream = (entry as unknown as ZipEntryStreams).internalStream('uint8array');
      stream
        .on('data', (chunk) => {
          total += chunk.length;
          if (total > max) {
            stream.pause(); // inflation stops here: nothing beyond the limit is produced
            reject(tooLarge(`more than ${max}`));
          }
        })
        .on('error', reject)
        .on('end', () => resolve())
        .resume();
    });
  }
}

async function docxPages(bytes: Uint8Array): Promise<SourcePage[]> {
  const { value } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  return [{ page: 1, text: htmlText(value) }];
}

export function htmlText(html: string): string {
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'h5', options: { uppercase: false } },
      { selector: 'h6', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, colSpacing: 3 } },
    ],
  });
  return cleanText(text);
}

export function csvText(csv: string): string {
  const rows = parseCsv(csv.replace(/^\uFEFF/, ''), { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  if (rows.length === 0) return '';
  const [header, ...data] = rows;
  return data
    .map((row) =>
      row
        .map((v, i) => (v ? `${header![i] || `Column ${i + 1}`}: ${v.replace(/\s+/g, ' ')}` : null))
        .filter((x): x is string => x !== null)
        .join('; '),
    )
    .filter((l) => l.length > 0)
    .join('\n');
}

const QUOTE_HEADER = /^(On .{4,200} wrote:|-{2,}\s*Original Message\s*-{2,}|From: .+)$/;

async function emailPages(bytes: Uint8Array): Promise<SourcePage[]> {
  const email = await PostalMime.parse(bytes);
  const body = email.text ?? (email.html ? htmlText(email.html) : '');
  const messages = splitThread(cleanText(body));
  const subject = email.subject ? `Subject: ${email.subject}\n\n` : '';
  return messages.map((m, i) => ({ page: i + 1, text: i === 0 ? cleanText(subject + m) : m })).filter((p) => p.text.length > 0);
}

/** The newest message and the quoted earlier ones (quote markers removed), newest first. */
export function splitThread(body: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let depth = 0;
  const flush = () => {
    const t = cleanText(current.join('\n'));
    if (t) out.push(t);
    current = [];
  };
  for (const raw of body.split('\n')) {
    const m = /^((?:>\s?)*)(.*)$/.exec(raw)!;
    const d = (m[1]!.match(/>/g) ?? []).length;
    const line = m[2]!;
    if (d > depth) {
      flush();
      depth = d;
    }
    const last = [...current].reverse().find((l) => l.trim()) ?? '';
    const inHeaderBlock = /^-{2,}\s*Original Message|^(From|To|Cc|Sent|Date|Subject):\s/i.test(last.trim());
    if (QUOTE_HEADER.test(line.trim()) && current.some((l) => l.trim()) && !inHeaderBlock) {
      flush();
    }
    current.push(line);
  }
  flush();
  // drop the "On … wrote:" attribution lines left at the end of a message
  return out.map((m) => cleanText(m.split('\n').filter((l) => !/^On .{4,200} wrote:$/.test(l.trim())).join('\n'))).filter((m) => m.length > 0);
}
