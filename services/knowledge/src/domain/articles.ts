/**
 * Articles with their versions, and playbook search (spec 2.12; issue 15 part 3). Every read is
 * scoped to the caller's business units (store/scope.ts): an article whose customer is tied to a unit
 * outside them is absent from lists and search and 404 by id, like an unknown one.
 */
import { isoTime, NotFoundError, type BusinessUnitScope, type Db } from '@rp/platform';
import * as store from '../store/articles.js';
import type { Collection } from './collections.js';

export function articleView(r: store.ArticleRow) {
  return {
    object: 'knowledge_article' as const,
    id: r.id,
    collection: r.collection,
    title: r.title,
    description: r.description,
    content: r.content,
    knowledge_type: r.knowledge_type,
    customer_id: r.customer_id,
    segment_id: r.segment_id,
    version: r.version,
    status: r.archived_at ? ('archived' as const) : ('live' as const),
    archived_at: isoTime(r.archived_at),
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}

function versionView(v: store.ArticleVersionRow) {
  return {
    version: v.version,
    action: v.action,
    collection: v.collection,
    title: v.title,
    description: v.description,
    content: v.content,
    knowledge_type: v.knowledge_type,
    customer_id: v.customer_id,
    segment_id: v.segment_id,
    source_excerpts: v.source_excerpts,
    proposal_id: v.proposal_id,
    created_by: v.created_by,
    created_at: isoTime(v.created_at)!,
  };
}

export async function listArticles(db: Db, org: string, scope: BusinessUnitScope, filters: store.ArticleFilters, offset: number, limit: number) {
  const { rows, total } = await store.listArticles(db, org, scope, filters, offset, limit);
  return { items: rows.map(articleView), total };
}

export async function getArticle(db: Db, org: string, scope: BusinessUnitScope, id: string) {
  const row = await store.getArticle(db, org, id, scope);
  if (!row) throw new NotFoundError(`No knowledge article ${id}.`);
  const versions = await store.listVersions(db, org, id, scope);
  return { ...articleView(row), versions: versions.map(versionView) };
}

export async function searchArticles(db: Db, org: string, scope: BusinessUnitScope, s: { q: string; collection?: Collection; customer_id?: string }, offset: number, limit: number) {
  const { rows, total } = await store.searchArticles(db, org, { scope, q: s.q, collection: s.collection, customerId: s.customer_id, offset, limit });
  return { items: rows.map((r) => ({ ...articleView(r), rank: r.rank, headline: r.headline })), total };
}
