/** Remittance requests in the database: the deposit a request asks about, and the claim of its one live outreach record. */
import { newId, type Db } from '@rp/platform';
import { getOutreach, type OutreachRow } from './outreach.js';

/** What a remittance request needs of a bank line (bank lines belong to statements; read-only here). */
export interface RequestDeposit {
  id: string;
  amount: string;
  currency: string;
  /** false: classified as not a customer payment (refund, interest, own transfer) */
  is_payment: boolean | null;
  booking_date: string | null;
  value_date: string | null;
  bank_reference: string | null;
  end_to_end_id: string | null;
  remittance_information: string | null;
  counterparty_name: string | null;
  counterparty_account: string | null;
  counterparty_iban: string | null;
}

export async function getRequestDeposit(db: Db, organizationId: string, bankTransactionId: string): Promise<RequestDeposit | null> {
  const row = await db('bank_transactions')
    .where({ organization_id: organizationId, id: bankTransactionId })
    .first(
      'id', 'amount', db.raw('btrim(currency) AS currency'), 'is_payment', 'booking_date', 'value_date', 'bank_reference', 'end_to_end_id',
      'remittance_information', 'counterparty_name', 'counterparty_account', 'counterparty_iban',
    );
  return (row as RequestDeposit | undefined) ?? null;
}

/** The id of an approved payment of the bank line, if any (it is then applied: nobody needs to be asked). */
export async function approvedPaymentOf(db: Db, organizationId: string, bankTransactionId: string): Promise<string | null> {
  const row = (await db('payments').where({ organization_id: organizationId, bank_transaction_id: bankTransactionId, status: 'approved' }).first('id')) as { id: string } | undefined;
  return row?.id ?? null;
}

/** The customers of the bank line's unapproved proposals (matching's guesses), distinct. */
export async function proposedPayersOf(db: Db, organizationId: string, bankTransactionId: string): Promise<string[]> {
  const rows = (await db('payments')
    .distinct('partner_id')
    .where({ organization_id: organizationId, bank_transaction_id: bankTransactionId, status: 'unapproved' })
    .whereNotNull('partner_id')) as { partner_id: string }[];
  return rows.map((r) => r.partner_id);
}

/**
 * Create a `pending` remittance-request record for the bank line, unless it already has a live
 * (pending or sent) one (migration 019's unique index): then that one is returned with created = false.
 */
export async function claimRemittanceRequestRecord(
  db: Db,
  organizationId: string,
  input: { bankTransactionId: string; partnerId: string; requestedBy: string | null },
  attempt = 0,
): Promise<{ record: OutreachRow; created: boolean }> {
  const id = newId();
  const inserted = await db.raw(
    `INSERT INTO outreach_records (id, organization_id, outreach_type, status, bank_transaction_id, partner_id, requested_by)
     VALUES (?, ?, 'remittance_request', 'pending', ?, ?, ?)
     ON CONFLICT (organization_id, bank_transaction_id) WHERE outreach_type = 'remittance_request' AND status IN ('pending', 'sent') DO NOTHING
     RETURNING id`,
    [id, organizationId, input.bankTransactionId, input.partnerId, input.requestedBy],
  );
  if (inserted.rows.length) return { record: (await getOutreach(db, organizationId, id))!, created: true };
  const live = await liveRemittanceRequest(db, organizationId, input.bankTransactionId);
  if (live) return { record: live, created: false };
  // The live record turned failed/skipped between our insert and read: try again.
  if (attempt >= 3) throw new Error(`could not claim a remittance-request record for bank transaction ${input.bankTransactionId}`);
  return claimRemittanceRequestRecord(db, organizationId, input, attempt + 1);
}

/** The bank line's live (pending or sent) remittance request, if any. */
export async function liveRemittanceRequest(db: Db, organizationId: string, bankTransactionId: string): Promise<OutreachRow | undefined> {
  return db<OutreachRow>('outreach_records')
    .where({ organization_id: organizationId, bank_transaction_id: bankTransactionId, outreach_type: 'remittance_request' })
    .whereIn('status', ['pending', 'sent'])
    .first();
}
