/** CAMT dates as the bank's local date: a UTC date-time is converted to the time zone of the account's country. */
import { isoDate, StatementParseError } from './types.js';

/**
 * Time zones of the banks of the SEPA countries (by ISO country code, as in an IBAN or a BIC). Where a
 * country spans several zones (Spain, Portugal) its capital's is the banks' one.
 */
const BANK_TIME_ZONES: Record<string, string> = {
  AD: 'Europe/Andorra', AT: 'Europe/Vienna', BE: 'Europe/Brussels', BG: 'Europe/Sofia', CH: 'Europe/Zurich',
  CY: 'Asia/Nicosia', CZ: 'Europe/Prague', DE: 'Europe/Berlin', DK: 'Europe/Copenhagen', EE: 'Europe/Tallinn',
  ES: 'Europe/Madrid', FI: 'Europe/Helsinki', FR: 'Europe/Paris', GB: 'Europe/London', GI: 'Europe/Gibraltar',
  GR: 'Europe/Athens', HR: 'Europe/Zagreb', HU: 'Europe/Budapest', IE: 'Europe/Dublin', IS: 'Atlantic/Reykjavik',
  IT: 'Europe/Rome', LI: 'Europe/Vaduz', LT: 'Europe/Vilnius', LU: 'Europe/Luxembourg', LV: 'Europe/Riga',
  MC: 'Europe/Monaco', MT: 'Europe/Malta', NL: 'Europe/Amsterdam', NO: 'Europe/Oslo', PL: 'Europe/Warsaw',
  PT: 'Europe/Lisbon', RO: 'Europe/Bucharest', SE: 'Europe/Stockholm', SI: 'Europe/Ljubljana', SK: 'Europe/Bratislava',
  SM: 'Europe/San_Marino', VA: 'Europe/Vatican',
};

/** The bank's time zone from the account's IBAN country, else its BIC's country; null when not known. */
export function bankTimeZone(iban: string | null, bic: string | null): string | null {
  const country = iban && /^[A-Z]{2}\d{2}/.test(iban) ? iban.slice(0, 2) : bic && /^[A-Z]{6}/.test(bic) ? bic.slice(4, 6) : null;
  return country ? (BANK_TIME_ZONES[country] ?? null) : null;
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * The account-local date of an ISO date or date-time: the date part as written, except for a UTC
 * date-time (`Z`, `+00:00`, `-00:00`), which is the date in the bank's time zone `zone` (its UTC date
 * when the zone is not known). A date-time with another offset was written in the bank's local time:
 * its date part is that local date.
 */
export function camtDate(raw: string, where: string, zone: string | null): string {
  const s = raw.trim();
  const m = DATE_TIME.exec(s);
  // Not an ISO date-time the zone rule can read: its leading date as written, or an error naming it.
  if (!m) return isoDate(s, where);
  const date = isoDate(m[1], where);
  const utc = m[2] !== undefined && m[5] !== undefined && (m[5] === 'Z' || /^[+-]00:?00$/.test(m[5]));
  if (!utc || !zone) {
    if (m[2] !== undefined && (Number(m[2]) > 24 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 60)) throw new StatementParseError(where, `"${raw}" is not a valid time`);
    return date;
  }
  const instant = new Date(`${date}T${m[2]}:${m[3]}:${m[4] ?? '00'}Z`);
  if (Number.isNaN(instant.getTime())) throw new StatementParseError(where, `"${raw}" is not a valid time`);
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  const part = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}
