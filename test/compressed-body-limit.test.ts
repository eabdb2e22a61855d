/**
 * A compressed request body refused for its size leaves no connection behind it broken. The gateway
 * streams a gzip body of some 600 kB (inside its own limit on the bytes sent) to the owning
 * service, which inflates it and refuses it at its body limit (413) before reading the rest. The
 * next request on the same keep-alive connections — the client's to the gateway (one socket here)
 * and the gateway's to the service — may be another organization's, and must be answered as usual.
 * A broken connection shows as that request hanging until the gateway's upstream timeout and a 504.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
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
