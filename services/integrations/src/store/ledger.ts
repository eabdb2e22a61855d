/**
 * Set-based writes to the AR ledger (partners, documents, line items): the only SQL that writes
 * those tables. Used by the middleware push endpoints and by pull syncs alike.
 *
 * Every function writes a whole batch in ONE SQL statement, whatever the batch size (data-modifying
 * CTEs chain the upsert, the line-item replacement and the partner linking): the rows travel as one
 * JSON parameter expanded by `json_to_recordset`, so there is no per-row query, no parameter-count
 * limit and one round trip per batch; each is a named prepared statement (planned once per connection). A single statement is atomic on its own; pass a knex
 * transaction to make it part of a larger unit of work (a sync page and its cursor). Amounts are
 * decimal strings cast to NUMERIC by Postgres (exact). Rows are written in key order so two
 * concurrent batches touching the same keys lock them in the same order (no deadlock).
 *
 * Duplicate keys inside one batch: the last occurrence wins (as if the rows had been written one
 * after the other); every occurrence gets the same id back.
 */
import { newId } from '@rp/platform';

import type { DocumentUpsert, LineItemUpsert, PartnerUpsert } from '../types.js';
import { NATURAL_KEY_PREDICATE, query, REMOTE_KEY_PREDICATE, SYNC_ORIGIN_PREFIX, type Db } from './ledger-sql.js';

export type { DocumentUpsert, LineItemUpsert, PartnerUpsert };

/** Index of the last occurrence of each key, in first-occurrence order of the kept rows. */
function lastByKey<T>(rows: readonly T[], key: (r: T) => string): { keys: string[]; kept: Map<string, number> } {
  const kept = new Map<string, number>();
  const keys = rows.map(key);
  keys.forEach((k, i) => kept.set(k, i));
  return { keys, kept };
}

const PARTNER_COLUMNS = `id uuid, remote_id text, business_unit_id uuid, account_number text, name text, legal_name text, email text, phone text,
  currency text, company_code text, search_term text, address jsonb, attributes jsonb`;

/**
 * Insert or update partners by (organization, origin, remote_id) in one statement, then link the
 * organization's documents of the same origin that were waiting for them (customer_code = remote_id,
 * no partner yet; they also inherit the partner's business unit when they have none). Returns the
 * partners' ids in input order.
 */
export async function upsertPartners(trx: Db, organizationId: string, origin: string, rows: readonly PartnerUpsert[]): Promise<string[]> {
  return (await writePartners(trx, organizationId, origin, rows)).ids;
}

/** What a batch write did: the rows' ids in input order, and which of them it inserted (the others existed). */
export interface LedgerWrite {
  ids: string[];
  inserted: Set<string>;
}

/** upsertPartners, also telling which partners the statement inserted. */
export async function writePartners(trx: Db, organizationId: string, origin: string, rows: readonly PartnerUpsert[]): Promise<LedgerWrite> {
  if (rows.length === 0) return { ids: [], inserted: new Set() };
  const { keys, kept } = lastByKey(rows, (r) => r.remote_id);
  const payload = [...kept.values()].map((i) => {
    const r = rows[i]!;
    return {
      id: newId(),
      remote_id: r.remote_id,
      business_unit_id: r.business_unit_id ?? null,
      account_number: r.account_number ?? null,
      name: r.name,
      legal_name: r.legal_name ?? null,
      email: r.email ?? null,
      phone: r.phone ?? null,
      currency: r.currency ?? null,
      company_code: r.company_code ?? null,
      search_term: r.search_term ?? null,
      address: r.address ?? {},
      attributes: r.attributes ?? {},
      // null: leave the partner's master-data bank accounts as they are
      bank_accounts: r.bank_accounts?.map((a) => ({ id: newId(), account_identifier: a.account_identifier, bank_code: a.bank_code })) ?? null,
    };
  });
  const rows_ = await query<{ id: string; remote_id: string; inserted: boolean }>(
    trx,
    'ledger_upsert_partners_v3',
    `WITH input AS (
       SELECT * FROM json_to_recordset($3::json) AS r(${PARTNER_COLUMNS}, bank_accounts json)
     ), up AS (
       INSERT INTO partners AS p (id, organization_id, origin, remote_id, business_unit_id, account_number, name, legal_name, email, phone,
         currency, company_code, search_term, address, attributes)
       SELECT r.id, $1, $2, r.remote_id, r.business_unit_id, r.account_number, r.name, r.legal_name, r.email, r.phone,
         r.currency, r.company_code, r.search_term, coalesce(r.address, '{}'::jsonb), coalesce(r.attributes, '{}'::jsonb)
       FROM input AS r
       ORDER BY r.remote_id
       ON CONFLICT (organization_id, origin, remote_id) DO UPDATE SET
         business_unit_id = coalesce(EXCLUDED.business_unit_id, p.business_unit_id),
         account_number = EXCLUDED.account_number, name = EXCLUDED.name, legal_name = EXCLUDED.legal_name,
         email = EXCLUDED.email, phone = EXCLUDED.phone, currency = EXCLUDED.currency, company_code = EXCLUDED.company_code,
         search_term = EXCLUDED.search_term, address = EXCLUDED.address, attributes = EXCLUDED.attributes, modified_at = now()
       RETURNING p.id, p.organization_id, p.origin, p.remote_id, p.business_unit_id, (p.xmax = 0) AS inserted
     ), linked AS (
       UPDATE documents AS d
          SET partner_id = up.id, business_unit_id = coalesce(d.business_unit_id, up.business_unit_id), modified_at = now()
         FROM up
        WHERE d.organization_id = up.organization_id AND d.customer_code = up.remote_id
          AND d.partner_id IS NULL AND d.origin = up.origin
     ), accounts AS (
       -- the master-data bank accounts of the partners whose row carries them (replaced as a set)
       SELECT up.id AS partner_id, a.*
         FROM input AS r
         JOIN up ON up.remote_id = r.remote_id
         CROSS JOIN LATERAL json_to_recordset(r.bank_accounts) AS a(id uuid, account_identifier text, bank_code text)
     ), accounts_replaced AS (
       SELECT up.id AS partner_id FROM input AS r JOIN up ON up.remote_id = r.remote_id WHERE r.bank_accounts IS NOT NULL
     ), accounts_removed AS (
       DELETE FROM partner_master_bank_accounts AS b USING accounts_replaced AS x
        WHERE b.partner_id = x.partner_id
          AND NOT EXISTS (SELECT 1 FROM accounts AS a WHERE a.partner_id = b.partner_id AND a.account_identifier = b.account_identifier
                            AND coalesce(a.bank_code, '') = coalesce(b.bank_code, ''))
     ), accounts_added AS (
       INSERT INTO partner_master_bank_accounts AS b (id, organization_id, partner_id, account_identifier, bank_code)
       SELECT a.id, $1, a.partner_id, a.account_identifier, a.bank_code FROM accounts AS a
        ORDER BY a.partner_id, a.account_identifier, a.bank_code
       ON CONFLICT (organization_id, partner_id, account_identifier, coalesce(bank_code, '')) DO UPDATE SET modified_at = now()
     )
     SELECT id, remote_id, inserted FROM up`,
    [organizationId, origin, JSON.stringify(payload)],
  );
  const ids = new Map(rows_.map((r) => [r.remote_id, r.id]));
  return { ids: keys.map((k) => ids.get(k)!), inserted: new Set(rows_.filter((r) => r.inserted).map((r) => r.id)) };
}

const DOCUMENT_COLUMNS = `id uuid, kind text, remote_id text, customer_code text, partner_id uuid, business_unit_id uuid,
  company_code text, fiscal_year text, document_number text, document_type text, invoice_doc_type text, currency text,
  exchange_rate text, reference text, assignment text, text text, reason_code text, clearing_document_number text,
  document_date date, net_due_date date, posting_date date, clearing_date date,
  amount_in_document_currency numeric, amount_in_local_currency numeric, amount_open numeric, status_open boolean, line_items json,
  discount_terms jsonb`;

const documentKey = (r: { company_code: string; fiscal_year: string; document_number: string }) =>
  JSON.stringify([r.company_code, r.fiscal_year, r.document_number]);
const remoteKey = (r: { kind: string; remote_id?: string | null }) => JSON.stringify([r.kind, r.remote_id]);

export { SYNC_ORIGIN_PREFIX };

/**
 * Insert or update documents by (organization, company_code, fiscal_year, document_number) in one
 * statement; a re-written document keeps its id (also when its kind flips). Each document's
 * partner is the explicit `partner_id`, else the partner of the same origin whose remote_id is its
 * customer_code (null until that partner arrives: upsertPartners links it then); its business
 * unit is the explicit one, else the partner's. For the documents given with `line_items`, the
 * line items are replaced as a set in the same statement: items are upserted by line_number (one
 * keeps its id when its line_number is re-sent) and the document's other items are deleted.
 * `line_number`s must be unique within a document. `erp_reported_at` (when the ERP reported these
 * figures: `opts.reportedAt`, e.g. when a sync read the page, else now) is what cash-app's open-amount
 * rule compares with a payment's `posted_at`. Returns the documents' ids in input order.
 *
 * For the middleware push (and any origin that is not a pull sync). Pull syncs use
 * upsertRemoteDocuments.
 */
export async function upsertDocuments(
  trx: Db,
  organizationId: string,
  origin: string,
  rows: readonly DocumentUpsert[],
  opts: DocumentWriteOptions = {},
): Promise<string[]> {
  if (origin.startsWith(SYNC_ORIGIN_PREFIX)) throw new Error('documents of a pull sync are keyed by their remote id: use upsertRemoteDocuments');
  return (await writeDocuments(trx, organizationId, origin, rows, 'natural', opts)).ids;
}

/** How a write stamps the ERP's figures: when the ERP reported them (default: now). */
export interface DocumentWriteOptions {
  reportedAt?: Date;
}

/**
 * Insert or update a pull sync's documents by the source system's identity: (organization, origin,
 * kind, remote_id), in one statement. An edited number or date updates the same row (same id); a
 * document written again after the source had deleted it is live again (remote_deleted_at cleared).
 * Otherwise as upsertDocuments. `origin` must be a sync origin (`connection:<id>`) and every row
 * needs a remote_id. Returns the documents' ids in input order.
 */
export async function upsertRemoteDocuments(
  trx: Db,
  organizationId: string,
  origin: string,
  rows: readonly DocumentUpsert[],
  opts: DocumentWriteOptions = {},
): Promise<string[]> {
  if (!origin.startsWith(SYNC_ORIGIN_PREFIX)) throw new Error(`remote-keyed documents need a sync origin (${SYNC_ORIGIN_PREFIX}<id>), not ${origin}`);
  return (await writeDocuments(trx, organizationId, origin, rows, 'remote', opts)).ids;
}

/** How documents are keyed: the push's natural key, or a pull sync's remote identity. */
export type DocumentKey = 'natural' | 'remote';

/** The key a document is written by (`origin` decides: a sync origin is keyed by remote id). */
export function documentKeyOf(origin: string): DocumentKey {
  return origin.startsWith(SYNC_ORIGIN_PREFIX) ? 'remote' : 'natural';
}

/** upsertDocuments or upsertRemoteDocuments (by `origin`), also telling which documents the statement inserted. */
export async function writeDocuments(
  trx: Db,
  organizationId: string,
  origin: string,
  rows: readonly DocumentUpsert[],
  key: DocumentKey,
  opts: DocumentWriteOptions = {},
): Promise<LedgerWrite> {
  if (key !== documentKeyOf(origin)) throw new Error(`documents of origin ${origin} are not keyed by their ${key} key`);
  if (key === 'remote') for (const r of rows) if (!r.remote_id) throw new Error(`a synced ${r.kind} (${r.document_number}) has no remote_id`);
  if (rows.length === 0) return { ids: [], inserted: new Set() };
  const keyOf = key === 'natural' ? documentKey : remoteKey;
  const { keys, kept } = lastByKey(rows, keyOf);
  const payload = [...kept.values()].map((i) => {
    const r = rows[i]!;
    return {
      id: newId(),
      kind: r.kind,
      remote_id: r.remote_id ?? null,
      customer_code: r.customer_code ?? null,
      partner_id: r.partner_id ?? null,
      business_unit_id: r.business_unit_id ?? null,
      company_code: r.company_code,
      fiscal_year: r.fiscal_year,
      document_number: r.document_number,
      document_type: r.document_type ?? null,
      invoice_doc_type: r.invoice_doc_type ?? null,
      currency: r.currency,
      exchange_rate: r.exchange_rate ?? null,
      reference: r.reference ?? null,
      assignment: r.assignment ?? null,
      text: r.text ?? null,
      reason_code: r.reason_code ?? null,
      clearing_document_number: r.clearing_document_number ?? null,
      document_date: r.document_date ?? null,
      net_due_date: r.net_due_date ?? null,
      posting_date: r.posting_date ?? null,
      clearing_date: r.clearing_date ?? null,
      amount_in_document_currency: r.amount_in_document_currency,
      amount_in_local_currency: r.amount_in_local_currency ?? null,
      amount_open: r.amount_open,
      status_open: r.status_open,
      line_items:
        r.line_items?.map((li) => ({
          id: newId(),
          line_number: li.line_number,
          description: li.description ?? null,
          quantity: li.quantity ?? null,
          unit_amount: li.unit_amount ?? null,
          total_amount: li.total_amount ?? null,
        })) ?? null,
      discount_terms: r.discount_terms ?? [],
    };
  });
  const conflict =
    key === 'natural'
      ? `ON CONFLICT (organization_id, company_code, fiscal_year, document_number) WHERE ${NATURAL_KEY_PREDICATE} DO UPDATE SET
       business_unit_id = EXCLUDED.business_unit_id, origin = EXCLUDED.origin, kind = EXCLUDED.kind, remote_id = EXCLUDED.remote_id,`
      : `ON CONFLICT (organization_id, origin, kind, remote_id) WHERE ${REMOTE_KEY_PREDICATE} DO UPDATE SET
       business_unit_id = EXCLUDED.business_unit_id, company_code = EXCLUDED.company_code, fiscal_year = EXCLUDED.fiscal_year,
       document_number = EXCLUDED.document_number, remote_deleted_at = NULL,`;
  // How the items and line-item CTEs find their document again: by the key the rows were written by.
  const join = key === 'natural' ? 'docs.company_code = r.company_code AND docs.fiscal_year = r.fiscal_year AND docs.document_number = r.document_number' : 'docs.kind = r.kind AND docs.remote_id = r.remote_id';
  const order = key === 'natural' ? 'r.company_code, r.fiscal_year, r.document_number' : 'r.kind, r.remote_id';
  const rows_ = await query<{ id: string; company_code: string; fiscal_year: string; document_number: string; kind: string; remote_id: string | null; inserted: boolean }>(
    trx,
    `ledger_upsert_documents_${key}_v6`,
    `WITH input AS (
       SELECT * FROM json_to_recordset($1::json) AS r(${DOCUMENT_COLUMNS})
     ), docs AS (
     INSERT INTO documents AS d (id, organization_id, business_unit_id, origin, kind, remote_id, partner_id, customer_code,
       company_code, fiscal_year, document_number, document_type, invoice_doc_type, currency, exchange_rate, reference,
       assignment, text, reason_code, clearing_document_number, document_date, net_due_date, posting_date, clearing_date,
       amount_in_document_currency, amount_in_local_currency, amount_open, status_open, erp_reported_at, discount_terms)
     SELECT r.id, $2, coalesce(r.business_unit_id, p.business_unit_id), $3, r.kind, r.remote_id, coalesce(r.partner_id, p.id), r.customer_code,
       r.company_code, r.fiscal_year, r.document_number, r.document_type, r.invoice_doc_type, r.currency, r.exchange_rate, r.reference,
       r.assignment, r.text, r.reason_code, r.clearing_document_number, r.document_date, r.net_due_date, r.posting_date, r.clearing_date,
       r.amount_in_document_currency, r.amount_in_local_currency, r.amount_open, r.status_open, coalesce($4::timestamptz, now()),
       r.discount_terms
     FROM input AS r
     -- one index probe per row (the key is unique; LIMIT keeps the subquery from being flattened into a
     -- join that hashes all the organization's partners for every batch)
     LEFT JOIN LATERAL (
       SELECT p.id, p.business_unit_id FROM partners AS p
        WHERE r.partner_id IS NULL AND p.organization_id = $2 AND p.origin = $3 AND p.remote_id = r.customer_code
        LIMIT 1
     ) AS p ON true
     ORDER BY ${order}
     ${conflict}
       partner_id = EXCLUDED.partner_id, customer_code = EXCLUDED.customer_code, document_type = EXCLUDED.document_type,
       invoice_doc_type = EXCLUDED.invoice_doc_type, currency = EXCLUDED.currency, exchange_rate = EXCLUDED.exchange_rate,
       reference = EXCLUDED.reference, assignment = EXCLUDED.assignment, text = EXCLUDED.text, reason_code = EXCLUDED.reason_code,
       clearing_document_number = EXCLUDED.clearing_document_number, document_date = EXCLUDED.document_date,
       net_due_date = EXCLUDED.net_due_date, posting_date = EXCLUDED.posting_date, clearing_date = EXCLUDED.clearing_date,
       amount_in_document_currency = EXCLUDED.amount_in_document_currency, amount_in_local_currency = EXCLUDED.amount_in_local_currency,
       amount_open = EXCLUDED.amount_open, status_open = EXCLUDED.status_open, modified_at = now(),
       erp_reported_at = EXCLUDED.erp_reported_at,
       discount_terms = EXCLUDED.discount_terms
     RETURNING d.id, d.company_code, d.fiscal_year, d.document_number, d.kind, d.remote_id, (d.xmax = 0) AS inserted
     ), items AS (
       SELECT docs.id AS document_id, li.*
         FROM input AS r
         JOIN docs ON ${join}
         CROSS JOIN LATERAL json_to_recordset(r.line_items) AS li(id uuid, line_number integer, description text,
           quantity numeric, unit_amount numeric, total_amount numeric)
     ), replaced AS (
       SELECT docs.id AS document_id
         FROM input AS r
         JOIN docs ON ${join}
        WHERE r.line_items IS NOT NULL
     ), removed AS (
       DELETE FROM line_items AS l USING replaced
        WHERE l.document_id = replaced.document_id
          AND NOT EXISTS (SELECT 1 FROM items AS i WHERE i.document_id = l.document_id AND i.line_number = l.line_number)
     ), added AS (
       INSERT INTO line_items AS l (id, organization_id, document_id, line_number, description, quantity, unit_amount, total_amount)
       SELECT i.id, $2, i.document_id, i.line_number, i.description, i.quantity, i.unit_amount, i.total_amount
         FROM items AS i
        ORDER BY i.document_id, i.line_number
       ON CONFLICT (document_id, line_number) DO UPDATE SET
         description = EXCLUDED.description, quantity = EXCLUDED.quantity, unit_amount = EXCLUDED.unit_amount,
         total_amount = EXCLUDED.total_amount, modified_at = now()
     )
     SELECT id, company_code, fiscal_year, document_number, kind, remote_id, inserted FROM docs`,
    [JSON.stringify(payload), organizationId, origin, opts.reportedAt ?? null],
  );
  const ids = new Map(rows_.map((r) => [keyOf(r), r.id]));
  return { ids: keys.map((k) => ids.get(k)!), inserted: new Set(rows_.filter((r) => r.inserted).map((r) => r.id)) };
}

export { closeDocumentsNotSeenSince, databaseNow, markRemoteDocumentsDeleted } from './ledger-close.js';
