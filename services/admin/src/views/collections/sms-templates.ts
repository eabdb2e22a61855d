/** An SMS template as the API shows it (spec 2.4): its carrier metrics computed from the body as written. */
import { isoTime } from '@rp/platform';
import { smsMetrics } from '../../domain/collections/sms-templates.js';
import type { SmsTemplateRow } from '../../store/collections/sms-templates.js';

export function smsTemplateView(row: SmsTemplateRow) {
  return {
    object: 'sms_template' as const,
    id: row.id,
    name: row.name,
    body: row.body,
    description: row.description,
    is_default: row.is_default,
    ...smsMetrics(row.body),
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
