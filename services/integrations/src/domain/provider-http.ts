/** Real HTTP calls to providers: one timeout, and network failures told apart from HTTP answers. */

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

export async function providerFetch(url: string, init: RequestInit & { timeoutMs: number }): Promise<ProviderResponse> {
  const { timeoutMs, ...rest } = init;
  let res: Response;
  try {
    res = await fetch(url, { ...rest, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
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
