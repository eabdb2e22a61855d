/** A collection policy as the API shows it: steps in offset order, `min_overdue_lc` a 2-decimal string. */
import { formatMoney, isoTime } from '@rp/platform';
import type { Policy } from '../../store/collections/policies.js';

export function policyView(r: Policy) {
  return {
    object: 'collection_policy' as const,
    id: r.id,
    name: r.name,
    description: r.description,
    segment_id: r.segment_id,
    is_enabled: r.is_enabled,
    steps: [...r.steps]
      .sort((a, b) => a.offset_days - b.offset_days)
      .map((s) => ({
        step_index: s.step_index,
        offset_days: s.offset_days,
        channel: s.channel,
        email_template_id: s.email_template_id,
        sms_template_id: s.sms_template_id,
        min_overdue_lc: s.min_overdue_lc === null ? null : formatMoney(s.min_overdue_lc),
      })),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
