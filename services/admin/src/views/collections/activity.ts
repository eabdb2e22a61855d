/** An item of a customer's timeline as the API shows it. */
import { activitySummary, isoTime, type PartnerActivityRow } from '@rp/platform';

export function activityView(r: PartnerActivityRow) {
  return {
    type: r.type,
    occurred_at: isoTime(r.occurred_at)!,
    summary: activitySummary(r),
    ref: { object: r.ref_object, id: r.ref_id },
  };
}
