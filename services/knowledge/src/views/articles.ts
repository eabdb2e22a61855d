/** API shapes of articles (spec 2.12): the article, its versions, its detail and a search hit. */
import { isoTime } from '@rp/platform';
import type { ArticleRow, ArticleVersionRow, SearchHit } from '../store/articles.js';

export function articleView(r: ArticleRow) {
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

export function articleVersionView(v: ArticleVersionRow) {
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

export function articleDetailView(r: ArticleRow, versions: ArticleVersionRow[]) {
  return { ...articleView(r), versions: versions.map(articleVersionView) };
}

export function searchHitView(r: SearchHit) {
  return { ...articleView(r), rank: r.rank, headline: r.headline };
}
