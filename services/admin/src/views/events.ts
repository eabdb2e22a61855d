/** An event as the API shows it: the envelope that is also the webhook body. */
import { eventEnvelope, type EventRow } from '@rp/platform';

export function eventView(row: EventRow) {
  return eventEnvelope(row);
}
