/** Routes of playbook extraction jobs (spec 2.10, row 4): request, list, read, cancel. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { cancelJob, getJob, listJobs, requestExtractionAs } from '../domain/extractions.js';
import { SUPPORTED_MIME_TYPES } from '../extraction/types.js';
import { EXTRACTION_TYPES, JOB_STATUSES } from '../types.js';
import { jobView } from '../views/extractions.js';
import { collectionSchema, extractionJobSchema } from './schemas.js';

const MAX_PAGE = 200;

const STATUS_DOC =
  '`pending` (workflow started) → `extracting` (the file is parsed into memories) → `deduping` (duplicates marked) → ' +
  '`enriching` (customers, segments, entities, collection) → `synthesizing` (proposals stored) → `complete`; any stage → ' +
  '`failed` with `error` (the file cannot be read, a source past an extraction limit: see `error`, or a cancellation: error `cancelled`).';

const createBody = z.object({
  file_id: idSchema().nullable().optional().describe('The uploaded, verified file; required for `file` extractions, omitted for the others.'),
  created_by: z
    .string()
    .max(255)
    .optional()
    .describe(
      'Optional, at most 255 characters. The job\'s `created_by` is always the caller\'s user id from the credential (`api_key:<id>` for an ' +
        'organization API key); when sent it must be that id (422 at `body.created_by` otherwise, nothing stored).',
    ),
  collection: collectionSchema.nullable().optional().describe('Target collection; inferred from the memories when omitted (required for `synthesis`).'),
  extraction_type: z.enum(EXTRACTION_TYPES).optional().describe('`file` (default), `onboarding` (mines the organization\'s ledger per customer), `synthesis` (re-reads a collection).'),
});

export const extractionRoutes = [
  route({
    method: 'post',
    path: '/v2/aether/playbook/extractions',
    operationId: 'createPlaybookExtraction',
    summary: 'Start a playbook extraction',
    description:
      'Creates the job `pending` and starts its workflow `playbook-extraction-<id>`. ' + STATUS_DOC + ' ' +
      `Unknown file → 404; a file not verified (nothing uploaded, or bytes that disagree with the declaration) → 422; a type the ` +
      `pipeline cannot read → 422 naming it (supported: ${SUPPORTED_MIME_TYPES.join(', ')}). When the workflow cannot be started ` +
      '(Temporal unavailable) → 503 with Retry-After and nothing stored.',
    tags: ['Knowledge'],
    body: createBody,
    response: extractionJobSchema,
    errors: [404, 503],
    handler: async ({ body, identity, deps }) => jobView(await requestExtractionAs({ ...deps, quotaBytes: deps.config.KNOWLEDGE_STORAGE_QUOTA_BYTES }, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/aether/playbook/extractions',
    operationId: 'listPlaybookExtractions',
    summary: 'Playbook extraction jobs',
    description: `Newest first, paginated (page size 1..${MAX_PAGE}, default 50). Filters: \`status\`, \`collection\`, \`extraction_type\`, \`file_id\`.`,
    tags: ['Knowledge'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(JOB_STATUSES).optional(),
      collection: collectionSchema.optional(),
      extraction_type: z.enum(EXTRACTION_TYPES).optional(),
      file_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(extractionJobSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listJobs(deps, identity.org, { status: query.status, collection: query.collection, extraction_type: query.extraction_type, file_id: query.file_id }, page);
      return pageOf(rows.map(jobView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/aether/playbook/extractions/{extraction_id}',
    operationId: 'getPlaybookExtraction',
    summary: 'A playbook extraction job',
    description: `The job with its progress and counters (counted from the stored memories and proposals). ${STATUS_DOC} 404 \`entity-not-found\` when unknown.`,
    tags: ['Knowledge'],
    params: z.object({ extraction_id: idSchema() }),
    response: extractionJobSchema,
    handler: async ({ params, identity, deps }) => jobView(await getJob(deps, identity.org, params.extraction_id)),
  }),
  route({
    method: 'post',
    path: '/v2/aether/playbook/extractions/{extraction_id}/cancel',
    operationId: 'cancelPlaybookExtraction',
    summary: 'Cancel a playbook extraction',
    description:
      'Cancels the job\'s workflow: the running stage stops between two chunks (what it stored is kept) and the job ends ' +
      '`failed` with `error` `cancelled` (the spec\'s status enum has no cancelled state). Answers the job once that is ' +
      'recorded. A job that already ended (`complete` or `failed`) → 409 `conflict`; unknown → 404.',
    tags: ['Knowledge'],
    params: z.object({ extraction_id: idSchema() }),
    response: extractionJobSchema,
    errors: [409, 503],
    handler: async ({ params, identity, deps, log }) => jobView(await cancelJob(deps, identity.org, params.extraction_id, log)),
  }),
];
