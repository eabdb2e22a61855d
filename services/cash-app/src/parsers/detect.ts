/**
 * Which statement format a file is in, read from the file itself (an upload without `format`):
 *
 * - camt.053: an XML document whose namespace is `urn:iso:std:iso:20022:tech:xsd:camt.053.*`;
 *   camt.054 (debit/credit notification) by `camt.054.*`; a camt.052 account report is refused as
 *   an intraday report, another ISO 20022 message is named in the answer and refused;
 * - BAI2: the first record is a File Header, `01,`;
 * - MT940: SWIFT field tags at line starts — `:20:` (transaction reference), `:25:` (account) and
 *   `:60F:` / `:60M:` (opening balance); `:61:` lines are the entries (a statement may have none);
 *   an MT942 interim report (`:34F:` floor limit, `:13D:` date-time, `{2:I942…}`) is named and refused;
 * - JSON: a JSON object, `{` then `"` or `}` (the platform's JSON statement form);
 * - CSV: delimited lines with the same number of `;` `,` tab or `|` separators; it cannot be read
 *   without its column mapping, so it is detected only to say so.
 *
 * Only the head of the file is looked at (a UTF-8 byte order mark is skipped).
 */
import type { StatementFormat } from './types.js';

export type Detection =
  | { format: StatementFormat }
  /** Looks like delimited text: readable only with a mapping. */
  | { csv: true }
  /** Not a statement format the platform reads; `reason` says what was seen. */
  | { unknown: string };

const HEAD_BYTES = 64 * 1024;
const CAMT053_NS = /xmlns(?::[\w.-]+)?\s*=\s*["']urn:iso:std:iso:20022:tech:xsd:camt\.053\.[^"']*["']/;
const CAMT054_NS = /xmlns(?::[\w.-]+)?\s*=\s*["']urn:iso:std:iso:20022:tech:xsd:camt\.054\.[^"']*["']/;
const ISO20022_NS = /xmlns(?::[\w.-]+)?\s*=\s*["'](urn:iso:std:iso:20022:tech:xsd:([\w.]+))["']/;

function head(content: Buffer): string {
  let text = content.subarray(0, HEAD_BYTES).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text;
}

export function detectStatementFormat(content: Buffer): Detection {
  const text = head(content);
  const start = text.trimStart();
  if (start === '') return { unknown: 'the file is empty' };

  if (start.startsWith('<')) {
    if (CAMT053_NS.test(text)) return { format: 'camt053' };
    if (CAMT054_NS.test(text)) return { format: 'camt054' };
    const iso = ISO20022_NS.exec(text);
    if (iso && iso[2].startsWith('camt.052.')) {
      return { unknown: `an ISO 20022 ${iso[2]} account report (namespace ${iso[1]}): an intraday report, not a statement, so it is not imported (upload the camt.053 statement or camt.054 notification)` };
    }
    if (iso) return { unknown: `an ISO 20022 ${iso[2]} document (namespace ${iso[1]}), not a camt.053 bank-to-customer statement or camt.054 notification` };
    return { unknown: 'an XML document without the camt.053 namespace (urn:iso:std:iso:20022:tech:xsd:camt.053.*) or the camt.054 one' };
  }
  if (/^01,/.test(start)) return { format: 'bai2' };

  // MT940 before JSON: a SWIFT envelope starts with `{1:`.
  const lines = text.split(/\r\n|\n|\r/);
  const tag = (re: RegExp) => lines.some((l) => re.test(l));
  if (tag(/(^|\{4:):20:/) && tag(/^:25P?:/) && (tag(/^:34F:/) || tag(/^:13D?:/) || /\{2:[IO]942/.test(text))) {
    return { unknown: 'an MT942 interim transaction report (fields :34F: / :13D:), not an MT940 statement: MT942 is not imported' };
  }
  if (tag(/(^|\{4:):20:/) && tag(/^:25P?:/) && tag(/^:60[FM]:/)) return { format: 'mt940' };
  if (/^\{\s*("|\})/.test(start)) return { format: 'json' };

  if (looksDelimited(lines)) return { csv: true };
  return { unknown: 'none of the signs of camt.053 (XML namespace), MT940 (:20:, :25:, :60F: tags), BAI2 (01 record) or JSON' };
}

/** At least two non-empty lines with the same (non-zero) count of one separator outside quotes. */
function looksDelimited(lines: string[]): boolean {
  const sample = lines.filter((l) => l.trim() !== '').slice(0, 20);
  if (sample.length < 2) return false;
  return [';', ',', '\t', '|'].some((sep) => {
    const counts = sample.map((l) => separators(l, sep));
    return counts[0] > 0 && counts.every((c) => c === counts[0]);
  });
}

function separators(line: string, sep: string): number {
  let n = 0;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === sep && !quoted) n++;
  }
  return n;
}
