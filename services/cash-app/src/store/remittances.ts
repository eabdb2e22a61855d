/** Remittances and their allocations in the database, read within the caller's business units. */
import type { Knex } from 'knex';
import { newId, type BusinessUnitScope, type Db, type SqlFragment } from '@rp/platform';
import { partnerAndAllocatedInvoicesInScopeSql, whereSqlFragment } from './payments.js';

/**
 * SQL true when the remittance `alias` is within the business-unit scope: its customer and every
 * invoice its lines are linked to are tied to no unit or to one of the scope's. Null for scope '*'.
 */
function remittanceInScopeSql(alias: string, scope: BusinessUnitScope): SqlFragment | null {
  return partnerAndAllocatedInvoicesInScopeSql(alias, scope, { table: 'remittance_allocations', key: 'remittance_id' });
}
import type { RemittanceLine } from '../domain-types/remittances.js';

export interface BankDetails {
  account_number: string | null;
  bank_name: string | null;
  bank_number: string | null;
  branch_number: string | null;
  iban: string | null;
  type: string | null;
}

export interface RemittanceRow {
  id: string;
  organization_id: string;
  partner_id: string | null;
  status: string;
  source: string;
  currency: string | null;
  transaction_amount: string | null;
  transaction_date: string | null;
  transaction_number: string | null;
  payment_method: string | null;
  payer_name: string | null;
  payer_email: string | null;
  payer_bank_details: BankDetails | null;
  payee_bank_details: BankDetails | null;
  agent_confidence_score: string | null;
  agent_confidence_reason: string | null;
  agent_error_code: string | null;
  agent_uncertainties: string[];
  bank_transaction_id: string | null;
  attachment_file_name: string | null;
  attachment_content_type: string | null;
  attachment_size: number | null;
  inbox_message_id: string | null;
  source_part: string | null;
  email: RemittanceEmail | null;
  attachment_object_key: string | null;
  created_at: Date;
  modified_at: Date;
}

/** The inbox message an advice arrived in, as the remittance shows it (spec 2.17 `email`). */
export interface RemittanceEmail {
  object: 'inbox_message';
  id: string;
  message_id: string;
  from: string | null;
  from_name: string | null;
  subject: string | null;
  received_at: string;
}

export interface RemittanceAllocationRow {
  id: string;
  organization_id: string;
  remittance_id: string;
  invoice_number: string;
  invoice_id: string | null;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
  created_at: Date;
  modified_at: Date;
}

/** Every column but the attachment's content (kept for download, never listed). */
const REMITTANCE_COLUMNS = [
  'id', 'organization_id', 'partner_id', 'status', 'source', 'currency', 'transaction_amount', 'transaction_date', 'transaction_number',
  'payment_method', 'payer_name', 'payer_email', 'payer_bank_details', 'payee_bank_details', 'agent_confidence_score',
  'agent_confidence_reason', 'agent_error_code', 'agent_uncertainties', 'bank_transaction_id', 'attachment_file_name',
  'attachment_content_type', 'attachment_size', 'inbox_message_id', 'source_part', 'email', 'attachment_object_key', 'created_at', 'modified_at',
];

export interface NewRemittance {
  partner_id: string | null;
  source: 'json' | 'csv' | 'email';
  currency: string | null;
  transaction_amount: string | null;
  transaction_date: string | null;
  transaction_number: string | null;
  payment_method: string | null;
  payer_name: string | null;
  payer_email: string | null;
  payer_bank_details: BankDetails | null;
  payee_bank_details: BankDetails | null;
  agent_confidence_score: number;
  agent_confidence_reason: string;
  agent_error_code: string | null;
  agent_uncertainties: string[];
  attachment?: { file_name: string | null; content_type: string; content: Buffer };
  /** an advice read from an inbox message: the message, the part, its summary and the attachment's object (the file stays in object storage) */
  inbound?: {
    inbox_message_id: string;
    source_part: string;
    email: RemittanceEmail;
    attachment: { object_key: string; file_name: string; content_type: string; size: number } | null;
    /** the deposit the advice was sent for (a reply to its remittance request) */
    bank_transaction_id: string | null;
  };
}

/**
 * Insert the remittance (status `submitted`) and its allocations in one transaction; returns its id.
 * `onInserted` runs last in that transaction (the caller records the remittance's event there).
 */
export async function insertRemittance(
  db: Db,
  organizationId: string,
  r: NewRemittance,
  lines: (RemittanceLine & { invoice_id: string | null })[],
  onInserted?: (trx: Knex.Transaction, id: string) => Promise<void>,
): Promise<string> {
  const id = newId();
  const { attachment, inbound, ...fields } = r;
  await db.transaction(async (trx) => {
    await trx('remittances').insert({
      id,
      organization_id: organizationId,
      status: 'submitted',
      ...fields,
      payer_bank_details: fields.payer_bank_details ? JSON.stringify(fields.payer_bank_details) : null,
      payee_bank_details: fields.payee_bank_details ? JSON.stringify(fields.payee_bank_details) : null,
      agent_uncertainties: JSON.stringify(fields.agent_uncertainties),
      attachment_file_name: attachment?.file_name ?? inbound?.attachment?.file_name ?? null,
      attachment_content_type: attachment?.content_type ?? inbound?.attachment?.content_type ?? null,
      attachment_size: attachment ? attachment.content.length : (inbound?.attachment?.size ?? null),
      attachment_content: attachment?.content ?? null,
      ...(inbound
        ? {
            inbox_message_id: inbound.inbox_message_id,
            source_part: inbound.source_part,
            email: JSON.stringify(inbound.email),
            attachment_object_key: inbound.attachment?.object_key ?? null,
            bank_transaction_id: inbound.bank_transaction_id,
          }
        : {}),
    });
    if (lines.length) {
      await trx('remittance_allocations').insert(
        lines.map((l) => ({
          id: newId(),
          organization_id: organizationId,
          remittance_id: id,
          invoice_number: l.invoice_number,
          invoice_id: l.invoice_id,
          amount_paid: l.amount_paid,
          amount_discount: l.amount_discount,
          amount_withheld: l.amount_withheld,
        })),
      );
    }
    await onInserted?.(trx, id);
  });
  return id;
}

export interface RemittanceFilter {
  /** business units the caller may see ('*' for all) */
  scope?: BusinessUnitScope;
  status?: string;
  partnerId?: string;
  dateFrom?: string;
  dateTo?: string;
}

export async function listRemittances(db: Db, organizationId: string, filter: RemittanceFilter, offset: number, limit: number) {
  const scoped = () => {
    const q = db('remittances as r').where({ 'r.organization_id': organizationId });
    if (filter.status) q.andWhere('r.status', filter.status);
    if (filter.partnerId) q.andWhere('r.partner_id', filter.partnerId);
    if (filter.dateFrom) q.andWhere('r.transaction_date', '>=', filter.dateFrom);
    if (filter.dateTo) q.andWhere('r.transaction_date', '<=', filter.dateTo);
    return whereSqlFragment(q, remittanceInScopeSql('r', filter.scope ?? '*'));
  };
  const [rows, [{ count }]] = await Promise.all([
    scoped().select(REMITTANCE_COLUMNS.map((c) => `r.${c}`)).orderBy([{ column: 'r.created_at', order: 'desc' }, { column: 'r.id', order: 'desc' }]).offset(offset).limit(limit),
    scoped().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as RemittanceRow[], total: Number(count) };
}

export async function getRemittance(db: Db, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<RemittanceRow | undefined> {
  const q = db('remittances as r').select(REMITTANCE_COLUMNS.map((c) => `r.${c}`)).where({ 'r.organization_id': organizationId, 'r.id': id });
  return whereSqlFragment(q, remittanceInScopeSql('r', scope)).first();
}

/** Allocations of the given remittances, in the order they were given. */
export async function allocationsOf(db: Db, organizationId: string, remittanceIds: string[]): Promise<RemittanceAllocationRow[]> {
  if (remittanceIds.length === 0) return [];
  return db<RemittanceAllocationRow>('remittance_allocations')
    .where({ organization_id: organizationId })
    .whereIn('remittance_id', remittanceIds)
    .orderBy('id');
}

/** The remittance recorded for one part of an inbox message, if any (a retried activity finds it). */
export async function remittanceOfInboxPart(db: Db, organizationId: string, inboxMessageId: string, sourcePart: string): Promise<string | null> {
  const row = (await db('remittances').select('id').where({ organization_id: organizationId, inbox_message_id: inboxMessageId, source_part: sourcePart }).first()) as { id: string } | undefined;
  return row?.id ?? null;
}

/** The deposit with this id in the organization, if it exists. */
export async function depositExists(db: Db, organizationId: string, id: string): Promise<boolean> {
  return !!(await db('bank_transactions').select('id').where({ organization_id: organizationId, id }).first());
}
