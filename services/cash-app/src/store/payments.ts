/**
 * Payments and their allocations to ledger invoices (the API's reads and a user's writes), the relief
 * they give, and the bank accounts learned from approved payments. Every query is scoped by organization.
 */
import { documentOutOfScopeSql, documentsReportedAt, newId, partnerOutOfScopeSql, type BusinessUnitScope, type Db, type SqlFragment } from '@rp/platform';
import type { Knex } from 'knex';
import type { Shortfall } from '../domain-types/matching.js';
import type { AllocationDraft, ReliefRow } from '../domain-types/payments.js';

export type PaymentStatus = 'unapproved' | 'approved';
/** What an allocation's ledger document is (payment_allocations.document_kind). */
export type DocumentKind = 'invoice' | 'credit_memo';

/**
 * Per invoice and posted_at, the sum of amount paid + discount + withheld + adjustment of the
 * allocations of payments with the given statuses, and when the ERP last reported each posted
 * invoice: the input of the open-amount rule, which decides what of it the ledger does not show yet.
 */
export async function reliefRows(
  db: Db | Knex.Transaction,
  organizationId: string,
  statuses: readonly PaymentStatus[],
  opts: { invoiceIds?: readonly string[]; excludePaymentId?: string } = {},
): Promise<{ rows: ReliefRow[]; reportedAt: Map<string, Date> }> {
  const q = db('payment_allocations as a')
    .join('payments as p', 'p.id', 'a.payment_id')
    .where('a.organization_id', organizationId)
    .whereIn('p.status', [...statuses])
    .groupBy('a.invoice_id', 'p.posted_at')
    .select('a.invoice_id', 'p.posted_at', db.raw('SUM(a.amount_paid + a.amount_discount + a.amount_withheld + a.adjustment_amount)::text AS relieved'));
  if (opts.invoiceIds) q.whereIn('a.invoice_id', [...new Set(opts.invoiceIds)]);
  if (opts.excludePaymentId) q.whereNot('p.id', opts.excludePaymentId);
  const rows = (await q) as ReliefRow[];
  const posted = rows.filter((r) => r.posted_at !== null).map((r) => r.invoice_id);
  return { rows, reportedAt: await documentsReportedAt(db, organizationId, posted) };
}

/** The payment columns of a shortfall: both null for none (a zero amount is none). */
export function shortfallColumns(shortfall: Shortfall | null | undefined): { shortfall_amount: string | null; shortfall_reason: Shortfall['reason'] | null } {
  if (!shortfall || !(Number(shortfall.amount) > 0)) return { shortfall_amount: null, shortfall_reason: null };
  return { shortfall_amount: shortfall.amount, shortfall_reason: shortfall.reason };
}

// ---------------------------------------------------------------------------------------------
// API reads and writes

export interface PaymentRow {
  id: string;
  organization_id: string;
  bank_transaction_id: string;
  partner_id: string | null;
  remittance_id: string | null;
  status: PaymentStatus;
  amount: string;
  currency: string;
  payment_date: string | null;
  match_score: string | null;
  match_reasons: unknown[];
  /** migration 015: both null, or a positive amount in the payment's currency and its reason */
  shortfall_amount: string | null;
  shortfall_reason: Shortfall['reason'] | null;
  /** the current approval came from the organization's auto_approve_threshold (approved_by null) */
  auto_approved: boolean;
  posting_error: string | null;
  posted_at: Date | null;
  posting_status: 'not_posted' | 'pending' | 'posted' | 'failed' | 'unposting';
  posting_id: string | null;
  erp_provider: string | null;
  erp_payment_id: string | null;
  erp_document_number: string | null;
  erp_can_unpost: boolean;
  erp_posting_adopted: boolean;
  approved_by: string | null;
  approved_at: Date | null;
  created_at: Date;
  modified_at: Date;
  allocated_amount: string;
  // joined transaction
  tx_statement_id: string;
  tx_bank_account_id: string | null;
  tx_amount: string;
  tx_currency: string;
  tx_booking_date: string | null;
  tx_value_date: string | null;
  tx_counterparty_name: string | null;
  tx_counterparty_iban: string | null;
  tx_counterparty_account: string | null;
  tx_remittance_information: string | null;
  tx_bank_reference: string | null;
}

export interface AllocationRow extends AllocationDraft {
  id: string;
  /** a credit memo's allocation applies its credit (amount_paid) and reduces the payment's cash */
  document_kind: DocumentKind;
  payment_id: string;
  created_at: Date;
  modified_at: Date;
}

/**
 * SQL true when the payment `alias` is within the business-unit scope: its payer and every invoice it
 * is allocated to are tied to no unit or to one of the scope's (null for scope '*': every payment).
 */
export function paymentInScopeSql(alias: string, scope: BusinessUnitScope): SqlFragment | null {
  return partnerAndAllocatedInvoicesInScopeSql(alias, scope, { table: 'payment_allocations', key: 'payment_id' });
}

/**
 * SQL true when the record `alias` (with a `partner_id`) is within the scope together with every
 * invoice its allocation rows (`allocations.table`, joined on `allocations.key` = `alias`.id) name.
 * Null for scope '*'. Shared by payments and remittances.
 */
export function partnerAndAllocatedInvoicesInScopeSql(
  alias: string,
  scope: BusinessUnitScope,
  allocations: { table: 'payment_allocations' | 'remittance_allocations'; key: 'payment_id' | 'remittance_id' },
): SqlFragment | null {
  const partner = partnerOutOfScopeSql(`${alias}.partner_id`, scope);
  const document = documentOutOfScopeSql('scope_a.invoice_id', scope);
  if (!partner || !document) return null;
  return {
    sql: `(NOT ${partner.sql} AND NOT EXISTS (SELECT 1 FROM ${allocations.table} scope_a WHERE scope_a.${allocations.key} = ${alias}.id AND ${document.sql}))`,
    bindings: [...partner.bindings, ...document.bindings],
  };
}

export function whereSqlFragment(q: Knex.QueryBuilder, fragment: SqlFragment | null): Knex.QueryBuilder {
  return fragment ? q.andWhereRaw(fragment.sql, fragment.bindings) : q;
}

/** An allocation's cash in SQL (alias `a`): a credit memo's credit applied counts negative. */
export const SIGNED_PAID = `CASE WHEN a.document_kind = 'credit_memo' THEN -a.amount_paid ELSE a.amount_paid END`;

export interface PaymentFilter {
  /** business units the caller may see ('*' for all): payments out of scope are left out */
  scope?: BusinessUnitScope;
  status?: PaymentStatus;
  bankTransactionId?: string;
  statementId?: string;
  partnerId?: string;
  startDate?: string;
  endDate?: string;
}

function paymentsQuery(db: Db | Knex.Transaction, organizationId: string) {
  return db('payments as p')
    .join('bank_transactions as t', function () {
      this.on('t.id', '=', 'p.bank_transaction_id').andOn('t.organization_id', '=', 'p.organization_id');
    })
    .where('p.organization_id', organizationId);
}

function applyFilter(q: Knex.QueryBuilder, f: PaymentFilter): Knex.QueryBuilder {
  if (f.status) q.andWhere('p.status', f.status);
  if (f.bankTransactionId) q.andWhere('p.bank_transaction_id', f.bankTransactionId);
  if (f.statementId) q.andWhere('t.statement_id', f.statementId);
  if (f.partnerId) q.andWhere('p.partner_id', f.partnerId);
  if (f.startDate) q.andWhere('p.payment_date', '>=', f.startDate);
  if (f.endDate) q.andWhere('p.payment_date', '<=', f.endDate);
  return whereSqlFragment(q, paymentInScopeSql('p', f.scope ?? '*'));
}

function selectPayment(db: Db | Knex.Transaction, q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.select(
    'p.*',
    db.raw(`(SELECT COALESCE(SUM(${SIGNED_PAID}), 0)::text FROM payment_allocations a WHERE a.payment_id = p.id) AS allocated_amount`),
    't.statement_id as tx_statement_id',
    't.bank_account_id as tx_bank_account_id',
    't.amount as tx_amount',
    't.currency as tx_currency',
    't.booking_date as tx_booking_date',
    't.value_date as tx_value_date',
    't.counterparty_name as tx_counterparty_name',
    't.counterparty_iban as tx_counterparty_iban',
    't.counterparty_account as tx_counterparty_account',
    't.remittance_information as tx_remittance_information',
    't.bank_reference as tx_bank_reference',
  );
}

export async function listPayments(db: Db, organizationId: string, filter: PaymentFilter, offset: number, limit: number): Promise<{ rows: PaymentRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    selectPayment(db, applyFilter(paymentsQuery(db, organizationId), filter)).orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'desc' }]).offset(offset).limit(limit),
    applyFilter(paymentsQuery(db, organizationId), filter).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as PaymentRow[], total: Number(count) };
}

/** The payment; undefined when unknown, another organization's, or outside `opts.scope` (business units). */
export async function getPayment(
  db: Db | Knex.Transaction,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean; scope?: BusinessUnitScope } = {},
): Promise<PaymentRow | undefined> {
  if (opts.forUpdate) await db('payments').select('id').where({ organization_id: organizationId, id }).forUpdate();
  const q = paymentsQuery(db, organizationId).andWhere('p.id', id);
  return (await selectPayment(db, whereSqlFragment(q, paymentInScopeSql('p', opts.scope ?? '*'))).first()) as PaymentRow | undefined;
}

/** The organization's payments among `ids` (any order), read as getPayment reads one. */
export async function paymentsByIds(db: Db | Knex.Transaction, organizationId: string, ids: readonly string[]): Promise<PaymentRow[]> {
  if (ids.length === 0) return [];
  return (await selectPayment(db, paymentsQuery(db, organizationId).whereIn('p.id', [...ids]))) as PaymentRow[];
}

export async function allocationsOf(db: Db | Knex.Transaction, organizationId: string, paymentIds: readonly string[]): Promise<AllocationRow[]> {
  if (paymentIds.length === 0) return [];
  return db('payment_allocations')
    .select('id', 'payment_id', 'invoice_id', 'document_kind', 'amount_paid', 'amount_discount', 'amount_withheld', 'adjustment_id', 'adjustment_amount', 'created_at', 'modified_at')
    .where({ organization_id: organizationId })
    .whereIn('payment_id', [...paymentIds])
    .orderBy(['payment_id', 'created_at', 'id']) as Promise<AllocationRow[]>;
}


/** Replaces the payment's allocations, its payer and its shortfall (recomputed from the allocations by the caller); `kinds`: each allocated ledger document's kind (absent = invoice). */
export async function replaceAllocations(
  trx: Knex.Transaction,
  organizationId: string,
  paymentId: string,
  allocations: readonly AllocationDraft[],
  partnerId: string | null,
  kinds: ReadonlyMap<string, DocumentKind>,
  shortfall: Shortfall | null,
): Promise<void> {
  await trx('payment_allocations').where({ organization_id: organizationId, payment_id: paymentId }).delete();
  if (allocations.length > 0) {
    await trx('payment_allocations').insert(
      allocations.map((a) => ({ id: newId(), organization_id: organizationId, payment_id: paymentId, ...a, document_kind: kinds.get(a.invoice_id) ?? 'invoice' })),
    );
  }
  await trx('payments').where({ organization_id: organizationId, id: paymentId }).update({ partner_id: partnerId, ...shortfallColumns(shortfall), modified_at: trx.fn.now() });
}

/** Approved by `userId`, or automatically (`auto`: by the organization's threshold, no user). */
export async function markApproved(trx: Knex.Transaction, organizationId: string, paymentId: string, userId: string | null, partnerId: string | null, auto = false): Promise<void> {
  await trx('payments')
    .where({ organization_id: organizationId, id: paymentId })
    .update({ status: 'approved', approved_by: auto ? null : userId, auto_approved: auto, approved_at: trx.fn.now(), partner_id: partnerId, modified_at: trx.fn.now() });
}

/**
 * The statement's payments that automatic approval takes: unapproved, proposed by matching (a match
 * score) at or above `threshold`, best score first.
 */
export async function autoApprovalCandidates(db: Db, organizationId: string, statementId: string, threshold: string): Promise<string[]> {
  const rows = (await db('payments as p')
    .join('bank_transactions as t', function () {
      this.on('t.id', '=', 'p.bank_transaction_id').andOn('t.organization_id', '=', 'p.organization_id');
    })
    .select('p.id')
    .where({ 'p.organization_id': organizationId, 't.statement_id': statementId, 'p.status': 'unapproved' })
    .whereNotNull('p.match_score')
    .andWhere('p.match_score', '>=', threshold)
    .orderBy([{ column: 'p.match_score', order: 'desc' }, { column: 't.sequence' }, { column: 'p.id' }])) as { id: string }[];
  return rows.map((r) => r.id);
}

/** Remember that this partner pays from this account (IBAN or account number), for matching later deposits. */
export async function learnPartnerAccount(trx: Knex.Transaction, organizationId: string, partnerId: string, accountIdentifier: string): Promise<void> {
  await trx('partner_bank_accounts')
    .insert({ id: newId(), organization_id: organizationId, partner_id: partnerId, account_identifier: accountIdentifier })
    .onConflict(['organization_id', 'account_identifier', 'partner_id'])
    .merge({ modified_at: trx.fn.now() });
}

/** The active adjustments of the organization among `ids`. */
export async function activeAdjustmentIds(db: Db | Knex.Transaction, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = (await db('adjustments').select('id').where({ organization_id: organizationId, is_active: true }).whereIn('id', [...new Set(ids)])) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** Serialize approvals and allocation edits of one organization (open amounts are checked inside). */
export async function lockOrganizationPayments(trx: Knex.Transaction, organizationId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`cash-app:payments:${organizationId}`]);
}

/** The organization's transaction, locked, with whether it already has a payment. */
export async function lockTransaction(trx: Knex.Transaction, organizationId: string, id: string) {
  const row = (await trx('bank_transactions')
    .select('id', 'amount', 'currency', 'booking_date', 'value_date')
    .where({ organization_id: organizationId, id })
    .forUpdate()
    .first()) as { id: string; amount: string; currency: string; booking_date: string | null; value_date: string | null } | undefined;
  if (!row) return null;
  const payment = await trx('payments').select('id').where({ organization_id: organizationId, bank_transaction_id: id }).first();
  return { ...row, currency: row.currency.trim(), has_payment: !!payment };
}

/** An unapproved payment created by a user (no match score or reasons). */
export async function insertManualPayment(
  trx: Knex.Transaction,
  organizationId: string,
  tx: { id: string; amount: string; currency: string; booking_date: string | null; value_date: string | null },
): Promise<string> {
  const id = newId();
  await trx('payments').insert({
    id,
    organization_id: organizationId,
    bank_transaction_id: tx.id,
    status: 'unapproved',
    amount: tx.amount,
    currency: tx.currency,
    payment_date: tx.booking_date ?? tx.value_date,
    match_score: null,
    match_reasons: JSON.stringify([]),
  });
  return id;
}
