/**
 * How payers write amounts and dates: thousands separators `1,234.56` (en), `1.234,56` (de, nl),
 * `1 234,56` (fr), `1'234.56` (ch), bare `1234.56`; currency as code or symbol before or after;
 * dates ISO, `20.11.2026`, `20/11/2026`, `11/20/2026`, `20 Nov 2026`, `20 novembre 2026`.
 */
export type NumberStyle = 'en' | 'de' | 'fr' | 'ch' | 'plain';

const SYMBOL: Record<string, string> = { EUR: '€', GBP: '£', USD: '$', CHF: 'CHF' };

/** cents → the label's decimal string (`1234.56`, `-5.00`) */
export function dec(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function amount(cents: number, style: NumberStyle): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = String(Math.floor(abs / 100));
  const frac = String(abs % 100).padStart(2, '0');
  const group = (sep: string) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  switch (style) {
    case 'en':
      return `${sign}${group(',')}.${frac}`;
    case 'de':
      return `${sign}${group('.')},${frac}`;
    case 'fr':
      return `${sign}${group(' ')},${frac}`;
    case 'ch':
      return `${sign}${group("'")}.${frac}`;
    case 'plain':
      return `${sign}${whole}.${frac}`;
  }
}

/** `EUR 1.234,56`, `1.234,56 €`, `€1,234.56`, `1 234,56 EUR` … */
export function money(cents: number, currency: string, style: NumberStyle, placement: 'code-before' | 'code-after' | 'symbol-before' | 'symbol-after'): string {
  const a = amount(cents, style);
  switch (placement) {
    case 'code-before':
      return `${currency} ${a}`;
    case 'code-after':
      return `${a} ${currency}`;
    case 'symbol-before':
      return `${SYMBOL[currency] ?? currency}${SYMBOL[currency]?.length === 1 ? '' : ' '}${a}`;
    case 'symbol-after':
      return `${a} ${SYMBOL[currency] ?? currency}`;
  }
}

const MONTHS: Record<string, string[]> = {
  en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  de: ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'],
  fr: ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'],
  nl: ['januari', 'februari', 'maart', 'april', 'mei', 'juni', 'juli', 'augustus', 'september', 'oktober', 'november', 'december'],
};

export type DateStyle = 'iso' | 'dotted' | 'slashed' | 'us' | 'long-en' | 'long-de' | 'long-fr' | 'long-nl' | 'short-en';

export function date(iso: string, style: DateStyle): string {
  const [y, m, d] = iso.split('-');
  const month = Number(m) - 1;
  switch (style) {
    case 'iso':
      return iso;
    case 'dotted':
      return `${d}.${m}.${y}`;
    case 'slashed':
      return `${d}/${m}/${y}`;
    case 'us':
      return `${m}/${d}/${y}`;
    case 'long-en':
      return `${Number(d)} ${MONTHS.en![month]} ${y}`;
    case 'long-de':
      return `${Number(d)}. ${MONTHS.de![month]} ${y}`;
    case 'long-fr':
      return `${Number(d)} ${MONTHS.fr![month]} ${y}`;
    case 'long-nl':
      return `${Number(d)} ${MONTHS.nl![month]} ${y}`;
    case 'short-en':
      return `${d}-${MONTHS.en![month]!.slice(0, 3)}-${y}`;
  }
}

/** A fixed-width text column (left or right aligned). */
export function pad(s: string, width: number, right = false): string {
  return right ? s.padStart(width) : s.padEnd(width);
}

/** An RFC 5322 date for a Date header. */
export function rfc5322(instant: string): string {
  return new Date(instant).toUTCString().replace('GMT', '+0000');
}
