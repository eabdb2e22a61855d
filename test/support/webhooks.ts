/**
 * Webhook delivery in end-to-end tests: a real HTTP receiver on loopback that verifies every request
 * with the `standardwebhooks` package exactly as a customer's receiver would, endpoint rows, and
 * events recorded through the kernel in a service's own schema.
 *
 * Endpoints are created as rows (sealed secret, admin's migration 011 tables) until the endpoint API
 * is on this branch; events with the kernel's recordEvents on a connection whose search_path is a
 * service schema, as every service records them.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createDb, newId, recordEvents, sealSecret, type NewEvent } from '@rp/platform';
import { connectTemporal } from '@rp/platform';
import { endpointSecretAad } from '../../services/admin/src/store/webhooks/rows.js';
import { wakeWebhookEndpoint } from '../../services/admin/src/domain/webhooks/wake.js';
import type { TestStack } from './stack.js';

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

export interface EndpointOptions {
  url: string;
  secret: string;
  events?: string[];
  previousSecret?: { secret: string; expiresAt: Date };
}

/** An endpoint row of the organization (sealed secret, as the endpoint API stores it). */
export async function createEndpointRow(stack: TestStack, organizationId: string, o: EndpointOptions): Promise<string> {
  const id = newId();
  const keys = { CONNECTION_SECRETS_KEY: stack.env.CONNECTION_SECRETS_KEY };
  await stack.sql(
    `INSERT INTO admin.webhook_endpoints (id, organization_id, url, events, secret_enc, previous_secret_enc, previous_secret_expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, organizationId, o.url, o.events ?? ['*'], sealSecret(keys, endpointSecretAad(id), o.secret), o.previousSecret ? sealSecret(keys, endpointSecretAad(id), o.previousSecret.secret) : null, o.previousSecret?.expiresAt ?? null],
  );
  return id;
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

/** Wakes an endpoint's delivery workflow as the endpoint API does after re-enabling it. */
export async function wakeEndpoint(stack: TestStack, organizationId: string, endpointId: string): Promise<void> {
  const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  try {
    await wakeWebhookEndpoint(t.client, { organizationId, endpointId });
  } finally {
    await t.close();
  }
}

/** The delivery rows of an endpoint, oldest first. */
export async function deliveriesOf(stack: TestStack, endpointId: string): Promise<any[]> {
  return stack.sql(`SELECT * FROM admin.webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq`, [endpointId]);
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
