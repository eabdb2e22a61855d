import type http from 'node:http';
import { isIP } from 'node:net';
import { Cidr, formatIp, parseIp } from '@rp/platform';

/**
 * The client's address for rate limits and X-Forwarded-For: the socket's peer address, unless that
 * peer is one of the operator's TRUSTED_PROXIES. Only then is X-Forwarded-For read, right to left,
 * skipping trusted proxies: the first untrusted hop is the client. A client can prepend whatever it
 * likes to X-Forwarded-For, but it cannot make its own connection come from a trusted proxy.
 */
export class ClientAddress {
  constructor(private readonly trusted: Cidr[]) {}

  private isTrusted(address: string): boolean {
    const bytes = parseIp(address);
    return bytes !== null && this.trusted.some((c) => c.contains(bytes));
  }

  of(req: http.IncomingMessage): string {
    const raw = req.socket.remoteAddress ?? '';
    // Node gives IPv4 peers of a dual-stack socket as ::ffff:a.b.c.d: one key per client either way.
    const peer = raw.startsWith('::ffff:') && raw.includes('.') ? raw.slice(7) : raw;
    if (!this.trusted.length || !this.isTrusted(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize(hops[i]);
      if (!isIP(hop)) break; // garbage: stop at the last address a trusted proxy vouched for
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return client;
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses in canonical form; non-addresses as given. */
function normalize(address: string): string {
  const bytes = parseIp(address);
  if (!bytes) return address;
  if (bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return formatIp(bytes.slice(12));
  return formatIp(bytes);
}

/** Parse TRUSTED_PROXIES (addresses or CIDRs separated by commas or spaces); throws on a bad entry. */
export function parseTrustedProxies(text: string): Cidr[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const c = Cidr.parse(entry);
      if (!c) throw new Error(`not an address or CIDR: ${JSON.stringify(entry)}`);
      return c;
    });
}
