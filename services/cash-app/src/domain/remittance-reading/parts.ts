/**
 * Which parts of an inbox message are remittance advice, read: the body (its HTML when it has one,
 * so tables keep their columns) and each readable attachment (PDF, CSV, XLSX, HTML, text via the
 * kernel's attachmentText). Pure once the attachments' bytes are read.
 */
import { attachmentKind, attachmentText, htmlToText } from '@rp/platform';
import { readAdvice, type AdviceReading } from './read.js';
import { numberTokens, strippedKey, type KnownNumbers } from './rows.js';

export interface PartText {
  /** `body` or `attachment:<position>` (the remittance's source_part) */
  part: string;
  text: string;
  rows: string[][] | null;
  kind: string;
  attachment: { position: number; name: string; mime_type: string; size: number; object_key: string } | null;
  /** the body's other rendering (its plain text beside its HTML): read too, the one giving more lines kept */
  alternative?: string;
}

/** A part that could not be read, and why (`unsupported_attachment`: TNEF, or a type not read as text; `unreadable_attachment`). */
export interface PartProblem {
  part: string;
  code: 'unsupported_attachment' | 'unreadable_attachment' | 'attachment_missing';
  detail: string;
}

/** The attachments whose type is read as text, or reported unsupported (TNEF); others (images, archives…) are not advice. */
export function readableAttachment(a: { mime_type: string; name: string }): boolean {
  const kind = attachmentKind(a.mime_type, a.name);
  return kind !== null;
}

/** The text of an attachment's bytes, or the problem reading it. */
export async function attachmentPart(
  a: { position: number; name: string; mime_type: string; size: number; object_key: string },
  bytes: Uint8Array | null,
): Promise<PartText | PartProblem> {
  const part = `attachment:${a.position}`;
  if (!bytes) return { part, code: 'attachment_missing', detail: `${a.name}: the stored file is missing` };
  const t = await attachmentText(bytes, a.mime_type, a.name);
  if (t.kind === null) return { part, code: t.unsupported === 'unreadable' ? 'unreadable_attachment' : 'unsupported_attachment', detail: `${a.name}: ${t.detail}` };
  return { part, text: t.text, rows: t.rows, kind: t.kind, attachment: a };
}

/**
 * Where the quoted history of a reply starts (`On … wrote:`, `Am … schrieb …:`, `Le … a écrit :`,
 * `Op … schreef …:`, `El … escribió:`, `-----Original Message-----`): what follows is what the
 * sender answered (often our own reminder listing the open invoices), not their advice. Forwarded
 * messages are kept: their text is the advice passed on.
 */
const REPLY_QUOTE = /^[ \t>]*(?:(?:On|Am|Le|Op|El)\b.{3,200}(?:wrote|schrieb|a écrit|schreef|escribió)\s*:?|-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Oorspronkelijk bericht|Mensaje original)\s*-{2,})[ \t]*$/im;

export function withoutReplyQuote(text: string): string {
  const m = REPLY_QUOTE.exec(text);
  return m && m.index > 0 ? text.slice(0, m.index) : text;
}

/**
 * The body: its HTML as text when it has HTML (tables keep their columns), with its plain text as
 * the alternative (the inbox's text also holds forwarded messages the HTML may lack).
 */
export function bodyPart(text: string, html: string | null): PartText {
  if (!html) return { part: 'body', text: withoutReplyQuote(text), rows: null, kind: 'text', attachment: null };
  return { part: 'body', text: withoutReplyQuote(htmlToText(html)), rows: null, kind: 'html', attachment: null, alternative: withoutReplyQuote(text) };
}

/** Most number-like words of a message looked up in the ledger. */
const MAX_CANDIDATES = 5000;

/** The words of the parts that may be invoice numbers, as written and without a letter prefix, for one ledger lookup. */
export function candidateNumbers(parts: readonly PartText[]): string[] {
  const out = new Set<string>();
  for (const p of parts) {
    const texts = p.rows ? p.rows.flat() : p.text.split('\n');
    for (const t of texts) {
      for (const tok of numberTokens(t, [])) {
        if (out.size >= MAX_CANDIDATES) return [...out];
        out.add(tok.text);
        const bare = tok.text.replace(/^#/, '');
        out.add(bare);
        const stripped = strippedKey(bare);
        if (stripped) out.add(stripped);
      }
    }
  }
  return [...out];
}

export interface PartReading extends PartText {
  reading: AdviceReading;
}

/**
 * Read every part and keep those that are advice: lines read, and the part's wording or columns
 * say advice or its numbers are the ledger's. The body is dropped when an attachment holds the
 * advice and the body names no invoice the attachments do not (a covering note repeating them).
 */
export function adviceParts(parts: readonly PartText[], known: KnownNumbers, openAmounts?: ReadonlyMap<string, string>): PartReading[] {
  const read = parts.map((p) => {
    const reading = readAdvice({ text: p.text, rows: p.rows }, { known, openAmounts });
    if (!p.alternative) return { ...p, reading };
    const other = readAdvice({ text: p.alternative }, { known, openAmounts });
    return other.lines.length > reading.lines.length ? { ...p, text: p.alternative, kind: 'text', reading: other } : { ...p, reading };
  });
  const knownValues = new Set(known.values());
  const advice = read.filter((p) => p.reading.lines.length > 0 && (p.reading.is_advice || p.reading.lines.some((l) => knownValues.has(l.invoice_number))));
  const fromFiles = advice.filter((p) => p.part !== 'body');
  if (fromFiles.length === 0) return advice;
  const fileNumbers = new Set(fromFiles.flatMap((p) => p.reading.lines.map((l) => l.invoice_number)));
  return advice.filter((p) => p.part !== 'body' || p.reading.lines.some((l) => !fileNumbers.has(l.invoice_number)));
}
