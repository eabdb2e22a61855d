/**
 * Reading ledger rows as their events show them, inside the transaction that writes them: the
 * rows a batch is about to change, locked (FOR NO KEY UPDATE, the lock the batch's own UPDATE takes,
 * so foreign-key checks of other writers are not blocked any more than before; in the order the batch writes them, so two
 * writers of the same keys queue instead of deadlocking and the second one reads the first one's
 * committed result as its "before"), and the same rows again after the write. One statement per
 * batch each way, whatever its size.
 */
import { PARTNER_COLUMNS, type LedgerPartner } from '@rp/platform';
import type { DocumentUpsert } from '../types.js';
import { query, REMOTE_KEY_PREDICATE, type Db } from './ledger-sql.js';
import type { DocumentKey } from './ledger.js';

/** A document with its line items, as the invoice view needs it (amounts and dates as text). */
export interface DocumentViewRow {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  kind: 'invoice' | 'credit_memo';
  origin: string;
  remote_id: string | null;
  partner_id: string | null;
  customer_code: string | null;
  company_code: string;
  fiscal_year: string;
  document_number: string;
  document_type: string | null;
  invoice_doc_type: string | null;
  currency: string;
  exchange_rate: string | null;
  reference: string | null;
  assignment: string | null;
  text: string | null;
  reason_code: string | null;
  clearing_document_number: string | null;
  document_date: string | null;
  net_due_date: string | null;
  posting_date: string | null;
  clearing_date: string | null;
  amount_in_document_currency: string;
  amount_in_local_currency: string | null;
  amount_open: string;
  status_open: boolean;
  discount_terms: { due_date: string; percent: string }[];
  remote_deleted_at: Date | null;
  created_at: Date;
  modified_at: Date;
  line_items: { line_number: number; description: string | null; quantity: string | null; unit_amount: string | null; total_amount: string | null }[];
}

const DOCUMENT_VIEW_COLUMNS = `d.id, d.organization_id, d.business_unit_id, d.kind, d.origin, d.remote_id, d.partner_id, d.customer_code,
  d.company_code, d.fiscal_year, d.document_number, d.document_type, d.invoice_doc_type, d.currency, d.exchange_rate, d.reference,
  d.assignment, d.text, d.reason_code, d.clearing_document_number, d.document_date::text AS document_date,
  d.net_due_date::text AS net_due_date, d.posting_date::text AS posting_date, d.clearing_date::text AS clearing_date,
  d.amount_in_document_currency::text AS amount_in_document_currency, d.amount_in_local_currency::text AS amount_in_local_currency,
  d.amount_open::text AS amount_open, d.status_open, d.discount_terms, d.remote_deleted_at, d.created_at, d.modified_at,
  (SELECT coalesce(json_agg(json_build_object('line_number', l.line_number, 'description', l.description, 'quantity', l.quantity::text,
            'unit_amount', l.unit_amount::text, 'total_amount', l.total_amount::text) ORDER BY l.line_number), '[]'::json)
     FROM line_items AS l WHERE l.document_id = d.id) AS line_items`;

/**
 * The documents a batch of `rows` will update (those that exist, by the key the batch is written
 * by), locked for the rest of the transaction, in the batch's write order.
 */
export async function lockDocumentsByKey(trx: Db, organizationId: string, origin: string, rows: readonly DocumentUpsert[], key: DocumentKey): Promise<DocumentViewRow[]> {
  if (rows.length === 0) return [];
  // One index probe per key (LATERAL … LIMIT 1, as the upsert does): a join would hash every
  // document of the organization for each batch. Keys are visited, and so locked, in write order.
  if (key === 'natural') {
    const keys = rows.map((r) => ({ company_code: r.company_code, fiscal_year: r.fiscal_year, document_number: r.document_number }));
    return query<DocumentViewRow>(
      trx,
      'ledger_lock_documents_natural_v2',
      `SELECT ${DOCUMENT_VIEW_COLUMNS}
         FROM (SELECT DISTINCT * FROM json_to_recordset($2::json) AS k(company_code text, fiscal_year text, document_number text) ORDER BY 1, 2, 3) AS k
         CROSS JOIN LATERAL (
           SELECT * FROM documents AS x
            WHERE x.organization_id = $1 AND x.company_code = k.company_code AND x.fiscal_year = k.fiscal_year AND x.document_number = k.document_number
              AND (x.remote_id IS NULL OR x.origin NOT LIKE 'connection:%')
            LIMIT 1
              FOR NO KEY UPDATE
         ) AS d`,
      [organizationId, JSON.stringify(keys)],
    );
  }
  const keys = rows.map((r) => ({ kind: r.kind, remote_id: r.remote_id }));
  return query<DocumentViewRow>(
    trx,
    'ledger_lock_documents_remote_v2',
    `SELECT ${DOCUMENT_VIEW_COLUMNS}
       FROM (SELECT DISTINCT * FROM json_to_recordset($3::json) AS k(kind text, remote_id text) ORDER BY 1, 2) AS k
       CROSS JOIN LATERAL (
         SELECT * FROM documents AS x
          WHERE x.organization_id = $1 AND x.origin = $2 AND x.kind = k.kind AND x.remote_id = k.remote_id
            AND (x.remote_id IS NOT NULL AND x.origin LIKE 'connection:%')
          LIMIT 1
            FOR NO KEY UPDATE
       ) AS d`,
    [organizationId, origin, JSON.stringify(keys)],
  );
}

/** Documents by id (the organization's only). */
export async function documentViewRows(trx: Db, organizationId: string, ids: readonly string[]): Promise<DocumentViewRow[]> {
  if (ids.length === 0) return [];
  return query<DocumentViewRow>(
    trx,
    'ledger_document_views_v1',
    `SELECT ${DOCUMENT_VIEW_COLUMNS} FROM documents AS d WHERE d.organization_id = $1 AND d.id = ANY($2::uuid[])`,
    [organizationId, [...new Set(ids)]],
  );
}

/**
 * Documents of the origin not yet linked to a partner whose customer_code is one of `customerCodes`
 * (a partner upsert of those remote ids links them), locked.
 */
export async function lockDocumentsAwaitingPartners(trx: Db, organizationId: string, origin: string, customerCodes: readonly string[]): Promise<DocumentViewRow[]> {
  if (customerCodes.length === 0) return [];
  return query<DocumentViewRow>(
    trx,
    'ledger_lock_documents_awaiting_partner_v1',
    `SELECT ${DOCUMENT_VIEW_COLUMNS} FROM documents AS d
      WHERE d.organization_id = $1 AND d.origin = $2 AND d.customer_code = ANY($3::text[]) AND d.partner_id IS NULL
      ORDER BY d.id
      FOR NO KEY UPDATE OF d`,
    [organizationId, origin, [...new Set(customerCodes)]],
  );
}

/**
 * The origin's live (not yet deleted at the source) documents of `kind` that a deletion closes:
 * those with the given remote ids, or those not written since `notSeenSince`; locked.
 */
export async function lockDocumentsToClose(
  trx: Db,
  organizationId: string,
  origin: string,
  kind: DocumentUpsert['kind'],
  which: { remoteIds: readonly string[] } | { notSeenSince: Date },
): Promise<DocumentViewRow[]> {
  if ('remoteIds' in which) {
    if (which.remoteIds.length === 0) return [];
    return query<DocumentViewRow>(
      trx,
      'ledger_lock_remote_deleted_v1',
      `SELECT ${DOCUMENT_VIEW_COLUMNS} FROM documents AS d
        WHERE d.organization_id = $1 AND d.origin = $2 AND d.kind = $3 AND d.remote_id = ANY($4::text[]) AND d.remote_deleted_at IS NULL
          AND (${REMOTE_KEY_PREDICATE.replace(/(remote_id|origin)/g, 'd.$1')})
        ORDER BY d.id
        FOR NO KEY UPDATE OF d`,
      [organizationId, origin, kind, [...new Set(which.remoteIds)]],
    );
  }
  return query<DocumentViewRow>(
    trx,
    'ledger_lock_unseen_v1',
    `SELECT ${DOCUMENT_VIEW_COLUMNS} FROM documents AS d
      WHERE d.organization_id = $1 AND d.origin = $2 AND d.kind = $3 AND d.remote_deleted_at IS NULL AND d.modified_at < $4
      ORDER BY d.id
      FOR NO KEY UPDATE OF d`,
    [organizationId, origin, kind, which.notSeenSince],
  );
}

/** Close documents deleted at the source: amount_open 0, status_open false, remote_deleted_at now. */
export async function closeDocuments(trx: Db, organizationId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await query(
    trx,
    'ledger_close_documents_v1',
    `UPDATE documents SET amount_open = 0, status_open = false, remote_deleted_at = now(), modified_at = now()
      WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND remote_deleted_at IS NULL`,
    [organizationId, [...ids]],
  );
}

/** A partner row as the partner summary view needs it: the ledger's partner row (kernel ledger/tables.ts). */
export type PartnerViewRow = LedgerPartner;

const PARTNER_VIEW_COLUMNS = PARTNER_COLUMNS.map((c) => `p.${c}`).join(', ');

/** The origin's partners with these remote ids (an upsert of them updates these), locked in the upsert's order. */
export async function lockPartnersByRemoteId(trx: Db, organizationId: string, origin: string, remoteIds: readonly string[]): Promise<PartnerViewRow[]> {
  if (remoteIds.length === 0) return [];
  return query<PartnerViewRow>(
    trx,
    'ledger_lock_partners_v1',
    `SELECT ${PARTNER_VIEW_COLUMNS} FROM partners AS p
      WHERE p.organization_id = $1 AND p.origin = $2 AND p.remote_id = ANY($3::text[])
      ORDER BY p.remote_id
      FOR NO KEY UPDATE OF p`,
    [organizationId, origin, [...new Set(remoteIds)]],
  );
}

/** Partners by id (the organization's only); `lock`: FOR UPDATE. */
export async function partnerViewRows(trx: Db, organizationId: string, ids: readonly string[], lock = false): Promise<PartnerViewRow[]> {
  if (ids.length === 0) return [];
  return query<PartnerViewRow>(
    trx,
    lock ? 'ledger_partner_views_locked_v1' : 'ledger_partner_views_v1',
    `SELECT ${PARTNER_VIEW_COLUMNS} FROM partners AS p WHERE p.organization_id = $1 AND p.id = ANY($2::uuid[]) ORDER BY p.id${lock ? ' FOR NO KEY UPDATE OF p' : ''}`,
    [organizationId, [...new Set(ids)]],
  );
}
