import { z } from 'zod';
import { COLLECTIONS } from '../domain/collections.js';

export const collectionSchema = z.enum(COLLECTIONS);

export const playbookStatsSchema = z.object({
  total_articles: z.number().int().min(0).describe('Live (non-archived) articles in all collections.'),
  total_collections: z.number().int().min(0).describe('Collections holding at least one live article.'),
  pending_proposals: z.number().int().min(0).describe('Knowledge proposals awaiting review.'),
  collections: z
    .array(
      z.object({
        collection: collectionSchema,
        article_count: z.number().int().min(0),
        pending_proposal_count: z.number().int().min(0).default(0),
      }),
    )
    .describe('One entry for every collection, in enum order, with zero counts where there is nothing.'),
})
  .meta({ id: 'PlaybookStats' });
