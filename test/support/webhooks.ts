/**
 * Webhook delivery in end-to-end tests: a real HTTP receiver on loopback that verifies every request
 * with the `standardwebhooks` package exactly as a customer's receiver would, endpoints made, read,
 * tested and rotated through the webhook-endpoint API (through the gateway, as an org admin), and
 * events recorded through the kernel in a service's own schema.
 *
 * Events of a chosen type, resource and organization (`payment.approved` of `pay-1`, a burst of two
 * thousand) are recorded with the kernel's recordEvents on a connection whose search_path is a
 * service schema, as every service records them: no API call of the stacks these tests start emits
 * them. Where any event will do, tests send the endpoint's test event (POST …/test) instead.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createDb, recordEvents, type NewEvent } from '@rp/platform';
import type { Org, TestStack } from './stack.js';

export interface Received {
  id: string;
  timestamp: number;
  signature: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  /** the verification by `new Webhook(secret).verify(raw, headers)` succeeded */
  verified: boolean;
  /** the request was answered 2xx */
  ok: boolean;
  /** the receiver's wall clock when the request arrived (ms) */
  at: number;
}

/** What the receiver answers a request: a status, or 'hang' (never answer until it is closed). */
export type Answer = number | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** decides the answer of each request (default 200) */
  answer: (req: { id: string; body: any; nth: number }) => Answer;
  /** milliseconds each answer is held back (a receiver doing some work) */
  delayMs: number;
  close(): Promise<void>;
  /** resolves once `predicate` holds of the requests received (polls; bounded by `timeoutMs`) */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
}

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A receiver verifying with `secrets` (every one must verify on its own when several are given). */
export async function startReceiver(secrets: () => string[], host = '127.0.0.1'): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const counts = new Map<string, number>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    delayMs: 0,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async waitFor(predicate, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met; ${receiver.received.length} requests received`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return receiver.received;
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
      const verified = secrets().every((s) => {
        try {
          new Webhook(s).verify(raw, headers);
          return true;
        } catch {
          return false;
        }
      });
      let body: any = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // kept raw
      }
      const id = headers['webhook-id'];
      const nth = (counts.get(id) ?? 0) + 1;
      counts.set(id, nth);
      const answer = receiver.answer({ id, body, nth });
      receiver.received.push({ id, timestamp: Number(headers['webhook-timestamp']), signature: headers['webhook-signature'], headers: req.headers, raw, body, verified, ok: typeof answer === 'number' && answer < 300, at: Date.now() });
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const send = () => res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'no');
      if (receiver.delayMs > 0) setTimeout(send, receiver.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://${host}:${receiver.port}/hooks`;
  return receiver;
}

const BASE = '/v2/webhook-endpoints';

/** Calls the webhook-endpoint API as the organization's admin; throws unless the answer is `expected`. */
async function call(stack: TestStack, org: Org, method: string, path: string, body?: unknown, expected = 200): Promise<any> {
  const res = await stack.request(method, `${BASE}${path}`, { token: org.token, body });
  if (res.status !== expected) throw new Error(`${method} ${BASE}${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface Endpoint {
  id: string;
  /** the signing secret, answered once by the create call */
  secret: string;
}

/** Creates an endpoint (POST /v2/webhook-endpoints; events default `["*"]`). */
export async function createEndpoint(stack: TestStack, org: Org, o: { url: string; events?: string[] }): Promise<Endpoint> {
  const made = await call(stack, org, 'POST', '', { url: o.url, events: o.events ?? ['*'] });
  return { id: made.id, secret: made.secret };
}

/** The endpoint as GET /v2/webhook-endpoints/{id} shows it. */
export async function getEndpoint(stack: TestStack, org: Org, id: string): Promise<any> {
  return call(stack, org, 'GET', `/${id}`);
}

/** PATCH /v2/webhook-endpoints/{id} {is_enabled}; answers the endpoint. */
export async function setEnabled(stack: TestStack, org: Org, id: string, isEnabled: boolean): Promise<any> {
  return call(stack, org, 'PATCH', `/${id}`, { is_enabled: isEnabled });
}

/** DELETE /v2/webhook-endpoints/{id}. */
export async function deleteEndpoint(stack: TestStack, org: Org, id: string): Promise<void> {
  await call(stack, org, 'DELETE', `/${id}`);
}

/** POST /v2/webhook-endpoints/{id}/rotate-secret; answers `{ secret, previous_secret_expires_at }`. */
export async function rotateSecret(stack: TestStack, org: Org, id: string): Promise<{ secret: string; previous_secret_expires_at: string | null }> {
  return call(stack, org, 'POST', `/${id}/rotate-secret`);
}

/** Sends the endpoint's test event (POST …/test, 202); answers its (pending) delivery. */
export async function sendTestEvent(stack: TestStack, org: Org, id: string): Promise<any> {
  return call(stack, org, 'POST', `/${id}/test`, undefined, 202);
}

/** The endpoint's deliveries as GET …/deliveries lists them (every page), oldest first. */
export async function deliveriesOf(stack: TestStack, org: Org, endpointId: string): Promise<any[]> {
  const all: any[] = [];
  for (let page = 0; ; page++) {
    const body = await call(stack, org, 'GET', `/${endpointId}/deliveries?page=${page}&page_size=200`);
    all.push(...body.data);
    if (body.next_page === null || body.next_page === undefined || body.data.length === 0) break;
  }
  return all.reverse();
}

/** How many of the endpoint's deliveries are in `status` (GET …/deliveries?status=, total_records). */
export async function deliveryCount(stack: TestStack, org: Org, endpointId: string, status: 'pending' | 'succeeded' | 'failed'): Promise<number> {
  return (await call(stack, org, 'GET', `/${endpointId}/deliveries?status=${status}&page_size=1`)).total_records;
}

/** Records events in one transaction of `schema` (as a service does with its change); returns their ids. */
export async function recordTestEvents(stack: TestStack, events: NewEvent[], schema = 'cash_app'): Promise<string[]> {
  const db = createDb({ url: stack.databaseUrl, schema, poolMax: 1 });
  try {
    const recorded = await db.transaction((trx) => recordEvents(trx, events));
    return recorded.map((r) => r.id);
  } finally {
    await db.destroy();
  }
}

/** A `payment.approved` event of payment `resourceId` with a small object. */
export function paymentEvent(organizationId: string, resourceId: string, note: string): NewEvent {
  return { organizationId, type: 'payment.approved', resourceId, object: { object: 'payment', id: resourceId, note } };
}

/** Waits until the dispatcher has taken its starting position in every source (events recorded before it would not be queued). */
export async function dispatcherReady(stack: TestStack, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [{ n }] = await stack.sql<{ n: number }>(`SELECT count(*)::int AS n FROM admin.webhook_dispatch_cursors`);
    if (n >= 4) return;
    if (Date.now() > deadline) throw new Error('the webhook dispatcher did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}
