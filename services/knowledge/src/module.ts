/**
 * The knowledge service as the kernel runs it: its schema and migrations, routes (files, extraction
 * jobs, proposals, articles, search, statistics, deduction knowledge) and the extraction activities.
 */
import { ObjectStorage, storageConfigFrom, type ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { KnowledgeConfig } from './config.js';
import type { KnowledgeDeps } from './deps.js';
import { playbookRoutes } from './routes/playbook.js';
import { fileRoutes } from './routes/files.js';
import { extractionRoutes } from './routes/extractions.js';
import { createPlaybookExtractionActivities } from './activities/playbook-extraction.js';
import { sharedPipelinePool } from './activities/pipeline-pool.js';
import { proposalRoutes } from './routes/proposals.js';
import { articleRoutes } from './routes/articles.js';
import { deductionKnowledgeRoutes } from './routes/deduction-knowledge.js';
import { extractionJobSchema } from './routes/schemas.js';
import { proposalSchema } from './routes/review-schemas.js';

export const knowledgeModule: ServiceModule<KnowledgeConfig, KnowledgeDeps> = {
  name: 'knowledge',
  schema: 'knowledge',
  taskQueue: TASK_QUEUES.knowledge,
  info: { title: 'Knowledge service', version: '2.0.0', description: 'Playbook knowledge for the assistant: files, extraction jobs, proposals, articles, search, statistics and deduction knowledge.' },
  migrations,
  routes: [...playbookRoutes, ...fileRoutes, ...extractionRoutes, ...proposalRoutes, ...articleRoutes, ...deductionKnowledgeRoutes],
  // data.object of each: the resource as its GET answers it (domain/extraction-events.ts)
  events: [
    { type: 'extraction.completed', object: extractionJobSchema },
    { type: 'extraction.failed', object: extractionJobSchema },
    { type: 'proposal.created', object: proposalSchema },
  ],
  deps: ({ db, temporal, config }) => ({
    db,
    temporal: temporal.client,
    config,
    storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null,
  }),
  activities: ({ db, log, config }) => ({
    ...createPlaybookExtractionActivities({
      db,
      log,
      storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null,
      chunkSize: config.KNOWLEDGE_EXTRACTION_CHUNK_SIZE,
      chunkPauseMs: config.KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS,
      pipeline: sharedPipelinePool(),
      limits: { pdfPages: config.KNOWLEDGE_MAX_PDF_PAGES, docxInflatedBytes: config.KNOWLEDGE_MAX_DOCX_INFLATED_BYTES, memoriesPerJob: config.KNOWLEDGE_MAX_MEMORIES_PER_JOB },
    }),
  }),
  // A cancellation reaches a stage with a heartbeat's answer: within a second.
  worker: { maxHeartbeatThrottleInterval: '1 second' },
};
