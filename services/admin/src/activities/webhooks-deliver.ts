/**
 * An endpoint's delivery activity: while deliveries are due, takes a batch (at most one per
 * resource: per-resource order), sends them concurrently through the kernel's guarded client (the
 * URL is checked again at every attempt, on pooled keep-alive connections), and records the batch's
 * outcomes in one transaction (store/webhooks/queue.ts).
 *
 * Outcomes (spec §3 Delivery): a 2xx within WEBHOOK_TIMEOUT_MS succeeds. 410 Gone disables the
 * endpoint at once and leaves its deliveries pending (paused until it is re-enabled). Anything else
 * (timeout, another status, a refused connection, a request the guard refuses, a redirect: redirects
 * are not followed) is a failed attempt, retried by the schedule; after the last it has failed for
 * good. An endpoint failing every attempt for WEBHOOK_DISABLE_AFTER_HOURS is disabled. Either
 * disabling records the admins' email intent in the same transaction.
 */
import http from 'node:http';
import https from 'node:https';
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { eventBodies, guardedFetch, openSecret, OutboundBlockedError, type Db, type EventSource, type OutboundPolicy, type SecretsKeyConfig } from '@rp/platform';
import type { DeliverDueWebhooksResult, WebhookDeliveryActivities } from '@rp/workflows';
import { dueDeliveries, getEndpointForDelivery, msUntilNextDue, recordAttempts, type AttemptOutcome, type DueDelivery } from '../store/webhooks/queue.js';
import { endpointSecretAad, type WebhookEndpointRow } from '../store/webhooks/rows.js';
import { webhookHeaders } from '../domain/webhooks/signing.js';
import { nextRetry } from '../domain/webhooks/retry-schedule.js';
import { findDisabledNotice, recordDisabledNotice } from '../store/webhooks/notices.js';

export interface WebhookDeliverDeps {
  db: Db;
  log: Logger;
  policy: OutboundPolicy;
  secrets: SecretsKeyConfig;
  retryDelaysSeconds: readonly number[];
  timeoutMs: number;
  disableAfterHours: number;
  concurrency: number;
}

/** One activity run delivers for at most this long, then answers (the workflow loops at once). */
const RUN_BUDGET_MS = 5 * 60_000;
const MAX_ERROR = 500;
/** A batch holds this many deliveries per request slot: its database round trips are shared by more requests. */
const BATCH_PER_SLOT = 4;

/** `fn` over `items` with at most `limit` running at once; results in input order. */
async function inPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

function describeError(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundBlockedError) return err.message;
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = e?.cause;
  if (cause?.code) return `connection failed (${cause.code})`;
  return (cause?.message ?? e?.message ?? 'request failed').slice(0, MAX_ERROR);
}

function secretsOf(endpoint: WebhookEndpointRow, config: SecretsKeyConfig, now: Date): string[] {
  const aad = endpointSecretAad(endpoint.id);
  const secrets = [openSecret(config, aad, endpoint.secret_enc, 'webhook secret')];
  if (endpoint.previous_secret_enc && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now) {
    secrets.push(openSecret(config, aad, endpoint.previous_secret_enc, 'webhook secret'));
  }
  return secrets;
}

export function createWebhookDeliverActivities(deps: WebhookDeliverDeps): WebhookDeliveryActivities {
  // Keep-alive pools for every endpoint of this worker (one policy: the worker's OUTBOUND_ALLOWLIST).
  const agents = {
    http: new http.Agent({ keepAlive: true, maxFreeSockets: 256 }),
    https: new https.Agent({ keepAlive: true, maxFreeSockets: 256 }),
  };

  async function attempt(endpoint: WebhookEndpointRow, secrets: string[], d: DueDelivery, body: string | undefined): Promise<AttemptOutcome & { gone: boolean }> {
    const at = new Date();
    const failed = (statusCode: number | null, error: string) => ({ id: d.id, attemptedAt: at, ok: false, statusCode, error: error.slice(0, MAX_ERROR), gone: false, ...nextRetry(deps.retryDelaysSeconds, d.attempts + 1) });
    // The event is gone (pruned after the retention period): nothing left to send.
    if (body === undefined) return { ...failed(null, 'The event no longer exists (past the event retention period).'), final: true };
    try {
      const res = await guardedFetch(endpoint.url, {
        policy: deps.policy,
        method: 'POST',
        headers: webhookHeaders(d.event_id, body, secrets, at),
        body,
        signal: AbortSignal.timeout(deps.timeoutMs),
        maxRedirects: 0,
        maxBytes: 1024 * 1024,
        agents,
      });
      if (res.status >= 200 && res.status < 300) return { id: d.id, attemptedAt: at, ok: true, statusCode: res.status, error: null, final: false, retryInMs: 0, gone: false };
      if (res.status === 410) return { ...failed(410, 'The endpoint answered 410 Gone.'), final: false, retryInMs: 0, gone: true };
      return failed(res.status, `The endpoint answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`);
    } catch (err) {
      return failed(null, describeError(err, deps.timeoutMs));
    }
  }

  async function bodiesOf(due: DueDelivery[]): Promise<Map<string, string>> {
    const bySource = new Map<EventSource, string[]>();
    for (const d of due) bySource.set(d.event_source, [...(bySource.get(d.event_source) ?? []), d.event_id]);
    const out = new Map<string, string>();
    for (const [source, ids] of bySource) for (const [id, body] of await eventBodies(deps.db, source, ids)) out.set(id, body);
    return out;
  }

  async function disabled(endpoint: WebhookEndpointRow): Promise<DeliverDueWebhooksResult> {
    return { status: 'disabled', noticeKey: endpoint.disabled_at ? await findDisabledNotice(deps.db, endpoint.id, endpoint.disabled_at) : null };
  }

  return {
    async deliverDueWebhooks({ endpointId }) {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 5000);
      const started = Date.now();
      try {
        for (;;) {
          ctx.heartbeat();
          const endpoint = await getEndpointForDelivery(deps.db, endpointId);
          if (!endpoint) return { status: 'gone' };
          if (!endpoint.is_enabled) return await disabled(endpoint);
          if (ctx.cancellationSignal.aborted || Date.now() - started > RUN_BUDGET_MS) return { status: 'idle', nextDueInMs: 0 };
          const t0 = performance.now();
          const due = await dueDeliveries(deps.db, endpointId, deps.concurrency * BATCH_PER_SLOT);
          const t1 = performance.now();
          if (!due.length) return { status: 'idle', nextDueInMs: await msUntilNextDue(deps.db, endpointId) };
          const secrets = secretsOf(endpoint, deps.secrets, new Date());
          const bodies = await bodiesOf(due);
          const t2 = performance.now();
          const outcomes = await inPool(due, deps.concurrency, (d) => attempt(endpoint, secrets, d, bodies.get(d.event_id)));
          const gone = outcomes.find((o) => o.gone);
          const result = await recordAttempts(deps.db, endpointId, outcomes, {
            disable: gone ? { reason: `The endpoint answered 410 Gone at ${gone.attemptedAt.toISOString()}.` } : undefined,
            disableAfterHours: deps.disableAfterHours,
            onDisabled: (trx, row) => recordDisabledNotice(trx, row),
          });
          deps.log.debug({ endpoint_id: endpointId, batch: due.length, due_ms: t1 - t0, bodies_ms: t2 - t1, send_and_record_ms: performance.now() - t2 }, 'webhook batch');
          if (result.disabledAt) {
            deps.log.warn({ organization_id: endpoint.organization_id, endpoint_id: endpointId }, 'webhook endpoint disabled by delivery');
          }
        }
      } finally {
        clearInterval(beat);
      }
    },
  };
}
