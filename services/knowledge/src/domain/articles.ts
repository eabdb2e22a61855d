/**
 * Articles with their versions, and playbook search (spec 2.12). Every read is
 * scoped to the caller's business units (store/scope.ts): an article whose customer is tied to a unit
 * outside them is absent from lists and search and 404 by id, like an unknown one.
 */
import { NotFoundError, type BusinessUnitScope, type Db } from '@rp/platform';
import * as store from '../store/articles.js';
import type { Collection } from '../types.js';
import { articleDetailView, articleView, searchHitView } from '../views/articles.js';

/** Score factors of the customer boost of search (applied in store/articles.ts), for its documentation. */
export { CUSTOMER_BOOST } from '../store/articles.js';

export async function listArticles({ db }: { db: Db }, org: string, scope: BusinessUnitScope, filters: store.ArticleFilters, offset: number, limit: number) {
  const { rows, total } = await store.listArticles(db, org, scope, filters, offset, limit);
  return { items: rows.map(articleView), total };
}

export async function getArticle({ db }: { db: Db }, org: string, scope: BusinessUnitScope, id: string) {
  const row = await store.getArticle(db, org, id, scope);
  if (!row) throw new NotFoundError(`No knowledge article ${id}.`);
  const versions = await store.listVersions(db, org, id, scope);
  return articleDetailView(row, versions);
}

export async function searchArticles({ db }: { db: Db }, org: string, scope: BusinessUnitScope, s: { q: string; collection?: Collection; customer_id?: string }, offset: number, limit: number) {
  const { rows, total } = await store.searchArticles(db, org, { scope, q: s.q, collection: s.collection, customerId: s.customer_id, offset, limit });
  return { items: rows.map(searchHitView), total };
}
