/** The API shape of an outreach record. */
import { isoTime } from '@rp/platform';
import type { OutreachRow } from '../store/outreach.js';

export function outreachView(r: OutreachRow) {
  return {
    object: 'outreach_record' as const,
    id: r.id,
    outreach_type: r.outreach_type,
    status: r.status,
    skip_reason: r.skip_reason,
    error: r.error,
    bank_transaction_id: r.bank_transaction_id,
    payment_id: r.payment_id,
    partner_id: r.partner_id,
    email_id: r.email_id,
    recipient: r.recipient,
    sent_at: isoTime(r.sent_at),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
