/**
 * SQL of promises to pay (admin schema, migrations 012 and 015); every statement is per organization.
 * Business-unit scope uses the partner's unit copied onto the promise.
 */
import { newId, whereInScope, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export type PromiseStatus = 'open' | 'kept' | 'broken' | 'cancelled';

export interface PromiseRow {
  id: string;
  organization_id: string;
  partner_id: string;
  business_unit_id: string | null;
  invoice_ids: string[];
  amount: string;
  currency: string;
  promised_date: string;
  status: PromiseStatus;
  open_amounts_at_creation: Record<string, string>;
  covered_amount: string | null;
  note: string | null;
  created_by: string | null;
  /** the inbox message it was read from; null when recorded through the API */
  source_inbox_message_id: string | null;
  resolved_at: Date | null;
  created_at: Date;
  modified_at: Date;
}


/** Serializes promise-making for one partner (its invoices' open promises are checked under it). */
export async function lockPartnerPromises(trx: Knex.Transaction, partnerId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`promises_to_pay:${partnerId}`]);
}

/** Which of the invoices are under an open promise of the organization already. */
export async function invoicesUnderOpenPromise(db: Q, org: string, invoiceIds: readonly string[]): Promise<Set<string>> {
  const rows = (await db.raw(
    `SELECT DISTINCT unnest(invoice_ids) AS id FROM promises_to_pay WHERE organization_id = ? AND status = 'open' AND invoice_ids && ?::uuid[]`,
    [org, [...invoiceIds]],
  )) as { rows: { id: string }[] };
  const wanted = new Set(invoiceIds);
  return new Set(rows.rows.map((r) => r.id).filter((id) => wanted.has(id)));
}

export async function insertPromise(
  db: Q,
  p: Omit<PromiseRow, 'id' | 'status' | 'covered_amount' | 'resolved_at' | 'created_at' | 'modified_at'>,
): Promise<PromiseRow> {
  const [row] = await db('promises_to_pay')
    .insert({ id: newId(), ...p, open_amounts_at_creation: JSON.stringify(p.open_amounts_at_creation) })
    .returning('*');
  return row as PromiseRow;
}

export async function getPromise(db: Q, org: string, id: string, scope: BusinessUnitScope = '*', forUpdate = false): Promise<PromiseRow | undefined> {
  const q = whereInScope(db('promises_to_pay').where({ organization_id: org, id }), scope);
  if (forUpdate) q.forUpdate();
  return (await q.first()) as PromiseRow | undefined;
}

export async function listPromises(
  db: Q,
  org: string,
  scope: BusinessUnitScope,
  filters: { partner_id?: string; status?: PromiseStatus },
  offset: number,
  limit: number,
): Promise<{ rows: PromiseRow[]; total: number }> {
  const base = () => {
    const q = whereInScope(db('promises_to_pay').where({ organization_id: org }), scope);
    if (filters.partner_id) q.andWhere({ partner_id: filters.partner_id });
    if (filters.status) q.andWhere({ status: filters.status });
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    base().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    base().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as PromiseRow[], total: Number(count) };
}

/** The promise read from an inbox message (at most one per message: the actor looks before it records, under the partner lock). */
export async function promiseFromInboxMessage(db: Q, org: string, inboxMessageId: string): Promise<PromiseRow | undefined> {
  return (await db('promises_to_pay').where({ organization_id: org, source_inbox_message_id: inboxMessageId }).orderBy('id').first()) as PromiseRow | undefined;
}

/** Ends an open promise (kept, broken or cancelled); undefined when it was not open any more. */
export async function closePromise(db: Q, org: string, id: string, status: Exclude<PromiseStatus, 'open'>, coveredAmount?: string): Promise<PromiseRow | undefined> {
  const [row] = await db('promises_to_pay')
    .where({ organization_id: org, id, status: 'open' })
    .update({ status, resolved_at: db.fn.now(), modified_at: db.fn.now(), ...(coveredAmount !== undefined ? { covered_amount: coveredAmount } : {}) })
    .returning('*');
  return row as PromiseRow | undefined;
}

/** Records the coverage measured at a check that left the promise open (not a change users see: modified_at stays). */
export async function recordCoverage(db: Q, org: string, id: string, coveredAmount: string): Promise<void> {
  await db('promises_to_pay').where({ organization_id: org, id, status: 'open' }).update({ covered_amount: coveredAmount });
}

/**
 * The instant the promise's grace period ends: midnight after `promised_date` + `graceDays` in the
 * organization's timezone (Postgres' zone rules, so a daylight-saving day is as long as it is).
 */
export async function promiseDeadline(db: Q, org: string, id: string, graceDays: number): Promise<Date | null> {
  const r = (await db.raw(
    `SELECT ((p.promised_date + (? + 1))::timestamp AT TIME ZONE o.timezone) AS deadline
       FROM promises_to_pay p JOIN organizations o ON o.id = p.organization_id
      WHERE p.organization_id = ? AND p.id = ?`,
    [graceDays, org, id],
  )) as { rows: { deadline: Date }[] };
  return r.rows[0]?.deadline ?? null;
}

/** The organization's calendar date today and its timezone. */
export async function organizationToday(db: Q, org: string): Promise<{ today: string; timezone: string } | null> {
  const r = (await db.raw(`SELECT to_char((now() AT TIME ZONE timezone)::date, 'YYYY-MM-DD') AS today, timezone FROM organizations WHERE id = ?`, [org])) as {
    rows: { today: string; timezone: string }[];
  };
  return r.rows[0] ?? null;
}
