/**
 * Which of our own outbound emails a Message-ID names: the read side of cash-app's view
 * `cash_app.outbound_messages` (cash-app migration 019: payment receipts and remittance requests,
 * once sent). This module is the view's only reader outside cash-app, as partner-activity.ts is of
 * cash-app's timeline view; the inbox (admin) uses it to thread a reply (In-Reply-To/References) to
 * the email it answers. Admin's own collection emails are admin's table (collection_messages).
 */
import type { Knex } from 'knex';

export const OUTBOUND_MESSAGES_VIEW = 'cash_app.outbound_messages';

export interface CashAppOutboundMessage {
  message_id: string;
  /** `outreach_record` (spec 2.8) */
  ref_object: 'outreach_record';
  ref_id: string;
  outreach_type: 'payment_receipt' | 'remittance_request';
  partner_id: string | null;
  bank_transaction_id: string | null;
  payment_id: string | null;
  sent_at: Date | null;
}

/**
 * The organization's cash-app emails with these Message-IDs (angle brackets included, as sent and
 * as the In-Reply-To/References headers carry them); compared exactly, at most 100 ids.
 */
export async function cashAppOutboundMessages(db: Knex, organizationId: string, messageIds: readonly string[]): Promise<CashAppOutboundMessage[]> {
  const ids = [...new Set(messageIds)].slice(0, 100);
  if (ids.length === 0) return [];
  return db(OUTBOUND_MESSAGES_VIEW)
    .select('message_id', 'ref_object', db.raw('ref_id::text AS ref_id'), 'outreach_type', db.raw('partner_id::text AS partner_id'), db.raw('bank_transaction_id::text AS bank_transaction_id'), db.raw('payment_id::text AS payment_id'), 'sent_at')
    .where({ organization_id: organizationId })
    .whereIn('message_id', ids) as Promise<CashAppOutboundMessage[]>;
}
