import { Decimal } from 'decimal.js';

/** Decimal configured for money: plenty of precision, banker's-free half-up rounding at 2 dp on output. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = InstanceType<typeof Money>;

const DECIMAL_RE = /^-?\d{1,20}(\.\d{1,10})?$/;

/** Strictly parse a decimal string ("1234.50"); throws on anything else (no exponents, no blanks). */
export function parseMoney(value: string): Money {
  if (!DECIMAL_RE.test(value)) throw new Error(`not a decimal amount: ${JSON.stringify(value)}`);
  return new Money(value);
}

export function isDecimalString(value: string): boolean {
  return DECIMAL_RE.test(value);
}

/** Sum exactly; inputs are decimal strings or numbers coming from NUMERIC columns. */
export function sumMoney(values: Iterable<string | number | Money>): Money {
  let total = new Money(0);
  for (const v of values) total = total.plus(new Money(v));
  return total;
}

/** Format with exactly two decimals, rounding half up ("12.5" → "12.50"). */
export function formatMoney(value: string | number | Money): string {
  return new Money(value).toFixed(2);
}
