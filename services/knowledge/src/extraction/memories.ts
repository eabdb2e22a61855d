/**
 * Splitting page text into memories: one fact, rule or procedure each, with the exact excerpt
 * (pages[i].text.slice(start, end) === excerpt) and a stable key.
 *
 * Each page is read line by line into blocks:
 *  - headings (Markdown "#", or a short line without closing punctuation between other blocks) are
 *    not memories themselves;
 *  - a numbered list (1. / 1) / a) / Step 1:) is one procedural memory, with the line introducing it
 *    when that line ends with ":"; a bulleted list is one procedural memory when it is a list of steps
 *    (introduced by a line ending with ":" that announces steps or an action, or most items start with
 *    an instruction verb), otherwise each bullet is its own memory;
 *  - table rows (lines with "|" cells or runs of wide spacing, "Header: value; …" rows of a CSV) and
 *    contact lines are document memories, one per row (a table's header row is the context, not a memory);
 *  - paragraphs are split into sentences; a sentence continuing the previous one ("This …", "Otherwise …",
 *    "In that case …") stays with it. Greetings, sign-offs, questions and fragments under four words are
 *    dropped; a leading reporting clause ("Dana said that …") is left out of the text (not the excerpt).
 * Sentences are typed: procedural when they instruct (start with an instruction verb, "Always …",
 * "Never …"), document when they hold contact details, declarative otherwise.
 */
import { normaliseText, sha256 } from './text.js';
import type { KnowledgeType, MemoryDraft, SourcePage } from './types.js';

interface Line {
  text: string;
  start: number;
  end: number;
}

type Kind = 'blank' | 'heading' | 'numbered' | 'bullet' | 'table' | 'text';

const NUMBERED = /^\s*(?:\d{1,2}[.)]|[a-h][.)]|step\s+\d+\s*[:.)-])\s+\S/i;
const BULLET = /^\s*[-*•–▪◦]\s+\S/;
const TABLE_PIPE = /^\s*\|?.*\S\s*\|\s*\S.*$/;
const KEY_VALUES = /^[^:;]{1,40}:\s*[^;]+(?:;\s*[^:;]{1,40}:\s*[^;]*){1,}$/;
const WIDE_COLUMNS = /\S {3,}\S.* {3,}\S/;
const WIDE_GAP = /^\s{0,3}\S.*\S {3,}\S/;
const MD_TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

export const INSTRUCTION_VERBS = new Set(
  (
    'add apply approve ask assign attach call cancel check collect confirm contact create credit debit document email enter escalate ' +
    'file flag follow forward hold include inform issue log mark match notify open place post print reach record reconcile refer ' +
    'refund reject release remind reply request resend review route save schedule search select send set submit update upload ' +
    'use verify wait write always never do make give keep obtain put place obtain pull note tell'
  ).split(' '),
);

const GREETING = /^(hi|hello|dear|hey|thanks|thank you|many thanks|best|best regards|kind regards|regards|cheers|sincerely|br)\b[^.!?]{0,40}[,.!]?$/i;
const HEADER_LINE = /^(subject|from|to|cc|sent|date):\s/i;

export function splitMemories(pages: SourcePage[]): MemoryDraft[] {
  const out: MemoryDraft[] = [];
  for (const p of pages) {
    for (const span of splitPage(p.text)) {
      const excerpt = p.text.slice(span.start, span.end);
      const text = span.text ?? (span.type === 'procedural' && excerpt.includes('\n') ? excerpt.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).filter(Boolean).join('\n') : withoutReporting(excerpt.replace(/\s+/g, ' ').trim()));
      const norm = normaliseText(text);
      if (!norm) continue;
      out.push({
        key: sha256(`${p.page}:${span.start}:${norm}`),
        text,
        excerpt,
        page: p.page,
        start: span.start,
        end: span.end,
        knowledge_type: span.type,
        text_hash: sha256(norm),
      });
    }
  }
  return out;
}

const REPORTING = /^[A-Z][\w'-]+(?: [A-Z][\w'-]+)? (?:said|says|reported|reports|noted|notes|mentioned|mentions|confirmed|confirms|explained|explains|stressed|pointed out|reminded(?: everyone| us| the team| all)?) that (?!(?:it|they|he|she|we|i|this|that|these|those)\b)(\S)/i;

/** "Dana reminded everyone that late payment interest …" → "Late payment interest …": who said it is not the fact (kept when the rest starts with a pronoun). */
export function withoutReporting(text: string): string {
  const m = REPORTING.exec(text);
  if (!m) return text;
  return m[1]!.toUpperCase() + text.slice(m[0].length);
}

interface Span {
  start: number;
  end: number;
  type: KnowledgeType;
  /** cleaned text when it differs from the collapsed excerpt */
  text?: string;
}

function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  let pos = 0;
  for (const l of text.split('\n')) {
    lines.push({ text: l, start: pos, end: pos + l.length });
    pos += l.length + 1;
  }
  return lines;
}

function endsSentence(s: string): boolean {
  return /[.!?:;)"']\s*$/.test(s);
}

function kindOf(lines: Line[], i: number): Kind {
  const t = lines[i]!.text;
  const s = t.trim();
  if (!s) return 'blank';
  if (/^#{1,6}\s/.test(s)) return 'heading';
  if (MD_TABLE_RULE.test(s)) return 'table';
  if (NUMBERED.test(s)) return 'numbered';
  if (BULLET.test(s)) return 'bullet';
  if ((s.match(/\|/g) ?? []).length >= 2 && TABLE_PIPE.test(s)) return 'table';
  if (KEY_VALUES.test(s) && !/[.!?]$/.test(s)) return 'table';
  if (WIDE_COLUMNS.test(t)) return 'table';
  // two columns: one wide gap, on this line and a neighbouring one
  if (WIDE_GAP.test(t) && (WIDE_GAP.test(lines[i - 1]?.text ?? '') || WIDE_GAP.test(lines[i + 1]?.text ?? ''))) return 'table';
  // a short line without closing punctuation, standing on its own (not wrapped paragraph text)
  const wordsCount = s.split(/\s+/).length;
  const prev = i > 0 ? lines[i - 1]!.text.trim() : '';
  if (wordsCount <= 8 && !endsSentence(s) && /^[A-Z0-9]/.test(s) && (prev === '' || endsSentence(prev) || kindOf(lines, i - 1) !== 'text')) {
    const next = lines[i + 1]?.text.trim() ?? '';
    if (next === '' || /^[A-Z0-9#|>*•-]/.test(next)) return 'heading';
  }
  return 'text';
}

function firstWord(s: string): string {
  return (/[A-Za-z]+/.exec(s.replace(NUMBERED, (m) => m.slice(-1)).replace(/^\s*[-*•–▪◦]\s+/, ''))?.[0] ?? '').toLowerCase();
}

function stripMarker(s: string): string {
  return s.replace(/^\s*(?:\d{1,2}[.)]|[a-h][.)]|step\s+\d+\s*[:.)-]|[-*•–▪◦])\s+/i, '');
}

const AUXILIARIES = new Set(['is', 'are', 'was', 'were', 'has', 'have', 'had', 'can', 'cannot', 'could', 'must', 'should', 'will', 'would', 'may', 'might', 'shall', 'does', 'do', 'did']);

/** Starts with an instruction verb used as a verb ("Credit limits are reviewed …" is a statement: an auxiliary follows). */
function isInstruction(s: string): boolean {
  const body = stripMarker(s.trim());
  if (!INSTRUCTION_VERBS.has(firstWord(body))) return false;
  const next = body.toLowerCase().split(/[^a-z']+/).filter(Boolean).slice(1, 3);
  return !next.some((w) => AUXILIARIES.has(w));
}

const STEP_INTRO = /\b(steps?|procedure|process|as follows|how to|follow|checklist|workflow|in this order|to (?:apply|handle|process|resolve|escalate|set|open|record|request|issue|submit|collect|prepare|dispute|post|approve|onboard)\b)/i;

function splitPage(text: string): Span[] {
  const lines = linesOf(text);
  const kinds = lines.map((_, i) => kindOf(lines, i));
  const spans: Span[] = [];
  let i = 0;
  while (i < lines.length) {
    const k = kinds[i]!;
    if (k === 'blank' || k === 'heading') {
      i++;
      continue;
    }
    if (k === 'numbered' || k === 'bullet') {
      // the list with its continuation lines (indented or plain text lines not ending the block)
      let j = i;
      const items: number[] = [];
      while (j < lines.length) {
        const kj = kinds[j]!;
        if (kj === 'numbered' || kj === 'bullet') items.push(j);
        else if (kj === 'text' && /^\s+\S/.test(lines[j]!.text) && items.length > 0) {
          /* indented continuation */
        } else if (kj === 'text' && items.length > 0 && !endsSentence(lines[j - 1]!.text)) {
          /* wrapped continuation of the previous item */
        } else break;
        j++;
      }
      const intro = previousIntro(lines, kinds, spans, i);
      const numbered = items.some((x) => kinds[x] === 'numbered');
      const instructive = items.filter((x) => isInstruction(lines[x]!.text)).length;
      const steps = numbered || (intro !== null && STEP_INTRO.test(intro.text)) || instructive * 2 > items.length;
      if (steps && items.length >= 2) {
        const start = intro ? intro.start : lines[i]!.start;
        if (intro && spans.length > 0 && spans[spans.length - 1]!.start >= intro.start) spans.pop();
        spans.push({ start, end: lines[j - 1]!.end, type: 'procedural' });
      } else {
        items.forEach((x, n) => {
          const last = n + 1 < items.length ? items[n + 1]! - 1 : j - 1;
          const itemText = text.slice(lines[x]!.start, lines[last]!.end);
          pushSentenceSpans(spans, itemText, lines[x]!.start, { list: true });
        });
      }
      i = j;
      continue;
    }
    if (k === 'table') {
      // header row: the first table line of a block when followed by a rule or by more rows with the same shape
      let j = i;
      while (j < lines.length && kinds[j] === 'table') j++;
      const block = lines.slice(i, j);
      const rule = block.findIndex((l) => MD_TABLE_RULE.test(l.text.trim()));
      const headed = rule === 1 || (block.length >= 2 && looksLikeHeader(block[0]!.text, block[1]!.text));
      const headerCells = headed ? cells(block[0]!.text) : null;
      block.forEach((l, n) => {
        if (MD_TABLE_RULE.test(l.text.trim())) return;
        if (headed && n === 0) return;
        const cs = cells(l.text);
        const cleaned = headerCells && cs.length > 1 ? cs.map((c, ci) => (headerCells[ci] ? `${headerCells[ci]}: ${c}` : c)).filter((c) => !/:\s*$/.test(c)).join('; ') : undefined;
        const lead = l.text.length - l.text.trimStart().length;
        spans.push({ start: l.start + lead, end: l.end - (l.text.length - l.text.trimEnd().length), type: 'document', text: cleaned });
      });
      i = j;
      continue;
    }
    // paragraph: consecutive text lines
    let j = i;
    while (j < lines.length && kinds[j] === 'text') j++;
    const start = lines[i]!.start;
    const end = lines[j - 1]!.end;
    pushSentenceSpans(spans, text.slice(start, end), start, { list: false });
    i = j;
  }
  return spans.filter((s) => s.end > s.start);
}

/** A table's first row is its header when its cells are short labels (no digits, no e-mail addresses, at most three words, capitalised) and the next row has as many cells. */
function looksLikeHeader(first: string, second: string): boolean {
  const cs = cells(first);
  if (cs.length < 2 || cells(second).length !== cs.length) return false;
  return cs.every((c) => c.length > 0 && !/[\d@]/.test(c) && c.split(/\s+/).length <= 3 && /^[A-Z]/.test(c));
}

function cells(line: string): string[] {
  const t = line.trim();
  if (t.includes('|')) return t.replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  return t.split(/ {3,}|\t+/).map((c) => c.trim());
}

/** The line just before a list when it introduces it (ends with ":"). */
function previousIntro(lines: Line[], kinds: Kind[], _spans: Span[], i: number): Line | null {
  let p = i - 1;
  while (p >= 0 && kinds[p] === 'blank') p--;
  if (p < 0 || i - p > 2) return null;
  const l = lines[p]!;
  if (!/:\s*$/.test(l.text)) return null;
  if (kinds[p] === 'heading' || kinds[p] === 'text') {
    // the introducing sentence only (not the whole paragraph)
    let s = l.start;
    let q = p;
    while (q - 1 >= 0 && kinds[q - 1] === 'text' && !endsSentence(lines[q - 1]!.text)) {
      q--;
      s = lines[q]!.start;
    }
    const paragraph = lines.slice(q, p + 1).map((x) => x.text).join('\n');
    const sentences = sentenceBounds(paragraph);
    const last = sentences[sentences.length - 1];
    const start = last ? s + last[0] : l.start;
    return { text: paragraph.slice(last ? last[0] : 0), start, end: l.end };
  }
  return null;
}

const ABBREVIATIONS = new Set(['e.g', 'i.e', 'etc', 'inc', 'ltd', 'co', 'corp', 'no', 'nr', 'dr', 'mr', 'mrs', 'ms', 'approx', 'vs', 'st', 'jr', 'sr', 'dept', 'fig', 'ca', 'incl', 'min', 'max', 'p']);

/** [start, end) of each sentence of a paragraph (relative). */
export function sentenceBounds(s: string): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  const re = /[.!?]+["')\]]?(?=\s+["'([]?[A-Z0-9])/g;
  for (const m of s.matchAll(re)) {
    const before = s.slice(start, m.index).split(/\s+/).pop() ?? '';
    if (m[0] === '.' && ABBREVIATIONS.has(before.toLowerCase().replace(/\.$/, ''))) continue;
    if (m[0] === '.' && /^[A-Z]$/.test(before)) continue; // initials
    const end = m.index! + m[0].length;
    out.push([start, end]);
    start = end;
    while (start < s.length && /\s/.test(s[start]!)) start++;
  }
  if (start < s.length) out.push([start, s.length]);
  return out
    .map(([a, b]) => {
      while (a < b && /\s/.test(s[a]!)) a++;
      while (b > a && /\s/.test(s[b - 1]!)) b--;
      return [a, b] as [number, number];
    })
    .filter(([a, b]) => b > a);
}

const CONTINUATION = /^(this|that|these|those|it|they|otherwise|in that case|in this case|if so|if not|then|however|but|also|in addition|additionally|such|there)\b/i;
const CONTACT = /[\w.+-]+@[\w-]+\.[\w.]+|\+?\d[\d ()/-]{7,}\d/;

function typeOfSentence(s: string): KnowledgeType {
  const body = stripMarker(s.trim());
  if (CONTACT.test(body) && body.split(/\s+/).length < 25) return 'document';
  if (isInstruction(body)) return 'procedural';
  if (/^(if|when|before|after|once|for)\b[^,]{3,80},\s*(\w+)/i.test(body)) {
    const verb = /,\s*(\w+)/.exec(body)?.[1]?.toLowerCase() ?? '';
    if (INSTRUCTION_VERBS.has(verb)) return 'procedural';
  }
  return 'declarative';
}

function pushSentenceSpans(spans: Span[], chunk: string, offset: number, opts: { list: boolean }): void {
  const bounds = sentenceBounds(chunk);
  const merged: [number, number][] = [];
  for (const b of bounds) {
    const sentence = chunk.slice(b[0], b[1]);
    if (merged.length > 0 && (CONTINUATION.test(sentence) || /^[a-z]/.test(sentence))) merged[merged.length - 1]![1] = b[1];
    else merged.push([b[0], b[1]]);
  }
  for (const [a, b] of merged) {
    const sentence = chunk.slice(a, b);
    const flat = stripMarker(sentence.replace(/\s+/g, ' ').trim());
    if (GREETING.test(flat) || HEADER_LINE.test(flat)) continue;
    if (flat.split(' ').length < 4 && !opts.list) continue;
    if (flat.split(' ').length < 3) continue;
    if (/:$/.test(flat)) continue; // an introduction without its list
    if (/\?$/.test(flat)) continue; // a question is neither a fact nor a rule
    if ((flat.match(/\b[a-z]{2,}\b/g) ?? []).length < 2) continue; // no prose (a footer, a name, a code)
    // a list item's marker is not part of its excerpt
    const marker = /^\s*(?:[-*•–▪◦]|\d{1,2}[.)]|[a-h][.)])\s+/.exec(sentence)?.[0].length ?? 0;
    spans.push({ start: offset + a + (opts.list ? marker : 0), end: offset + b, type: typeOfSentence(sentence) });
  }
}
