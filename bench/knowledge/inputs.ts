/**
 * The knowledge benchmark's inputs: the hand-labelled evaluation set's files (test/fixtures/knowledge/:
 * `<file>.labels.json` per document, partners, segments and order in context.json) and the size of the
 * generated playbook (BENCH_PAGES).
 */
import type { KnowledgeType, PartnerRef, SegmentRef, SupportedMimeType } from '../../services/knowledge/src/extraction/types.js';

export const PAGES = Number(process.env.BENCH_PAGES ?? 200);

export interface LabelFile {
  file: string;
  mime: SupportedMimeType;
  items: { id: string; knowledge_type: KnowledgeType; customer_id: string | null; text: string }[];
  duplicate_pairs: [string, string][];
}

export interface Context {
  partners: PartnerRef[];
  segments: SegmentRef[];
  order: string[];
}
