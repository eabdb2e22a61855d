/** Playbook statistics (spec 2.12): live articles and pending proposals counted per collection in one statement. */
import type { BusinessUnitScope, Db } from '@rp/platform';
import { COLLECTIONS, type Collection } from '../types.js';
import { andSql, customerVisibleSql, proposalVisibleSql } from './scope.js';

export interface CollectionStats {
  collection: Collection;
  article_count: number;
  pending_proposal_count: number;
}

/** One collection's counts, each row carrying the organization's totals too. */
export interface StatsRow extends CollectionStats {
  total_articles: number;
  total_collections: number;
  pending_proposals: number;
}

/**
 * The organization's playbook statistics in one statement (one snapshot): live (non-archived)
 * articles and pending proposals per collection, one row for every collection in enum order.
 * A pending proposal without a collection counts in `pending_proposals` but in no collection.
 * Only what the business-unit scope lets the caller see is counted (store/scope.ts).
 */
export async function playbookStats(db: Db, organizationId: string, scope: BusinessUnitScope): Promise<StatsRow[]> {
  const articleVisible = andSql(customerVisibleSql('ar.customer_id', scope));
  const proposalVisible = andSql(proposalVisibleSql('pr', scope));
  const res = await db.raw(
    `WITH enum AS (
       SELECT e.collection, e.ord FROM unnest(?::text[]) WITH ORDINALITY AS e(collection, ord)
     ),
     a AS (
       SELECT ar.collection, count(*) AS n FROM articles ar
        WHERE ar.organization_id = ? AND ar.archived_at IS NULL ${articleVisible.sql}
        GROUP BY ar.collection
     ),
     p AS (
       SELECT pr.collection, count(*) AS n FROM proposals pr
        WHERE pr.organization_id = ? AND pr.status = 'pending' ${proposalVisible.sql}
        GROUP BY pr.collection
     )
     SELECT enum.collection,
            coalesce(a.n, 0)::int AS article_count,
            coalesce(p.n, 0)::int AS pending_proposal_count,
            (SELECT coalesce(sum(n), 0) FROM a)::int AS total_articles,
            (SELECT count(*) FROM a)::int AS total_collections,
            (SELECT coalesce(sum(n), 0) FROM p)::int AS pending_proposals
       FROM enum
       LEFT JOIN a ON a.collection = enum.collection
       LEFT JOIN p ON p.collection = enum.collection
      ORDER BY enum.ord`,
    [[...COLLECTIONS], organizationId, ...articleVisible.bindings, organizationId, ...proposalVisible.bindings],
  );
  return res.rows as StatsRow[];
}
