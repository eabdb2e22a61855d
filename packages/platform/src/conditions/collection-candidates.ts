/**
 * The collections engine's read of the ledger (the kernel's sanctioned cross-schema read, like the
 * segment listings): per customer, the collection policy that applies to it and its open invoices
 * that a step may be due for, streamed in keyset pages of customers (by id), so a run over a million
 * invoices holds one page at a time and resumes after any committed page.
 *
 * Policy resolution happens in the same statement: the first of `policies` (the caller orders them
 * by their segment's priority, 1 first, the default policy last with `condition` null) whose segment
 * condition the customer matches, compiled with the condition compiler. Aggregate fields (overdue
 * amounts, days past due) are evaluated as of `asOfDate`, so a dry run's forecast for a later date
 * sees the customer as it will age by then.
 */
import type { Knex } from 'knex';
import { LEDGER_TABLES, ORGANIZATIONS_TABLE } from '../ledger/index.js';
import { AGGREGATE_SQL, compileCondition } from './compiler.js';
import { type Condition } from './language.js';
import { resolveTags, tagIdsOf } from './tags.js';

export interface CandidatePolicy {
  policyId: string;
  /** the segment's condition; null for the organization's default policy (every customer) */
  condition: Condition | null;
}

export interface CandidateInvoice {
  id: string;
  document_number: string;
  document_date: string | null;
  net_due_date: string;
  currency: string;
  amount: string;
  amount_open: string;
}

export interface CollectionCandidate {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  /** the address's country (ISO code as pushed): the default country of a national phone number */
  country: string | null;
  assignee_id: string | null;
  business_unit_id: string | null;
  policy_id: string;
  /** open amount past due as of the date, in local-currency cents (as the segment aggregate sums it) */
  overdue_cents: string;
  invoices: CandidateInvoice[];
}

export interface CandidatePageQuery {
  asOfDate: string;
  policies: readonly CandidatePolicy[];
  /** keyset: customers with an id after this one */
  after: string | null;
  limit: number;
  /** invoices due later than `asOfDate - maxOffsetBack` cannot be due for any step: not read */
  earliestOffsetDays: number;
}

/**
 * One page of customers that have a policy (ids after `after`, ascending) with their open invoices
 * that have a net due date on or before `asOfDate - earliestOffsetDays` (oldest due first). A page
 * may hold fewer than `limit` customers only when it is the last; `next` is the cursor of the page
 * after (null: done).
 */
export async function collectionCandidatesPage(db: Knex, organizationId: string, q: CandidatePageQuery): Promise<{ partners: CollectionCandidate[]; next: string | null }> {
  if (q.policies.length === 0) return { partners: [], next: null };
  const conditions = q.policies.map((p) => p.condition).filter((c): c is Condition => c !== null);
  const tags = await resolveTags(db, organizationId, tagIdsOf(...conditions));
  const whens: string[] = [];
  const caseBindings: Knex.RawBinding[] = [];
  let fallback: string | null = null;
  for (const p of q.policies) {
    if (p.condition === null) {
      fallback ??= p.policyId;
      continue;
    }
    const c = compileCondition(p.condition, tags);
    whens.push(`WHEN ${c.sql} THEN ?::uuid`);
    caseBindings.push(...c.bindings, p.policyId);
  }
  const policyCase = whens.length ? `CASE ${whens.join(' ')} ELSE ?::uuid END` : '?::uuid';
  const sql = `WITH org AS (SELECT ?::date AS today, base_currency AS base FROM ${ORGANIZATIONS_TABLE} WHERE id = ?)
    SELECT * FROM (
      SELECT p.id, p.name, p.email, p.phone, p.address->>'country' AS country, p.assignee_id, p.business_unit_id, a.overdue_cents::text AS overdue_cents,
        ${policyCase} AS policy_id
      FROM ${LEDGER_TABLES.partners} p CROSS JOIN org
      ${AGGREGATE_SQL}
      WHERE p.organization_id = ? AND (?::uuid IS NULL OR p.id > ?::uuid)
      ORDER BY p.id
    ) c WHERE c.policy_id IS NOT NULL
    ORDER BY c.id
    LIMIT ?`;
  const bindings: Knex.RawBinding[] = [q.asOfDate, organizationId, ...caseBindings, fallback, organizationId, q.after, q.after, q.limit];
  const rows = (await db.raw(sql, bindings)).rows as Omit<CollectionCandidate, 'invoices'>[];
  if (rows.length === 0) return { partners: [], next: null };
  const invoices = (await db.raw(
    `SELECT d.id, d.partner_id, d.document_number, d.document_date::text AS document_date, d.net_due_date::text AS net_due_date,
       trim(d.currency) AS currency, d.amount_in_document_currency::text AS amount, d.amount_open::text AS amount_open
     FROM ${LEDGER_TABLES.documents} d
     WHERE d.organization_id = ? AND d.partner_id = ANY(?::uuid[]) AND d.kind = 'invoice' AND d.status_open
       AND d.net_due_date IS NOT NULL AND d.net_due_date <= ?::date - ?::int
     ORDER BY d.partner_id, d.net_due_date, d.id`,
    [organizationId, rows.map((r) => r.id), q.asOfDate, q.earliestOffsetDays],
  )).rows as (CandidateInvoice & { partner_id: string })[];
  const byPartner = new Map<string, CandidateInvoice[]>();
  for (const { partner_id, ...inv } of invoices) {
    const list = byPartner.get(partner_id) ?? [];
    list.push(inv);
    byPartner.set(partner_id, list);
  }
  const partners = rows.map((r) => ({ ...r, invoices: byPartner.get(r.id) ?? [] }));
  return { partners, next: rows.length < q.limit ? null : rows[rows.length - 1]!.id };
}

/** The address country (ISO code as pushed) of a customer: the default country of its national phone number. */
export async function partnerCountry(db: Knex, organizationId: string, partnerId: string): Promise<string | null> {
  const row = (await db(LEDGER_TABLES.partners).select(db.raw(`address->>'country' AS country`)).where({ organization_id: organizationId, id: partnerId }).first()) as { country: string | null } | undefined;
  return row?.country ?? null;
}
