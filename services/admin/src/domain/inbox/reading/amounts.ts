/**
 * Money amounts as written in the five languages: `1,234.56`, `1.234,56`, `1 234,56`, `1'234.56`,
 * with a currency code or symbol before or after. The value is a plain decimal string
 * ("1234.56"); the currency an ISO 4217 code when the text names one. Pure.
 */

export interface FoundAmount {
  amount: string;
  currency: string | null;
  index: number;
  text: string;
}

const SYMBOLS: Record<string, string> = { '€': 'EUR', '$': 'USD', '£': 'GBP', 'chf': 'CHF', 'fr.': 'CHF', 'us$': 'USD', 'euro': 'EUR', 'euros': 'EUR', 'eur': 'EUR' };
const CODE = '(?:[A-Z]{3}|€|\\$|£|US\\$|CHF|Fr\\.|euros?|Euros?)';
// starts only where a number starts, so a long digit run costs linear time
const NUMBER = "(?<![\\d.,'])(\\d{1,3}(?:[.,' ]\\d{3})+(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d{1,2})?)";
/** an amount needs a currency next to it; a bare number is an invoice or a quantity */
const AMOUNT = new RegExp(`(?:(${CODE})\\s?${NUMBER}(?:\\s?-)?|${NUMBER}\\s?(${CODE})(?![A-Za-z]| ?\\d))`, 'g');

const KNOWN_CODES = new Set(['EUR', 'USD', 'GBP', 'CHF', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'HUF', 'JPY', 'CAD', 'AUD', 'NZD', 'MXN', 'BRL', 'ZAR', 'SGD', 'HKD', 'CNY', 'INR', 'RON', 'BGN', 'TRY', 'ISK', 'ARS', 'CLP', 'COP']);

function currencyOf(raw: string): string | null {
  const upper = raw.toUpperCase();
  if (KNOWN_CODES.has(upper)) return upper;
  return SYMBOLS[raw.toLowerCase()] ?? null;
}

/**
 * Reads a written number into a decimal string: the last `.` or `,` followed by one or two digits
 * is the decimal mark; every other separator groups thousands.
 */
export function parseDecimal(raw: string): string | null {
  const s = raw.replace(/\s/g, '').replace(/'/g, '');
  const m = /^(.*?)([.,](\d{1,2}))?$/.exec(s);
  if (!m) return null;
  const whole = m[1].replace(/[.,]/g, '');
  if (!/^\d+$/.test(whole)) return null;
  const frac = m[3] ?? '';
  const normalized = `${whole.replace(/^0+(?=\d)/, '')}${frac ? `.${frac.padEnd(2, '0')}` : ''}`;
  return normalized;
}

/** Every amount with a currency beside it, in order of appearance. */
export function findAmounts(text: string): FoundAmount[] {
  const out: FoundAmount[] = [];
  AMOUNT.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = AMOUNT.exec(text))) {
    const rawCurrency = m[1] ?? m[4];
    const rawNumber = m[2] ?? m[3];
    const currency = currencyOf(rawCurrency);
    if (!currency) {
      // "INV 4711 EUR 100": the letters were not a currency; look again from the next character
      AMOUNT.lastIndex = m.index + 1;
      continue;
    }
    const amount = parseDecimal(rawNumber);
    if (!amount || Number(amount) === 0) continue;
    out.push({ amount, currency, index: m.index, text: m[0].trim() });
  }
  return out;
}
