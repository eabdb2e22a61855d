import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig, startGateway, type Gateway } from '@rp/api-gateway';
import { METRICS_TOKEN, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '20', BODY_LIMIT_BYTES: '4096' } });
  org = await stack.onboard();
});
afterAll(async () => stack?.close());

describe('limits', () => {
  it('refuses a body over the limit with 413 before it reaches the service', async () => {
    const big = { name: 'x'.repeat(5000) };
    const res = await stack.request('POST', '/v2/business-units', { token: org.token, body: big });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ type: 'payload-too-large', status: 413, title: 'Payload too large' });
    expect(await stack.sql(`SELECT count(*)::int AS n FROM admin.business_units`)).toEqual([{ n: 0 }]);
  });

  it('counts the bytes of a chunked body too', async () => {
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        controller.close();
      },
    });
    const res = await fetch(`${stack.gatewayUrl}/v2/business-units`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('rate-limits each credential with 429 and Retry-After, leaving other credentials alone', async () => {
    const other = await stack.onboard();
    let limited: Awaited<ReturnType<TestStack['request']>> | null = null;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await stack.request('GET', '/v2/users/me', { token: org.token });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(200);
    }
    expect(limited).not.toBeNull();
    expect(limited!.body).toMatchObject({ type: 'rate-limited', status: 429 });
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await stack.request('GET', '/v2/users/me', { token: other.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await stack.request('GET', '/v2/users/me', { token: org.token })).status).toBe(200);
  });
});

describe('routing and upstream failures', () => {
  let gateway: Gateway;
  let blackHole: net.Server;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    // A service that accepts connections and never answers, and one that is not listening at all.
    blackHole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', () => r()));
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    gateway = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        ADMIN_URL: `http://127.0.0.1:${stack.apis.admin.port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${(blackHole.address() as net.AddressInfo).port}`,
        CASH_APP_URL: `http://127.0.0.1:${closedPort}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${closedPort}`,
        UPSTREAM_TIMEOUT_MS: '500',
      }),
      { port: 0 },
    );
  });
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    blackHole?.close();
    await gateway?.close();
  });

  const via = (path: string) => fetch(`http://127.0.0.1:${gateway.port}${path}`, { headers: { authorization: `Bearer ${org.token}` } });

  it('answers 502 in the v2 shape when the owning service is down', async () => {
    const res = await via('/v2/adjustments');
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ type: 'bad-gateway', status: 502, title: 'Bad gateway' });
  });

  it('answers 504 when the owning service does not answer in time', async () => {
    const started = Date.now();
    const res = await via('/v2/aether/playbook/stats');
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ type: 'gateway-timeout', status: 504 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('still routes to healthy services', async () => {
    expect((await via('/v2/users/me')).status).toBe(200);
  });
});

describe('services behind the gateway', () => {
  it('refuse a direct call without the gateway\'s signed identity (401), even with a valid bearer token', async () => {
    for (const api of Object.values(stack.apis)) {
      const res = await fetch(`http://127.0.0.1:${api.port}/v2/users/me`, { headers: { authorization: `Bearer ${org.token}` } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ type: 'unauthorized', status: 401 });
    }
  });
});

describe('request ids', () => {
  it('forwards the caller\'s request id to the service and back', async () => {
    const res = await stack.request('GET', '/v2/users/me', { token: org.token, headers: { 'x-request-id': 'trace-me-42' } });
    expect(res.headers.get('x-request-id')).toBe('trace-me-42');
    const generated = await stack.request('GET', '/v2/users/me', { token: org.token });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('operational endpoints', () => {
  it('serves health, readiness and metrics', async () => {
    expect((await stack.request('GET', '/healthz')).body).toEqual({ status: 'ok', service: 'api-gateway' });
    expect((await stack.request('GET', '/readyz')).body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
    const metrics = await stack.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.text).toContain('http_request_duration_seconds_bucket');
    for (const api of Object.values(stack.apis)) {
      const ready = await fetch(`http://127.0.0.1:${api.port}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', temporal: 'ok' } });
    }
  });
});
