import cc from 'currency-codes';
import { z } from 'zod';

const CURRENT = new Set(cc.codes());

/** ISO 4217 code in the current list (A.1), e.g. an organization's base currency. */
export function isCurrentCurrency(code: string): boolean {
  return CURRENT.has(code);
}

let timezones: Set<string> | null = null;
/** IANA timezone name known to this runtime's ICU data. */
export function isIanaTimezone(tz: string): boolean {
  timezones ??= new Set(Intl.supportedValuesOf('timeZone'));
  if (timezones.has(tz)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.includes('/') || tz === 'UTC';
  } catch {
    return false;
  }
}

export const currencyCode = () =>
  z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code').refine(isCurrentCurrency, 'is not an ISO 4217 currency code');

export const ianaTimezone = () => z.string().refine(isIanaTimezone, 'is not an IANA timezone name (e.g. Europe/Berlin)');
