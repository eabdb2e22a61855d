/** A customer segment as the API shows it. */
import { isoTime } from '@rp/platform';
import type { SegmentRow } from '../../store/collections/segments.js';

export function segmentView(r: SegmentRow) {
  return {
    object: 'customer_segment' as const,
    id: r.id,
    name: r.name,
    description: r.description,
    priority: r.priority,
    conditions: r.conditions as Record<string, unknown>,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
