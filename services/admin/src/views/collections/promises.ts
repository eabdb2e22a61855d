/** Promises to pay and disputes as the API shows them: amounts with their currency's minor units. */
import { formatInMinorUnits, isoTime } from '@rp/platform';
import type { PromiseRow } from '../../store/collections/promises.js';
import type { DisputeRow } from '../../store/collections/disputes.js';

/** The inbox message a promise or dispute was read from, as a reference; null when recorded through the API. */
function sourceOf(inboxMessageId: string | null | undefined): { object: 'inbox_message'; id: string } | null {
  return inboxMessageId ? { object: 'inbox_message', id: inboxMessageId } : null;
}

export function promiseView(r: PromiseRow) {
  const currency = r.currency.trim();
  return {
    object: 'promise_to_pay' as const,
    id: r.id,
    partner_id: r.partner_id,
    invoice_ids: r.invoice_ids,
    amount: formatInMinorUnits(r.amount, currency),
    currency,
    promised_date: r.promised_date,
    status: r.status,
    note: r.note,
    created_by: r.created_by,
    source: sourceOf(r.source_inbox_message_id),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}

export function disputeView(r: DisputeRow) {
  const currency = r.currency.trim();
  return {
    object: 'dispute' as const,
    id: r.id,
    invoice_id: r.invoice_id,
    partner_id: r.partner_id,
    reason_code: r.reason_code,
    amount: r.amount === null ? null : formatInMinorUnits(r.amount, currency),
    currency,
    status: r.status,
    resolution: r.resolution,
    note: r.note,
    source: sourceOf(r.source_inbox_message_id),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
