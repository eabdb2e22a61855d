/**
 * Ledger documents (invoices, credit memos) as other services read them: by id, by number or
 * reference token, and the open invoices cash application matches against.
 */
import type { Knex } from 'knex';
import { type BusinessUnitScope, whereInScope } from './scope.js';
import { DOCUMENT_COLUMNS, LEDGER_TABLES, type LedgerDocument } from './tables.js';

export async function getDocuments(db: Knex, organizationId: string, ids: readonly string[], scope: BusinessUnitScope = '*'): Promise<Map<string, LedgerDocument>> {
  if (ids.length === 0) return new Map();
  const rows = (await whereInScope(db(LEDGER_TABLES.documents).select(DOCUMENT_COLUMNS).where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]), scope)) as LedgerDocument[];
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * When the ERP last reported each document's figures (`erp_reported_at`: a push's arrival, or when a
 * sync read the page). cash-app's open-amount rule: an allocation of a payment posted at `posted_at`
 * is included in the ledger's `amount_open` once the document was reported after `posted_at`.
 */
export async function documentsReportedAt(db: Knex, organizationId: string, ids: readonly string[]): Promise<Map<string, Date>> {
  if (ids.length === 0) return new Map();
  const rows = (await db(LEDGER_TABLES.documents)
    .select('id', 'erp_reported_at')
    .where({ organization_id: organizationId })
    .whereRaw('id = ANY(?::uuid[])', [[...new Set(ids)]])) as { id: string; erp_reported_at: Date }[];
  return new Map(rows.map((r) => [r.id, r.erp_reported_at]));
}

/** Each document's kind (invoice or credit memo), by id; unknown ids are absent. */
export async function documentKinds(db: Knex, organizationId: string, ids: readonly string[]): Promise<Map<string, 'invoice' | 'credit_memo'>> {
  if (ids.length === 0) return new Map();
  const rows = (await db(LEDGER_TABLES.documents)
    .select('id', 'kind')
    .where({ organization_id: organizationId })
    .whereRaw('id = ANY(?::uuid[])', [[...new Set(ids)]])) as { id: string; kind: 'invoice' | 'credit_memo' }[];
  return new Map(rows.map((r) => [r.id, r.kind]));
}

/** Where documents came from and their ERP identity, for posting payments back to that ERP. */
export interface LedgerDocumentOrigin {
  id: string;
  /** `middleware` (pushed) or `connection:<id>` (synced) */
  origin: string;
  /** the ERP's own id (QuickBooks Invoice Id), when the source has one */
  remote_id: string | null;
  document_number: string;
  company_code: string;
  fiscal_year: string;
}

export async function documentOrigins(db: Knex, organizationId: string, ids: readonly string[]): Promise<Map<string, LedgerDocumentOrigin>> {
  if (ids.length === 0) return new Map();
  const rows = (await db(LEDGER_TABLES.documents)
    .select('id', 'origin', 'remote_id', 'document_number', 'company_code', 'fiscal_year')
    .where({ organization_id: organizationId })
    .whereIn('id', [...new Set(ids)])) as LedgerDocumentOrigin[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Open invoices whose document number or reference is one of `tokens` (exact, case-sensitive as stored). */
export async function findOpenInvoicesByTokens(db: Knex, organizationId: string, tokens: readonly string[]): Promise<LedgerDocument[]> {
  if (tokens.length === 0) return [];
  const list = [...new Set(tokens)];
  return db(LEDGER_TABLES.documents)
    .select(DOCUMENT_COLUMNS)
    .where({ organization_id: organizationId, kind: 'invoice', status_open: true })
    .andWhere((q) => {
      void q.whereIn('document_number', list).orWhereIn('reference', list);
    })
    .orderBy([{ column: 'net_due_date', order: 'asc' }, { column: 'id' }]) as Promise<LedgerDocument[]>;
}

/** Invoices (open or not) by document number, for linking remittance lines. */
export async function findInvoicesByNumbers(db: Knex, organizationId: string, numbers: readonly string[], scope: BusinessUnitScope = '*'): Promise<LedgerDocument[]> {
  if (numbers.length === 0) return [];
  return whereInScope(
    db(LEDGER_TABLES.documents).select(DOCUMENT_COLUMNS).where({ organization_id: organizationId, kind: 'invoice' }).whereIn('document_number', [...new Set(numbers)]),
    scope,
  ).orderBy('id') as Promise<LedgerDocument[]>;
}

/** An early-payment discount of an invoice's payment terms: paying by `due_date` (inclusive) may deduct `percent`. */
export interface LedgerDiscountTerm {
  due_date: string;
  /** decimal string */
  percent: string;
}

/**
 * An open document as deposit matching reads it. `amount_open` of a credit memo is the credit it
 * still gives, positive whatever sign the ERP stored it with (SAP pushes H documents with positive
 * amounts; a middleware may send them negative).
 */
export interface OpenItemForMatching {
  id: string;
  kind: 'invoice' | 'credit_memo';
  partner_id: string | null;
  document_number: string;
  reference: string | null;
  currency: string;
  amount_open: string;
  document_date: string | null;
  net_due_date: string | null;
  /** earliest first; [] = none (credit memos never have any) */
  discount_terms: LedgerDiscountTerm[];
}

function openItemsForMatching(db: Knex, organizationId: string, currencies: readonly string[]): Knex.QueryBuilder {
  return db(LEDGER_TABLES.documents)
    .select('id', 'kind', 'partner_id', 'document_number', 'reference', 'currency', 'document_date', 'net_due_date', 'discount_terms')
    // a credit memo's credit still available, positive whatever its stored sign
    .select(db.raw('abs(amount_open) AS amount_open'))
    .where({ organization_id: organizationId, status_open: true })
    .whereIn('kind', ['invoice', 'credit_memo'])
    .whereIn('currency', [...new Set(currencies)])
    .andWhere('amount_open', '<>', 0)
    .andWhere((q) => {
      // an invoice is open with a positive amount; a credit memo with credit of either stored sign
      void q.where('kind', 'credit_memo').orWhere('amount_open', '>', 0);
    });
}

/**
 * Every open invoice and open credit memo of the organization in the given currencies, with the
 * fields deposit matching needs (oldest due first, then id).
 */
export async function listOpenInvoicesForMatching(db: Knex, organizationId: string, currencies: readonly string[]): Promise<OpenItemForMatching[]> {
  if (currencies.length === 0) return [];
  return openItemsForMatching(db, organizationId, currencies).orderBy([{ column: 'net_due_date', order: 'asc' }, { column: 'id' }]) as Promise<OpenItemForMatching[]>;
}

/**
 * One keyset page of listOpenInvoicesForMatching, in id order: the documents after `afterId` (null:
 * from the start), at most `limit`. Lets a caller load a large ledger in pages and do other work
 * (heartbeats) between them; sort by due date afterwards where that order matters.
 */
export async function listOpenInvoicesForMatchingPage(
  db: Knex,
  organizationId: string,
  currencies: readonly string[],
  afterId: string | null,
  limit: number,
): Promise<OpenItemForMatching[]> {
  if (currencies.length === 0) return [];
  const q = openItemsForMatching(db, organizationId, currencies);
  if (afterId) q.andWhere('id', '>', afterId);
  return q.orderBy('id').limit(limit) as Promise<OpenItemForMatching[]>;
}
