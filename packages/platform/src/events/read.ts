/**
 * Reading the events every service records in its own schema: the one module that reads another
 * service's `events` table (read-only). The event log (`GET /v2/events`) and webhook delivery both
 * read through here.
 */
import type { Knex } from 'knex';
import type { BusinessUnitScope } from '../ledger/scope.js';
import { EVENT_SOURCES, type EventSource, type EventType } from './catalogue.js';

export interface EventRow {
  id: string;
  source: EventSource;
  organization_id: string;
  business_unit_id: string | null;
  type: EventType;
  resource_type: string;
  resource_id: string;
  data: unknown;
  previous_attributes: unknown;
  target_endpoint_id: string | null;
  created_at: Date;
}

/** The envelope of an event (also the webhook body): `data.object` is the resource as the API returned it. */
export interface EventEnvelope {
  id: string;
  object: 'event';
  type: EventType;
  created_at: string;
  data: { object: unknown };
  previous_attributes?: unknown;
}

export function eventEnvelope(row: Pick<EventRow, 'id' | 'type' | 'created_at' | 'data' | 'previous_attributes'>): EventEnvelope {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    created_at: row.created_at.toISOString(),
    data: { object: row.data },
    ...(row.previous_attributes ? { previous_attributes: row.previous_attributes } : {}),
  };
}

const present = new Set<EventSource>();

/**
 * The sources whose `events` table exists. A service deployed on its own migrates its schema when it
 * starts, so a reader may run before another service has: that source is skipped until it exists.
 */
export async function eventSources(db: Knex): Promise<EventSource[]> {
  const missing = EVENT_SOURCES.filter((s) => !present.has(s));
  if (missing.length) {
    const found = await db.raw<{ rows: { s: EventSource }[] }>(
      `SELECT s FROM unnest(?::text[]) AS s WHERE to_regclass(quote_ident(s) || '.events') IS NOT NULL`,
      [missing],
    );
    for (const { s } of found.rows) present.add(s);
  }
  return EVENT_SOURCES.filter((s) => present.has(s));
}

function table(source: EventSource): string {
  return `${source}.events`;
}

export interface EventQuery {
  organizationId: string;
  scope: BusinessUnitScope;
  types?: readonly EventType[];
  createdAfter?: Date;
  createdBefore?: Date;
  offset: number;
  limit: number;
}

function eventsUnion(sources: EventSource[], q: Omit<EventQuery, 'offset' | 'limit'>, columns: string): { sql: string; bindings: Knex.RawBinding[] } {
  const parts: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  for (const source of sources) {
    let sql = `SELECT ${columns}, '${source}'::text AS source FROM ${table(source)} WHERE organization_id = ?`;
    bindings.push(q.organizationId);
    if (q.scope !== '*') {
      sql += ` AND (business_unit_id IS NULL OR business_unit_id = ANY(?::uuid[]))`;
      bindings.push([...q.scope] as unknown as Knex.RawBinding);
    }
    if (q.types?.length) {
      sql += ` AND type = ANY(?::text[])`;
      bindings.push([...q.types] as unknown as Knex.RawBinding);
    }
    if (q.createdAfter) {
      sql += ` AND created_at > ?`;
      bindings.push(q.createdAfter);
    }
    if (q.createdBefore) {
      sql += ` AND created_at < ?`;
      bindings.push(q.createdBefore);
    }
    parts.push(sql);
  }
  return { sql: parts.join(' UNION ALL '), bindings };
}

const COLUMNS = 'id, organization_id, business_unit_id, type, resource_type, resource_id, data, previous_attributes, target_endpoint_id, created_at';

/** A page of the organization's events, newest first, within the caller's business units. */
export async function listEvents(db: Knex, q: EventQuery): Promise<{ rows: EventRow[]; total: number }> {
  const sources = await eventSources(db);
  if (!sources.length) return { rows: [], total: 0 };
  const union = eventsUnion(sources, q, COLUMNS);
  const ids = eventsUnion(sources, q, 'id');
  const [page, count] = await Promise.all([
    db.raw<{ rows: EventRow[] }>(`SELECT * FROM (${union.sql}) e ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, [...union.bindings, q.limit, q.offset]),
    db.raw<{ rows: { n: string }[] }>(`SELECT count(*) AS n FROM (${ids.sql}) e`, ids.bindings),
  ]);
  return { rows: page.rows, total: Number(count.rows[0].n) };
}

/** One event of the organization within the caller's business units, or null. */
export async function getEvent(db: Knex, organizationId: string, scope: BusinessUnitScope, id: string): Promise<EventRow | null> {
  const sources = await eventSources(db);
  if (!sources.length) return null;
  const union = eventsUnion(sources, { organizationId, scope }, COLUMNS);
  const { rows } = await db.raw<{ rows: EventRow[] }>(`SELECT * FROM (${union.sql}) e WHERE id = ?`, [...union.bindings, id]);
  return rows[0] ?? null;
}

/** A reader's position in one source: the last (txid, seq) it has taken. */
export interface EventCursor {
  txid: string;
  seq: string;
}

/** What delivery needs of a new event to decide who gets it (the body is read later, by id). */
export interface PendingEvent {
  id: string;
  seq: string;
  txid: string;
  organization_id: string;
  type: EventType;
  resource_type: string;
  resource_id: string;
  target_endpoint_id: string | null;
}

/**
 * The position after every event that can be read now (the start for a reader with no cursor: it
 * delivers what is recorded from now on, not the history).
 */
export async function currentEventCursor(db: Knex, source: EventSource): Promise<EventCursor> {
  const { rows } = await db.raw<{ rows: { txid: string | null; seq: string | null; xmin: string }[] }>(
    `SELECT (SELECT txid::text FROM ${table(source)} WHERE txid < x.xmin ORDER BY txid DESC, seq DESC LIMIT 1) AS txid,
            (SELECT seq::text FROM ${table(source)} WHERE txid < x.xmin ORDER BY txid DESC, seq DESC LIMIT 1) AS seq,
            x.xmin::text AS xmin
       FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) x`,
  );
  return { txid: rows[0].txid ?? '0', seq: rows[0].seq ?? '0' };
}

/**
 * Events after `cursor`, in (txid, seq) order, only of transactions older than every transaction
 * still running (`txid < xmin` of the current snapshot): those have all committed or rolled back, so
 * no event can later appear before the last one returned. A long-running transaction anywhere in
 * the cluster holds delivery back (never loses an event) until it ends.
 */
export async function readEventsAfter(db: Knex, source: EventSource, cursor: EventCursor, limit: number): Promise<PendingEvent[]> {
  const { rows } = await db.raw<{ rows: PendingEvent[] }>(
    `SELECT id, seq::text AS seq, txid::text AS txid, organization_id, type, resource_type, resource_id, target_endpoint_id
       FROM ${table(source)}
      WHERE (txid, seq) > (?::xid8, ?::bigint) AND txid < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY txid, seq
      LIMIT ?`,
    [cursor.txid, cursor.seq, limit],
  );
  return rows;
}

/**
 * The webhook bodies (the event envelope as JSON text) of events of one source, by id. The resource
 * is inserted as stored, so every attempt of a delivery sends byte-identical bodies.
 */
export async function eventBodies(db: Knex, source: EventSource, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!ids.length) return out;
  const { rows } = await db.raw<{ rows: { id: string; type: string; created_at: Date; data: string; previous_attributes: string | null }[] }>(
    `SELECT id, type, created_at, data::text AS data, previous_attributes::text AS previous_attributes FROM ${table(source)} WHERE id = ANY(?::uuid[])`,
    [[...ids]],
  );
  for (const r of rows) {
    out.set(
      r.id,
      `{"id":${JSON.stringify(r.id)},"object":"event","type":${JSON.stringify(r.type)},"created_at":${JSON.stringify(r.created_at.toISOString())},"data":{"object":${r.data}}` +
        (r.previous_attributes ? `,"previous_attributes":${r.previous_attributes}` : '') +
        '}',
    );
  }
  return out;
}

/** Deletes the caller's own schema's events recorded before `before`, at most `limit`; returns how many. */
export async function pruneOwnEvents(db: Knex, before: Date, limit = 10_000): Promise<number> {
  const { rowCount } = await db.raw<{ rowCount: number }>(
    `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    [before, limit],
  );
  return rowCount;
}
