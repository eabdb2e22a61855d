/**
 * Input rules of a caller-ID name registration (spec 2.18), pure functions the route's schema uses.
 * Reference data comes from maintained packages, pinned: libphonenumber-js (full metadata, `max`)
 * for numbers, `iso-3166` for ISO 3166-1 countries and ISO 3166-2 subdivisions.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { iso31661, iso31662 } from 'iso-3166';
import { isHostname } from './hostnames.js';

export const CNAM_DISPLAY_NAME_MAX = 15;
/** The CNAM character set: ASCII letters, digits, space and `, . & -`; at least one letter or digit. */
export const CNAM_DISPLAY_NAME_PATTERN = /^(?=.*[A-Za-z0-9])[A-Za-z0-9 ,.&-]{1,15}$/;
export const E164_PATTERN = /^\+[1-9][0-9]{1,14}$/;
export const SUBDIVISION_PATTERN = /^[A-Z]{2}-[A-Z0-9]{1,3}$/;

const COUNTRIES = new Set(iso31661.filter((c) => c.state === 'assigned').map((c) => c.alpha2));
const SUBDIVISIONS = new Set(iso31662.map((s) => s.code));

export function isCountryCode(code: string): boolean {
  return COUNTRIES.has(code);
}

export function isSubdivisionCode(code: string): boolean {
  return SUBDIVISIONS.has(code);
}

/** A number that exists in its country's numbering plan (not merely well-formed). */
export function isRealPhoneNumber(e164: string): boolean {
  if (!E164_PATTERN.test(e164)) return false;
  const parsed = parsePhoneNumberFromString(e164);
  return Boolean(parsed?.isValid() && parsed.number === e164);
}

export function phoneCountry(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.country ?? null;
}

/** An https URL of a named host, without credentials. */
export function isHttpsUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && !url.username && !url.password && isHostname(url.hostname);
}
