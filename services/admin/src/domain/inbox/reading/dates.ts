/**
 * Dates as customers write them in English, German, French, Spanish and Dutch: ISO, numeric
 * (day first: 05.12.2026, 5/12/26; month first only when the day cannot be first, 12/25/2026),
 * written months ("5 December", "December 5th", "5. Dezember", "le 5 décembre", "5 de diciembre")
 * and relative ones ("tomorrow", "next Friday", "end of month", "in two weeks"), resolved against
 * the organization's today. Pure.
 */
import { fold } from './text.js';
import { MONTHS, MONTH_PATTERN, NUMBER_WORDS, NUMBER_WORD_PATTERN, WEEKDAYS, WEEKDAY_PATTERN } from './lexicon.js';

export interface FoundDate {
  /** YYYY-MM-DD */
  date: string;
  /** position in the folded text */
  index: number;
  kind: 'iso' | 'numeric' | 'written' | 'relative';
  /** true when day and month could be read either way */
  ambiguous: boolean;
}

interface Ymd {
  y: number;
  m: number;
  d: number;
}

function toDate({ y, m, d }: Ymd): Date {
  return new Date(Date.UTC(y, m - 1, d));
}

function iso(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function parseToday(today: string): Date {
  const [y, m, d] = today.split('-').map(Number);
  return toDate({ y, m, d });
}

function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 86_400_000);
}

function endOfMonth(date: Date, monthsAhead = 0): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1 + monthsAhead, 0));
}

/** ISO weekday 1..7 */
function weekday(date: Date): number {
  return ((date.getUTCDay() + 6) % 7) + 1;
}

function valid({ y, m, d }: Ymd): boolean {
  if (m < 1 || m > 12 || d < 1 || y < 1900 || y > 2200) return false;
  return toDate({ y, m, d }).getUTCDate() === d;
}

function fullYear(y: string | undefined): number | null {
  if (!y) return null;
  const n = Number(y);
  return y.length <= 2 ? 2000 + n : n;
}

/** A date written without its year is the next one on or after today, allowing two months back (a reference to a recent date). */
function withYear(m: number, d: number, today: Date): Ymd {
  const y = today.getUTCFullYear();
  const candidate = toDate({ y, m, d });
  if (candidate.getTime() < addDays(today, -60).getTime()) return { y: y + 1, m, d };
  return { y, m, d };
}

function count(word: string): number | null {
  if (/^\d+$/.test(word)) return Number(word);
  return NUMBER_WORDS[word] ?? null;
}

interface Rule {
  pattern: RegExp;
  resolve: (m: RegExpExecArray, today: Date) => { ymd: Ymd | Date; kind: FoundDate['kind']; ambiguous?: boolean } | null;
}

const NEXT = '(?:next|nachste[nrs]?|kommende[nrs]?|prochaine?|proxim[oa]|siguiente|volgende|komende)';
const THIS = '(?:this|coming|on|by|until|am|bis|diese[nrs]?|ce|le|el|este|op|deze|a partir del?|uiterlijk|vor|avant|antes del?)';

const RULES: Rule[] = [
  {
    pattern: /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g,
    resolve: (m) => ({ ymd: { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) }, kind: 'iso' }),
  },
  {
    pattern: /(?<![\d.,/])(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})(?![\d.,/]\d)/g,
    resolve: (m, today) => {
      const a = Number(m[1]);
      const b = Number(m[3]);
      const y = fullYear(m[4]) ?? today.getUTCFullYear();
      if (a > 12 || m[2] !== '/') return { ymd: { y, m: b, d: a }, kind: 'numeric', ambiguous: false };
      if (b > 12) return { ymd: { y, m: a, d: b }, kind: 'numeric', ambiguous: false };
      return { ymd: { y, m: b, d: a }, kind: 'numeric', ambiguous: a !== b };
    },
  },
  {
    // German and Dutch short form "am 5.12." without a year
    pattern: /(?<![\d.,])(\d{1,2})\.(\d{1,2})\.(?!\d)/g,
    resolve: (m, today) => ({ ymd: withYear(Number(m[2]), Number(m[1]), today), kind: 'numeric' }),
  },
  {
    pattern: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th|er|e|de|o)?\\.?\\s+(?:of\\s+|de\\s+)?(${MONTH_PATTERN})\\b\\.?(?:,?\\s+(?:de\\s+|del\\s+)?(\\d{4}))?`, 'g'),
    resolve: (m, today) => {
      const month = MONTHS[m[2]];
      const d = Number(m[1]);
      const y = fullYear(m[3]);
      return { ymd: y ? { y, m: month, d } : withYear(month, d, today), kind: 'written' };
    },
  },
  {
    pattern: new RegExp(`\\b(${MONTH_PATTERN})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4}))?`, 'g'),
    resolve: (m, today) => {
      const month = MONTHS[m[1]];
      const d = Number(m[2]);
      const y = fullYear(m[3]);
      return { ymd: y ? { y, m: month, d } : withYear(month, d, today), kind: 'written' };
    },
  },
  {
    pattern: /\b(day after tomorrow|ubermorgen|apres-demain|apres demain|pasado manana|overmorgen)\b/g,
    resolve: (_m, today) => ({ ymd: addDays(today, 2), kind: 'relative' }),
  },
  {
    pattern: /\b(today|heute|aujourd'hui|hoy|vandaag)\b/g,
    resolve: (_m, today) => ({ ymd: today, kind: 'relative' }),
  },
  {
    // "morgen" is tomorrow in German and Dutch; "guten morgen" is a greeting, not a date
    pattern: /(?<!guten |goede )\b(tomorrow|morgen|demain|manana)\b/g,
    resolve: (_m, today) => ({ ymd: addDays(today, 1), kind: 'relative' }),
  },
  {
    pattern: new RegExp(
      `\\b(end of next month|ende (?:des )?nachsten monats|ende (?:des )?kommenden monats|fin du mois prochain|fin(?:al)? del (?:mes )?(?:proximo|siguiente) mes|fin(?:al)? del mes que viene|eind(?:e)? (?:van )?volgende maand)\\b`,
      'g',
    ),
    resolve: (_m, today) => ({ ymd: endOfMonth(today, 1), kind: 'relative' }),
  },
  {
    pattern:
      /\b(end of (?:the |this )?month|month-end|month end|ende (?:des |dieses )?monats|monatsende|zum monatsende|fin (?:du|de) mois|fin(?:al)?(?:es)? de(?:l)? mes|eind(?:e)? (?:van )?(?:de|deze) maand|eind van de maand|einde maand|eind deze maand)\b/g,
    resolve: (_m, today) => ({ ymd: endOfMonth(today), kind: 'relative' }),
  },
  {
    pattern: /\b(end of (?:the |this )?week|ende (?:der|dieser) woche|fin de (?:la |cette )?semaine|final(?:es)? de (?:la |esta )?semana|eind(?:e)? van (?:de|deze) week)\b/g,
    resolve: (_m, today) => ({ ymd: addDays(today, (5 - weekday(today) + 7) % 7), kind: 'relative' }),
  },
  {
    // "next week": the Friday of next week (the latest day the sender's words still allow)
    pattern: /\b(next week|nachste woche|nachsten woche|kommende woche|la semaine prochaine|semaine prochaine|la proxima semana|la semana que viene|la semana proxima|volgende week|komende week)\b(?!\s+(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|maandag|dinsdag|woensdag|donderdag|vrijdag))/g,
    resolve: (_m, today) => ({ ymd: addDays(today, 7 - weekday(today) + 5), kind: 'relative' }),
  },
  {
    pattern: new RegExp(`\\b(?:volgende week|next week)\\s+(?:on\\s+)?(${WEEKDAY_PATTERN})\\b`, 'g'),
    resolve: (m, today) => ({ ymd: addDays(today, 7 - weekday(today) + WEEKDAYS[m[1]]), kind: 'relative' }),
  },
  {
    pattern: new RegExp(
      `\\b(?:(?:${NEXT}|${THIS})\\s+)(${WEEKDAY_PATTERN})\\b|\\b(${WEEKDAY_PATTERN})\\s+(?:prochain|que viene|next week|proximo)\\b`,
      'g',
    ),
    resolve: (m, today) => {
      const wd = WEEKDAYS[m[1] ?? m[2]];
      let days = (wd - weekday(today) + 7) % 7;
      if (days === 0) days = 7;
      return { ymd: addDays(today, days), kind: 'relative' };
    },
  },
  {
    pattern: new RegExp(
      `\\b(?:in|within|innerhalb von|innerhalb|binnen|dans|sous|d'ici|en|dentro de|over)\\s+(\\d{1,3}|${NUMBER_WORD_PATTERN})\\s+(business days|working days|days|day|weeks|week|werktagen|arbeitstagen|tagen|tage|wochen|woche|jours ouvres|jours|jour|semaines|semaine|dias habiles|dias|semanas|semana|werkdagen|dagen|dag|weken|week)\\b`,
      'g',
    ),
    resolve: (m, today) => {
      const n = count(m[1]);
      if (n === null || n > 120) return null;
      const unit = m[2];
      const weeks = /^(week|weeks|wochen|woche|semaines|semaine|semanas|semana|weken)$/.test(unit);
      const business = /business|working|werktag|arbeitstag|ouvres|habiles|werkdag/.test(unit);
      if (business) {
        let date = today;
        let left = n;
        while (left > 0) {
          date = addDays(date, 1);
          if (weekday(date) <= 5) left -= 1;
        }
        return { ymd: date, kind: 'relative' };
      }
      return { ymd: addDays(today, weeks ? n * 7 : n), kind: 'relative' };
    },
  },
];

/** Every date in `text`, in order of appearance, resolved against `today` (YYYY-MM-DD). */
export function findDates(text: string, today: string): FoundDate[] {
  const folded = fold(text);
  const base = parseToday(today);
  const found: FoundDate[] = [];
  const taken: [number, number][] = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = rule.pattern.exec(folded))) {
      const start = m.index;
      const end = start + m[0].length;
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      const r = rule.resolve(m, base);
      if (!r) continue;
      const date = r.ymd instanceof Date ? r.ymd : valid(r.ymd) ? toDate(r.ymd) : null;
      if (!date) continue;
      taken.push([start, end]);
      found.push({ date: iso(date), index: start, kind: r.kind, ambiguous: r.ambiguous ?? false });
    }
  }
  return found.sort((a, b) => a.index - b.index);
}
