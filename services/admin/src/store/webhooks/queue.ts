/**
 * SQL of webhook delivery (the engine): the dispatch cursor of each event source, the fan-out of
 * events into deliveries, the due selection of one endpoint (head of line per resource), and the
 * batched outcome writes. The API side (endpoints, delivery lists, manual retry) has its own files.
 */
import type { Knex } from 'knex';
import { currentEventCursor, newId, readEventsAfter, type Db, type EventCursor, type EventSource, type PendingEvent } from '@rp/platform';
import type { WebhookEndpointRow } from './rows.js';

/** Who got new deliveries in a fan-out (to be woken once it committed). */
export interface EndpointRef {
  organizationId: string;
  endpointId: string;
}

/** The source's cursor, locked for this transaction; created at the current position when absent. */
async function lockCursor(trx: Knex.Transaction, source: EventSource): Promise<EventCursor> {
  const found = await trx.raw<{ rows: EventCursor[] }>(`SELECT txid::text AS txid, seq::text AS seq FROM webhook_dispatch_cursors WHERE source = ? FOR UPDATE`, [source]);
  if (found.rows[0]) return found.rows[0];
  // A new deployment delivers what is recorded from now on, not the history (which GET /v2/events serves).
  const start = await currentEventCursor(trx, source);
  await trx.raw(`INSERT INTO webhook_dispatch_cursors (source, txid, seq) VALUES (?, ?::xid8, ?) ON CONFLICT (source) DO NOTHING`, [source, start.txid, start.seq]);
  const again = await trx.raw<{ rows: EventCursor[] }>(`SELECT txid::text AS txid, seq::text AS seq FROM webhook_dispatch_cursors WHERE source = ? FOR UPDATE`, [source]);
  return again.rows[0];
}

/**
 * Turns the next events of `source` (at most `limit`) into deliveries of the enabled endpoints of
 * each event's organization that subscribe to its type or to `*`, and moves the cursor past them,
 * in one transaction: an event is queued exactly once, or not at all when the transaction fails.
 * Events aimed at one endpoint (`target_endpoint_id`, the test event) were queued by the request
 * that recorded them and are skipped here.
 */
export async function dispatchNextEvents(db: Db, source: EventSource, limit: number): Promise<{ events: number; endpoints: EndpointRef[] }> {
  return db.transaction(async (trx) => {
    const cursor = await lockCursor(trx, source);
    const events = await readEventsAfter(trx, source, cursor, limit);
    if (!events.length) return { events: 0, endpoints: [] };
    const endpoints = await queueDeliveries(trx, source, events);
    const last = events[events.length - 1];
    await trx.raw(`UPDATE webhook_dispatch_cursors SET txid = ?::xid8, seq = ?, modified_at = now() WHERE source = ?`, [last.txid, last.seq, source]);
    return { events: events.length, endpoints };
  });
}

async function queueDeliveries(trx: Knex.Transaction, source: EventSource, events: PendingEvent[]): Promise<EndpointRef[]> {
  const broadcast = events.filter((e) => !e.target_endpoint_id);
  if (!broadcast.length) return [];
  const orgs = [...new Set(broadcast.map((e) => e.organization_id))];
  const { rows: endpoints } = await trx.raw<{ rows: Pick<WebhookEndpointRow, 'id' | 'organization_id' | 'events'>[] }>(
    `SELECT id, organization_id, events FROM webhook_endpoints WHERE organization_id = ANY(?::uuid[]) AND is_enabled`,
    [orgs],
  );
  if (!endpoints.length) return [];
  const rows: Record<string, unknown>[] = [];
  for (const e of broadcast) {
    for (const w of endpoints) {
      if (w.organization_id !== e.organization_id || !(w.events.includes('*') || w.events.includes(e.type))) continue;
      rows.push({ ord: rows.length, id: newId(), organization_id: e.organization_id, endpoint_id: w.id, event_id: e.id, event_source: source, event_type: e.type, resource_key: `${e.resource_type}:${e.resource_id}` });
    }
  }
  const woken = new Map<string, EndpointRef>();
  for (let i = 0; i < rows.length; i += 1000) {
    const { rows: inserted } = await trx.raw<{ rows: { endpoint_id: string; organization_id: string }[] }>(
      `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_source, event_type, resource_key, next_attempt_at)
       SELECT x.id, x.organization_id, x.endpoint_id, x.event_id, x.event_source, x.event_type, x.resource_key, now()
         FROM json_to_recordset(?::json) AS x(ord integer, id uuid, organization_id uuid, endpoint_id uuid, event_id uuid, event_source text, event_type text, resource_key text)
        -- recording order (the events' txid, seq), never id order: ids of different processes' clocks may sort the other way
        ORDER BY x.ord
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING endpoint_id, organization_id`,
      [JSON.stringify(rows.slice(i, i + 1000))],
    );
    for (const r of inserted) woken.set(r.endpoint_id, { endpointId: r.endpoint_id, organizationId: r.organization_id });
  }
  return [...woken.values()];
}

/**
 * Enabled endpoints with a delivery overdue by more than `graceSeconds`: their delivery workflow
 * should have taken it (it was terminated, or a wake was lost), so the dispatcher wakes them.
 */
export async function endpointsWithOverdueDeliveries(db: Db, graceSeconds: number, limit = 1000): Promise<EndpointRef[]> {
  const { rows } = await db.raw<{ rows: { id: string; organization_id: string }[] }>(
    `SELECT w.id, w.organization_id FROM webhook_endpoints w
      WHERE w.is_enabled AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at < now() - make_interval(secs => ?))
      LIMIT ?`,
    [graceSeconds, limit],
  );
  return rows.map((r) => ({ endpointId: r.id, organizationId: r.organization_id }));
}

export async function getEndpointForDelivery(db: Db, endpointId: string): Promise<WebhookEndpointRow | undefined> {
  return db<WebhookEndpointRow>('webhook_endpoints').where({ id: endpointId }).first();
}

export interface DueDelivery {
  id: string;
  event_id: string;
  event_source: EventSource;
  attempts: number;
}

/** The head-of-line condition: no earlier pending delivery of the same resource to the same endpoint. */
const HEAD = `NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.status = 'pending' AND p.resource_key = d.resource_key AND p.seq < d.seq)`;

/**
 * Deliveries of the endpoint due now, longest due first, at most one per resource: a resource's next
 * delivery waits until the one before it succeeded or failed for good (per-resource order; the head
 * test, not the sort, keeps it). Walks the due index (endpoint, next_attempt_at) and stops at
 * `limit`, so a backlog of thousands costs a batch only the rows it takes, not a scan of the backlog.
 */
export async function dueDeliveries(db: Db, endpointId: string, limit: number): Promise<DueDelivery[]> {
  const { rows } = await db.raw<{ rows: DueDelivery[] }>(
    `SELECT d.id, d.event_id, d.event_source, d.attempts FROM webhook_deliveries d
      WHERE d.endpoint_id = ? AND d.status = 'pending' AND d.next_attempt_at <= now() AND ${HEAD}
      ORDER BY d.next_attempt_at LIMIT ?`,
    [endpointId, limit],
  );
  return rows;
}

/** Milliseconds until the endpoint's next delivery is due (0: now), or null when none is pending. */
export async function msUntilNextDue(db: Db, endpointId: string): Promise<number | null> {
  const { rows } = await db.raw<{ rows: { ms: string | null }[] }>(
    `SELECT greatest(0, ceil(extract(epoch FROM min(d.next_attempt_at) - now()) * 1000))::bigint::text AS ms
       FROM webhook_deliveries d WHERE d.endpoint_id = ? AND d.status = 'pending' AND ${HEAD}`,
    [endpointId],
  );
  return rows[0]?.ms === null || rows[0]?.ms === undefined ? null : Number(rows[0].ms);
}

/** The result of one attempt, as recorded. */
export interface AttemptOutcome {
  id: string;
  attemptedAt: Date;
  /** 2xx in time */
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** failed for good (the last attempt of the schedule) */
  final: boolean;
  /** milliseconds until the next attempt (ignored when ok or final) */
  retryInMs: number;
}

/** Why an endpoint is disabled by delivery itself (never by a user), recorded with an email intent. */
export interface Disabling {
  reason: string;
}

/**
 * Records a batch of attempts of one endpoint in one transaction: the deliveries (one UPDATE … FROM
 * VALUES), the endpoint's `failing_since` (set at its first failure since a success, cleared by a
 * success), and, when `disable` says so or the endpoint has failed for longer than
 * `disableAfterHours`, its disabling. Answers when the endpoint was disabled by this call.
 */
export async function recordAttempts(
  db: Db,
  endpointId: string,
  outcomes: AttemptOutcome[],
  opts: { disable?: Disabling; disableAfterHours: number; onDisabled: (trx: Knex.Transaction, endpoint: WebhookEndpointRow) => Promise<void> },
): Promise<{ disabledAt: Date | null }> {
  return db.transaction(async (trx) => {
    if (outcomes.length) {
      const values = outcomes.map(() => '(?::uuid, ?::timestamptz, ?::boolean, ?::int, ?::text, ?::boolean, ?::bigint)').join(', ');
      const bindings = outcomes.flatMap((o) => [o.id, o.attemptedAt, o.ok, o.statusCode, o.error, o.final, Math.max(0, Math.round(o.retryInMs))]);
      await trx.raw(
        `UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1, last_attempt_at = o.at, last_status_code = o.code, last_error = o.error,
                status = CASE WHEN o.ok THEN 'succeeded' WHEN o.final THEN 'failed' ELSE 'pending' END,
                next_attempt_at = CASE WHEN o.ok OR o.final THEN NULL ELSE now() + make_interval(secs => o.retry_ms / 1000.0) END,
                modified_at = now()
           FROM (VALUES ${values}) AS o(id, at, ok, code, error, final, retry_ms)
          WHERE d.id = o.id AND d.status = 'pending'`,
        bindings,
      );
    }
    const anyOk = outcomes.some((o) => o.ok);
    const failures = outcomes.filter((o) => !o.ok);
    const firstFailure = failures.length ? new Date(Math.min(...failures.map((o) => o.attemptedAt.getTime()))) : null;
    const { rows } = await trx.raw<{ rows: { failing_since: Date | null; overdue: boolean }[] }>(
      `UPDATE webhook_endpoints
          SET failing_since = CASE WHEN ?::boolean THEN NULL WHEN ?::timestamptz IS NULL THEN failing_since ELSE coalesce(failing_since, ?::timestamptz) END
        WHERE id = ?
        RETURNING failing_since, (failing_since < now() - make_interval(secs => ? * 3600.0)) AS overdue`,
      [anyOk, firstFailure, firstFailure, endpointId, opts.disableAfterHours],
    );
    const endpoint = rows[0];
    if (!endpoint) return { disabledAt: null };
    let reason = opts.disable?.reason;
    if (!reason && failures.length && !anyOk && endpoint.overdue) {
      reason = `Every delivery attempt since ${endpoint.failing_since!.toISOString()} failed (more than ${opts.disableAfterHours} hours).`;
    }
    if (!reason) return { disabledAt: null };
    const disabled = await trx<WebhookEndpointRow>('webhook_endpoints')
      .where({ id: endpointId, is_enabled: true })
      .update({ is_enabled: false, disabled_reason: reason.slice(0, 1000), disabled_at: trx.fn.now() as unknown as Date, modified_at: trx.fn.now() as unknown as Date }, '*');
    if (!disabled[0]) return { disabledAt: null };
    await opts.onDisabled(trx, disabled[0]);
    return { disabledAt: disabled[0].disabled_at };
  });
}
