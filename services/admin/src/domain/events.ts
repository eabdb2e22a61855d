/**
 * The event log (`GET /v2/events`): every service's events, read through the kernel's events module,
 * within the caller's business units. Events are kept EVENT_RETENTION_DAYS (default 30).
 */
import { getEvent, listEvents, NotFoundError, type BusinessUnitScope, type Db, type EventRow, type EventType } from '@rp/platform';

export async function eventsOf(
  { db }: { db: Db },
  q: { organizationId: string; scope: BusinessUnitScope; types?: EventType[]; createdAfter?: Date; createdBefore?: Date; offset: number; limit: number },
): Promise<{ rows: EventRow[]; total: number }> {
  return listEvents(db, q);
}

export async function eventOf({ db }: { db: Db }, organizationId: string, scope: BusinessUnitScope, id: string): Promise<EventRow> {
  const row = await getEvent(db, organizationId, scope, id);
  if (!row) throw new NotFoundError(`No event ${id}.`);
  return row;
}
