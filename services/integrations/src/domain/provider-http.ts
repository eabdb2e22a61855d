/**
 * Real HTTP calls to providers: through the kernel's guarded client (no loopback, private or
 * metadata addresses unless OUTBOUND_ALLOWLIST allows them; checked after DNS and on every
 * redirect), one timeout, and network failures told apart from HTTP answers.
 */
import { guardedFetch, OutboundBlockedError, type OutboundPolicy } from '@rp/platform';

export class ProviderUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly causeText: string,
  ) {
    super(`${new URL(url).origin} could not be reached (${causeText})`);
    this.name = 'ProviderUnreachableError';
  }
}

export interface ProviderResponse {
  status: number;
  headers: Headers;
  text: string;
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
}

export async function providerFetch(url: string, init: ProviderFetchInit): Promise<ProviderResponse> {
  const { timeoutMs, ...rest } = init;
  let res: Response;
  try {
    res = await guardedFetch(url, { ...rest, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    if (e instanceof OutboundBlockedError) throw new ProviderUnreachableError(url, `refused: ${e.reason}`);
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const cause = err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message);
    throw new ProviderUnreachableError(url, cause);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw new ProviderUnreachableError(url, `response interrupted: ${(e as Error).message}`);
  }
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
