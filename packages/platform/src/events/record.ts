/**
 * Recording events: call inside the transaction that makes the change (a transactional outbox), on
 * the service's own connection (its search_path is its schema, so the row lands in its own
 * `events` table). Nothing is recorded for a change that rolls back, and nothing can be lost
 * between a commit and a separate "publish" step, because there is none: delivery reads the table.
 */
import type { Knex } from 'knex';
import { newId } from '../ids.js';
import { EVENT_CATALOGUE, type EventType } from './catalogue.js';

/** The channel a commit that recorded events notifies (delivery listens; it also polls). */
export const EVENTS_CHANNEL = 'rp_events';

/**
 * The business unit of an event no member may read (the nil UUID, never a unit's id): its resource
 * spans several units, or is visible to admins and to members of every unit only (an inbox message
 * matched to no customer). Members with unit restrictions never match it; unrestricted readers do.
 */
export const MEMBERS_EXCLUDED_BUSINESS_UNIT = '00000000-0000-0000-0000-000000000000';

export interface NewEvent {
  organizationId: string;
  type: EventType;
  /** id of the resource in `object` (events of one resource are delivered in the order recorded) */
  resourceId: string;
  /** the resource exactly as the API returns it at this moment */
  object: object;
  /** business unit of the resource (null: tied to none); the event log honours it like the resource */
  businessUnitId?: string | null;
  /** for `*.updated`-style events: the changed fields' values before the change */
  previousAttributes?: object | null;
  /** deliver to this webhook endpoint only (`webhook.test`) instead of every subscribed endpoint */
  targetEndpointId?: string | null;
}

export interface RecordedEvent {
  id: string;
  type: EventType;
}

const CHUNK = 500;

/** Records events in the caller's transaction; returns their ids in input order. */
export async function recordEvents(trx: Knex | Knex.Transaction, events: readonly NewEvent[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({
    id: newId(),
    organization_id: e.organizationId,
    business_unit_id: e.businessUnitId ?? null,
    type: e.type,
    resource_type: EVENT_CATALOGUE[e.type].resource,
    resource_id: e.resourceId,
    data: JSON.stringify(e.object),
    previous_attributes: e.previousAttributes ? JSON.stringify(e.previousAttributes) : null,
    target_endpoint_id: e.targetEndpointId ?? null,
  }));
  for (let i = 0; i < rows.length; i += CHUNK) await trx('events').insert(rows.slice(i, i + CHUNK));
  // Delivered at commit only (and deduplicated within the transaction): wakes delivery at once.
  await trx.raw('SELECT pg_notify(?, ?)', [EVENTS_CHANNEL, '']);
  return rows.map((r) => ({ id: r.id, type: r.type as EventType }));
}

/** Records one event in the caller's transaction. */
export async function recordEvent(trx: Knex | Knex.Transaction, event: NewEvent): Promise<RecordedEvent> {
  const [recorded] = await recordEvents(trx, [event]);
  return recorded;
}

/** Fields of `after` whose values differ from `before`, with their values in `before` (for `previous_attributes`). */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> | null {
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(after)) {
    if (key === 'modified_at' || key === 'updated_at') continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) changed[key] = before[key] ?? null;
  }
  return Object.keys(changed).length ? changed : null;
}
