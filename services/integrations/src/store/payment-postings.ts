/**
 * Posting records of cash-app payments sent to the ERP (table payment_postings, migration 007).
 * The row is the intent written before the ERP call (its id is the idempotency key), the result
 * after it, and for the middleware the posting queue. Every query is scoped by organization.
 */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

export type PostingRowStatus = 'posting' | 'ready_to_post' | 'posted' | 'failed' | 'unposting' | 'unposted';
export const LIVE_POSTING_STATUSES: readonly PostingRowStatus[] = ['posting', 'ready_to_post', 'posted', 'unposting'];

/** What is posted; stored as the row's payload (amounts are decimal strings). */
export interface PostingPayload {
  payment_id: string;
  amount: string;
  currency: string;
  payment_date: string | null;
  bank_reference: string | null;
  customer: { partner_id: string; remote_id: string; name: string } | null;
  unallocated_amount: string;
  lines: {
    invoice_id: string;
    /** absent in postings queued before credit memos: invoice */
    kind?: 'invoice' | 'credit_memo';
    remote_id: string | null;
    document_number: string;
    company_code: string;
    fiscal_year: string;
    amount_paid: string;
    amount_discount: string;
    amount_withheld: string;
    adjustment_amount: string;
  }[];
}

export interface PostingRow {
  id: string;
  organization_id: string;
  payment_id: string;
  origin: string;
  provider_name: string;
  connection_id: string | null;
  status: PostingRowStatus;
  payload: PostingPayload;
  erp_payment_id: string | null;
  erp_document_number: string | null;
  erp_sync_token: string | null;
  /** the ERP payment was found by the posting key (an earlier attempt's lost answer), not created by this attempt */
  erp_adopted: boolean;
  error: string | null;
  posted_at: Date | null;
  unposted_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

type Conn = Db | Knex.Transaction;

export async function getPosting(db: Conn, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<PostingRow | undefined> {
  const q = db('payment_postings').where({ organization_id: organizationId, id }).first();
  if (opts.forUpdate) void q.forUpdate();
  return (await q) as PostingRow | undefined;
}

/** The payment's live posting (posting, ready_to_post, posted or unposting), if any. */
export async function livePostingOf(db: Conn, organizationId: string, paymentId: string, opts: { forUpdate?: boolean } = {}): Promise<PostingRow | undefined> {
  const q = db('payment_postings').where({ organization_id: organizationId, payment_id: paymentId }).whereIn('status', [...LIVE_POSTING_STATUSES]).first();
  if (opts.forUpdate) void q.forUpdate();
  return (await q) as PostingRow | undefined;
}

/** Serialize posting decisions of one payment (prepare, middleware answers, unpost). */
export async function lockPaymentPostings(trx: Knex.Transaction, organizationId: string, paymentId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`integrations:payment-posting:${organizationId}:${paymentId}`]);
}

export async function insertPosting(
  trx: Conn,
  row: { organizationId: string; paymentId: string; origin: string; providerName: string; connectionId: string | null; status: 'posting' | 'ready_to_post' | 'failed'; payload: PostingPayload; error?: string },
): Promise<PostingRow> {
  const [inserted] = (await trx('payment_postings')
    .insert({
      id: newId(),
      organization_id: row.organizationId,
      payment_id: row.paymentId,
      origin: row.origin,
      provider_name: row.providerName,
      connection_id: row.connectionId,
      status: row.status,
      payload: JSON.stringify(row.payload),
      error: row.error ?? null,
    })
    .returning('*')) as PostingRow[];
  return inserted!;
}

/** Record the ERP's answer to a create: posted with its ids. Only a row still `posting` or `ready_to_post` changes. */
export async function markPosted(
  db: Conn,
  organizationId: string,
  id: string,
  result: { erpPaymentId: string | null; erpDocumentNumber: string | null; erpSyncToken?: string | null; adopted?: boolean },
): Promise<PostingRow | undefined> {
  const [row] = (await db('payment_postings')
    .where({ organization_id: organizationId, id })
    .whereIn('status', ['posting', 'ready_to_post'])
    .update({
      status: 'posted',
      erp_payment_id: result.erpPaymentId,
      erp_document_number: result.erpDocumentNumber,
      erp_sync_token: result.erpSyncToken ?? null,
      erp_adopted: result.adopted ?? false,
      error: null,
      posted_at: db.fn.now(),
      modified_at: db.fn.now(),
    })
    .returning('*')) as PostingRow[];
  return row;
}

export async function markFailed(db: Conn, organizationId: string, id: string, error: string): Promise<PostingRow | undefined> {
  const [row] = (await db('payment_postings')
    .where({ organization_id: organizationId, id })
    .whereIn('status', ['posting', 'ready_to_post'])
    .update({ status: 'failed', error, modified_at: db.fn.now() })
    .returning('*')) as PostingRow[];
  return row;
}

export async function markUnposting(db: Conn, organizationId: string, id: string): Promise<void> {
  await db('payment_postings').where({ organization_id: organizationId, id, status: 'posted' }).update({ status: 'unposting', modified_at: db.fn.now() });
}

export async function markUnposted(db: Conn, organizationId: string, id: string): Promise<void> {
  await db('payment_postings')
    .where({ organization_id: organizationId, id })
    .whereIn('status', ['posted', 'unposting'])
    .update({ status: 'unposted', unposted_at: db.fn.now(), modified_at: db.fn.now() });
}

/** An unposting that failed: the payment stays posted in the ERP. */
export async function revertUnposting(db: Conn, organizationId: string, id: string, error: string): Promise<void> {
  await db('payment_postings').where({ organization_id: organizationId, id, status: 'unposting' }).update({ status: 'posted', error, modified_at: db.fn.now() });
}

/** The middleware's queue: postings of one provider in one status, oldest first. */
export async function listPostings(
  db: Db,
  organizationId: string,
  filter: { providerName: string; status?: PostingRowStatus },
  offset: number,
  limit: number,
): Promise<{ rows: PostingRow[]; total: number }> {
  const base = () => {
    const q = db('payment_postings').where({ organization_id: organizationId, provider_name: filter.providerName });
    if (filter.status) void q.andWhere('status', filter.status);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    base().select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]).offset(offset).limit(limit),
    base().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as PostingRow[], total: Number(count) };
}

/** The payment's newest posting of this provider (live or not). */
export async function latestPostingOf(db: Conn, organizationId: string, paymentId: string, providerName: string, opts: { forUpdate?: boolean } = {}): Promise<PostingRow | undefined> {
  const q = db('payment_postings')
    .where({ organization_id: organizationId, payment_id: paymentId, provider_name: providerName })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .first();
  if (opts.forUpdate) void q.forUpdate();
  return (await q) as PostingRow | undefined;
}
