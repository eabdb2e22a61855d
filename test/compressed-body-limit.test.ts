/**
 * A compressed request body refused for its size leaves no connection behind it broken. The gateway
 * streams a gzip body of some 600 kB (inside its own limit on the bytes sent) to the owning
 * service, which inflates it and refuses it at its body limit (413) before reading the rest. The
 * next request on the same keep-alive connections — the client's to the gateway (one socket here)
 * and the gateway's to the service — may be another organization's, and must be answered as usual.
 * A broken connection shows as that request hanging until the gateway's upstream timeout and a 504,
 * or — when the broken part is the client's connection to the gateway — never answered at all.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
// One socket from this client to the gateway, kept alive between requests.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  // UPSTREAM_TIMEOUT_MS 10 s: a request stuck behind a broken connection ends as 504 well before the test's timeout.
  stack = await startStack({ env: { BODY_LIMIT_BYTES: '1048576', UPSTREAM_TIMEOUT_MS: '10000', RATE_LIMIT_PER_SECOND: '0' } });
  orgA = await stack.onboard('Gzip Org A');
  orgB = await stack.onboard('Gzip Org B');
});
afterAll(async () => {
  agent.destroy();
  await stack?.close();
});

interface Answer {
  status: number;
  body: any;
}

function send(method: string, path: string, token: string, opts: { body?: Buffer; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(path, stack.gatewayUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, agent, headers: { authorization: `Bearer ${token}`, ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * A JSON body whose first field alone inflates beyond the services' limit (1 MiB), followed by
 * 800 kB of incompressible text, so that most of the ~600 kB sent is still unread (beyond what the
 * streams buffer) when the service refuses the body; within the gateway's limit on the bytes sent.
 */
function gzipJson(inflated: number): Buffer {
  return gzipSync(Buffer.from(JSON.stringify({ name: 'a'.repeat(inflated), description: randomBytes(600_000).toString('base64') })));
}

describe('a gzip body over the limit (413) breaks no connection', () => {
  it("another organization's next request on the same connections is answered as usual", async () => {
    const warm = await send('GET', '/v2/business-units', orgB.token);
    expect(warm.status).toBe(200);
    const units = warm.body.data;

    const body = gzipJson(2_000_000);
    expect(body.length).toBeLessThan(1048576); // within the gateway's limit on the bytes sent
    for (let round = 0; round < 3; round++) {
      const refused = await send('POST', '/v2/business-units', orgA.token, {
        body,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) },
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(413);
      expect(refused.body).toMatchObject({ type: 'payload-too-large', status: 413 });

      const next = await send('GET', '/v2/business-units', orgB.token);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(next.body.data).toEqual(units);
    }
    // nothing of the refused body was stored
    expect((await send('GET', '/v2/business-units', orgA.token)).body.data.some((u: { name: string }) => u.name.startsWith('aaaa'))).toBe(false);
  }, 120_000);

  it('a gzip body within the limit is read and stored, and the connection serves the next request', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ name: 'Compressed unit' })));
    const created = await send('POST', '/v2/business-units', orgA.token, {
      body,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.name).toBe('Compressed unit');
    expect((await send('GET', '/v2/business-units', orgB.token)).status).toBe(200);
  }, 60_000);
});

/** One raw HTTP/1.1 connection to the gateway: what a client library with a connection pool does on the wire. */
class RawConnection {
  private readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  closed = false;

  private readonly host: string;

  constructor(url: string) {
    const u = new URL(url);
    this.host = u.host;
    this.socket = net.connect(Number(u.port), u.hostname);
    this.socket.on('data', (c: Buffer) => {
      this.received = Buffer.concat([this.received, c]);
      this.waiting?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    this.socket.on('error', () => {});
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** A request's head: request line, Host, the bearer token and `headers`. */
  head(method: string, path: string, token: string, headers: Record<string, string> = {}): void {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: ${this.host}`, `Authorization: Bearer ${token}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** A POST of JSON to /v2/business-units, `headers` added, its body left to the caller. */
  postUnitHead(token: string, headers: Record<string, string>): void {
    this.head('POST', '/v2/business-units', token, { 'Content-Type': 'application/json', ...headers });
  }

  /** The next complete answer (status line, headers and a Content-Length body), or null when none comes within `ms`. */
  async answer(ms: number): Promise<{ status: number; headers: string; body: string } | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const text = this.received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = text.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.received.length >= end + 4 + length) {
          const body = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
          this.received = this.received.subarray(end + 4 + length);
          return { status: Number(head.split(' ')[1]), headers: head, body };
        }
      }
      const left = deadline - Date.now();
      if (this.closed || left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = null;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** 413 with Connection: close, and then nothing more: the gateway closes the connection. */
async function expectRefusedAndClosed(conn: RawConnection): Promise<void> {
  const refused = await conn.answer(15_000);
  expect(refused?.status, refused?.body).toBe(413);
  expect(refused?.headers).toMatch(/\r\nconnection: close/i);
  expect(await conn.answer(5_000)).toBeNull();
  expect(conn.closed).toBe(true);
}

describe("a body the service refused before reading it leaves the client's connection to the gateway usable", () => {
  it('the rest of the body, sent after the 413, is read and the same connection answers the next request', async () => {
    const body = gzipJson(2_000_000);
    const conn = new RawConnection(stack.gatewayUrl);
    try {
      conn.postUnitHead(orgA.token, { 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
      // what a client has sent when the answer comes: enough to inflate beyond the service's limit
      conn.write(body.subarray(0, 64 * 1024));
      const refused = await conn.answer(15_000);
      expect(refused?.status, refused?.body).toBe(413);
      // a client that writes its whole body before reading (most do), then reuses the connection
      conn.write(body.subarray(64 * 1024));
      conn.head('GET', '/v2/business-units', orgB.token);
      const next = await conn.answer(8_000);
      if (next === null) expect(conn.closed, 'the next request on the connection got no answer and the connection stayed open').toBe(true);
      else expect(next.status, next.body).toBe(200);
    } finally {
      conn.close();
    }
  }, 60_000);

  it('a chunked body beyond the gateway\'s limit is answered 413 and its connection closed, not read on without end', async () => {
    const conn = new RawConnection(stack.gatewayUrl);
    try {
      conn.postUnitHead(orgA.token, { 'Transfer-Encoding': 'chunked' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let sent = 0; sent <= 1_200_000; sent += chunk.length) conn.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
      await expectRefusedAndClosed(conn);
    } finally {
      conn.close();
    }
  }, 60_000);

  it('a declared Content-Length beyond the limit is answered 413 and its connection closed, the body never read', async () => {
    const conn = new RawConnection(stack.gatewayUrl);
    try {
      conn.postUnitHead(orgA.token, { 'Content-Length': '1000000000' });
      conn.write('{"name":"');
      await expectRefusedAndClosed(conn);
    } finally {
      conn.close();
    }
  }, 60_000);
});
