/** A tag as the API shows it (spec 2.9). */
import { isoTime } from '@rp/platform';
import type { TagRow } from '../../store/collections/tags.js';

export function tagView(r: TagRow) {
  return {
    object: 'tag' as const,
    id: r.id,
    name: r.name,
    color: r.color,
    rule_condition: r.rule_condition as Record<string, unknown> | null,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
