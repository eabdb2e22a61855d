/**
 * The character encoding of a statement file. Bank files are often not UTF-8: Windows-1252 (Western
 * Europe), Windows-1250 / ISO-8859-2 (Central Europe), CP852 (DOS Latin-2, still sent by East-European
 * banks' host systems). Read in this order:
 *
 * 1. `charset` given by the client (the upload's `charset` form field): used as given;
 * 2. a byte order mark (UTF-8, UTF-16 LE/BE);
 * 3. an XML declaration's `encoding="…"` (camt);
 * 4. valid UTF-8 (which includes plain ASCII): UTF-8;
 * 5. otherwise each candidate (windows-1252, windows-1250, iso-8859-2, cp852) decodes the lines that
 *    have non-ASCII bytes, and the one whose non-ASCII characters are most often letters wins (a wrong
 *    single-byte code page turns letters into symbols, box-drawing characters or unassigned bytes);
 *    ties are broken by the chardet detector's confidence (statistical language models), then by the
 *    order above.
 *
 * The text is handed to the parsers as UTF-8 bytes.
 */
import { isUtf8 } from 'node:buffer';
import { analyse } from 'chardet';
import iconv from 'iconv-lite';

export const DETECTED_CHARSETS = ['windows-1252', 'windows-1250', 'iso-8859-2', 'cp852'] as const;

/** Whether iconv-lite can decode `name` (e.g. `windows-1250`, `cp852`, `latin1`). */
export function charsetSupported(name: string): boolean {
  return iconv.encodingExists(name);
}


/** Lines (up to 256 KiB) that contain a byte ≥ 0x80: what tells the code pages apart. */
function nonAsciiSample(content: Buffer): Buffer {
  const parts: Buffer[] = [];
  let size = 0;
  let start = 0;
  while (start < content.length && size < 256 * 1024) {
    let end = content.indexOf(10, start);
    if (end < 0) end = content.length;
    const line = content.subarray(start, end + 1);
    if (line.some((b) => b >= 0x80)) {
      parts.push(line);
      size += line.length;
    }
    start = end + 1;
  }
  return Buffer.concat(parts);
}

/**
 * +1 for each non-ASCII letter, -2 for any other non-ASCII character (symbol, box drawing, unassigned)
 * and for an upper-case letter right after a lower-case one (`SociÚtÚ`: a wrong code page's capital).
 */
function letterScore(text: string): number {
  let score = 0;
  let prev = '';
  for (const ch of text) {
    if (ch.charCodeAt(0) >= 0x80) {
      const letter = /\p{L}/u.test(ch);
      score += letter && !(/\p{Lu}/u.test(ch) && /\p{Ll}/u.test(prev)) ? 1 : -2;
    }
    prev = ch;
  }
  return score;
}

function detect(content: Buffer): string {
  const sample = nonAsciiSample(content);
  const confidence = new Map<string, number>();
  for (const m of analyse(sample)) {
    const name = m.name.toLowerCase() === 'iso-8859-1' ? 'windows-1252' : m.name.toLowerCase();
    confidence.set(name, Math.max(confidence.get(name) ?? 0, m.confidence));
  }
  const ranked = DETECTED_CHARSETS.map((name, order) => ({ name, order, score: letterScore(iconv.decode(sample, name)), confidence: confidence.get(name) ?? 0 }));
  ranked.sort((a, b) => b.score - a.score || b.confidence - a.confidence || a.order - b.order);
  return ranked[0].name;
}

export interface DecodedText {
  /** The file's text as UTF-8 bytes (the content itself when it was UTF-8 without a BOM). */
  utf8: Buffer;
  /** The encoding it was read in, e.g. `UTF-8`, `windows-1250`, `cp852`. */
  encoding: string;
}

/** Decodes `content` (see the module comment); `charset` overrides detection (check it with charsetSupported). */
export function decodeStatementText(content: Buffer, charset?: string | null): DecodedText {
  const as = (encoding: string): DecodedText => ({ utf8: Buffer.from(iconv.decode(content, encoding, { stripBOM: true }), 'utf8'), encoding });
  if (charset) return /^utf-?8$/i.test(charset) ? { utf8: content, encoding: 'UTF-8' } : as(charset);
  if (content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf) return { utf8: content, encoding: 'UTF-8' };
  if (content[0] === 0xff && content[1] === 0xfe) return as('utf-16le');
  if (content[0] === 0xfe && content[1] === 0xff) return as('utf-16be');
  const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(content.subarray(0, 200).toString('latin1'))?.[1];
  if (declared && !/^utf-?8$/i.test(declared) && charsetSupported(declared)) return as(declared);
  if (isUtf8(content)) return { utf8: content, encoding: 'UTF-8' };
  return as(detect(content));
}
