import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadGatewayConfig, startGateway, type Gateway } from '@rp/api-gateway';
import { startServiceApi, type CommonConfig, type RunningApi, type ServiceModule } from '@rp/platform';
import { SERVICE_MODULES } from '../scripts/local/services.js';
import { createTestDatabase, METRICS_TOKEN, startStack, type Org, type TestStack } from './support/stack.js';

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

  it('is not ready (503) while upstreams cannot serve, naming them; /healthz stays 200', async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.port}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'not-ready',
      service: 'api-gateway',
      checks: { database: 'ok', admin: 'ok', knowledge: 'timeout', 'cash-app': 'unreachable', integrations: 'unreachable' },
      not_ready: ['cash-app', 'integrations', 'knowledge'],
    });
    const health = await fetch(`http://127.0.0.1:${gateway.port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', service: 'api-gateway' });
  });
});

describe('gateway /readyz over a service that is up but not ready', () => {
  // A real knowledge API whose database is dropped under it: its own /readyz answers 503.
  let api: RunningApi;
  let gateway: Gateway;
  let database: string;
  let upstreamProbes = 0;
  let counter: http.Server;

  beforeAll(async () => {
    const url = await createTestDatabase();
    database = new URL(url).pathname.slice(1);
    const env = { ...stack.env, DATABASE_URL: url };
    api = await startServiceApi(SERVICE_MODULES.knowledge.module as ServiceModule<CommonConfig, unknown>, SERVICE_MODULES.knowledge.config(env), { port: 0 });
    // counts the /readyz calls the gateway makes to admin, and passes them on
    counter = http.createServer((req, res) => {
      upstreamProbes++;
      void fetch(`http://127.0.0.1:${stack.apis.admin.port}${req.url}`).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(await r.text());
      });
    });
    await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
    gateway = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        ADMIN_URL: `http://127.0.0.1:${(counter.address() as net.AddressInfo).port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${stack.apis.integrations.port}`,
        CASH_APP_URL: `http://127.0.0.1:${stack.apis['cash-app'].port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${api.port}`,
        READYZ_CACHE_MS: '0',
      }),
      { port: 0 },
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await api?.close().catch(() => {});
    counter?.close();
  });

  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.port}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string>; not_ready?: string[] } };
  };

  it('is ready while every upstream is, and answers 503 naming the upstream once it is not', async () => {
    expect(await readyz()).toMatchObject({ status: 200, body: { status: 'ready', checks: { database: 'ok', knowledge: 'ok', admin: 'ok' } } });
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE "${database}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    expect((await fetch(`http://127.0.0.1:${api.port}/readyz`)).status).toBe(503);
    expect(await readyz()).toEqual({
      status: 503,
      body: {
        status: 'not-ready',
        service: 'api-gateway',
        checks: { database: 'ok', admin: 'ok', integrations: 'ok', 'cash-app': 'ok', knowledge: 'not-ready' },
        not_ready: ['knowledge'],
      },
    });
  });

  it('reuses one round of upstream checks for READYZ_CACHE_MS', async () => {
    const cached = await startGateway(
      loadGatewayConfig({ ...stack.env, ADMIN_URL: `http://127.0.0.1:${(counter.address() as net.AddressInfo).port}`, READYZ_CACHE_MS: '600000' }),
      { port: 0 },
    );
    try {
      const before = upstreamProbes;
      for (let i = 0; i < 3; i++) await fetch(`http://127.0.0.1:${cached.port}/readyz`).then((r) => r.text());
      await Promise.all(Array.from({ length: 3 }, () => fetch(`http://127.0.0.1:${cached.port}/readyz`).then((r) => r.text())));
      expect(upstreamProbes - before).toBe(1);
    } finally {
      await cached.close();
    }
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
    expect((await stack.request('GET', '/readyz')).body).toEqual({
      status: 'ready',
      service: 'api-gateway',
      checks: { database: 'ok', admin: 'ok', integrations: 'ok', 'cash-app': 'ok', knowledge: 'ok' },
    });
    const metrics = await stack.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.text).toContain('http_request_duration_seconds_bucket');
    for (const api of Object.values(stack.apis)) {
      const ready = await fetch(`http://127.0.0.1:${api.port}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', temporal: 'ok' } });
    }
  });
});
