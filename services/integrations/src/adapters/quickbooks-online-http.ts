/**
 * HTTP of the QuickBooks Online adapters (Intuit Accounting API v3) over the provider client:
 * amounts read as exact decimal text, faults and statuses mapped onto ProviderApiError kinds.
 */
import { Money } from '@rp/platform';
import { ProviderApiError, type ProviderAccess } from './adapter.js';
import { providerFetch, ProviderUnreachableError, type ProviderResponse } from './provider-client.js';

export const QBO_MINOR_VERSION = '75';
/** How long one QuickBooks call may take. */
const QBO_TIMEOUT_MS = 60_000;

/** Numeric fields of the QBO payloads we read as exact decimal strings. */
const AMOUNT_KEYS = ['TotalAmt', 'Balance', 'Amount', 'UnitPrice', 'Qty', 'ExchangeRate', 'HomeTotalAmt', 'HomeBalance'];
const AMOUNT_RE = new RegExp(`"(${AMOUNT_KEYS.join('|')})"(\\s*):(\\s*)(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`, 'g');

/** JSON.parse that keeps the amount fields as the decimal text the server sent. */
export function parseQboJson(text: string): unknown {
  return JSON.parse(text.replace(AMOUNT_RE, (_m, key: string, s1: string, s2: string, num: string) => `"${key}"${s1}:${s2}"${new Money(num).toFixed()}"`));
}

/**
 * One call through the provider client with the connection's outbound policy and the QBO timeout;
 * a provider that cannot be reached is ProviderApiError `unreachable`, and the caller's
 * cancellation propagates as it is.
 */
export async function qboFetch(access: ProviderAccess, url: URL, init: { method?: 'GET' | 'POST'; body?: string; signal?: AbortSignal } = {}): Promise<ProviderResponse> {
  try {
    return await providerFetch(url, {
      policy: access.outbound,
      method: init.method,
      headers: { authorization: `Bearer ${access.accessToken}`, accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body,
      signal: init.signal,
      timeoutMs: QBO_TIMEOUT_MS,
      parse: parseQboJson,
    });
  } catch (err) {
    if (!(err instanceof ProviderUnreachableError)) throw err;
    const detail = err.original instanceof Error ? err.original.message : err.causeText;
    throw new ProviderApiError('unreachable', `QuickBooks Online is unreachable at ${url.origin}: ${detail}`);
  }
}

export interface QboFault {
  Fault?: { type?: string; Error?: { Message?: string; Detail?: string; code?: string }[] };
}

function faultMessage(body: unknown, fallback: string): string {
  const fault = (body as QboFault | null)?.Fault;
  const first = fault?.Error?.[0];
  if (!first) return fallback;
  return [fault?.type, first.code && `code ${first.code}`, first.Message, first.Detail].filter(Boolean).join(': ');
}

function retryAfter(header: string | null): number | null {
  if (!header) return null;
  const n = Number(header);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** One GET against the QBO API with the documented error mapping. */
export async function qboGet(access: ProviderAccess, path: string, params: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
  const url = new URL(`${access.apiBaseUrl.replace(/\/+$/, '')}${path}`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  url.searchParams.set('minorversion', QBO_MINOR_VERSION);
  const res = await qboFetch(access, url, { signal });
  const body = res.text;
  const parsed = res.json;
  if (res.ok) {
    if (parsed === null || typeof parsed !== 'object') throw new ProviderApiError('server_error', `QuickBooks Online answered ${res.status} without a JSON body.`, { httpStatus: res.status });
    const fault = (parsed as QboFault).Fault;
    if (fault) throw new ProviderApiError(fault.type === 'AUTHENTICATION' ? 'authentication_required' : 'rejected', `QuickBooks Online: ${faultMessage(parsed, 'fault')}`, { httpStatus: res.status });
    return parsed;
  }
  const message = faultMessage(parsed, body.slice(0, 200) || res.statusText);
  if (res.status === 401) {
    throw new ProviderApiError('authentication_required', `QuickBooks Online refused the access token (401): ${message}. Authenticate the connection again.`, { httpStatus: 401 });
  }
  if (res.status === 403) throw new ProviderApiError('authentication_required', `QuickBooks Online denied access (403): ${message}.`, { httpStatus: 403 });
  if (res.status === 429) {
    throw new ProviderApiError('rate_limited', `QuickBooks Online rate limit reached (429): ${message}.`, { httpStatus: 429, retryAfterSeconds: retryAfter(res.headers.get('retry-after')) });
  }
  if (res.status >= 500) throw new ProviderApiError('server_error', `QuickBooks Online failed (${res.status}): ${message}.`, { httpStatus: res.status });
  throw new ProviderApiError('rejected', `QuickBooks Online rejected the request (${res.status}): ${message}.`, { httpStatus: res.status });
}
