/**
 * Input rules every route gets from the kernel (DESIGN 3):
 *
 * - no string of a path, query or body carries NUL (U+0000) or a lone UTF-16 surrogate, in values
 *   or in object keys (PostgreSQL refuses both in jsonb; NUL in text, and a surrogate would be stored
 *   as U+FFFD): {@link invalidTextIssues}, applied by the service kit to every declared part of every
 *   request, one walk per part; percent-escapes of the query and path that are not UTF-8 are refused
 *   too ({@link undecodableUrlIssues});
 * - ids are UUIDs (RFC 9562/4122; ours are UUIDv7): {@link idSchema};
 * - emails to RFC 5321 limits: {@link emailSchema}.
 */
import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
export const NUL_KEY_MESSAGE = 'object keys must not contain the NUL character (U+0000)';
/** `type` of a NUL issue in `errors[]`. */
export const NUL_ISSUE_TYPE = 'nul_character';

export const LONE_SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (invalid Unicode)';
export const LONE_SURROGATE_KEY_MESSAGE = 'object keys must not contain a lone UTF-16 surrogate (invalid Unicode)';
/**
 * `type` of a lone-surrogate issue in `errors[]`: a JSON escape such as `"\ud800"` that is half of
 * a UTF-16 pair. Such a string is not Unicode text: PostgreSQL refuses it in jsonb and a text column
 * would silently store U+FFFD instead, so it is refused wherever it appears.
 */
export const LONE_SURROGATE_ISSUE_TYPE = 'lone_surrogate';

export const INVALID_UTF8_MESSAGE = 'must be percent-encoded UTF-8 (an escape such as %ED%A0%80 or %FF is not Unicode text)';
/**
 * `type` of an issue for a query or path part whose percent-escapes do not decode to UTF-8 (e.g.
 * `%ED%A0%80`, the encoding of a lone surrogate). Node would read them as U+FFFD; the kernel refuses
 * them instead, the URL's form of the lone-surrogate rule.
 */
export const INVALID_UTF8_ISSUE_TYPE = 'invalid_utf8';

type Path = (string | number)[];

/** What is wrong with a string: a NUL character or a lone UTF-16 surrogate. */
export type InvalidTextProblem = 'nul' | 'lone_surrogate';

/** One finding of {@link findInvalidText}: where (`key`: in an object key rather than a value) and what. */
export interface InvalidText {
  path: Path;
  key: boolean;
  problem: InvalidTextProblem;
}

interface Frame {
  value: object;
  key: string | number | undefined;
  parent: Frame | undefined;
}

function pathOf(frame: Frame | undefined, tail: (string | number)[]): Path {
  const out: Path = [];
  for (let f = frame; f && f.key !== undefined; f = f.parent) out.push(f.key);
  out.reverse();
  out.push(...tail);
  return out;
}

/** Node 20's String.prototype.isWellFormed (ES2024, beyond the compiler's ES2023 lib): false for a lone surrogate. */
export function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** `s` with each lone surrogate shown as U+FFFD (String.prototype.toWellFormed), for naming a refused key in a message. */
export function toWellFormed(s: string): string {
  return (s as unknown as { toWellFormed(): string }).toWellFormed();
}

/** Whether `s` breaks a text rule: NUL or a lone surrogate (both checks native, allocation-free). */
function badText(s: string, nulOnly: boolean): boolean {
  return s.includes('\0') || (!nulOnly && !wellFormed(s));
}

function problemsOf(s: string, nulOnly: boolean): InvalidTextProblem[] {
  const out: InvalidTextProblem[] = [];
  if (s.includes('\0')) out.push('nul');
  if (!nulOnly && !wellFormed(s)) out.push('lone_surrogate');
  return out;
}

/**
 * Where `value` (parsed JSON, a query object, form fields, a text body) carries text that is not
 * storable Unicode: a NUL character (U+0000; PostgreSQL refuses it in text and jsonb) or a lone
 * UTF-16 surrogate (a high surrogate not followed by a low one, or a low one not preceded by a high
 * one; PostgreSQL refuses it in jsonb, and a text column would store U+FFFD instead). The path of
 * each string value and of each object key (`key: true`) breaking a rule, once per rule. One
 * allocation-free check (recursive, iterative below 256 levels so any nesting depth is fine), then,
 * only when something is wrong, a walk collecting the paths; binary data (Buffers, e.g. uploaded
 * file contents) is not text and is skipped. `skipTopLevelItems`: do not look inside the items of a
 * top-level array (routes that validate those items one by one, see `perRecordBody`, call this on
 * each record).
 */
export function findInvalidText(value: unknown, opts: { skipTopLevelItems?: boolean } = {}): InvalidText[] {
  return findBadText(value, opts, false);
}

/** Where `value` carries a NUL character; {@link findInvalidText} checks lone surrogates as well. */
export function findNul(value: unknown, opts: { skipTopLevelItems?: boolean } = {}): { path: Path; key: boolean }[] {
  return findBadText(value, opts, true).map(({ path, key }) => ({ path, key }));
}

function findBadText(value: unknown, opts: { skipTopLevelItems?: boolean }, nulOnly: boolean): InvalidText[] {
  if (typeof value === 'string') return problemsOf(value, nulOnly).map((problem) => ({ path: [], key: false, problem }));
  if (value === null || typeof value !== 'object') return [];
  if (opts.skipTopLevelItems && Array.isArray(value)) return [];
  // Fast path: the allocation-free check; paths are collected only for a request that breaks a rule.
  if (!hasBadText(value, 0, nulOnly)) return [];
  return collectBadText(value, nulOnly);
}

/** The iterative walk collecting every finding's path (any depth: no recursion). */
function collectBadText(value: object, nulOnly: boolean): InvalidText[] {
  const found: InvalidText[] = [];
  const note = (s: string, frame: Frame, k: string | number, key: boolean) => {
    if (!badText(s, nulOnly)) return;
    for (const problem of problemsOf(s, nulOnly)) found.push({ path: pathOf(frame, [k]), key, problem });
  };
  const stack: Frame[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === 'string') note(item, frame, i, false);
        else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) stack.push({ value: item, key: i, parent: frame });
      }
    } else {
      for (const k of Object.keys(v)) {
        note(k, frame, k, true);
        const item: unknown = (v as Record<string, unknown>)[k];
        if (typeof item === 'string') note(item, frame, k, false);
        else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) stack.push({ value: item, key: k, parent: frame });
      }
    }
  }
  return found;
}

const MAX_RECURSION = 256;

/** Whether a finding is anywhere in `v`: recursive (fast) up to MAX_RECURSION levels, the iterative walk below that. */
function hasBadText(v: unknown, depth: number, nulOnly: boolean): boolean {
  if (typeof v === 'string') return badText(v, nulOnly);
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return false;
  if (depth > MAX_RECURSION) return collectBadText(v, nulOnly).length > 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasBadText(v[i], depth + 1, nulOnly)) return true;
    return false;
  }
  for (const k in v) {
    if (badText(k, nulOnly) || hasBadText((v as Record<string, unknown>)[k], depth + 1, nulOnly)) return true;
  }
  return false;
}

const MESSAGES: Record<InvalidTextProblem, { value: string; key: string; type: string }> = {
  nul: { value: NUL_MESSAGE, key: NUL_KEY_MESSAGE, type: NUL_ISSUE_TYPE },
  lone_surrogate: { value: LONE_SURROGATE_MESSAGE, key: LONE_SURROGATE_KEY_MESSAGE, type: LONE_SURROGATE_ISSUE_TYPE },
};

/** The validation issue of one {@link findInvalidText} finding, located under `prefix` (e.g. `['body', 3]` for a record). */
export function invalidTextIssue(prefix: (string | number)[], found: InvalidText): ValidationIssue {
  const m = MESSAGES[found.problem];
  return { loc: [...prefix, ...found.path], msg: found.key ? m.key : m.value, type: m.type };
}

/**
 * {@link findInvalidText} as validation issues located at `location` (`path`, `query`, `body`):
 * `nul_character` and `lone_surrogate`.
 */
export function invalidTextIssues(location: 'path' | 'query' | 'body', value: unknown, issues: ValidationIssue[], opts: { skipTopLevelItems?: boolean } = {}): void {
  for (const f of findInvalidText(value, opts)) issues.push(invalidTextIssue([location], f));
}

/** {@link findNul} as validation issues located at `location`; {@link invalidTextIssues} checks lone surrogates as well. */
export function nulIssues(location: 'path' | 'query' | 'body', value: unknown, issues: ValidationIssue[], opts: { skipTopLevelItems?: boolean } = {}): void {
  for (const f of findNul(value, opts)) issues.push({ loc: [location, ...f.path], msg: f.key ? NUL_KEY_MESSAGE : NUL_MESSAGE, type: NUL_ISSUE_TYPE });
}

// ── URLs ─────────────────────────────────────────────────────────────────────────────────────────

const ESCAPE = /%[0-9A-Fa-f]{2}/;

/** Whether `raw` (a part of a URL as sent) has percent-escapes that do not decode to UTF-8. */
function escapesNotUtf8(raw: string): boolean {
  if (!ESCAPE.test(raw)) return false;
  try {
    decodeURIComponent(raw.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
    return false;
  } catch {
    return true;
  }
}

/**
 * Query parameters (of the raw query string, as sent) and path captures (raw, by name) whose
 * percent-escapes do not decode to UTF-8, as `invalid_utf8` issues at `['query', name]` /
 * `['path', name]`. A lone `%` not followed by two hex digits is a literal `%`, as Node reads it.
 */
export function undecodableUrlIssues(rawQuery: string, rawPathParams: Record<string, string>, issues: ValidationIssue[]): void {
  for (const [name, raw] of Object.entries(rawPathParams)) {
    if (escapesNotUtf8(raw)) issues.push({ loc: ['path', name], msg: INVALID_UTF8_MESSAGE, type: INVALID_UTF8_ISSUE_TYPE });
  }
  if (!rawQuery || !ESCAPE.test(rawQuery)) return;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    if (!escapesNotUtf8(pair.replace(/\+/g, ' '))) continue;
    const key = escapesNotUtf8(rawKey) ? rawKey : decodeURIComponent(rawKey.replace(/\+/g, ' ').replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
    issues.push({ loc: ['query', key], msg: INVALID_UTF8_MESSAGE, type: INVALID_UTF8_ISSUE_TYPE });
  }
}

// ── ids ──────────────────────────────────────────────────────────────────────────────────────────

export const ID_MESSAGE = 'must be a UUID';

/**
 * The platform's id: a UUID string. Ours are UUIDv7, but any RFC 9562 (RFC 4122) UUID a client
 * holds is accepted (versions 1-8, nil and max), so a well-formed id of another version gets 404
 * rather than 422. JSON Schema: `format: uuid`. Ids that are not ours (ERP keys such as
 * `customer_code`, provider names) keep their own rules.
 */
export function idSchema() {
  return z.uuid({ message: ID_MESSAGE });
}

// ── emails ───────────────────────────────────────────────────────────────────────────────────────

export const EMAIL_MAX_LENGTH = 254;
export const EMAIL_LOCAL_MAX_LENGTH = 64;

/**
 * An address as SMTP can deliver it (RFC 5321 limits): at most 254 characters, one `@`, a local
 * part of at most 64 (dot-separated atoms of letters, digits and `_'+-`), and a domain of at least
 * two dot-separated labels (letters, digits, inner hyphens, each at most 63) ending in an alphabetic
 * or `xn--` top-level label. ASCII only, so characters and octets count the same; no spaces or
 * control characters. The limits are in the pattern itself, so OpenAPI carries them.
 */
export const EMAIL_PATTERN = new RegExp(
  `^(?=.{1,${EMAIL_MAX_LENGTH}}$)(?=[^@]{1,${EMAIL_LOCAL_MAX_LENGTH}}@)` +
    "(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+\\-]" +
    '@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$',
);

export const EMAIL_MESSAGE = `must be an email address (at most ${EMAIL_MAX_LENGTH} characters, a local part of at most ${EMAIL_LOCAL_MAX_LENGTH}, and a domain such as example.com)`;

/** An email address to RFC limits ({@link EMAIL_PATTERN}). JSON Schema: `format: email`, the pattern, `maxLength: 254`. */
export function emailSchema() {
  return z.email({ pattern: EMAIL_PATTERN, message: EMAIL_MESSAGE }).max(EMAIL_MAX_LENGTH, { message: EMAIL_MESSAGE });
}
