/**
 * IP address classification for outbound requests (SSRF guard) and trusted-proxy lists.
 *
 * Addresses are parsed into bytes, not matched as text, so every spelling of an address lands in
 * the same class: IPv4 in the loose inet_aton forms (`2130706433`, `0x7f.1`, `0177.0.0.1`), IPv6
 * with `::` and a dotted tail, IPv4-mapped (`::ffff:127.0.0.1`), IPv4-compatible, NAT64 and 6to4
 * forms of a blocked IPv4 address.
 */
import { isIP } from 'node:net';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'carrier-grade-nat'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'unique-local'
  | 'reserved';

/** 4 bytes (IPv4) or 16 bytes (IPv6). */
export type IpBytes = Uint8Array;

/** One numeric IPv4 part: decimal, octal (leading 0) or hex (0x). */
function v4Part(text: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(text)) return text.length === 2 ? 0 : parseInt(text.slice(2), 16);
  if (/^0[0-7]+$/.test(text)) return parseInt(text, 8);
  if (/^(0|[1-9][0-9]*)$/.test(text)) return Number(text);
  return null;
}

/**
 * IPv4 in any form inet_aton accepts (`a`, `a.b`, `a.b.c`, `a.b.c.d`, each part decimal, octal or
 * hex): the forms browsers and URL parsers turn into an address. Null when it is not one.
 */
export function parseIPv4(text: string): IpBytes | null {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return null;
  const nums = parts.map(v4Part);
  if (nums.some((n) => n === null || !Number.isSafeInteger(n))) return null;
  const n = nums as number[];
  const last = n[n.length - 1];
  const head = n.slice(0, -1);
  if (head.some((v) => v > 255) || last >= 256 ** (5 - n.length)) return null;
  let value = last;
  head.forEach((v, i) => (value += v * 256 ** (3 - i)));
  return Uint8Array.of((value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255);
}

/** IPv6 (with `::`, a dotted IPv4 tail, optional brackets and zone id) as 16 bytes; null otherwise. */
export function parseIPv6(input: string): IpBytes | null {
  let text = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (isIP(text) !== 6) return null;
  const lastColon = text.lastIndexOf(':');
  const dotted = text.slice(lastColon + 1);
  if (dotted.includes('.')) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(dotted)) return null;
    const q = parseIPv4(dotted);
    if (!q) return null;
    text = `${text.slice(0, lastColon + 1)}${((q[0] << 8) | q[1]).toString(16)}:${((q[2] << 8) | q[3]).toString(16)}`;
  }
  const [left, right] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (s: string) => (s ? s.split(':').filter((g) => g !== '').map((g) => parseInt(g, 16)) : []);
  const l = groups(left);
  const r = right === null ? [] : groups(right);
  const words = right === null ? l : [...l, ...new Array<number>(Math.max(0, 8 - l.length - r.length)).fill(0), ...r];
  if (words.length !== 8 || words.some((w) => !(w >= 0 && w <= 0xffff))) return null;
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[i * 2] = w >> 8;
    out[i * 2 + 1] = w & 255;
  });
  return out;
}

/** An IP address in any accepted spelling, or null when `text` is not an address. */
export function parseIp(text: string): IpBytes | null {
  return parseIPv6(text) ?? parseIPv4(text);
}

/** Canonical text of an address (dotted quad, or Node's compressed IPv6 form). */
export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return bytes.join('.');
  const words = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return new URL(`http://[${words.join(':')}]`).hostname.slice(1, -1);
}

function inPrefix(bytes: IpBytes, prefix: IpBytes, bits: number): boolean {
  if (bytes.length !== prefix.length) return false;
  for (let i = 0; i < bytes.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 255 : (0xff << (8 - bits)) & 255;
    if ((bytes[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

const v4 = (a: number, b = 0, c = 0, d = 0) => Uint8Array.of(a, b, c, d);
const v6 = (text: string) => parseIPv6(text)!;

const V4_RANGES: Array<[IpBytes, number, AddressClass]> = [
  [v4(169, 254, 169, 254), 32, 'metadata'],
  [v4(0), 8, 'unspecified'],
  [v4(10), 8, 'private'],
  [v4(100, 64), 10, 'carrier-grade-nat'],
  [v4(127), 8, 'loopback'],
  [v4(169, 254), 16, 'link-local'],
  [v4(172, 16), 12, 'private'],
  [v4(192, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2), 24, 'reserved'],
  [v4(192, 88, 99), 24, 'reserved'],
  [v4(192, 168), 16, 'private'],
  [v4(198, 18), 15, 'reserved'],
  [v4(198, 51, 100), 24, 'reserved'],
  [v4(203, 0, 113), 24, 'reserved'],
  [v4(224), 4, 'multicast'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(240), 4, 'reserved'],
];

const V6_RANGES: Array<[IpBytes, number, AddressClass]> = [
  [v6('fd00:ec2::254'), 128, 'metadata'],
  [v6('::'), 128, 'unspecified'],
  [v6('::1'), 128, 'loopback'],
  [v6('fe80::'), 10, 'link-local'],
  [v6('fec0::'), 10, 'private'],
  [v6('fc00::'), 7, 'unique-local'],
  [v6('ff00::'), 8, 'multicast'],
  [v6('100::'), 64, 'reserved'],
  [v6('2001:db8::'), 32, 'reserved'],
  [v6('2001::'), 23, 'reserved'],
];

/** An IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(b: IpBytes): IpBytes | null {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12); // ::ffff:a.b.c.d
  if (zero(0, 12)) return b.slice(12); // ::a.b.c.d (deprecated IPv4-compatible)
  if (inPrefix(b, v6('64:ff9b::'), 96) || inPrefix(b, v6('64:ff9b:1::'), 48)) return b.slice(12); // NAT64
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6); // 6to4
  return null;
}

export function classifyIpBytes(bytes: IpBytes): AddressClass {
  if (bytes.length === 16) {
    for (const [p, bits, cls] of V6_RANGES) if (inPrefix(bytes, p, bits)) return cls;
    const inner = embeddedIPv4(bytes);
    return inner ? classifyIpBytes(inner) : 'public';
  }
  for (const [p, bits, cls] of V4_RANGES) if (inPrefix(bytes, p, bits)) return cls;
  return 'public';
}

/** The class of an address given as text (any accepted spelling); null when it is not an address. */
export function classifyAddress(text: string): AddressClass | null {
  const bytes = parseIp(text);
  return bytes ? classifyIpBytes(bytes) : null;
}

/** A CIDR (`10.0.0.0/8`, `fd00::/8`) or single address; mapped IPv6 forms match IPv4 entries. */
export class Cidr {
  private constructor(
    readonly prefix: IpBytes,
    readonly bits: number,
  ) {}

  static parse(text: string): Cidr | null {
    const slash = text.lastIndexOf('/');
    const addr = slash >= 0 ? text.slice(0, slash) : text;
    const bytes = parseIPv6(addr) ?? (/^[0-9.]+$/.test(addr) && addr.split('.').length === 4 ? parseIPv4(addr) : null);
    if (!bytes) return null;
    const max = bytes.length * 8;
    const bits = slash >= 0 ? Number(text.slice(slash + 1)) : max;
    if (!Number.isInteger(bits) || bits < 0 || bits > max || (slash >= 0 && !/^\d+$/.test(text.slice(slash + 1)))) return null;
    return new Cidr(bytes, bits);
  }

  contains(address: IpBytes): boolean {
    if (inPrefix(address, this.prefix, this.bits)) return true;
    // ::ffff:a.b.c.d against an IPv4 entry
    if (address.length === 16 && this.prefix.length === 4) {
      const b = address;
      if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return inPrefix(b.slice(12), this.prefix, this.bits);
    }
    return false;
  }
}
