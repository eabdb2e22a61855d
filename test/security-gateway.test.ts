/**
 * Security controls of the gateway, as a client (and an attacker) meets them: failed
 * authentications are rate-limited per client address before any credential look-up (observed
 * through the gateway's own look-up counter in /metrics), X-Forwarded-For is believed only from
 * TRUSTED_PROXIES, /metrics needs the scrape token, and a captured signed identity cannot be
 * replayed on another path, method or service.
 *
 * The identity is captured by a second gateway whose admin upstream is a recording server on
 * loopback (a network position an attacker inside the cluster could have); the replays go to the
 * real services of the stack.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig, startGateway, type Gateway } from '@rp/api-gateway';
import { METRICS_TOKEN, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
const extra: Gateway[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { AUTH_FAILURE_BURST: '5', AUTH_FAILURE_PER_MINUTE: '1', TRUSTED_PROXIES: '127.0.0.1' } });
  org = await stack.onboard();
});
afterAll(async () => {
  for (const g of extra) await g.close();
  await stack?.close();
});

const badToken = () => `rpu_${randomBytes(32).toString('base64url')}`;

async function metric(name: string, base = stack.gatewayUrl): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line ? Number(line.trim().split(/\s+/).pop()) : 0;
}

function from(address: string, token: string, path = '/v2/users/me') {
  return stack.request('GET', path, { token, headers: { 'x-forwarded-for': address } });
}

describe('failed authentications are rate-limited per client address before the look-up', () => {
  it('answers 429 with Retry-After after N bad tokens and makes no credential look-up for the rest', async () => {
    const client = '203.0.113.7';
    // A valid token used earlier from elsewhere is in the gateway's credential cache.
    expect((await from('198.51.100.20', org.token)).status).toBe(200);
    const before = await metric('gateway_credential_lookups_total');
    for (let i = 0; i < 5; i++) expect((await from(client, badToken())).status).toBe(401);
    expect(await metric('gateway_credential_lookups_total')).toBe(before + 5);

    const limited = await from(client, badToken());
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ type: 'rate-limited', status: 429, detail: expect.stringMatching(/failed authentications/) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // A valid token the gateway has not verified yet (the organization API key) would need a look-up: refused too.
    expect((await from(client, org.apiKey, '/v2/integrations/providers')).status).toBe(429);
    for (let i = 0; i < 20; i++) expect((await from(client, badToken())).status).toBe(429);
    expect(await metric('gateway_credential_lookups_total')).toBe(before + 5);
    expect(await metric('gateway_auth_failure_limited_total')).toBeGreaterThanOrEqual(22);

    // A token already verified (cached) still works from that address; other addresses are unaffected.
    expect((await from(client, org.token)).status).toBe(200);
    expect((await from('203.0.113.8', badToken())).status).toBe(401);
  });

  it('takes the client address from X-Forwarded-For only behind a trusted proxy, right to left', async () => {
    const client = '203.0.113.9';
    for (let i = 0; i < 5; i++) expect((await from(client, badToken())).status).toBe(401);
    // Prepending another address does not change who the trusted proxy (127.0.0.1) says the client is.
    expect((await from(`192.0.2.55, ${client}`, badToken())).status).toBe(429);
  });

  it('ignores X-Forwarded-For when no proxy is trusted (the default): the socket address counts', async () => {
    const gateway = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        AUTH_FAILURE_BURST: '3',
        AUTH_FAILURE_PER_MINUTE: '1',
        TRUSTED_PROXIES: '',
        ADMIN_URL: `http://127.0.0.1:${stack.apis.admin.port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${stack.apis.integrations.port}`,
        CASH_APP_URL: `http://127.0.0.1:${stack.apis['cash-app'].port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${stack.apis.knowledge.port}`,
      }),
      { port: 0 },
    );
    extra.push(gateway);
    const base = `http://127.0.0.1:${gateway.port}`;
    const call = (xff: string) => fetch(`${base}/v2/users/me`, { headers: { authorization: `Bearer ${badToken()}`, 'x-forwarded-for': xff } });
    for (let i = 0; i < 3; i++) expect((await call(`198.51.100.${i + 1}`)).status).toBe(401);
    const res = await call('198.51.100.99');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('/metrics is not public', () => {
  it('needs the scrape token on the gateway and on every service', async () => {
    const bases = [stack.gatewayUrl, ...Object.values(stack.apis).map((a) => `http://127.0.0.1:${a.port}`)];
    for (const base of bases) {
      const open = await fetch(`${base}/metrics`);
      expect(open.status, base).toBe(401);
      expect(await open.text()).not.toContain('http_request_duration_seconds');
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${org.token}` } })).status, base).toBe(401);
      const ok = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(ok.status, base).toBe(200);
      expect(await ok.text()).toContain('http_request_duration_seconds');
    }
  });
});

describe('signed identity is bound to method, path and service', () => {
  let captured: { method: string; url: string; identity: string }[] = [];
  let recorder: http.Server;
  let gatewayUrl: string;

  beforeAll(async () => {
    recorder = http.createServer((req, res) => {
      captured.push({ method: req.method!, url: req.url!, identity: String(req.headers['x-rp-identity']) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    const gateway = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        ADMIN_URL: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${stack.apis.integrations.port}`,
        CASH_APP_URL: `http://127.0.0.1:${stack.apis['cash-app'].port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${stack.apis.knowledge.port}`,
      }),
      { port: 0 },
    );
    extra.push(gateway);
    gatewayUrl = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => new Promise<void>((r) => recorder.close(() => r())));

  async function capture(method: string, path: string) {
    captured = [];
    const res = await fetch(gatewayUrl + path, { method, headers: { authorization: `Bearer ${org.token}` } });
    expect(res.status).toBe(200);
    expect(captured).toHaveLength(1);
    expect(captured[0]).toMatchObject({ method, url: path });
    return captured[0].identity;
  }

  const direct = (service: keyof TestStack['apis'], method: string, path: string, identity: string) =>
    fetch(`http://127.0.0.1:${stack.apis[service].port}${path}`, { method, headers: { 'x-rp-identity': identity } });

  it('accepts the captured identity only for the request it was signed for', async () => {
    const identity = await capture('GET', '/v2/users/me');
    // The same request replayed at once is accepted (within the identity's time window): the control.
    expect((await direct('admin', 'GET', '/v2/users/me', identity)).status).toBe(200);
    // Another path, another query, another method: 401.
    expect((await direct('admin', 'GET', '/v2/users', identity)).status).toBe(401);
    expect((await direct('admin', 'GET', '/v2/users/me?x=1', identity)).status).toBe(401);
    expect((await direct('admin', 'GET', '/v2/api-keys', identity)).status).toBe(401);
    const del = await direct('admin', 'DELETE', `/v2/users/${org.userId}`, identity);
    expect(del.status).toBe(401);
    expect(await del.json()).toMatchObject({ type: 'unauthorized', status: 401 });
    // Another service, even on a path it serves: 401.
    for (const service of ['integrations', 'cash-app', 'knowledge'] as const) {
      expect((await direct(service, 'GET', '/v2/users/me', identity)).status, service).toBe(401);
    }
  });

  it('does not let an identity for one service be used on another service\'s path', async () => {
    const identity = await capture('POST', '/v2/business-units');
    expect((await direct('cash-app', 'POST', '/v2/business-units', identity)).status).toBe(401);
    expect((await direct('integrations', 'GET', '/v2/integrations/providers', identity)).status).toBe(401);
    expect((await direct('admin', 'GET', '/v2/business-units', identity)).status).toBe(401);
  });
});
