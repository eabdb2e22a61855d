/**
 * The AR ledger read module: the one place outside the integrations service that reads the
 * ledger (partners, invoices, credit memos, line items). Integrations owns and writes those tables
 * (schema `integrations`); every other service reads them through these functions, never with SQL
 * of its own against that schema. Every read is scoped to one organization.
 *
 * Amounts are NUMERIC strings (exact); dates are 'YYYY-MM-DD' strings.
 */
import type { Knex } from 'knex';
import { ValidationError, type ValidationIssue } from './errors.js';
import { streamRows } from './db.js';

export const LEDGER_TABLES = {
  partners: 'integrations.partners',
  documents: 'integrations.documents',
  lineItems: 'integrations.line_items',
} as const;

export const ORGANIZATIONS_TABLE = 'admin.organizations';

export interface LedgerPartner {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  origin: string;
  remote_id: string;
  account_number: string | null;
  name: string;
  legal_name: string | null;
  email: string | null;
  phone: string | null;
  currency: string | null;
  company_code: string | null;
  parent_id: string | null;
  assignee_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface LedgerDocument {
  id: string;
  organization_id: string;
  business_unit_id: string | null;
  kind: 'invoice' | 'credit_memo';
  partner_id: string | null;
  customer_code: string | null;
  company_code: string;
  fiscal_year: string;
  document_number: string;
  reference: string | null;
  currency: string;
  document_date: string | null;
  net_due_date: string | null;
  posting_date: string | null;
  clearing_date: string | null;
  amount_in_document_currency: string;
  amount_in_local_currency: string | null;
  amount_open: string;
  status_open: boolean;
  created_at: Date;
  modified_at: Date;
}

const PARTNER_COLUMNS = [
  'id', 'organization_id', 'business_unit_id', 'origin', 'remote_id', 'account_number', 'name', 'legal_name', 'email', 'phone',
  'currency', 'company_code', 'parent_id', 'assignee_id', 'created_at', 'modified_at',
];
const DOCUMENT_COLUMNS = [
  'id', 'organization_id', 'business_unit_id', 'kind', 'partner_id', 'customer_code', 'company_code', 'fiscal_year', 'document_number',
  'reference', 'currency', 'document_date', 'net_due_date', 'posting_date', 'clearing_date', 'amount_in_document_currency',
  'amount_in_local_currency', 'amount_open', 'status_open', 'created_at', 'modified_at',
];

// ---------------------------------------------------------------- business-unit scope

/**
 * The business units a caller may see: '*' (admins, API keys) or a member's units (identity.bu).
 * A ledger record (partner or document) is in scope when it is tied to no unit or to one of them;
 * a record out of scope is treated as if it did not exist (404, absent from lists, 422 as a reference).
 */
export type BusinessUnitScope = '*' | readonly string[];

/** Whether a record of the given business unit (null = not tied to a unit) is within the scope. */
export function inBusinessUnitScope(scope: BusinessUnitScope, businessUnitId: string | null): boolean {
  return scope === '*' || businessUnitId === null || scope.includes(businessUnitId);
}

function whereInScope(q: Knex.QueryBuilder, scope: BusinessUnitScope, column = 'business_unit_id'): Knex.QueryBuilder {
  if (scope === '*') return q;
  return q.andWhere((w) => {
    void w.whereNull(column).orWhereIn(column, [...scope]);
  });
}

export interface SqlFragment {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * SQL that is true when the ledger partner whose id is `idExpr` (a trusted column expression of the
 * caller's query, e.g. `p.partner_id`) is outside the scope; a null id or an unknown partner is not.
 * Null for scope '*' (nothing is outside).
 */
export function partnerOutOfScopeSql(idExpr: string, scope: BusinessUnitScope): SqlFragment | null {
  if (scope === '*') return null;
  return {
    sql: `EXISTS (SELECT 1 FROM ${LEDGER_TABLES.partners} scope_p WHERE scope_p.id = ${idExpr} AND scope_p.business_unit_id IS NOT NULL AND NOT (scope_p.business_unit_id = ANY(?::uuid[])))`,
    bindings: [[...scope]],
  };
}

/** Like partnerOutOfScopeSql, for the ledger document (invoice, credit memo) whose id is `idExpr`. */
export function documentOutOfScopeSql(idExpr: string, scope: BusinessUnitScope): SqlFragment | null {
  if (scope === '*') return null;
  return {
    sql: `EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents} scope_d WHERE scope_d.id = ${idExpr} AND scope_d.business_unit_id IS NOT NULL AND NOT (scope_d.business_unit_id = ANY(?::uuid[])))`,
    bindings: [[...scope]],
  };
}

export async function getPartner(db: Knex, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<LedgerPartner | null> {
  const row = await whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId, id }), scope).first();
  return (row as LedgerPartner | undefined) ?? null;
}

export async function getPartners(db: Knex, organizationId: string, ids: readonly string[], scope: BusinessUnitScope = '*'): Promise<Map<string, LedgerPartner>> {
  if (ids.length === 0) return new Map();
  const rows = (await whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]), scope)) as LedgerPartner[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Every partner of the organization with the fields payer identification needs. */
export async function listPartnersForMatching(db: Knex, organizationId: string): Promise<Pick<LedgerPartner, 'id' | 'name' | 'legal_name' | 'account_number' | 'remote_id'>[]> {
  return db(LEDGER_TABLES.partners).select('id', 'name', 'legal_name', 'account_number', 'remote_id').where({ organization_id: organizationId }).orderBy('id');
}

/**
 * How each partner of the organization pays, from its cleared invoices that have a due date: how many
 * and the average days between due date and clearing (negative: paid early). Partners without such
 * invoices are absent. Ordered by partner id.
 */
export async function partnerPaymentHabits(
  db: Knex,
  organizationId: string,
): Promise<{ partner_id: string; paid_invoices: number; average_days_after_due: number; first_cleared: string; last_cleared: string }[]> {
  const rows = (await db(LEDGER_TABLES.documents)
    .select('partner_id')
    .count({ paid_invoices: '*' })
    .avg({ average_days_after_due: db.raw('clearing_date - net_due_date') })
    .select(db.raw("to_char(min(clearing_date), 'YYYY-MM-DD') AS first_cleared"), db.raw("to_char(max(clearing_date), 'YYYY-MM-DD') AS last_cleared"))
    .where({ organization_id: organizationId, kind: 'invoice' })
    .whereNotNull('partner_id')
    .whereNotNull('clearing_date')
    .whereNotNull('net_due_date')
    .groupBy('partner_id')
    .orderBy('partner_id')) as { partner_id: string; paid_invoices: string; average_days_after_due: string; first_cleared: string; last_cleared: string }[];
  return rows.map((r) => ({
    partner_id: r.partner_id,
    paid_invoices: Number(r.paid_invoices),
    average_days_after_due: Number(r.average_days_after_due),
    first_cleared: r.first_cleared,
    last_cleared: r.last_cleared,
  }));
}

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

/** Every open invoice of the organization in the given currencies, with the fields deposit matching needs (oldest due first). */
export async function listOpenInvoicesForMatching(
  db: Knex,
  organizationId: string,
  currencies: readonly string[],
): Promise<Pick<LedgerDocument, 'id' | 'partner_id' | 'document_number' | 'reference' | 'currency' | 'amount_open' | 'net_due_date'>[]> {
  if (currencies.length === 0) return [];
  return db(LEDGER_TABLES.documents)
    .select('id', 'partner_id', 'document_number', 'reference', 'currency', 'amount_open', 'net_due_date')
    .where({ organization_id: organizationId, kind: 'invoice', status_open: true })
    .whereIn('currency', [...new Set(currencies)])
    .andWhere('amount_open', '>', 0)
    .orderBy([{ column: 'net_due_date', order: 'asc' }, { column: 'id' }]);
}

/**
 * One keyset page of listOpenInvoicesForMatching, in id order: the invoices after `afterId` (null:
 * from the start), at most `limit`. Lets a caller load a large ledger in pages and do other work
 * (heartbeats) between them; sort by due date afterwards where that order matters.
 */
export async function listOpenInvoicesForMatchingPage(
  db: Knex,
  organizationId: string,
  currencies: readonly string[],
  afterId: string | null,
  limit: number,
): Promise<Pick<LedgerDocument, 'id' | 'partner_id' | 'document_number' | 'reference' | 'currency' | 'amount_open' | 'net_due_date'>[]> {
  if (currencies.length === 0) return [];
  const q = db(LEDGER_TABLES.documents)
    .select('id', 'partner_id', 'document_number', 'reference', 'currency', 'amount_open', 'net_due_date')
    .where({ organization_id: organizationId, kind: 'invoice', status_open: true })
    .whereIn('currency', [...new Set(currencies)])
    .andWhere('amount_open', '>', 0);
  if (afterId) q.andWhere('id', '>', afterId);
  return q.orderBy('id').limit(limit);
}

/** Partners whose name or legal name equals `name`, ignoring case (payer identification on remittances). */
export async function findPartnersByName(db: Knex, organizationId: string, name: string, scope: BusinessUnitScope = '*'): Promise<LedgerPartner[]> {
  const wanted = name.trim().toLowerCase();
  if (!wanted) return [];
  return whereInScope(
    db(LEDGER_TABLES.partners)
      .select(PARTNER_COLUMNS)
      .where({ organization_id: organizationId })
      .andWhere((q) => {
        void q.whereRaw('lower(name) = ?', [wanted]).orWhereRaw('lower(legal_name) = ?', [wanted]);
      }),
    scope,
  ).orderBy('id') as Promise<LedgerPartner[]>;
}

/** A partner's open invoices, oldest due first. */
export async function openInvoicesOfPartner(db: Knex, organizationId: string, partnerId: string): Promise<LedgerDocument[]> {
  return db(LEDGER_TABLES.documents)
    .select(DOCUMENT_COLUMNS)
    .where({ organization_id: organizationId, partner_id: partnerId, kind: 'invoice', status_open: true })
    .orderBy([{ column: 'net_due_date', order: 'asc' }, { column: 'id' }]) as Promise<LedgerDocument[]>;
}

/**
 * A partner (within `scope`) and its open invoices (as openInvoicesOfPartner orders them) in ONE
 * query: one row per open invoice, at least one row. Null when the partner is unknown or out of scope.
 */
export async function partnerWithOpenInvoices(
  db: Knex,
  organizationId: string,
  partnerId: string,
  scope: BusinessUnitScope = '*',
): Promise<{ partner: LedgerPartner; invoices: LedgerDocument[] } | null> {
  const partner = whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId, id: partnerId }), scope).as('p');
  const rows = (await db
    .from(partner)
    .leftJoin(`${LEDGER_TABLES.documents} as d`, (j) => {
      void j.on('d.organization_id', 'p.organization_id').andOn('d.partner_id', 'p.id').andOnVal('d.kind', 'invoice').andOnVal('d.status_open', true);
    })
    .select([...PARTNER_COLUMNS.map((c) => `p.${c} as p_${c}`), ...DOCUMENT_COLUMNS.map((c) => `d.${c} as d_${c}`)])
    .orderBy([{ column: 'd.net_due_date', order: 'asc' }, { column: 'd.id' }])) as Record<string, unknown>[];
  const first = rows[0];
  if (!first) return null;
  const pick = <T>(row: Record<string, unknown>, prefix: string, columns: string[]) => Object.fromEntries(columns.map((c) => [c, row[prefix + c]])) as T;
  return {
    partner: pick<LedgerPartner>(first, 'p_', PARTNER_COLUMNS),
    invoices: rows.filter((r) => r.d_id !== null).map((r) => pick<LedgerDocument>(r, 'd_', DOCUMENT_COLUMNS)),
  };
}

export interface OrganizationProfile {
  id: string;
  name: string;
  base_currency: string;
  timezone: string;
}

/** The organization's name, base currency and timezone (owned by admin; read-only here). */
export async function getOrganizationProfile(db: Knex, organizationId: string): Promise<OrganizationProfile | null> {
  const row = await db(ORGANIZATIONS_TABLE).select('id', 'name', 'base_currency', 'timezone').where({ id: organizationId }).first();
  return (row as OrganizationProfile | undefined) ?? null;
}

export const BUSINESS_UNITS_TABLE = 'admin.business_units';

/** Which of `ids` are business units of the organization (owned by admin; read-only here). */
export async function businessUnitIdsOf(db: Knex, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = (await db(BUSINESS_UNITS_TABLE).where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]).pluck('id')) as string[];
  return new Set(found);
}

/**
 * A body's references to business units (`ids` at `loc`): 422 naming each index that is not a unit of
 * the organization, or not one within `scope` (a member's units), exactly as for a random id.
 */
export async function checkBusinessUnitReferences(db: Knex, organizationId: string, scope: BusinessUnitScope, ids: readonly string[], loc: (string | number)[]): Promise<void> {
  const known = await businessUnitIdsOf(db, organizationId, ids);
  const issues: ValidationIssue[] = [];
  ids.forEach((id, i) => {
    if (!known.has(id) || !inBusinessUnitScope(scope, id)) issues.push({ loc: [...loc, i], msg: 'is not a business unit of this organization', type: 'value_error.not_found' });
  });
  if (issues.length) throw new ValidationError(issues);
}

// ---------------------------------------------------------------- predicted overdue (cash-app analytics)

export interface PredictedOverdueQuery {
  /** as_of date, 'YYYY-MM-DD' */
  asOfDate: string;
  /** tiers: aged more than `days` past net due at as_of; tripped when the LC sum exceeds `amountLc` (decimal string) */
  tiers: readonly { days: number; amountLc: string }[];
  /** only documents of these business units (optional filter) */
  businessUnitIds?: readonly string[];
  /** business units the caller may access ('*' for all); documents of other units are left out, unassigned ones stay */
  accessibleBusinessUnits?: '*' | readonly string[];
  /**
   * How to convert an open invoice without a local-currency amount: its currency → factor to the base
   * currency (decimal strings; the base currency itself with '1'). Without a factor the invoice is not
   * convertible: left out of every sum and counted in `unconvertible_count`. Default: none.
   */
  conversion?: { currencies: readonly string[]; factors: readonly string[] };
}

export interface PredictedOverdueRow {
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  /** LC sum of all the customer's convertible open invoices (in scope), 2 decimals */
  total_open_lc: string;
  /** open invoices in scope that are not convertible (no local amount, no conversion factor): in no sum */
  unconvertible_count: number;
  /** per tier, in request order: LC sum and count of the invoices aged past it */
  tier_amounts: string[];
  tier_counts: number[];
  /** the convertible invoices aged past the smallest tier: as_of − net_due_date (days) and open LC in signed cents */
  invoice_ages: number[];
  invoice_cents: number[];
  /** the customer's closed invoices (whole history, every business unit): lateness of each (days) */
  history_lateness: number[];
}

const LATENESS_COUNTS_TABLE = 'integrations.invoice_lateness_counts';
const CLOSED_INVOICE_SQL = `kind = 'invoice' AND NOT status_open AND clearing_date IS NOT NULL AND net_due_date IS NOT NULL`;

/**
 * An open invoice's open amount in local currency, in cents (bigint), or NULL when not convertible:
 * the stored `open_lc_cents` when the document gives its own rate (integrations migration 008),
 * else `open_unconverted_amount` times the factor of its currency (`converted_cents`).
 * Bindings: the factors, then the currencies.
 */
const OPEN_LC_CENTS_SQL = `coalesce(open_lc_cents,
  integrations.converted_cents(open_unconverted_amount, (?::numeric[])[array_position(?::text[], open_unconverted_currency::text)]))`;

function conversionBindings(q: PredictedOverdueQuery): unknown[] {
  return [[...(q.conversion?.factors ?? [])], [...(q.conversion?.currencies ?? [])]];
}

function scopeOf(q: Pick<PredictedOverdueQuery, 'businessUnitIds' | 'accessibleBusinessUnits'>): { sql: string; bindings: unknown[] } {
  const scope: string[] = [];
  const bindings: unknown[] = [];
  if (q.businessUnitIds) {
    scope.push('AND business_unit_id = ANY(?::uuid[])');
    bindings.push([...q.businessUnitIds]);
  }
  if (q.accessibleBusinessUnits && q.accessibleBusinessUnits !== '*') {
    scope.push('AND (business_unit_id IS NULL OR business_unit_id = ANY(?::uuid[]))');
    bindings.push([...q.accessibleBusinessUnits]);
  }
  return { sql: scope.join(' '), bindings };
}

/**
 * Predicted overdue, one statement: a single pass over the organization's open invoices (kind
 * invoice, status_open, with a partner; their open amount in local currency per OPEN_LC_CENTS_SQL,
 * NULL when not convertible) aggregates per customer its total, the number of invoices that are not
 * convertible and, per tier, the LC sum and count of the (convertible) invoices more than `days` past
 * net due at as_of; sums are signed (credits on the invoice side reduce them). Only customers with a
 * tripped tier (sum > amount) come back, each with its aged invoices (for the trip probabilities)
 * and its lateness histogram, both read through covering indexes for those customers only.
 */
export async function predictedOverdueRows(
  db: Knex,
  organizationId: string,
  q: PredictedOverdueQuery,
  /**
   * Each customer's row as it arrives (the aggregation emits customers while it scans): the caller's
   * work on them overlaps the statement. Given, the returned list is empty.
   */
  onRow?: (row: PredictedOverdueRow) => void,
): Promise<PredictedOverdueRow[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  return db.transaction(
    async (trx) => {
      // The conversion expression costs once per aggregate that reads it (the planner substitutes it
      // into each of them) on every open invoice. When no open invoice in scope waits for a conversion
      // (every one gives its local amount: the middleware's usual case), open_lc_cents is the same
      // value: read the column. Both statements see one snapshot (repeatable read).
      const { rows: pending } = await trx.raw(
        `SELECT EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents}
           WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL ${scopeSql}) AS any`,
        [organizationId, ...scopeBindings] as Knex.RawBinding[],
      );
      return predictedOverdueStatement(trx, organizationId, q, (pending as { any: boolean }[])[0]!.any, onRow);
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

async function predictedOverdueStatement(
  trx: Knex.Transaction,
  organizationId: string,
  q: PredictedOverdueQuery,
  converting: boolean,
  onRow?: (row: PredictedOverdueRow) => void,
): Promise<PredictedOverdueRow[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  const fx = converting ? conversionBindings(q) : [];
  const centsSql = converting ? OPEN_LC_CENTS_SQL : 'open_lc_cents';
  const minDays = Math.min(...q.tiers.map((t) => t.days));
  // Without conversion every open invoice in scope has its cents (no NULLs to leave out): plain counts.
  const counted = converting ? 'count(cents)' : 'count(*)';
  const tierCols = q.tiers.map((_, i) => `sum(cents) FILTER (WHERE age > ?) AS s${i}, ${counted} FILTER (WHERE age > ?) AS c${i}`).join(',\n      ');
  const tierBindings = q.tiers.flatMap((t) => [t.days, t.days]);
  const having = q.tiers.map(() => 'sum(cents) FILTER (WHERE age > ?) > ?::numeric * 100').join(' OR ');
  const havingBindings = q.tiers.flatMap((t) => [t.days, t.amountLc]);
  const sql = `
    WITH agg AS (
      SELECT partner_id, sum(cents) AS total_open_cents, ${converting ? 'count(*) FILTER (WHERE cents IS NULL)' : '0'} AS unconvertible,
      ${tierCols}
      FROM (SELECT partner_id, ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL ${scopeSql}) o
      GROUP BY partner_id
      HAVING ${having}
    )
    SELECT agg.partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      (coalesce(agg.total_open_cents, 0) / 100.0)::numeric(20, 2)::text AS total_open_lc, agg.unconvertible::int AS unconvertible_count,
      ARRAY[${q.tiers.map((_, i) => `(coalesce(agg.s${i}, 0) / 100.0)::numeric(20, 2)::text`).join(', ')}] AS tier_amounts,
      ARRAY[${q.tiers.map((_, i) => `agg.c${i}::int`).join(', ')}] AS tier_counts,
      inv.ages AS invoice_ages, inv.cents AS invoice_cents, hist.lateness AS history_lateness
    FROM agg
    CROSS JOIN LATERAL (SELECT name, account_number FROM ${LEDGER_TABLES.partners} WHERE id = agg.partner_id OFFSET 0) p
    CROSS JOIN LATERAL (
      SELECT string_agg(age::text, ',') AS ages, string_agg(cents::text, ',') AS cents
      FROM (SELECT ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND partner_id = agg.partner_id AND kind = 'invoice' AND status_open
              AND net_due_date < ?::date - ?::int ${scopeSql}) a
      ${converting ? 'WHERE cents IS NOT NULL' : ''}
    ) inv
    CROSS JOIN LATERAL (
      SELECT string_agg((clearing_date - net_due_date)::text, ',') AS lateness
      FROM ${LEDGER_TABLES.documents}
      WHERE organization_id = ? AND partner_id = agg.partner_id AND ${CLOSED_INVOICE_SQL}
    ) hist`;
  const bindings = [
    ...tierBindings, q.asOfDate, ...fx, organizationId, ...scopeBindings, ...havingBindings,
    q.asOfDate, ...fx, organizationId, q.asOfDate, minDays, ...scopeBindings,
    organizationId,
  ];
  // The planner's estimate of tripped customers is far too high (HAVING selectivity), which pushes the
  // statement past the JIT cost thresholds: compiling it costs more than the scan. JIT off, for this statement only.
  await trx.raw('SET LOCAL jit = off');
  // integer lists travel as comma-separated text: much cheaper to parse than Postgres arrays, and read
  // as a JSON array (V8's JSON parser takes a third of the time of split + Number on these lists)
  const numbers = (list: string | null): number[] => (list ? (JSON.parse(`[${list}]`) as number[]) : []);
  const collected: PredictedOverdueRow[] = [];
  const deliver = onRow ?? ((row: PredictedOverdueRow) => void collected.push(row));
  await streamRows<WireRow>(trx, sql, bindings, (r) =>
    deliver({ ...r, invoice_ages: numbers(r.invoice_ages), invoice_cents: numbers(r.invoice_cents), history_lateness: numbers(r.history_lateness) }),
  );
  return collected;
}

/** A predicted-overdue row as PostgreSQL sends it: the integer lists as comma-separated text. */
type WireRow = Omit<PredictedOverdueRow, 'invoice_ages' | 'invoice_cents' | 'history_lateness'> & {
  invoice_ages: string | null;
  invoice_cents: string | null;
  history_lateness: string | null;
};

/**
 * Open invoices (kind invoice, with a partner, in scope) that have no local-currency amount and whose
 * currency is not among `convertible`, per currency: what predicted overdue cannot convert.
 */
export async function unconvertibleOpenInvoices(
  db: Knex,
  organizationId: string,
  q: Pick<PredictedOverdueQuery, 'businessUnitIds' | 'accessibleBusinessUnits'>,
  convertible: readonly string[],
): Promise<{ currency: string; invoice_count: number }[]> {
  const { sql: scopeSql, bindings: scopeBindings } = scopeOf(q);
  const res = await db.raw(
    `SELECT trim(open_unconverted_currency) AS currency, count(*)::int AS invoice_count
     FROM ${LEDGER_TABLES.documents}
     WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL
       AND kind = 'invoice' AND status_open AND open_unconverted_currency::text <> ALL(?::text[]) ${scopeSql}
     GROUP BY 1 ORDER BY 1`,
    [organizationId, [...convertible], ...scopeBindings] as Knex.RawBinding[],
  );
  return res.rows as { currency: string; invoice_count: number }[];
}

/** The organization's whole payment history: lateness (clearing − net due, days) → number of closed invoices. */
export async function organizationLatenessHistogram(db: Knex, organizationId: string): Promise<[lateness: number, count: number][]> {
  const rows = (await db(LATENESS_COUNTS_TABLE)
    .select('lateness', 'invoice_count')
    .where({ organization_id: organizationId })
    .andWhere('invoice_count', '>', 0)) as { lateness: number; invoice_count: string }[];
  return rows.map((r) => [r.lateness, Number(r.invoice_count)]);
}

// ---------------------------------------------------------------- AR aging (scheduled report)

/** Aging buckets of the AR aging report: days past net due at the as-of date. */
export const AGING_BUCKETS = [
  { key: 'current', label: 'Current' },
  { key: 'd1_30', label: '1–30' },
  { key: 'd31_60', label: '31–60' },
  { key: 'd61_90', label: '61–90' },
  { key: 'd91_120', label: '91–120' },
  { key: 'over_120', label: 'Over 120' },
] as const;

export interface ArAgingQuery {
  /** as-of date, 'YYYY-MM-DD' (already the date in the organization's timezone) */
  asOfDate: string;
  /** as PredictedOverdueQuery.conversion: currency → factor to the base currency; the rest is not convertible */
  conversion?: { currencies: readonly string[]; factors: readonly string[] };
}

/** One customer × business unit of the aging: open local-currency cents per bucket (exact integers). */
export interface ArAgingRow {
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  /** the invoices' business unit (null: tied to none) */
  business_unit_id: string | null;
  /** cents per AGING_BUCKETS entry, in order */
  buckets: bigint[];
  total: bigint;
  /** open invoices counted (convertible ones) */
  invoice_count: number;
  /** open invoices that cannot be converted to local currency: in no bucket, listed separately */
  unconvertible_count: number;
}

/** An open invoice the aging cannot convert to local currency (no local amount, no stored rate). */
export interface ArAgingUnconvertibleInvoice {
  document_id: string;
  partner_id: string;
  partner_name: string;
  partner_account_number: string | null;
  business_unit_id: string | null;
  document_number: string;
  currency: string;
  /** open amount in the document currency, NUMERIC text (4 decimals as stored) */
  amount_open: string;
  net_due_date: string | null;
  /** as-of − net due (null without a due date) */
  days_past_due: number | null;
}

/**
 * Bucket of each open invoice: as-of − net_due_date ≤ 0 (or no due date) is current, then 1–30,
 * 31–60, 61–90, 91–120 and over 120 days past due. Sums are of integer cents (bigint), signed.
 */
const BUCKET_FILTERS = [
  'age IS NULL OR age <= 0',
  'age BETWEEN 1 AND 30',
  'age BETWEEN 31 AND 60',
  'age BETWEEN 61 AND 90',
  'age BETWEEN 91 AND 120',
  'age > 120',
];

/** Order of the aging rows: by customer name (then account, id), a customer's rows by business unit. */
export const AR_AGING_ORDER = 'partner_name, partner_account_number, partner_id, business_unit_id NULLS FIRST';

/**
 * The bare aging aggregation (also what the benchmark compares with, with `ORDER BY AR_AGING_ORDER`):
 * per (customer, business unit) of the organization's open invoices (kind invoice, status_open, with a
 * partner), their local cents per bucket. `centsSql` is the LC expression (open_lc_cents, or
 * OPEN_LC_CENTS_SQL when some invoice waits for a stored rate). Bindings: as-of, [fx…], organization id.
 */
export function arAgingSql(centsSql: string): string {
  return `SELECT a.partner_id::text AS partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      a.business_unit_id::text AS business_unit_id,
      ${BUCKET_FILTERS.map((_, i) => `coalesce(a.b${i}, 0)::text AS b${i}`).join(', ')},
      a.invoice_count::int AS invoice_count, a.unconvertible_count::int AS unconvertible_count
    FROM (
      SELECT partner_id, business_unit_id,
        ${BUCKET_FILTERS.map((f, i) => `sum(cents) FILTER (WHERE ${f}) AS b${i}`).join(',\n        ')},
        count(cents) AS invoice_count, count(*) - count(cents) AS unconvertible_count
      FROM (SELECT partner_id, business_unit_id, ?::date - net_due_date AS age, ${centsSql} AS cents
            FROM ${LEDGER_TABLES.documents}
            WHERE organization_id = ? AND kind = 'invoice' AND status_open AND partner_id IS NOT NULL) o
      GROUP BY partner_id, business_unit_id
    ) a
    JOIN ${LEDGER_TABLES.partners} p ON p.id = a.partner_id`;
}

/**
 * A read of the ledger in one snapshot (repeatable read) whose results stream through server-side
 * cursors: `fn` gets the transaction. It writes nothing but temporary tables dropped at its end.
 */
export async function withLedgerSnapshot<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn, { isolationLevel: 'repeatable read' });
}

let cursorSeq = 0;

/** Rows of `sql` in pages of `pageSize` through a server-side cursor (the whole result never sits in memory). */
async function* cursorPages<R>(trx: Knex.Transaction, sql: string, bindings: readonly unknown[], pageSize: number): AsyncGenerator<R[]> {
  const name = `ledger_cursor_${++cursorSeq}`;
  await trx.raw(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, bindings as Knex.RawBinding[]);
  try {
    for (;;) {
      const { rows } = (await trx.raw(`FETCH FORWARD ${Math.max(1, Math.floor(pageSize))} FROM ${name}`)) as { rows: R[] };
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < pageSize) return;
    }
  } finally {
    await trx.raw(`CLOSE ${name}`).catch(() => {});
  }
}

/** Whether some open invoice of the organization waits for a stored rate (no local amount of its own). */
async function anyUnconvertedOpen(trx: Knex.Transaction, organizationId: string): Promise<boolean> {
  const { rows } = await trx.raw(
    `SELECT EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents}
       WHERE organization_id = ? AND open_unconverted_amount IS NOT NULL AND partner_id IS NOT NULL) AS any`,
    [organizationId],
  );
  return (rows as { any: boolean }[])[0]!.any;
}

/**
 * The AR aging of the organization as of `q.asOfDate`, streamed in pages of (customer, business unit)
 * rows ordered by customer name (AR_AGING_ORDER): inside withLedgerSnapshot. Local currency as predicted overdue: the
 * document's own rate (open_lc_cents), else the stored rate of its currency (`q.conversion`), else
 * not convertible (counted in `unconvertible_count`, in no bucket).
 */
export async function* arAgingPages(trx: Knex.Transaction, organizationId: string, q: ArAgingQuery, pageSize = 2000): AsyncGenerator<ArAgingRow[]> {
  const converting = await anyUnconvertedOpen(trx, organizationId);
  const fx = converting ? [[...(q.conversion?.factors ?? [])], [...(q.conversion?.currencies ?? [])]] : [];
  // The aggregation runs once into a temporary table (CREATE TABLE AS may use parallel workers; a
  // cursor's plan never does), whose one row per customer and unit is then streamed in order through a
  // cursor. No JIT: compiling costs more than this aggregation saves.
  const table = `ar_aging_${++cursorSeq}`;
  await trx.raw('SET LOCAL jit = off');
  await trx.raw(`CREATE TEMPORARY TABLE ${table} ON COMMIT DROP AS ${arAgingSql(converting ? OPEN_LC_CENTS_SQL : 'open_lc_cents')}`, [q.asOfDate, ...fx, organizationId] as Knex.RawBinding[]);
  type Raw = Record<string, string | number | null>;
  for await (const page of cursorPages<Raw>(trx, `SELECT * FROM ${table} ORDER BY ${AR_AGING_ORDER}`, [], pageSize)) {
    yield page.map((r) => {
      const buckets = BUCKET_FILTERS.map((_, i) => BigInt(r[`b${i}`] as string));
      return {
        partner_id: r.partner_id as string,
        partner_name: r.partner_name as string,
        partner_account_number: r.partner_account_number as string | null,
        business_unit_id: r.business_unit_id as string | null,
        buckets,
        total: buckets.reduce((a, b) => a + b, 0n),
        invoice_count: r.invoice_count as number,
        unconvertible_count: r.unconvertible_count as number,
      };
    });
  }
}

/** The open invoices the aging cannot convert (see arAgingPages), streamed, by customer name and document number. */
export async function* arAgingUnconvertiblePages(trx: Knex.Transaction, organizationId: string, q: ArAgingQuery, pageSize = 2000): AsyncGenerator<ArAgingUnconvertibleInvoice[]> {
  const sql = `SELECT d.id::text AS document_id, d.partner_id::text AS partner_id, p.name AS partner_name, p.account_number AS partner_account_number,
      d.business_unit_id::text AS business_unit_id, d.document_number, trim(d.open_unconverted_currency) AS currency,
      d.open_unconverted_amount::text AS amount_open, to_char(d.net_due_date, 'YYYY-MM-DD') AS net_due_date,
      ?::date - d.net_due_date AS days_past_due
    FROM ${LEDGER_TABLES.documents} d JOIN ${LEDGER_TABLES.partners} p ON p.id = d.partner_id
    WHERE d.organization_id = ? AND d.open_unconverted_amount IS NOT NULL AND d.partner_id IS NOT NULL
      AND d.kind = 'invoice' AND d.status_open AND d.open_unconverted_currency::text <> ALL(?::text[])
    ORDER BY p.name, p.account_number, d.partner_id, d.document_number, d.id`;
  yield* cursorPages<ArAgingUnconvertibleInvoice>(trx, sql, [q.asOfDate, organizationId, [...(q.conversion?.currencies ?? [])]], pageSize);
}

/** Names of the organization's business units (owned by admin; read-only here). */
export async function businessUnitNames(db: Knex, organizationId: string): Promise<Map<string, string>> {
  const rows = (await db(BUSINESS_UNITS_TABLE).select('id', 'name').where({ organization_id: organizationId })) as { id: string; name: string }[];
  return new Map(rows.map((r) => [r.id, r.name]));
}
