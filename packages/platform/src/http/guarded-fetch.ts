/**
 * The kernel's guarded HTTP client: every request to a tenant-supplied or provider URL goes
 * through `guardedFetch`, never through the global `fetch`.
 *
 * - Only http and https.
 * - The host is resolved first and every address it resolves to is classified
 *   (net/addresses.ts): loopback, private (RFC 1918, CGNAT 100.64/10, IPv6 unique-local),
 *   link-local, metadata (169.254.169.254, fd00:ec2::254), unspecified, multicast, reserved and
 *   the IPv4-mapped/compatible/NAT64/6to4 forms of those are refused.
 * - The connection is made to the address that was checked (the socket's DNS lookup is this
 *   check), so a second DNS answer cannot slip in between check and connect (DNS rebinding).
 * - Redirects are followed by hand, at most `maxRedirects`, each hop checked again; credentials
 *   (`authorization`, `cookie`) are dropped when a redirect leaves the origin.
 * - An operator allowlist (OUTBOUND_ALLOWLIST) may allow hosts, addresses or CIDRs, optionally per
 *   port: `idp.internal`, `10.1.2.3:8443`, `10.0.0.0/8`, `[fd00::1]:443`. The tests' loopback fakes
 *   are allowed this way.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Cidr, classifyIpBytes, formatIp, parseIp, parseIPv6, type AddressClass, type IpBytes } from '../net/addresses.js';

/** The request was refused by the guard (blocked address or scheme, or too many redirects). */
export class OutboundBlockedError extends Error {
  readonly code = 'EOUTBOUNDBLOCKED';
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`outbound request to ${safeOrigin(url)} refused: ${reason}`);
    this.name = 'OutboundBlockedError';
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}

interface AllowEntry {
  host?: string;
  cidr?: Cidr;
  port?: number;
}

function defaultPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Bare hostname of a URL (IPv6 literals without brackets). */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** What may be reached: public addresses, plus what the operator's allowlist names. */
export class OutboundPolicy {
  private constructor(private readonly entries: AllowEntry[]) {}

  /** No exceptions: only public addresses. */
  static readonly strict = new OutboundPolicy([]);

  /**
   * Parse OUTBOUND_ALLOWLIST: entries separated by commas or spaces, each a hostname, an address or
   * a CIDR, a hostname or address optionally with `:port` (IPv6 in brackets). Throws on a bad entry.
   */
  static parse(text: string | undefined | null): OutboundPolicy {
    const entries: AllowEntry[] = [];
    for (const raw of (text ?? '').split(/[\s,]+/).filter(Boolean)) {
      const entry = parseEntry(raw.toLowerCase());
      if (!entry) throw new Error(`not a host, address or CIDR: ${JSON.stringify(raw)}`);
      entries.push(entry);
    }
    return new OutboundPolicy(entries);
  }

  get isStrict(): boolean {
    return this.entries.length === 0;
  }

  private hostAllowed(host: string, port: number): boolean {
    const h = host.toLowerCase().replace(/\.$/, '');
    return this.entries.some((e) => e.host === h && (e.port === undefined || e.port === port));
  }

  private addressAllowed(address: IpBytes, port: number): boolean {
    return this.entries.some((e) => e.cidr?.contains(address) && (e.port === undefined || e.port === port));
  }

  /** Why `address` (resolved for `host`) may not be contacted, or null when it may. */
  refusal(host: string, address: IpBytes, port: number): string | null {
    const cls: AddressClass = classifyIpBytes(address);
    if (cls === 'public') return null;
    if (this.hostAllowed(host, port) || this.addressAllowed(address, port)) return null;
    return `${host === formatIp(address) ? '' : `${host} resolves to `}${formatIp(address)}, a ${cls} address (not in OUTBOUND_ALLOWLIST)`;
  }

  /**
   * The check of a URL as stored (before any DNS): http(s) only, and a host that is an address
   * literal (in any spelling) must be allowed. Null when acceptable, else why not.
   */
  urlRefusal(text: string): string | null {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return 'is not a valid URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use http or https, not ${url.protocol.replace(/:$/, '')}`;
    if (url.username || url.password) return 'must not carry credentials';
    const host = bareHost(url);
    const literal = isIP(host) ? parseIp(host) : null;
    if (!literal) return null; // a name: checked after DNS resolution, on every call
    const why = this.refusal(host, literal, defaultPort(url));
    return why ? `must not point at ${why}` : null;
  }
}

function parseEntry(text: string): AllowEntry | null {
  if (text.includes('/')) {
    const cidr = Cidr.parse(text);
    return cidr ? { cidr } : null;
  }
  let host = text;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    host = bracket[1];
    port = bracket[2] ? Number(bracket[2]) : undefined;
  } else if (!parseIPv6(text)) {
    const m = /^(.*):(\d+)$/.exec(text);
    if (m) {
      host = m[1];
      port = Number(m[2]);
    }
  }
  if (port !== undefined && !(port > 0 && port < 65536)) return null;
  if (isIP(host)) {
    const cidr = Cidr.parse(host);
    return cidr ? { cidr, port } : null;
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) return null;
  return { host, port };
}

export interface GuardedFetchInit {
  policy: OutboundPolicy;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** Redirects followed (each re-checked); 0 returns the 3xx answer as it is. Default 5. */
  maxRedirects?: number;
  /** Largest response body read (default 64 MiB). */
  maxBytes?: number;
  /**
   * Connection pools to reuse (keep-alive), per scheme; default none (one connection per request).
   * A pool only ever holds sockets this function opened, and the agent opens each new socket with
   * the request's `lookup`, so every new connection is checked as without a pool; a reused socket
   * stays connected to the address checked when it opened. A pool serves one policy: sockets are
   * pooled by host and port only, so callers with different policies must not share one.
   */
  agents?: { http?: http.Agent; https?: https.Agent };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A fetch for URLs the platform does not control. Answers a standard `Response` (body buffered);
 * refused requests reject with OutboundBlockedError, network failures with an Error whose `cause`
 * carries the system code (as the global fetch does).
 */
export async function guardedFetch(input: string | URL, init: GuardedFetchInit): Promise<Response> {
  let url = new URL(String(input));
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  let headers: Record<string, string> = { ...(init.headers ?? {}) };
  const maxRedirects = init.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    const res = await requestOnce(url, method, headers, body, init);
    const location = res.headers.get('location');
    if (!REDIRECTS.has(res.status) || !location || maxRedirects === 0) return res;
    if (hop >= maxRedirects) throw new OutboundBlockedError(url.toString(), `more than ${maxRedirects} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return res;
    }
    if (next.origin !== url.origin) {
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !['authorization', 'cookie', 'proxy-authorization'].includes(k.toLowerCase())));
    }
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())));
    }
    url = next;
  }
}

function requestOnce(url: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined, init: GuardedFetchInit): Promise<Response> {
  const href = url.toString();
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new OutboundBlockedError(href, `scheme ${url.protocol} is not allowed`));
  if (url.username || url.password) return Promise.reject(new OutboundBlockedError(href, 'URLs with credentials are not allowed'));
  const host = bareHost(url);
  const port = defaultPort(url);
  const literal = isIP(host) ? parseIp(host) : null;
  if (literal) {
    const why = init.policy.refusal(host, literal, port);
    if (why) return Promise.reject(new OutboundBlockedError(href, why));
  }
  // The socket's own lookup is the check: the address connected to is the address checked.
  const lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses.filter((a) => !options.family || a.family === options.family);
      if (!list.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      for (const a of list) {
        const why = init.policy.refusal(hostname, parseIp(a.address)!, port);
        if (why) return callback(new OutboundBlockedError(href, why), '', 4);
      }
      if (options.all) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  };
  const maxBytes = init.maxBytes ?? 64 * 1024 * 1024;
  return new Promise<Response>((resolve, reject) => {
    const signal = init.signal;
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => req.destroy(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
    const req = (url.protocol === 'https:' ? https : http).request({
      protocol: url.protocol,
      hostname: host,
      port,
      path: `${url.pathname}${url.search}`,
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: (url.protocol === 'https:' ? init.agents?.https : init.agents?.http) ?? false,
      lookup: literal ? undefined : lookup,
      servername: literal ? undefined : host,
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    req.on('error', (err: NodeJS.ErrnoException) => {
      done();
      if (err instanceof OutboundBlockedError || err === signal?.reason) return reject(err);
      reject(Object.assign(new TypeError('fetch failed'), { cause: err }));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy(Object.assign(new Error(`response larger than ${maxBytes} bytes`), { code: 'ERESPONSETOOLARGE' }));
          return;
        }
        chunks.push(c);
      });
      res.on('error', (err) => {
        done();
        reject(err === signal?.reason ? err : Object.assign(new TypeError('fetch failed'), { cause: err }));
      });
      // Destroyed mid-body (abort, size limit, connection lost) without an 'error': settle anyway.
      res.on('close', () => {
        if (res.complete) return;
        done();
        const reason = signal?.aborted ? signal.reason : new Error('response interrupted');
        reject(reason === signal?.reason ? reason : Object.assign(new TypeError('fetch failed'), { cause: reason }));
      });
      res.on('end', () => {
        done();
        const status = res.statusCode ?? 502;
        const h = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
        const empty = status === 204 || status === 304 || method === 'HEAD';
        try {
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: h }));
        } catch (err) {
          reject(Object.assign(new TypeError('fetch failed'), { cause: err }));
        }
      });
    });
    req.end(body);
  });
}
