/** Outreach records in the database: the receipt record's claim, intent and outcome, and reads within the caller's business units. */
import type { Knex } from 'knex';
import { newId, partnerOutOfScopeSql, type BusinessUnitScope, type Db, type SqlFragment } from '@rp/platform';
import type { OUTREACH_TYPES, OutreachStatus } from '../domain-types/outreach.js';
import { paymentInScopeSql, whereSqlFragment } from './payments.js';

type Conn = Db | Knex.Transaction;

/**
 * SQL true when the outreach record `alias` is within the business-unit scope: its partner is, and
 * so is its payment (see paymentInScopeSql). Null for scope '*'.
 */
function outreachInScopeSql(alias: string, scope: BusinessUnitScope): SqlFragment | null {
  const partner = partnerOutOfScopeSql(`${alias}.partner_id`, scope);
  const payment = paymentInScopeSql('scope_pay', scope);
  if (!partner || !payment) return null;
  return {
    sql: `(NOT ${partner.sql} AND NOT EXISTS (SELECT 1 FROM payments scope_pay WHERE scope_pay.id = ${alias}.payment_id AND NOT ${payment.sql}))`,
    bindings: [...partner.bindings, ...payment.bindings],
  };
}

export type { OutreachStatus };

export interface OutreachRow {
  id: string;
  organization_id: string;
  outreach_type: (typeof OUTREACH_TYPES)[number];
  status: OutreachStatus;
  skip_reason: string | null;
  error: string | null;
  bank_transaction_id: string | null;
  payment_id: string | null;
  partner_id: string | null;
  email_id: string | null;
  recipient: string | null;
  requested_by: string | null;
  attempts: number;
  sending_started_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

/** What a receipt needs of a payment (payments belong to matching; read-only here). */
export interface ReceiptPayment {
  id: string;
  /** only an approved payment gets a receipt: a proposal may be wrong about who paid */
  status: 'unapproved' | 'approved';
  partner_id: string | null;
  bank_transaction_id: string;
  amount: string;
  currency: string;
  payment_date: string | null;
  bank_reference: string | null;
  allocations: { invoice_id: string; document_kind: 'invoice' | 'credit_memo'; amount_paid: string; amount_discount: string; amount_withheld: string }[];
}

export async function getReceiptPayment(db: Db, organizationId: string, paymentId: string, scope: BusinessUnitScope = '*'): Promise<ReceiptPayment | null> {
  const q = db('payments as p')
    .leftJoin('bank_transactions as t', function () {
      this.on('t.id', '=', 'p.bank_transaction_id').andOn('t.organization_id', '=', 'p.organization_id');
    })
    .where({ 'p.organization_id': organizationId, 'p.id': paymentId });
  const payment = await whereSqlFragment(q, paymentInScopeSql('p', scope))
    .first('p.id', 'p.status', 'p.partner_id', 'p.bank_transaction_id', 'p.amount', 'p.currency', 'p.payment_date', 't.bank_reference');
  if (!payment) return null;
  const allocations = await db('payment_allocations')
    .where({ organization_id: organizationId, payment_id: paymentId })
    .orderBy('id')
    .select('invoice_id', 'document_kind', 'amount_paid', 'amount_discount', 'amount_withheld');
  return { ...payment, allocations };
}

/**
 * Create a `pending` payment-receipt record, unless the payment already has a live (pending or
 * sent) one: then that one is returned with created = false.
 */
export async function claimReceiptRecord(
  db: Db,
  organizationId: string,
  input: { paymentId: string; partnerId: string | null; bankTransactionId: string | null; requestedBy: string | null },
  attempt = 0,
): Promise<{ record: OutreachRow; created: boolean }> {
  const id = newId();
  const inserted = await db.raw(
    `INSERT INTO outreach_records (id, organization_id, outreach_type, status, payment_id, partner_id, bank_transaction_id, requested_by)
     VALUES (?, ?, 'payment_receipt', 'pending', ?, ?, ?, ?)
     ON CONFLICT (organization_id, payment_id) WHERE outreach_type = 'payment_receipt' AND status IN ('pending', 'sent') DO NOTHING
     RETURNING id`,
    [id, organizationId, input.paymentId, input.partnerId, input.bankTransactionId, input.requestedBy],
  );
  if (inserted.rows.length) return { record: (await getOutreach(db, organizationId, id))!, created: true };
  const live = await db<OutreachRow>('outreach_records')
    .where({ organization_id: organizationId, payment_id: input.paymentId, outreach_type: 'payment_receipt' })
    .whereIn('status', ['pending', 'sent'])
    .first();
  if (live) return { record: live, created: false };
  // The live record turned failed/skipped between our insert and read: try again.
  if (attempt >= 3) throw new Error(`could not claim a payment-receipt record for payment ${input.paymentId}`);
  return claimReceiptRecord(db, organizationId, input, attempt + 1);
}

export async function getOutreach(db: Db, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<OutreachRow | undefined> {
  const q = db('outreach_records as o').select('o.*').where({ 'o.organization_id': organizationId, 'o.id': id });
  return (await whereSqlFragment(q, outreachInScopeSql('o', scope)).first()) as OutreachRow | undefined;
}

export interface OutreachFilter {
  /** business units the caller may see ('*' for all) */
  scope?: BusinessUnitScope;
  outreachType?: string;
  status?: string;
  paymentId?: string;
  bankTransactionId?: string;
}

export async function listOutreach(db: Db, organizationId: string, filter: OutreachFilter, offset: number, limit: number) {
  const scoped = () => {
    const q = db('outreach_records as o').where({ 'o.organization_id': organizationId });
    if (filter.outreachType) q.andWhere('o.outreach_type', filter.outreachType);
    if (filter.status) q.andWhere('o.status', filter.status);
    if (filter.paymentId) q.andWhere('o.payment_id', filter.paymentId);
    if (filter.bankTransactionId) q.andWhere('o.bank_transaction_id', filter.bankTransactionId);
    return whereSqlFragment(q, outreachInScopeSql('o', filter.scope ?? '*'));
  };
  const [rows, [{ count }]] = await Promise.all([
    scoped().select('o.*').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    scoped().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as OutreachRow[], total: Number(count) };
}

/** The intent, before any SMTP call: whom the receipt goes to. */
export async function markIntent(db: Db, id: string, recipient: string, partnerId: string): Promise<void> {
  await db('outreach_records').where({ id, status: 'pending' }).update({ recipient, partner_id: partnerId, modified_at: db.fn.now() });
}

/**
 * Right before an SMTP call (the kernel's RecordedEmailStore.beginAttempt): while the record is
 * pending, counts the attempt (the first one's start time is kept; the single-activity flow also
 * records the recipient) in one statement and answers not sent; a record already sent answers its
 * Message-ID. A record that is no longer pending otherwise (skipped, failed, deleted) is an error:
 * nothing is sent, and the retried activity reports that state.
 */
export async function beginReceiptAttempt(
  db: Db,
  id: string,
  recipient?: { to: string; partnerId: string },
): Promise<{ sent: false } | { sent: true; messageId: string | null }> {
  const counted = await db('outreach_records')
    .where({ id, status: 'pending' })
    .update(
      {
        ...(recipient ? { recipient: recipient.to, partner_id: recipient.partnerId } : {}),
        attempts: db.raw('attempts + 1'),
        sending_started_at: db.raw('coalesce(sending_started_at, now())'),
        modified_at: db.fn.now(),
      },
      ['id'],
    );
  if (counted.length) return { sent: false };
  const row = await db<OutreachRow>('outreach_records').where({ id }).first('status', 'email_id');
  if (row?.status === 'sent') return { sent: true, messageId: row.email_id };
  throw new Error(`outreach record ${id} is ${row ? row.status : 'gone'}, not pending: not sent`);
}

/**
 * After the SMTP server accepted the message (at once, best effort, and again for sure by
 * recordPaymentReceiptSent). Idempotent: a record already sent is left as it is. Returns the record
 * when this call moved it to sent.
 */
export async function markSent(db: Conn, id: string, messageId: string): Promise<Pick<OutreachRow, 'id' | 'organization_id'> | undefined> {
  const [moved] = (await db('outreach_records')
    .where({ id })
    .whereNot('status', 'sent')
    .update({ status: 'sent', email_id: messageId, sent_at: db.raw('coalesce(sent_at, now())'), error: null, modified_at: db.fn.now() }, ['id', 'organization_id'])) as Pick<OutreachRow, 'id' | 'organization_id'>[];
  return moved;
}

/** An attempt failed (Temporal will retry): keep the error, stay pending. */
export async function markAttemptError(db: Db, id: string, error: string): Promise<void> {
  await db('outreach_records').where({ id }).update({ error: error.slice(0, 2000), modified_at: db.fn.now() });
}

export async function markSkipped(db: Db, id: string, reason: string): Promise<void> {
  await db('outreach_records').where({ id, status: 'pending' }).update({ status: 'skipped', skip_reason: reason, modified_at: db.fn.now() });
}

/** Final failure after the last attempt; a record that was sent meanwhile stays sent. Returns the record when this call moved it to failed. */
export async function markFailed(db: Conn, organizationId: string, id: string, error: string): Promise<Pick<OutreachRow, 'id' | 'organization_id'> | undefined> {
  const [moved] = (await db('outreach_records')
    .where({ organization_id: organizationId, id, status: 'pending' })
    .update({ status: 'failed', error: error.slice(0, 2000), modified_at: db.fn.now() }, ['id', 'organization_id'])) as Pick<OutreachRow, 'id' | 'organization_id'>[];
  return moved;
}
