/** Response schemas of proposals, articles, search and deduction knowledge (spec 2.7, 2.11, 2.12). */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';
import { DEDUCTION_OPERATIONS, KNOWLEDGE_TYPES, PROPOSAL_ACTIONS, PROPOSAL_STATUSES } from '../types.js';
import { collectionSchema } from './schemas.js';

export const knowledgeTypeSchema = z.enum(KNOWLEDGE_TYPES);

export const sourceExcerptSchema = z
  .object({ text: z.string(), memory_id: z.string(), page: z.number().int() })
  .meta({ id: 'SourceExcerpt', description: 'A passage of the source document a memory was extracted from.' });

export const proposalSchema = z
  .object({
    object: z.literal('knowledge_proposal'),
    id: z.string(),
    action: z.enum(PROPOSAL_ACTIONS),
    status: z.enum(PROPOSAL_STATUSES),
    title: z.string().nullable(),
    description: z.string().nullable(),
    content: z.string().nullable().describe('The article body proposed (revise: the merged content).'),
    collection: collectionSchema.nullable(),
    knowledge_type: knowledgeTypeSchema.nullable(),
    customer_id: z.string().nullable().describe('Proposed customer scope (a ledger partner).'),
    segment_id: z.string().nullable().describe('Proposed segment scope.'),
    article_id: z
      .string()
      .nullable()
      .describe('Target article of revise and archive; for an approved create, the article it created.'),
    article_version: z.number().int().nullable().describe('The target article\'s version the proposal was made against.'),
    extraction_id: z.string().nullable().describe('The extraction job that produced it.'),
    source_excerpts: z.array(sourceExcerptSchema),
    stale: z
      .boolean()
      .describe('Computed on read: a pending proposal whose target article\'s version is now greater than `article_version`. A decided proposal is never stale.'),
    review_notes: z.string().nullable(),
    reviewed_at: z.string().nullable().describe('ISO 8601 UTC; set when approved or rejected.'),
    reviewed_by: z.string().nullable().describe('The user id of the caller who approved or rejected it.'),
    ...timestampsShape,
  })
  .meta({ id: 'KnowledgeProposal' });

const articleShape = {
  object: z.literal('knowledge_article'),
  id: z.string(),
  collection: collectionSchema,
  title: z.string(),
  description: z.string().nullable(),
  content: z.string(),
  knowledge_type: knowledgeTypeSchema.nullable(),
  customer_id: z.string().nullable(),
  segment_id: z.string().nullable(),
  version: z.number().int().min(1).describe('The current version; every approved revise or archive adds one.'),
  status: z.enum(['live', 'archived']),
  archived_at: z.string().nullable(),
  ...timestampsShape,
};

export const articleSchema = z.object(articleShape).meta({ id: 'KnowledgeArticle' });

export const articleVersionSchema = z
  .object({
    version: z.number().int().min(1),
    action: z.enum(['create', 'revise', 'archive']).describe('What produced this version.'),
    collection: collectionSchema,
    title: z.string(),
    description: z.string().nullable(),
    content: z.string(),
    knowledge_type: knowledgeTypeSchema.nullable(),
    customer_id: z.string().nullable(),
    segment_id: z.string().nullable(),
    source_excerpts: z.array(sourceExcerptSchema).describe('Excerpts of the proposal approved into this version.'),
    proposal_id: z.string().nullable().describe('The approved proposal that made this version.'),
    created_by: z.string().nullable().describe('The reviewer who approved it.'),
    created_at: z.string(),
  })
  .meta({ id: 'KnowledgeArticleVersion' });

export const articleDetailSchema = z
  .object({ ...articleShape, versions: z.array(articleVersionSchema).describe('Every version, oldest first.') })
  .meta({ id: 'KnowledgeArticleDetail' });

export const searchHitSchema = z
  .object({
    ...articleShape,
    rank: z.number().describe('ts_rank_cd (normalised rank / (rank + 1)) times the customer boost; higher is better.'),
    headline: z.string().describe('Up to two fragments of the content with the matched words between `**`.'),
  })
  .meta({ id: 'KnowledgeSearchHit' });

export const deductionOperationSchema = z.enum(DEDUCTION_OPERATIONS, {
  error: () => `must be one of the deduction operations: ${DEDUCTION_OPERATIONS.join(', ')}`,
});

export const deductionKnowledgeSchema = z
  .object({
    object: z.literal('deduction_knowledge'),
    id: z.string(),
    operation: z.enum(DEDUCTION_OPERATIONS),
    scope: z.enum(['global', 'customer']),
    content: z.string().nullable(),
    partner_id: z.string().nullable().describe('The customer (ledger partner) of a `customer` entry; null for `global`.'),
    partner_name: z.string().nullable().describe('The partner\'s name, read from the ledger when answering; null for `global`.'),
    ...timestampsShape,
  })
  .meta({ id: 'DeductionKnowledgeEntry' });

export const partnerDeductionKnowledgeSchema = z
  .object({
    object: z.literal('deduction_knowledge_partner'),
    partner_id: z.string(),
    partner_name: z.string(),
    data: z.array(deductionKnowledgeSchema).describe('The effective entry of each operation that has one, in the order of the operation enum.'),
    operations_without_entry: z.array(z.enum(DEDUCTION_OPERATIONS)).describe('Operations with neither a customer nor a global entry.'),
  })
  .meta({ id: 'PartnerDeductionKnowledge' });
