/**
 * Input rules every route gets from the kernel (DESIGN 3, issue 9 section 1):
 *
 * - no string of a path, query or body carries NUL (U+0000), in values or in object keys
 *   (PostgreSQL refuses it in text and jsonb): {@link nulIssues}, applied by the service kit to every
 *   declared part of every request, one walk per part;
 * - ids are UUIDs (RFC 9562/4122; ours are UUIDv7): {@link idSchema};
 * - emails to RFC 5321 limits: {@link emailSchema}.
 */
import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
export const NUL_KEY_MESSAGE = 'object keys must not contain the NUL character (U+0000)';
/** `type` of a NUL issue in `errors[]`. */
export const NUL_ISSUE_TYPE = 'nul_character';

type Path = (string | number)[];

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

/**
 * Where `value` (parsed JSON, a query object, form fields, a text body) carries a NUL character:
 * the path of each string value containing one, and of each object key containing one (`key: true`).
 * One allocation-free check (recursive, iterative below 256 levels so any nesting depth is fine),
 * then, only when there is a NUL, a walk collecting the paths; binary data (Buffers, e.g.
 * uploaded file contents) is not text and is skipped. `skipTopLevelItems`: do not look inside the
 * items of a top-level array (routes that validate those items one by one, see `perRecordBody`).
 */
export function findNul(value: unknown, opts: { skipTopLevelItems?: boolean } = {}): { path: Path; key: boolean }[] {
  if (typeof value === 'string') return value.includes('\0') ? [{ path: [], key: false }] : [];
  if (value === null || typeof value !== 'object') return [];
  const found: { path: Path; key: boolean }[] = [];
  if (opts.skipTopLevelItems && Array.isArray(value)) return found;
  // Fast path: the allocation-free check; paths are collected only for a request that has a NUL.
  if (!hasNul(value, 0)) return found;
  return collectNul(value);
}

/** The iterative walk collecting every NUL's path (any depth: no recursion). */
function collectNul(value: object): { path: Path; key: boolean }[] {
  const found: { path: Path; key: boolean }[] = [];
  const stack: Frame[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          if (item.includes('\0')) found.push({ path: pathOf(frame, [i]), key: false });
        } else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
          stack.push({ value: item, key: i, parent: frame });
        }
      }
    } else {
      for (const k of Object.keys(v)) {
        if (k.includes('\0')) found.push({ path: pathOf(frame, [k]), key: true });
        const item: unknown = (v as Record<string, unknown>)[k];
        if (typeof item === 'string') {
          if (item.includes('\0')) found.push({ path: pathOf(frame, [k]), key: false });
        } else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
          stack.push({ value: item, key: k, parent: frame });
        }
      }
    }
  }
  return found;
}

const MAX_RECURSION = 256;

/** Whether a NUL is anywhere in `v`: recursive (fast) up to MAX_RECURSION levels, the iterative walk below that. */
function hasNul(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return v.includes('\0');
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return false;
  if (depth > MAX_RECURSION) return collectNul(v).length > 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasNul(v[i], depth + 1)) return true;
    return false;
  }
  for (const k in v) {
    if (k.includes('\0') || hasNul((v as Record<string, unknown>)[k], depth + 1)) return true;
  }
  return false;
}

/** {@link findNul} as validation issues located at `location` (`path`, `query`, `body`). */
export function nulIssues(location: 'path' | 'query' | 'body', value: unknown, issues: ValidationIssue[], opts: { skipTopLevelItems?: boolean } = {}): void {
  for (const f of findNul(value, opts)) {
    issues.push({ loc: [location, ...f.path], msg: f.key ? NUL_KEY_MESSAGE : NUL_MESSAGE, type: NUL_ISSUE_TYPE });
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
