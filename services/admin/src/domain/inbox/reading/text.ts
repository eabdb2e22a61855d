/**
 * Text preparation for the readers: the sender's own words (quoted replies cut, forwarded content
 * kept, since a forwarded advice is the sender's message) and small normalisations. Pure.
 */

/** Lines that open a quoted earlier message in a reply, in the five languages the readers know. */
const REPLY_HEADER_PATTERNS: RegExp[] = [
  /^\s*On\b.{0,200}\bwrote:\s*$/i,
  /^\s*Am\b.{0,200}\bschrieb\b.{0,200}:\s*$/i,
  /^\s*Le\b.{0,200}\ba écrit\s*:\s*$/i,
  /^\s*El\b.{0,200}\bescribió:\s*$/i,
  /^\s*Op\b.{0,200}\bschreef\b.{0,200}:\s*$/i,
  /^\s*-{2,}\s*(Original Message|Ursprüngliche Nachricht|Originalnachricht|Message d'origine|Mensaje original|Oorspronkelijk bericht)\s*-{0,}\s*$/i,
];

/** Outlook-style quoted header block: "From: …" followed closely by "Sent:"/"Date:" in any language. */
const QUOTE_FROM = /^\s*\*?(From|Von|De|Van)\s*:\*?\s+\S/i;
const QUOTE_SENT = /^\s*\*?(Sent|Date|Gesendet|Datum|Envoyé|Enviado|Fecha|Verzonden|Verstuurd)\s*:\*?\s/i;

/** Lines that open a forwarded message; its content is kept (it is what the sender passes on). */
export const FORWARD_MARKER =
  /^\s*(-{2,}\s*)?(Forwarded message|Begin forwarded message|Weitergeleitete Nachricht|Message transféré|Mensaje reenviado|Doorgestuurd bericht|Forwarded by)\b/i;

export const FORWARD_SUBJECT = /^\s*(?:(?:re|aw|sv|antw)\s*:\s*)*(fwd?|fw|wg|tr|rv|doorst|enc|i)\s*:/i;

/** Normalises line endings, non-breaking spaces and runs of blank lines. */
export function normalize(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u00a0\u202f\u2007]/g, ' ')
    .replace(/[\u200b\ufeff]/g, '')
    .replace(/\n{3,}/g, '\n\n');
}

/**
 * The sender's own words: the text above the first quoted earlier message, with `>` quoted lines
 * dropped. A forwarded message's text stays (forwarding an advice is the sender's statement).
 */
export function ownWords(text: string, subject = ''): string {
  const lines = normalize(text).split('\n');
  const kept: string[] = [];
  // "Fwd:", "FW:", "WG:", "TR:", "RV:", "Doorst:": a header block below is the forwarded message, not a quote
  let forwarded = FORWARD_SUBJECT.test(subject);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (FORWARD_MARKER.test(line)) forwarded = true;
    if (!forwarded) {
      if (REPLY_HEADER_PATTERNS.some((p) => p.test(line))) break;
      // "On Mon, 5 Dec 2026 at 10:00, Jane <jane@x.test>" + "wrote:" on the next line
      if (/^\s*(On|Am|Le|El|Op)\b.{5,200}$/.test(line) && /^\s*.{0,80}(wrote|schrieb|a écrit|escribió|schreef)\s*:\s*$/i.test(lines[i + 1] ?? '')) break;
      if (QUOTE_FROM.test(line) && lines.slice(i + 1, i + 5).some((l) => QUOTE_SENT.test(l))) break;
    }
    if (/^\s*>/.test(line)) continue;
    kept.push(line);
  }
  return kept.join('\n').trim();
}

/** Lower-cases and strips diacritics so phrase patterns match "Büro"/"buro", "réglé"/"regle" alike. */
export function fold(text: string): string {
  // character by character, so a position in the folded text is the same position in the original
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    const base = lower.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    const folded = base.length === ch.length ? base : ch.length === lower.length ? lower : ch;
    out += folded === 'ß' ? 's' : /[’‘`´]/.test(folded) ? "'" : folded;
  }
  return out;
}

/** Splits text into sentences (and lines), keeping each one's original text. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of normalize(text).split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    // split after . ! ? when followed by space + capital/digit, but not inside numbers or abbreviations like "Nr." "No."
    const parts = trimmed.split(/(?<=[!?])\s+|(?<=(?<!\b(?:[Nn]r|[Nn]o|[Ii]nv|vs|ca|z\.B|u\.a|bzw|[Ss]t|n°|nº|approx|etc|[Aa]rt|[Rr]ef)|\d)\.)\s+(?=[A-ZÄÖÜÉÈÀÁÍÓÚÑ])/);
    for (const p of parts) if (p.trim()) out.push(p.trim());
  }
  return out;
}
