/** Knowledge proposals (migrations 001, 002): reads with `stale` computed, row locks and decisions. */
import type { Knex } from 'knex';
import type { BusinessUnitScope, Db } from '@rp/platform';
import type { Collection, KnowledgeType, ProposalAction, ProposalStatus } from '../types.js';
import { proposalVisibleSql, whereFragment } from './scope.js';

type Conn = Db | Knex.Transaction;

export interface SourceExcerpt {
  text: string;
  memory_id: string;
  page: number;
}

export interface ProposalRow {
  id: string;
  organization_id: string;
  collection: Collection | null;
  status: ProposalStatus;
  action: ProposalAction;
  title: string | null;
  content: string | null;
  extraction_id: string | null;
  item_key: string | null;
  description: string | null;
  knowledge_type: KnowledgeType | null;
  article_id: string | null;
  article_version: number | null;
  customer_id: string | null;
  segment_id: string | null;
  source_excerpts: SourceExcerpt[];
  review_notes: string | null;
  reviewed_at: Date | null;
  reviewed_by: string | null;
  created_at: Date;
  modified_at: Date;
  /** computed on read: pending, with a target whose version moved past `article_version` */
  stale: boolean;
}

/**
 * `stale`: only a pending proposal can be stale (a decided one records what it did); it is when its
 * target article's current version is greater than the version the proposal was made against.
 */
const STALE_SQL = `(p.status = 'pending' AND p.article_version IS NOT NULL AND a.version IS NOT NULL AND a.version > p.article_version)`;

function selectProposals(conn: Conn) {
  return conn('proposals as p')
    .leftJoin('articles as a', function () {
      this.on('a.id', '=', 'p.article_id').andOn('a.organization_id', '=', 'p.organization_id');
    })
    .select('p.*', conn.raw(`${STALE_SQL} AS stale`));
}

export interface ProposalFilters {
  status?: ProposalStatus;
  extraction_id?: string;
  collection?: Collection;
  customer_id?: string;
}

/** Newest first (ids are time-ordered); proposals hidden by the business-unit scope (store/scope.ts) are left out. */
export async function listProposals(
  db: Db,
  organizationId: string,
  scope: BusinessUnitScope,
  f: ProposalFilters,
  offset: number,
  limit: number,
): Promise<{ rows: ProposalRow[]; total: number }> {
  const visible = proposalVisibleSql('p', scope);
  const where = (q: Knex.QueryBuilder) => {
    q.where('p.organization_id', organizationId);
    whereFragment(q, visible);
    if (f.status) q.andWhere('p.status', f.status);
    if (f.extraction_id) q.andWhere('p.extraction_id', f.extraction_id);
    if (f.collection) q.andWhere('p.collection', f.collection);
    if (f.customer_id) q.andWhere('p.customer_id', f.customer_id);
    return q;
  };
  const [rows, [counted]] = await Promise.all([
    where(selectProposals(db)).orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'desc' }]).offset(offset).limit(limit),
    where(db('proposals as p')).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ProposalRow[], total: Number(counted?.count ?? 0) };
}

/** The proposal, or undefined when unknown or hidden by the scope. */
export async function getProposal(db: Conn, organizationId: string, id: string, scope: BusinessUnitScope): Promise<ProposalRow | undefined> {
  const q = selectProposals(db).where({ 'p.organization_id': organizationId, 'p.id': id });
  return (await whereFragment(q, proposalVisibleSql('p', scope)).first()) as ProposalRow | undefined;
}

/** Proposals by id (no scope: for recording their events), in the order of `ids`. */
export async function getProposalsByIds(db: Conn, organizationId: string, ids: readonly string[]): Promise<ProposalRow[]> {
  if (!ids.length) return [];
  const rows = (await selectProposals(db).where('p.organization_id', organizationId).whereIn('p.id', [...ids])) as ProposalRow[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The customer of each of the organization's articles in `ids` that has one. */
export async function articleCustomers(db: Conn, organizationId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = (await db('articles').select('id', 'customer_id').where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]).whereNotNull('customer_id')) as { id: string; customer_id: string }[];
  return new Map(rows.map((r) => [r.id, r.customer_id]));
}

/**
 * The proposal row, locked until the transaction ends (decisions on one proposal serialize); undefined
 * when unknown or hidden by the scope (the target article's customer is checked again once that
 * article is locked: see approveProposal).
 */
export async function lockProposal(trx: Knex.Transaction, organizationId: string, id: string, scope: BusinessUnitScope): Promise<Omit<ProposalRow, 'stale'> | undefined> {
  const q = trx('proposals as p').select('p.*').where({ 'p.organization_id': organizationId, 'p.id': id });
  return (await whereFragment(q, proposalVisibleSql('p', scope)).forUpdate().first()) as Omit<ProposalRow, 'stale'> | undefined;
}

export async function recordDecision(
  trx: Knex.Transaction,
  organizationId: string,
  id: string,
  d: { status: 'approved' | 'rejected'; review_notes: string | null; reviewed_by: string; article_id?: string },
): Promise<void> {
  const set: Record<string, unknown> = {
    status: d.status,
    review_notes: d.review_notes,
    reviewed_by: d.reviewed_by,
    reviewed_at: trx.fn.now(),
    modified_at: trx.fn.now(),
  };
  if (d.article_id !== undefined) set.article_id = d.article_id;
  await trx('proposals').where({ organization_id: organizationId, id }).update(set);
}
