/** A business unit as the API shows it (spec 2.16). */
import { isoTime } from '@rp/platform';
import type { BusinessUnitRow } from '../store/business-units.js';

export function businessUnitView(row: BusinessUnitRow) {
  return {
    object: 'business_unit' as const,
    id: row.id,
    name: row.name,
    description: row.description,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
