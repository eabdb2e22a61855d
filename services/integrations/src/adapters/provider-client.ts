/**
 * The one HTTP client for provider calls (OAuth token endpoints, health checks, the QuickBooks
 * adapters): through the kernel's guarded client (no loopback, private or metadata addresses unless
 * OUTBOUND_ALLOWLIST allows them; checked after DNS and on every redirect), one timeout, and network
 * failures told apart from HTTP answers.
 */
import { guardedFetch, OutboundBlockedError, type OutboundPolicy } from '@rp/platform';
import type { IntegrationsConfig } from '../config.js';

/** The provider could not be reached: DNS, refused connection, timeout, refused by the outbound policy, or an interrupted answer. */
export class ProviderUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly causeText: string,
    /** What the network layer threw, for callers that report it in their own words. */
    readonly original?: unknown,
  ) {
    super(`${new URL(url).origin} could not be reached (${causeText})`);
    this.name = 'ProviderUnreachableError';
  }
}

export interface ProviderResponse {
  status: number;
  /** 2xx */
  ok: boolean;
  statusText: string;
  headers: Headers;
  text: string;
  /** The body parsed (JSON.parse unless `parse` is given); null when empty or not parseable. */
  json: unknown;
}

export interface ProviderFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** OUTBOUND_ALLOWLIST of the service's config */
  policy: OutboundPolicy;
  /** Redirects followed, each re-checked (default 5); 0 answers the 3xx itself. */
  maxRedirects?: number;
  /** The caller's cancellation: when it fires, its abort error propagates as it is (a cancelled call is not an unreachable provider). */
  signal?: AbortSignal;
  /** How the body text becomes `json` (default JSON.parse); a throw leaves `json` null. */
  parse?: (text: string) => unknown;
}

/** One call to a provider; HTTP answers of any status resolve, network failures throw ProviderUnreachableError. */
export async function providerFetch(url: string | URL, init: ProviderFetchInit): Promise<ProviderResponse> {
  const { timeoutMs, signal, parse = JSON.parse, ...rest } = init;
  const href = String(url);
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await guardedFetch(url, { ...rest, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (e) {
    if (signal?.aborted) throw e;
    if (e instanceof OutboundBlockedError) throw new ProviderUnreachableError(href, `refused: ${e.reason}`, e);
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const cause = err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message);
    throw new ProviderUnreachableError(href, cause, e);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ProviderUnreachableError(href, `response interrupted: ${(e as Error).message}`, e);
  }
  let json: unknown = null;
  try {
    json = text ? parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, ok: res.ok, statusText: res.statusText, headers: res.headers, text, json };
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The answer of a credential probe: the HTTP status of one authenticated GET, or why the provider could not be reached. */
export type ProbeAnswer = { status: number } | { unreachable: string };

/** One authenticated GET to a provider's documented API, to see whether it accepts the credentials (the health check). */
export async function probeProvider(config: Pick<IntegrationsConfig, 'PROVIDER_HTTP_TIMEOUT_MS' | 'OUTBOUND_ALLOWLIST'>, url: string, authorization: string): Promise<ProbeAnswer> {
  try {
    const res = await providerFetch(url, {
      method: 'GET',
      headers: { authorization, accept: 'application/json' },
      timeoutMs: config.PROVIDER_HTTP_TIMEOUT_MS,
      policy: config.OUTBOUND_ALLOWLIST,
    });
    return { status: res.status };
  } catch (e) {
    if (e instanceof ProviderUnreachableError) return { unreachable: e.causeText };
    throw e;
  }
}
