/** API shape of the playbook statistics (spec 2.12). */
import type { StatsRow } from '../store/playbook-stats.js';

/** The totals are the same on every row; no row (never the case: one per collection) counts zero. */
export function playbookStatsView(rows: StatsRow[]) {
  const first = rows[0];
  return {
    total_articles: first?.total_articles ?? 0,
    total_collections: first?.total_collections ?? 0,
    pending_proposals: first?.pending_proposals ?? 0,
    collections: rows.map((r) => ({ collection: r.collection, article_count: r.article_count, pending_proposal_count: r.pending_proposal_count })),
  };
}
