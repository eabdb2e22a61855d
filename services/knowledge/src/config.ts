/** The knowledge service's settings: storage quota, extraction limits and pacing, on top of the common ones. */
import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';
import { DEFAULT_EXTRACTION_LIMITS } from './extraction/types.js';

export const knowledgeConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8103),
  /** Rows (memories, proposals) an extraction stage writes per transaction and heartbeat. */
  KNOWLEDGE_EXTRACTION_CHUNK_SIZE: env.int(200, 1),
  /** Pause after each chunk, in ms (0 in production; tests slow stages down to catch them mid-way). */
  KNOWLEDGE_EXTRACTION_CHUNK_PAUSE_MS: env.int(0, 0),
  /** Bytes of knowledge files an organization may hold (declared sizes of its files, verified or not); default 5 GiB. */
  KNOWLEDGE_STORAGE_QUOTA_BYTES: env.int(5 * 1024 ** 3, 1),
  /** Extraction limits (extraction/types.ts ExtractionLimits): a document past one fails its job with the limit's code. */
  KNOWLEDGE_MAX_PDF_PAGES: env.int(DEFAULT_EXTRACTION_LIMITS.pdfPages, 1),
  KNOWLEDGE_MAX_DOCX_INFLATED_BYTES: env.int(DEFAULT_EXTRACTION_LIMITS.docxInflatedBytes, 1),
  KNOWLEDGE_MAX_MEMORIES_PER_JOB: env.int(DEFAULT_EXTRACTION_LIMITS.memoriesPerJob, 1),
});
export type KnowledgeConfig = z.infer<typeof knowledgeConfigSchema>;

export function loadKnowledgeConfig(source: Record<string, string | undefined> = process.env): KnowledgeConfig {
  return loadConfig(knowledgeConfigSchema, source);
}
