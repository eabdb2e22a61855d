/** Response schemas of playbook statistics, files and extraction jobs, with the collection enum and the business-unit note the knowledge routes share. */
import { z } from 'zod';
import { COLLECTIONS } from '../types.js';

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

// ---------- files and extraction jobs (spec 2.10)

export const fileSchema = z
  .object({
    object: z.literal('file'),
    id: z.string().describe('UUID'),
    name: z.string(),
    mime_type: z.string(),
    bucket: z.string(),
    object_key: z.string(),
    upload_url: z
      .string()
      .nullable()
      .describe('Presigned PUT on the object storage, valid 15 minutes, bound to `size` and `mime_type` (send exactly `upload_headers`); null once the upload was checked (verified or refused) and in a job\'s `file`.'),
    upload_headers: z.record(z.string(), z.string()).nullable().describe('Headers the PUT must carry exactly (they are signed): content-type and content-length.'),
    upload_expires_at: z.string().nullable(),
    size: z.number().int().min(1).describe('Declared size in bytes (at most 50 MB).'),
    is_verified: z.boolean().describe('The uploaded bytes were checked: size, stored type and the type sniffed from the bytes agree with the declaration.'),
    sha256: z.string().nullable().describe('SHA-256 (hex) of the checked bytes.'),
    sniffed_mime_type: z.string().nullable().describe('Type detected from the bytes; null for text formats (no signature).'),
    verification_error: z
      .string()
      .nullable()
      .describe('Why the upload was refused (final: declare a new file for other bytes; `storage quota exceeded…` when its real size does not fit the quota); null when verified or nothing was uploaded yet.'),
    verified_at: z.string().nullable(),
    created_at: z.string(),
    modified_at: z.string(),
  })
  .meta({ id: 'KnowledgeFile' });

export const stageProgressSchema = z.object({
  done: z.number().int().min(0),
  total: z.number().int().min(0),
  started_at: z.string().optional(),
  completed_at: z.string().optional(),
});

export const extractionJobSchema = z
  .object({
    object: z.literal('playbook_extraction'),
    id: z.string().describe('UUID'),
    created_at: z.string(),
    modified_at: z.string(),
    completed_at: z.string().nullable().describe('When processing finished (complete or failed).'),
    created_by: z.string(),
    collection: collectionSchema.nullable().describe('Target collection; inferred during `enriching` when the request gave none.'),
    error: z
      .string()
      .nullable()
      .describe(
        'Why the job failed; `cancelled` after POST …/cancel. A source past an extraction limit fails the job with an error starting with ' +
          'the limit\'s code: `too_many_pages:` (a PDF of more pages than KNOWLEDGE_MAX_PDF_PAGES, default 2000), `docx_too_large:` (a DOCX ' +
          'whose zip entries inflate, as declared or as actually inflated, to more than KNOWLEDGE_MAX_DOCX_INFLATED_BYTES, default 200 MiB: ' +
          'zip bombs stop at the limit), `too_many_memories:` (sources yielding more than KNOWLEDGE_MAX_MEMORIES_PER_JOB memories, default 50000); ' +
          'nothing is stored for such a job.',
      ),
    extraction_type: z.enum(['file', 'onboarding', 'synthesis']),
    status: z.enum(['pending', 'extracting', 'deduping', 'enriching', 'synthesizing', 'complete', 'failed']),
    dedup_count: z.number().int().min(0).describe('Memories removed as duplicates.'),
    input_count: z.number().int().min(0).describe('Sources to process: pages of the file; customers (onboarding); articles and memories (synthesis).'),
    knowledge_count: z.number().int().min(0).describe('Knowledge items synthesized.'),
    memory_count: z.number().int().min(0).describe('Memories extracted (duplicates included).'),
    processed_count: z.number().int().min(0).describe('Sources whose memories are stored.'),
    progress: z
      .record(z.string(), stageProgressSchema)
      .describe('Per stage (`extracting`, `deduping`, `enriching`, `synthesizing`): `done` / `total` and when it started and completed.'),
    proposal_count: z.number().int().min(0).describe('Proposals stored.'),
    file: fileSchema.nullable().describe('The file read (`file` extractions); null for the other types and once the file is deleted.'),
    file_id: z.string().nullable().describe('UUID of the file read; null for the other types and once the file is deleted.'),
  })
  .meta({ id: 'PlaybookExtraction' });

/** Business-unit scope, shared by the knowledge routes' descriptions. */
export const KNOWLEDGE_SCOPE_DOC =
  'Business units: an item linked to a customer (`customer_id`, a ledger partner) that is tied to a business unit outside a member\'s ' +
  'units is treated as if it did not exist (absent from lists, search and counts; 404 by id). Items without a customer, or whose ' +
  'customer has no business unit, stay visible; `segment_id` plays no part (segments belong to the organization). Admins and API keys see everything.';
