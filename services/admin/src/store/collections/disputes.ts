/**
 * SQL of disputes (admin schema, migration 012): one open dispute per invoice (partial unique index
 * `disputes_one_open_per_invoice`); every statement is per organization. Business-unit scope uses
 * the partner's unit copied onto the dispute.
 */
import { newId, whereInScope, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export const DISPUTE_REASONS = ['pricing', 'quantity', 'quality', 'damaged', 'not_received', 'duplicate_billing', 'tax', 'other'] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];
export type DisputeStatus = 'open' | 'resolved' | 'rejected';

export interface DisputeRow {
  id: string;
  organization_id: string;
  invoice_id: string;
  partner_id: string;
  business_unit_id: string | null;
  reason_code: DisputeReason;
  amount: string | null;
  currency: string;
  status: DisputeStatus;
  resolution: string | null;
  note: string | null;
  created_by: string | null;
  /** the inbox message it was read from; null when opened through the API */
  source_inbox_message_id: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
  modified_at: Date;
}


const isOpenDisputeClash = (e: unknown) => (e as { code?: string }).code === '23505' && (e as { constraint?: string }).constraint === 'disputes_one_open_per_invoice';

/** Inserts an open dispute; 'conflict' when the invoice has an open one (the unique index decides under a race). */
export async function insertDispute(
  db: Q,
  d: Pick<DisputeRow, 'organization_id' | 'invoice_id' | 'partner_id' | 'business_unit_id' | 'reason_code' | 'amount' | 'currency' | 'note' | 'created_by' | 'source_inbox_message_id'>,
): Promise<DisputeRow | 'conflict'> {
  try {
    const [row] = await db('disputes').insert({ id: newId(), ...d }).returning('*');
    return row as DisputeRow;
  } catch (e) {
    if (isOpenDisputeClash(e)) return 'conflict';
    throw e;
  }
}

/** The dispute an inbox message opened on an invoice, if any. */
export async function disputeFromInboxMessage(db: Q, org: string, inboxMessageId: string, invoiceId: string): Promise<DisputeRow | undefined> {
  return (await db('disputes').where({ organization_id: org, source_inbox_message_id: inboxMessageId, invoice_id: invoiceId }).orderBy('id').first()) as DisputeRow | undefined;
}

export async function openDisputeOf(db: Q, org: string, invoiceId: string): Promise<DisputeRow | undefined> {
  return (await db('disputes').where({ organization_id: org, invoice_id: invoiceId, status: 'open' }).first()) as DisputeRow | undefined;
}

export async function getDispute(db: Q, org: string, id: string, scope: BusinessUnitScope = '*', forUpdate = false): Promise<DisputeRow | undefined> {
  const q = whereInScope(db('disputes').where({ organization_id: org, id }), scope);
  if (forUpdate) q.forUpdate();
  return (await q.first()) as DisputeRow | undefined;
}

export interface DisputeFilters {
  partner_id?: string;
  invoice_id?: string;
  status?: DisputeStatus;
  reason_code?: DisputeReason;
}

export async function listDisputes(db: Q, org: string, scope: BusinessUnitScope, filters: DisputeFilters, offset: number, limit: number): Promise<{ rows: DisputeRow[]; total: number }> {
  const base = () => {
    const q = whereInScope(db('disputes').where({ organization_id: org }), scope);
    for (const key of ['partner_id', 'invoice_id', 'status', 'reason_code'] as const) {
      if (filters[key]) q.andWhere(key, filters[key]);
    }
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    base().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    base().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as DisputeRow[], total: Number(count) };
}

/** Resolves or rejects an open dispute; undefined when it was not open any more. */
export async function closeDispute(db: Q, org: string, id: string, status: Exclude<DisputeStatus, 'open'>, resolution: string, resolvedBy: string | null): Promise<DisputeRow | undefined> {
  const [row] = await db('disputes')
    .where({ organization_id: org, id, status: 'open' })
    .update({ status, resolution, resolved_by: resolvedBy, resolved_at: db.fn.now(), modified_at: db.fn.now() })
    .returning('*');
  return row as DisputeRow | undefined;
}
