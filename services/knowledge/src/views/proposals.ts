/** API shape of a knowledge proposal (spec 2.11). */
import { isoTime } from '@rp/platform';
import type { ProposalRow } from '../store/proposals.js';

export function proposalView(r: ProposalRow) {
  return {
    object: 'knowledge_proposal' as const,
    id: r.id,
    action: r.action,
    status: r.status,
    title: r.title,
    description: r.description,
    content: r.content,
    collection: r.collection,
    knowledge_type: r.knowledge_type,
    customer_id: r.customer_id,
    segment_id: r.segment_id,
    article_id: r.article_id,
    article_version: r.article_version,
    extraction_id: r.extraction_id,
    source_excerpts: r.source_excerpts,
    stale: r.stale,
    review_notes: r.review_notes,
    reviewed_at: isoTime(r.reviewed_at),
    reviewed_by: r.reviewed_by,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}
