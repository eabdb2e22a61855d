/**
 * The SSRF guard's pieces: the address classifier (every spelling of an address lands in its
 * class), CIDRs, the OUTBOUND_ALLOWLIST syntax, the stored-URL check, and guardedFetch against
 * real loopback servers (DNS names checked after resolution, redirects re-checked and bounded,
 * credentials dropped across origins).
 */
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cidr, classifyAddress, guardedFetch, OutboundBlockedError, OutboundPolicy, parseIp } from '@rp/platform';

describe('address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['017700000001', 'loopback'],
    ['10.0.0.1', 'private'],
    ['012.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.127.255.255', 'carrier-grade-nat'],
    ['169.254.169.254', 'metadata'],
    ['2852039166', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:a00:1::', 'private'],
    ['8.8.8.8', 'public'],
    ['100.128.0.1', 'public'],
    ['172.32.0.1', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it.each(['example.com', '256.0.0.1', '1.2.3.4.5', '0x1g', '1..2', '', '::ffff:1.2.3', '1:2:3:4:5:6:7:8:9'])('%j is not an address', (text) => {
    expect(classifyAddress(text)).toBeNull();
  });

  it('matches CIDRs, mapped IPv6 against IPv4 entries included', () => {
    const net = Cidr.parse('10.0.0.0/8')!;
    expect(net.contains(parseIp('10.200.1.1')!)).toBe(true);
    expect(net.contains(parseIp('::ffff:10.1.1.1')!)).toBe(true);
    expect(net.contains(parseIp('11.0.0.1')!)).toBe(false);
    expect(Cidr.parse('fd00::/8')!.contains(parseIp('fd12::1')!)).toBe(true);
    expect(Cidr.parse('10.0.0.0/33')).toBeNull();
    expect(Cidr.parse('10.0.0.0/x')).toBeNull();
    expect(Cidr.parse('example.com')).toBeNull();
  });
});

describe('OUTBOUND_ALLOWLIST and the stored-URL check', () => {
  it('parses hosts, addresses and CIDRs, with ports, and refuses nonsense', () => {
    expect(() => OutboundPolicy.parse('erp.internal, 10.0.0.0/8 [fd00::1]:8443 10.1.2.3:8080 erp.internal:443')).not.toThrow();
    expect(() => OutboundPolicy.parse('not a host!')).toThrow(/not a host/);
    expect(() => OutboundPolicy.parse('10.0.0.0/40')).toThrow();
    expect(() => OutboundPolicy.parse('host:99999')).toThrow();
  });

  it('refuses blocked literals in any spelling and non-http schemes, unless allowlisted', () => {
    const strict = OutboundPolicy.strict;
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://[fd00:ec2::254]/', 'ftp://example.com/', 'http://a:b@example.com/']) {
      expect(strict.urlRefusal(url), url).not.toBeNull();
    }
    expect(strict.urlRefusal('https://erp.example.com/')).toBeNull();
    expect(strict.urlRefusal('http://8.8.8.8/')).toBeNull();
    const policy = OutboundPolicy.parse('127.0.0.1:8080 10.0.0.0/8');
    expect(policy.urlRefusal('http://127.0.0.1:8080/')).toBeNull();
    expect(policy.urlRefusal('http://127.0.0.1:8081/')).toMatch(/loopback/);
    expect(policy.urlRefusal('http://10.9.9.9/')).toBeNull();
    expect(policy.urlRefusal('http://169.254.169.254/')).toMatch(/metadata/);
  });
});

describe('guardedFetch', () => {
  const servers: http.Server[] = [];
  const seen: Record<string, http.IncomingHttpHeaders[]> = { a: [], b: [] };
  let a = 0;
  let b = 0;

  async function serve(name: 'a' | 'b', handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<number> {
    const s = http.createServer((req, res) => {
      seen[name].push(req.headers);
      handler(req, res);
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  }

  beforeAll(async () => {
    b = await serve('b', (_req, res) => res.end('b'));
    a = await serve('a', (req, res) => {
      if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/big') {
        res.write('x'.repeat(64 * 1024));
        return void setTimeout(() => res.end('x'.repeat(64 * 1024)), 50);
      }
      if (req.url === '/to-b') return res.writeHead(302, { location: `http://127.0.0.1:${b}/` }).end();
      res.end('a');
    });
  });
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  });

  it('refuses loopback by address and by name (after DNS) without connecting', async () => {
    const before = seen.a.length;
    await expect(guardedFetch(`http://127.0.0.1:${a}/`, { policy: OutboundPolicy.strict })).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(guardedFetch(`http://localhost:${a}/`, { policy: OutboundPolicy.strict })).rejects.toThrow(/localhost resolves to .* loopback/);
    await expect(guardedFetch(`http://2130706433:${a}/`, { policy: OutboundPolicy.strict })).rejects.toBeInstanceOf(OutboundBlockedError);
    expect(seen.a.length).toBe(before);
  });

  it('allows what the allowlist names, by address and port or by host name', async () => {
    const byAddress = await guardedFetch(`http://127.0.0.1:${a}/`, { policy: OutboundPolicy.parse(`127.0.0.1:${a}`) });
    expect(await byAddress.text()).toBe('a');
    const byName = await guardedFetch(`http://localhost:${a}/`, { policy: OutboundPolicy.parse(`localhost:${a}`) });
    expect(byName.status).toBe(200);
    await expect(guardedFetch(`http://127.0.0.1:${b}/`, { policy: OutboundPolicy.parse(`127.0.0.1:${a}`) })).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('re-checks every redirect, bounds them, and drops credentials across origins', async () => {
    const before = seen.b.length;
    await expect(guardedFetch(`http://127.0.0.1:${a}/to-b`, { policy: OutboundPolicy.parse(`127.0.0.1:${a}`) })).rejects.toThrow(/loopback/);
    expect(seen.b.length).toBe(before);
    await expect(guardedFetch(`http://127.0.0.1:${a}/loop`, { policy: OutboundPolicy.parse(`127.0.0.1:${a}`), maxRedirects: 3 })).rejects.toThrow(/more than 3 redirects/);
    const both = OutboundPolicy.parse(`127.0.0.1:${a} 127.0.0.1:${b}`);
    const res = await guardedFetch(`http://127.0.0.1:${a}/to-b`, { policy: both, headers: { authorization: 'Bearer secret', accept: 'text/plain' } });
    expect(await res.text()).toBe('b');
    expect(seen.b.at(-1)!.authorization).toBeUndefined();
    expect(seen.b.at(-1)!.accept).toBe('text/plain');
    const manual = await guardedFetch(`http://127.0.0.1:${a}/to-b`, { policy: both, maxRedirects: 0 });
    expect(manual.status).toBe(302);
  });

  it('bounds the response body it reads', async () => {
    const policy = OutboundPolicy.parse(`127.0.0.1:${a}`);
    await expect(guardedFetch(`http://127.0.0.1:${a}/big`, { policy, maxBytes: 1024 })).rejects.toThrow(/fetch failed/);
    expect((await (await guardedFetch(`http://127.0.0.1:${a}/big`, { policy })).text()).length).toBe(128 * 1024);
  });

  it('reuses connections through a keep-alive agent, and checks every new connection the agent opens', async () => {
    const answers = ['127.0.0.1', '169.254.169.254'];
    const asked: string[] = [];
    const original = dns.lookup;
    dns.lookup = ((hostname: string, options: unknown, callback: (err: Error | null, addresses: dns.LookupAddress[]) => void) => {
      if (hostname !== 'pooled.example') return (original as (...args: unknown[]) => void)(hostname, options, callback);
      asked.push(hostname);
      callback(null, [{ address: answers[Math.min(asked.length - 1, answers.length - 1)], family: 4 }]);
    }) as unknown as typeof dns.lookup;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const server = servers.find((s) => (s.address() as AddressInfo).port === a)!;
    let connections = 0;
    const count = () => connections++;
    server.on('connection', count);
    try {
      const policy = OutboundPolicy.parse(`127.0.0.1:${a}`);
      for (let i = 0; i < 3; i++) {
        const res = await guardedFetch(`http://pooled.example:${a}/`, { policy, agents: { http: agent } });
        expect(await res.text()).toBe('a');
      }
      expect(connections).toBe(1);
      expect(asked).toHaveLength(1);
      // A new connection of the pool resolves and is checked again: the next answer is refused.
      agent.destroy();
      await expect(guardedFetch(`http://pooled.example:${a}/`, { policy, agents: { http: agent } })).rejects.toThrow(/169\.254\.169\.254, a metadata address/);
      expect(asked).toHaveLength(2);
      expect(connections).toBe(1);
    } finally {
      server.off('connection', count);
      agent.destroy();
      dns.lookup = original;
    }
  });

  it('connects to the very address it checked: one DNS answer per connection (no rebinding window)', async () => {
    // A name whose answers change between look-ups, as a rebinding DNS server would answer.
    const answers = ['127.0.0.1', '169.254.169.254'];
    const asked: string[] = [];
    const original = dns.lookup;
    const patched = ((hostname: string, options: unknown, callback: (err: Error | null, addresses: dns.LookupAddress[]) => void) => {
      if (hostname !== 'rebind.example') return (original as (...args: unknown[]) => void)(hostname, options, callback);
      asked.push(hostname);
      callback(null, [{ address: answers[Math.min(asked.length - 1, answers.length - 1)], family: 4 }]);
    }) as unknown as typeof dns.lookup;
    dns.lookup = patched;
    try {
      const policy = OutboundPolicy.parse(`127.0.0.1:${a}`);
      const before = seen.a.length;
      const first = await guardedFetch(`http://rebind.example:${a}/`, { policy });
      expect(await first.text()).toBe('a');
      expect(asked).toHaveLength(1);
      expect(seen.a.at(-1)!.host).toBe(`rebind.example:${a}`);
      // The next answer is the metadata address: refused before any connection.
      await expect(guardedFetch(`http://rebind.example:${a}/`, { policy })).rejects.toThrow(/169\.254\.169\.254, a metadata address/);
      expect(asked).toHaveLength(2);
      expect(seen.a.length).toBe(before + 1);
    } finally {
      dns.lookup = original;
    }
  });
});
