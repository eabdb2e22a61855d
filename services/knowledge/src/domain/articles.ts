/**
 * Articles with their versions, and playbook search (spec 2.12). Every read is
 * scoped to the caller's business units (store/scope.ts): an article whose customer is tied to a unit
 * outside them is absent from lists and search and 404 by id, like an unknown one.
 */
import { NotFoundError, type BusinessUnitScope, type Db } from '@rp/platform';
import * as store from '../store/articles.js';
import type { Collection } from '../types.js';

/** Score factors of the customer boost of search (applied in store/articles.ts), for its documentation. */
export { CUSTOMER_BOOST } from '../store/articles.js';

export async function listArticles({ db }: { db: Db }, org: string, scope: BusinessUnitScope, filters: store.ArticleFilters, offset: number, limit: number) {
  return store.listArticles(db, org, scope, filters, offset, limit);
}

/** An article with the versions the caller may see, oldest first. */
export async function getArticle({ db }: { db: Db }, org: string, scope: BusinessUnitScope, id: string): Promise<{ article: store.ArticleRow; versions: store.ArticleVersionRow[] }> {
  const article = await store.getArticle(db, org, id, scope);
  if (!article) throw new NotFoundError(`No knowledge article ${id}.`);
  return { article, versions: await store.listVersions(db, org, id, scope) };
}

export async function searchArticles({ db }: { db: Db }, org: string, scope: BusinessUnitScope, s: { q: string; collection?: Collection; customer_id?: string }, offset: number, limit: number) {
  return store.searchArticles(db, org, { scope, q: s.q, collection: s.collection, customerId: s.customer_id, offset, limit });
}
