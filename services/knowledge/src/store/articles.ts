/** Articles and their versions (migrations 001, 002, 004), and full-text search over live articles. */
import type { Knex } from 'knex';
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Collection, KnowledgeType } from '../types.js';
import type { SourceExcerpt } from './proposals.js';
import { andSql, customerVisibleSql, whereFragment } from './scope.js';

type Conn = Db | Knex.Transaction;

const ARTICLE_COLUMNS = [
  'id', 'organization_id', 'collection', 'title', 'description', 'content', 'knowledge_type', 'customer_id', 'segment_id', 'version',
  'created_at', 'modified_at', 'archived_at',
];

/** What a version holds (and the article carries as its current state). */
export interface ArticleState {
  collection: Collection;
  title: string;
  description: string | null;
  content: string;
  knowledge_type: KnowledgeType | null;
  customer_id: string | null;
  segment_id: string | null;
}

export interface ArticleRow extends ArticleState {
  id: string;
  organization_id: string;
  version: number;
  created_at: Date;
  modified_at: Date;
  archived_at: Date | null;
}

export interface ArticleVersionRow extends ArticleState {
  id: string;
  article_id: string;
  version: number;
  action: 'create' | 'revise' | 'archive';
  source_excerpts: SourceExcerpt[];
  proposal_id: string | null;
  created_by: string | null;
  created_at: Date;
}

export interface ArticleFilters {
  collection?: Collection;
  customer_id?: string;
  segment_id?: string;
  status?: 'live' | 'archived';
}

/**
 * Articles visible within the business-unit scope (see store/scope.ts: an article whose customer is
 * tied to a unit outside the scope is left out), newest first.
 */
export async function listArticles(
  db: Db,
  organizationId: string,
  scope: BusinessUnitScope,
  f: ArticleFilters,
  offset: number,
  limit: number,
): Promise<{ rows: ArticleRow[]; total: number }> {
  const visible = customerVisibleSql('articles.customer_id', scope);
  const where = (q: Knex.QueryBuilder) => {
    q.where('organization_id', organizationId);
    whereFragment(q, visible);
    if (f.collection) q.andWhere('collection', f.collection);
    if (f.customer_id) q.andWhere('customer_id', f.customer_id);
    if (f.segment_id) q.andWhere('segment_id', f.segment_id);
    if (f.status === 'live') q.whereNull('archived_at');
    if (f.status === 'archived') q.whereNotNull('archived_at');
    return q;
  };
  const [rows, [counted]] = await Promise.all([
    where(db('articles').select(ARTICLE_COLUMNS)).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    where(db('articles')).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ArticleRow[], total: Number(counted?.count ?? 0) };
}

/** The article, or undefined when unknown or (scope given) its customer is outside the scope. */
export async function getArticle(db: Conn, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<ArticleRow | undefined> {
  const q = db('articles').select(ARTICLE_COLUMNS).where({ organization_id: organizationId, id });
  return (await whereFragment(q, customerVisibleSql('articles.customer_id', scope)).first()) as ArticleRow | undefined;
}

/** The article row, locked until the transaction ends: approvals that change one article serialize. */
export async function lockArticle(trx: Knex.Transaction, organizationId: string, id: string): Promise<ArticleRow | undefined> {
  return (await trx('articles').select(ARTICLE_COLUMNS).where({ organization_id: organizationId, id }).forUpdate().first()) as ArticleRow | undefined;
}

/** Oldest first; versions whose customer is outside the scope are left out (their numbers then skip). */
export async function listVersions(db: Conn, organizationId: string, articleId: string, scope: BusinessUnitScope = '*'): Promise<ArticleVersionRow[]> {
  const q = db('article_versions')
    .select('id', 'article_id', 'version', 'action', 'collection', 'title', 'description', 'content', 'knowledge_type', 'customer_id', 'segment_id',
      'source_excerpts', 'proposal_id', 'created_by', 'created_at')
    .where({ organization_id: organizationId, article_id: articleId });
  return (await whereFragment(q, customerVisibleSql('article_versions.customer_id', scope)).orderBy('version')) as ArticleVersionRow[];
}

export async function insertArticle(trx: Knex.Transaction, organizationId: string, s: ArticleState): Promise<ArticleRow> {
  const [row] = (await trx('articles').insert({ id: newId(), organization_id: organizationId, ...s, version: 1 }).returning(ARTICLE_COLUMNS)) as ArticleRow[];
  return row!;
}

/** Write the article's next state (`archive`: archived_at set, content unchanged) and bump its version. */
export async function updateArticle(trx: Knex.Transaction, organizationId: string, id: string, s: ArticleState, archive: boolean): Promise<ArticleRow> {
  const set: Record<string, unknown> = { ...s, version: trx.raw('version + 1'), modified_at: trx.fn.now() };
  if (archive) set.archived_at = trx.fn.now();
  const [row] = (await trx('articles').where({ organization_id: organizationId, id }).update(set).returning(ARTICLE_COLUMNS)) as ArticleRow[];
  return row!;
}

export async function insertVersion(
  trx: Knex.Transaction,
  organizationId: string,
  article: ArticleRow,
  v: { action: 'create' | 'revise' | 'archive'; source_excerpts: SourceExcerpt[]; proposal_id: string | null; created_by: string | null },
): Promise<void> {
  await trx('article_versions').insert({
    id: newId(),
    organization_id: organizationId,
    article_id: article.id,
    version: article.version,
    action: v.action,
    collection: article.collection,
    title: article.title,
    description: article.description,
    content: article.content,
    knowledge_type: article.knowledge_type,
    customer_id: article.customer_id,
    segment_id: article.segment_id,
    source_excerpts: JSON.stringify(v.source_excerpts),
    proposal_id: v.proposal_id,
    created_by: v.created_by,
  });
}

// ---------------------------------------------------------------- search

export interface SearchQuery {
  /** business units the caller may see: articles of customers outside them are no hits */
  scope: BusinessUnitScope;
  q: string;
  collection?: Collection;
  customerId?: string;
  offset: number;
  limit: number;
}

export interface SearchHit extends ArticleRow {
  rank: number;
  headline: string;
}

/** Score factors of the customer boost (see searchArticles). */
export const CUSTOMER_BOOST = { own: 2, general: 1, other: 0.5 } as const;

/**
 * Live articles of the organization matching `websearch_to_tsquery('english', q)`, ranked by
 * `ts_rank_cd` (cover density, normalisation 32: rank / (rank + 1)) over the weighted search vector
 * (title A, description B, content C). With a customer: its own articles × 2, articles without a
 * customer scope × 1, other customers' articles × 0.5. Ties: newest first. The headline (ts_headline
 * over the content, matches between `**`) is computed for the page's rows only. Articles whose
 * customer is outside the scope are not hits (not counted either).
 */
export async function searchArticles(db: Db, organizationId: string, s: SearchQuery): Promise<{ rows: SearchHit[]; total: number }> {
  const filters: string[] = [];
  const filterBindings: Knex.RawBinding[] = [];
  if (s.collection) {
    filters.push('AND a.collection = ?');
    filterBindings.push(s.collection);
  }
  const visible = andSql(customerVisibleSql('a.customer_id', s.scope));
  if (visible.sql) {
    filters.push(visible.sql);
    filterBindings.push(...visible.bindings);
  }
  const boost = s.customerId
    ? { sql: `CASE WHEN a.customer_id = ?::uuid THEN ${CUSTOMER_BOOST.own} WHEN a.customer_id IS NULL THEN ${CUSTOMER_BOOST.general} ELSE ${CUSTOMER_BOOST.other} END`, bindings: [s.customerId] }
    : { sql: '1', bindings: [] };
  const res = await db.raw(
    `WITH q AS (SELECT websearch_to_tsquery('english'::regconfig, ?) AS query),
     hits AS (
       SELECT a.id, a.created_at, (ts_rank_cd(a.search_vector, q.query, 32)::float8 * (${boost.sql})::float8) AS rank
         FROM articles a, q
        WHERE a.organization_id = ? AND a.archived_at IS NULL AND a.search_vector @@ q.query ${filters.join(' ')}
     ),
     page AS (SELECT id, created_at, rank FROM hits ORDER BY rank DESC, created_at DESC, id DESC OFFSET ? LIMIT ?)
     SELECT ${ARTICLE_COLUMNS.map((c) => `a.${c}`).join(', ')}, page.rank,
            ts_headline('english'::regconfig, a.content, q.query,
                        'MaxFragments=2, MinWords=8, MaxWords=30, StartSel="**", StopSel="**", FragmentDelimiter=" … "') AS headline,
            (SELECT count(*) FROM hits)::int AS total
       FROM page JOIN articles a ON a.id = page.id, q
      ORDER BY page.rank DESC, page.created_at DESC, page.id DESC`,
    [s.q, ...boost.bindings, organizationId, ...filterBindings, s.offset, s.limit],
  );
  const rows = res.rows as (SearchHit & { total: number })[];
  if (rows.length === 0 && s.offset > 0) {
    // past the last page: still report how many there are
    const c = await db.raw(
      `SELECT count(*)::int AS total FROM articles a
        WHERE a.organization_id = ? AND a.archived_at IS NULL AND a.search_vector @@ websearch_to_tsquery('english'::regconfig, ?) ${filters.join(' ')}`,
      [organizationId, s.q, ...filterBindings],
    );
    return { rows: [], total: (c.rows as { total: number }[])[0]?.total ?? 0 };
  }
  const total = rows[0]?.total ?? 0;
  for (const r of rows) delete (r as Partial<typeof r>).total;
  return { rows, total };
}
