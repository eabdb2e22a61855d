/**
 * The event log (`GET /v2/events`): every service's events, read through the kernel's events module,
 * within the caller's business units. Events are kept EVENT_RETENTION_DAYS (default 30).
 * `created_after` and `created_before` are exclusive bounds on `created_at` as the API shows it
 * (millisecond precision).
 */
import { getEvent, listEvents, NotFoundError, type BusinessUnitScope, type Db, type EventRow, type EventType } from '@rp/platform';

export async function eventsOf(
  { db }: { db: Db },
  q: { organizationId: string; scope: BusinessUnitScope; types?: EventType[]; createdAfter?: Date; createdBefore?: Date; offset: number; limit: number },
): Promise<{ rows: EventRow[]; total: number }> {
  // The API shows `created_at` to the millisecond while it is stored to the microsecond: an event
  // shown at `created_after` itself must not come back, so the bound is the next millisecond.
  const createdAfter = q.createdAfter ? new Date(q.createdAfter.getTime() + 1) : undefined;
  return listEvents(db, { ...q, createdAfter });
}

export async function eventOf({ db }: { db: Db }, organizationId: string, scope: BusinessUnitScope, id: string): Promise<EventRow> {
  const row = await getEvent(db, organizationId, scope, id);
  if (!row) throw new NotFoundError(`No event ${id}.`);
  return row;
}
