/**
 * Text messages: the client of an SMS provider speaking Twilio's Messages API (the platform's one
 * provider contract; locally the SMS sink of scripts/local/sms-sink.ts answers it), phone numbers in
 * E.164, the quiet hours in which no text goes out, and how many segments a text costs.
 *
 * - `createSmsProvider`: `POST {url}/2010-04-01/Accounts/{accountSid}/Messages.json`, form-encoded
 *   To, From, Body, HTTP Basic `accountSid:authToken`. The answer's `sid`, `status` and
 *   `num_segments` are returned. Failures are `SmsProviderError`s: `retryable` for the network
 *   (refused, reset, timed out), 5xx and 429 (with the provider's Retry-After); permanent for any
 *   other 4xx, carrying the provider's error `code` and `message`. The auth token is never part of
 *   an error or a log line.
 * - An `idempotencyKey` goes out as the `Idempotency-Key` header: the local sink answers a repeated
 *   key with the message it already accepted, so a retry after a lost answer sends nothing twice.
 *   A provider that ignores the header may deliver such a retry twice; callers record their intent
 *   before the call so that only the lost-answer case is exposed.
 * - `toE164`: libphonenumber-js (full metadata) normalises national and international forms; a
 *   number that is not a valid number of its country is `null`.
 * - `quietHoursEnd`: 20:00–08:00 in the organization's timezone (Intl; DST-correct).
 * - `smsMetrics`: sms-segments-calculator, the same rules the SMS templates report (GSM-7: 160
 *   septets in one segment, 153 per part; anything outside GSM-7 switches to UCS-2: 70 / 67).
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { SegmentedMessage } from 'sms-segments-calculator';

export interface SmsProviderOptions {
  /** Base URL of the Messages API (no trailing path), e.g. `https://api.twilio.com`. */
  url: string;
  accountSid: string;
  authToken: string;
  /** Longest wait for the provider's answer (default 15 s); past it the send is a retryable failure. */
  timeoutMs?: number;
}

export interface SmsSendInput {
  from: string;
  to: string;
  body: string;
  /** Sent as `Idempotency-Key`: the same key means the same message (see the module comment). */
  idempotencyKey?: string;
}

export interface SmsSendResult {
  /** The provider's message id (`SM…`). */
  sid: string;
  /** The provider's status of the message on acceptance (`queued`, `accepted`, `sent`, …). */
  status: string;
  /** Segments the provider bills the message as. */
  segments: number;
}

export interface SmsProvider {
  send(input: SmsSendInput): Promise<SmsSendResult>;
}

/** A send the provider did not accept. `retryable`: worth trying again later; else it never will be. */
export class SmsProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** HTTP status of the provider's answer; null when none came (network, timeout). */
    readonly httpStatus: number | null,
    /** The provider's error code (Twilio's numeric codes, e.g. 21211 invalid To), when it gave one. */
    readonly providerCode: string | number | null = null,
    /** Milliseconds the provider asked to wait (Retry-After of a 429 or 503), when it said. */
    readonly retryAfterMs: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SmsProviderError';
  }
}

export function createSmsProvider(opts: SmsProviderOptions): SmsProvider {
  const base = opts.url.replace(/\/+$/, '');
  const endpoint = `${base}/2010-04-01/Accounts/${encodeURIComponent(opts.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${opts.accountSid}:${opts.authToken}`).toString('base64')}`;
  const timeoutMs = opts.timeoutMs ?? 15_000;

  return {
    async send(input) {
      const headers: Record<string, string> = {
        authorization,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      };
      if (input.idempotencyKey) headers['idempotency-key'] = input.idempotencyKey;
      let res: Response;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          headers,
          body: new URLSearchParams({ To: input.to, From: input.from, Body: input.body }).toString(),
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'error',
        });
      } catch (err) {
        const e = err as Error;
        const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause as Error | undefined)?.message ?? e.message;
        throw new SmsProviderError(`SMS provider unreachable at ${base}: ${why}`, true, null, null, null, { cause: err });
      }
      const text = await res.text().catch(() => '');
      let json: Record<string, unknown> | null = null;
      try {
        const parsed: unknown = text ? JSON.parse(text) : null;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
      } catch {
        // not JSON: described by the status alone
      }
      if (res.ok) {
        const sid = json?.sid;
        const segments = Number(json?.num_segments ?? 1);
        if (typeof sid !== 'string' || !sid || !Number.isInteger(segments) || segments < 1) {
          // Accepted (2xx) but unreadable: sending again could deliver the text twice.
          throw new SmsProviderError(`SMS provider answered ${res.status} without a message sid`, false, res.status);
        }
        return { sid, status: typeof json?.status === 'string' ? json.status : 'queued', segments };
      }
      const code = typeof json?.code === 'number' || typeof json?.code === 'string' ? json.code : null;
      const said = typeof json?.message === 'string' ? json.message.slice(0, 500) : res.statusText;
      const retryable = res.status === 429 || res.status >= 500;
      throw new SmsProviderError(
        `SMS provider answered ${res.status}: ${said}${code !== null ? ` (code ${code})` : ''}`,
        retryable,
        res.status,
        code,
        retryable ? retryAfterMs(res.headers.get('retry-after')) : null,
      );
    },
  };
}

function retryAfterMs(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * `phone` in E.164 (`+4930901820`), or null when it is not a valid phone number. National forms
 * need `defaultCountry` (ISO 3166-1 alpha-2, e.g. the customer's address country); international
 * forms (`+49 …`, `0049 …` with a default country) do not.
 */
export function toE164(phone: string, defaultCountry?: string): string | null {
  if (!phone || phone.length > 64) return null;
  const country = defaultCountry && /^[A-Za-z]{2}$/.test(defaultCountry) ? (defaultCountry.toUpperCase() as CountryCode) : undefined;
  let parsed;
  try {
    parsed = parsePhoneNumberFromString(phone, country);
  } catch {
    return null;
  }
  return parsed && parsed.isValid() ? parsed.number : null;
}

/** Local hour at which quiet hours start (inclusive) and end (exclusive). */
export const QUIET_HOURS = { start: 20, end: 8 } as const;

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function wallClock(instant: number, timeZone: string): WallClock {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(instant).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** Milliseconds the zone's wall clock is ahead of UTC at `instant`. */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(instant / 1000) * 1000;
}

/** The instant at which the wall clock of `timeZone` shows `hour`:00 on year-month-day (day may overflow). */
function zonedInstant(year: number, month: number, day: number, hour: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day, hour);
  // Two passes: the offset at the first guess may be the other side of a DST change.
  const guess = wall - offsetAt(wall, timeZone);
  return wall - offsetAt(guess, timeZone);
}

/**
 * While `now` is in quiet hours (20:00 to 08:00 on the wall clock of `timeZone`), the instant of the
 * next 08:00 there; else null. DST-correct: across a change the answer is the real 08:00 local,
 * whatever the number of hours in between.
 */
export function quietHoursEnd(now: Date, timeZone: string): Date | null {
  const t = now.getTime();
  const w = wallClock(t, timeZone);
  if (w.hour >= QUIET_HOURS.end && w.hour < QUIET_HOURS.start) return null;
  const day = w.hour >= QUIET_HOURS.start ? w.day + 1 : w.day;
  let end = zonedInstant(w.year, w.month, day, QUIET_HOURS.end, timeZone);
  // A zone that skipped a calendar day lands the guess before `now`: the next day's 08:00 then.
  if (end <= t) end = zonedInstant(w.year, w.month, day + 1, QUIET_HOURS.end, timeZone);
  return new Date(end);
}

/**
 * What a text costs: characters as the carrier counts them (septets under GSM-7, UTF-16 code units
 * under UCS-2), segments, and the encoding.
 */
export function smsMetrics(body: string): { character_count: number; estimated_segment_count: number; encoding: 'GSM-7' | 'UCS-2' } {
  const m = new SegmentedMessage(body);
  return { character_count: m.numberOfCharacters, estimated_segment_count: m.segmentsCount, encoding: m.encodingName === 'GSM-7' ? 'GSM-7' : 'UCS-2' };
}
