/**
 * Amounts and dates as payers write them in remittance advice, read exactly (decimal strings,
 * never floats): `1.234,56` (DE, NL, ES), `1,234.56` (EN), `1 234,56` (FR, with a space, a no-break
 * space or a narrow no-break space), `1'234.56` (CH), `1234.56`, `1234,56`, with a currency code or
 * symbol before or after, a leading or trailing minus or parentheses for a negative amount.
 *
 * A lone separator followed by exactly three digits (`1,234`, `1.234`) is ambiguous: it is read as
 * the decimal mark only when the document's other amounts show that mark (`hint`), else as a
 * thousands separator (the way such a figure is meant in nearly every advice).
 */
import { isIsoCurrency, Money } from '@rp/platform';

/** The decimal mark a document uses, when its unambiguous amounts show one. */
export type DecimalMark = '.' | ',' | null;

const SYMBOLS: Record<string, string> = { '€': 'EUR', $: 'USD', '£': 'GBP', '¥': 'JPY', 'CHF': 'CHF', 'Fr.': 'CHF', 'zł': 'PLN', 'kr': 'SEK' };

/** A currency named by a code or symbol (`EUR`, `€`, `US$`), or null. */
export function currencyOf(raw: string): string | null {
  const t = raw.trim();
  if (/^[A-Z]{3}$/.test(t) && isIsoCurrency(t)) return t;
  if (t === 'US$') return 'USD';
  return SYMBOLS[t] ?? null;
}

const SPACE = '[ \\u00A0\\u202F]';
/**
 * One amount token: digits with thousands groups (`.` `,` `'` `’` or a space kind) and an optional
 * decimal part, or plain digits with a decimal part. Integers without any separator are not amounts
 * here (they are invoice numbers, quantities or years far more often).
 */
const NUMBER = `(?:\\d{1,3}(?:(?:[.,'’]|${SPACE})\\d{3})+(?:[.,]\\d{1,4})?|\\d+[.,]\\d{1,4})`;
const AMOUNT_RE = new RegExp(`(?<![\\w.,'’/-])(\\(?)([-−]?)(${NUMBER})(?![\\d])(-?)(\\)?)(?![.,]?\\d)(?![\\w/])(?!\\s?%)`, 'g');

export interface AmountToken {
  /** exact decimal string, negative when written so */
  value: string;
  /** the token as written */
  raw: string;
  index: number;
  end: number;
}

/** The decimal mark a token shows without doubt, or null when it does not show one. */
function unambiguousMark(num: string): '.' | ',' | null {
  const hasDot = num.includes('.');
  const hasComma = num.includes(',');
  if (hasDot && hasComma) return num.lastIndexOf('.') > num.lastIndexOf(',') ? '.' : ',';
  const sep = hasDot ? '.' : hasComma ? ',' : null;
  if (!sep) return null;
  const parts = num.split(sep);
  if (parts.length > 2) return null; // repeated: a thousands separator, the mark unseen
  if (parts[1]!.length !== 3) return sep;
  return /['’ \u00A0\u202F]/.test(parts[0]!) ? sep : null;
}

/** The decimal mark most of `texts`' unambiguous amounts use (ties and none: null). */
export function decimalMarkOf(texts: readonly string[]): DecimalMark {
  let dot = 0;
  let comma = 0;
  for (const text of texts) {
    for (const m of text.matchAll(AMOUNT_RE)) {
      const mark = unambiguousMark(m[3]!);
      if (mark === '.') dot += 1;
      else if (mark === ',') comma += 1;
    }
  }
  return dot > comma ? '.' : comma > dot ? ',' : null;
}

/** The number written as `num` (no sign, no currency) as an exact decimal string, or null when it is not a well-formed amount. */
export function parseNumber(num: string, hint: DecimalMark = null): string | null {
  const s = num.replace(/[\u00A0\u202F]/g, ' ').trim();
  if (!/^\d[\d.,'’ ]*$/.test(s)) return null;
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  let mark: '.' | ',' | null = null;
  if (lastDot >= 0 && lastComma >= 0) mark = lastDot > lastComma ? '.' : ',';
  else if (lastDot >= 0 || lastComma >= 0) {
    const sep = lastDot >= 0 ? '.' : ',';
    const count = s.split(sep).length - 1;
    const after = s.length - s.lastIndexOf(sep) - 1;
    if (count > 1) mark = null;
    else if (after !== 3) mark = sep;
    else if (/['’ ]/.test(s)) mark = sep; // `1 234.567`: the other separator groups, this one is the mark
    else mark = hint === sep ? sep : null;
  }
  const [intPart, frac = ''] = mark ? [s.slice(0, s.lastIndexOf(mark)), s.slice(s.lastIndexOf(mark) + 1)] : [s, ''];
  if (mark && !/^\d{1,4}$/.test(frac)) return null;
  const groups = intPart.split(/[.,'’ ]/);
  if (groups.length > 1 && (!/^\d{1,3}$/.test(groups[0]!) || groups.slice(1).some((g) => !/^\d{3}$/.test(g)))) return null;
  if (groups.length > 1) {
    const seps = new Set(intPart.replace(/\d/g, ''));
    if (seps.size > 1 || seps.has(mark ?? '')) return null;
  }
  const digits = groups.join('');
  if (!/^\d+$/.test(digits)) return null;
  return new Money(`${digits}${frac ? `.${frac}` : ''}`).toFixed();
}

/** Every amount written in `text`, in order (dates, invoice numbers and plain integers are not amounts). */
export function amountsIn(text: string, hint: DecimalMark = null): AmountToken[] {
  const out: AmountToken[] = [];
  for (const m of text.matchAll(AMOUNT_RE)) {
    const [whole, open, minus, num, trailingMinus, close] = m;
    const value = parseNumber(num!, hint);
    if (value === null) continue;
    const negative = Boolean(minus) || Boolean(trailingMinus) || (open === '(' && close === ')');
    out.push({ value: negative && value !== '0' ? `-${value}` : value, raw: whole, index: m.index!, end: m.index! + whole.length });
  }
  return out;
}

/** A cell that holds one amount and nothing else but a currency and a sign (`1.234,56 €`, `EUR -12.00`, `(45.00)`, `1190`), as a decimal string; null otherwise. */
export function cellAmount(cell: string, hint: DecimalMark = null): string | null {
  let s = cell.replace(/[\u00A0\u202F]/g, ' ').trim();
  if (!s) return null;
  s = s.replace(/^(?:[A-Z]{3}|US\$|[€$£¥]|CHF|Fr\.)\s*/, '').replace(/\s*(?:[A-Z]{3}|[€$£¥]|CHF)$/, '').trim();
  let negative = false;
  if (/^\(.*\)$/.test(s)) {
    negative = true;
    s = s.slice(1, -1).trim();
  }
  if (/^[-−]/.test(s)) {
    negative = true;
    s = s.slice(1).trim();
  } else if (/-$/.test(s)) {
    negative = true;
    s = s.slice(0, -1).trim();
  }
  const value = /^\d+$/.test(s) ? new Money(s).toFixed() : parseNumber(s, hint);
  if (value === null) return null;
  return negative && value !== '0' ? `-${value}` : value;
}

const MONTHS: Record<string, number> = {
  jan: 1, january: 1, januar: 1, janvier: 1, januari: 1, enero: 1, jänner: 1,
  feb: 2, february: 2, februar: 2, février: 2, fevrier: 2, februari: 2, febrero: 2,
  mar: 3, march: 3, märz: 3, maerz: 3, mars: 3, maart: 3, marzo: 3,
  apr: 4, april: 4, avril: 4, abril: 4,
  may: 5, mai: 5, mei: 5, mayo: 5,
  jun: 6, june: 6, juni: 6, juin: 6, junio: 6,
  jul: 7, july: 7, juli: 7, juillet: 7, julio: 7,
  aug: 8, august: 8, août: 8, aout: 8, augustus: 8, agosto: 8,
  sep: 9, sept: 9, september: 9, septembre: 9, septiembre: 9,
  oct: 10, october: 10, oktober: 10, octobre: 10, octubre: 10, okt: 10,
  nov: 11, november: 11, novembre: 11, noviembre: 11,
  dec: 12, december: 12, dezember: 12, décembre: 12, decembre: 12, diciembre: 12, dez: 12,
};

function isoDate(y: number, m: number, d: number): string | null {
  if (y < 100) y += 2000;
  if (m < 1 || m > 12 || d < 1 || d > 31 || y < 1990 || y > 2100) return null;
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (dt.getUTCMonth() !== m - 1) return null;
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

const DATE_PATTERNS: { re: RegExp; read: (m: RegExpMatchArray, usFirst: boolean) => string | null }[] = [
  { re: /\b(\d{4})-(\d{2})-(\d{2})\b/g, read: (m) => isoDate(+m[1]!, +m[2]!, +m[3]!) },
  { re: /\b(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})\b/g, read: (m) => isoDate(+m[3]!, +m[2]!, +m[1]!) },
  { re: /\b(\d{1,2})-(\d{1,2})-(\d{4})\b/g, read: (m) => isoDate(+m[3]!, +m[2]!, +m[1]!) },
  {
    re: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/g,
    // 03/04/2026: day first unless the document is in US English (`usFirst`) or the first part cannot be a day
    read: (m, usFirst) => (usFirst || +m[2]! > 12 ? isoDate(+m[3]!, +m[1]!, +m[2]!) ?? isoDate(+m[3]!, +m[2]!, +m[1]!) : isoDate(+m[3]!, +m[2]!, +m[1]!)),
  },
  { re: /\b(\d{1,2})\.?\s+([A-Za-zÀ-ÿ]{3,10})\.?\s+(\d{4})\b/g, read: (m) => (MONTHS[m[2]!.toLowerCase()] ? isoDate(+m[3]!, MONTHS[m[2]!.toLowerCase()]!, +m[1]!) : null) },
  { re: /\b([A-Za-zÀ-ÿ]{3,10})\.?\s+(\d{1,2}),?\s+(\d{4})\b/g, read: (m) => (MONTHS[m[1]!.toLowerCase()] ? isoDate(+m[3]!, MONTHS[m[1]!.toLowerCase()]!, +m[2]!) : null) },
];

export interface DateToken {
  value: string;
  index: number;
  end: number;
}

/** Every date written in `text` (ISO, `14.10.2026`, `14/10/2026`, `14 October 2026`, `Oct 14, 2026`, in the five languages). */
export function datesIn(text: string, usFirst = false): DateToken[] {
  const out: DateToken[] = [];
  for (const p of DATE_PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      const value = p.read(m, usFirst);
      if (value && !out.some((d) => m.index! < d.end && d.index < m.index! + m[0].length)) out.push({ value, index: m.index!, end: m.index! + m[0].length });
    }
  }
  return out.sort((a, b) => a.index - b.index);
}
