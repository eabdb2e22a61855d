import cc from 'currency-codes';
import { createRequire } from 'node:module';
import { z } from 'zod';

/**
 * ISO 4217 reference data from maintained packages, never a hand-written list:
 * - `currency-codes`: the current list (ISO 4217 list one) with each code's minor unit;
 * - Unicode CLDR (`cldr-core`, supplemental/currencyData.json): every legal-tender currency each
 *   territory has had, with dates, which is where the historic codes (ISO 4217 list three: DEM,
 *   FRF, ITL, ESP, ZWD, VEF, …) come from. CLDR's non-tender entries (CNH, CNX) are not ISO codes
 *   and are left out.
 */
interface CldrCurrencyData {
  supplemental: {
    currencyData: {
      fractions: Record<string, { _digits?: string }>;
      region: Record<string, Array<Record<string, { _tender?: string; _from?: string; _to?: string }>>>;
    };
  };
}
const cldr = (createRequire(import.meta.url)('cldr-core/supplemental/currencyData.json') as CldrCurrencyData).supplemental.currencyData;

const CURRENT = new Set(cc.codes());
const HISTORIC = new Set<string>();
for (const history of Object.values(cldr.region)) {
  for (const entry of history) {
    for (const [code, info] of Object.entries(entry)) {
      if (info._tender !== 'false' && !CURRENT.has(code)) HISTORIC.add(code);
    }
  }
}

/** ISO 4217 code in the current list (A.1), e.g. an organization's base currency. */
export function isCurrentCurrency(code: string): boolean {
  return CURRENT.has(code);
}

/** ISO 4217 code, current or historic (e.g. DEM on an old ledger document). */
export function isIsoCurrency(code: string): boolean {
  return CURRENT.has(code) || HISTORIC.has(code);
}

/**
 * Decimal places an amount in this currency may carry: the ISO minor unit for current codes
 * (JPY 0, EUR 2, KWD 3), CLDR's for historic ones, 2 when neither says (funds and metals codes).
 */
export function currencyMinorUnits(code: string): number {
  const iso = cc.code(code)?.digits;
  if (typeof iso === 'number' && Number.isInteger(iso)) return iso;
  const digits = cldr.fractions[code]?._digits ?? cldr.fractions.DEFAULT?._digits;
  return digits === undefined ? 2 : Number(digits);
}

/** Every ISO 4217 code this platform knows, current and historic (e.g. to seed a database table of minor units). */
export function isoCurrencyCodes(): string[] {
  return [...CURRENT, ...HISTORIC].sort();
}

let timezones: Set<string> | null = null;
/**
 * A zone of the IANA tz database, in any spelling this runtime resolves to one (`europe/berlin`,
 * the alias `US/Pacific-New`). ICU also resolves zones the tz database dropped (the `SystemV/*`
 * zones, removed in 2020): Temporal's Schedules, which run on Go's copy of the tz database, refuse
 * those, so a name counts only when its canonical form is one of the runtime's IANA zones, UTC or
 * an `Etc/GMT±N` offset zone.
 */
export function isIanaTimezone(tz: string): boolean {
  timezones ??= new Set(Intl.supportedValuesOf('timeZone'));
  if (timezones.has(tz)) return true;
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  if (!tz.includes('/') && tz !== 'UTC') return false;
  return timezones.has(canonical) || canonical === 'UTC' || /^Etc\/GMT[+-]\d{1,2}$/.test(canonical);
}

export const currencyCode = () =>
  z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code')
    .refine(isCurrentCurrency, 'is not an ISO 4217 currency code')
    .meta({ enum: [...CURRENT].sort() });

/** Any ISO 4217 code, current or historic: for ledger documents, which may predate a currency's withdrawal. */
export const isoCurrencyCode = () =>
  z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code')
    .refine(isIsoCurrency, 'is not an ISO 4217 currency code (current or historic)')
    .meta({ enum: isoCurrencyCodes() });

/** IANA names are at most about 30 characters (America/Argentina/ComodRivadavia is 32); 64 leaves room and bounds the input. */
export const IANA_TIMEZONE_MAX_LENGTH = 64;

export const ianaTimezone = () =>
  z
    .string()
    .max(IANA_TIMEZONE_MAX_LENGTH, 'is not an IANA timezone name (e.g. Europe/Berlin)')
    .refine(isIanaTimezone, 'is not an IANA timezone name (e.g. Europe/Berlin)');
