/**
 * Contract of the offline extraction pipeline, shared by the pure pipeline modules in
 * this folder (parsers, splitting, dedup, enrichment, synthesis: no database, no Temporal) and the
 * playbook-extraction workflow's activities that call them and persist their output.
 *
 * Every draft carries a stable `key` derived from its content and source position, so an activity
 * retried after a worker died recomputes the same keys and its inserts (unique per job and key)
 * create nothing twice.
 */
import type { CustomerCashHabits } from '@rp/workflows';
import type { Collection, EnrichedMemory, MemoryDraft } from '../types.js';

// The records the pipeline produces and the store persists are defined with the service's shared types.
export { EXTRACTION_TYPES, KNOWLEDGE_TYPES } from '../types.js';
export type { EnrichedMemory, ExtractionType, KnowledgeType, MemoryDraft, NormalisedEntities, ProposalDraft } from '../types.js';

/** Supported uploads (canonical MIME types); anything else is refused when an extraction is requested. */
export const SUPPORTED_MIME_TYPES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/plain',
  'text/markdown',
  'text/html',
  'message/rfc822',
  'text/csv',
] as const;
export type SupportedMimeType = (typeof SUPPORTED_MIME_TYPES)[number];

/** Largest file an extraction accepts (50 MB). */
export const MAX_KNOWLEDGE_FILE_BYTES = 50 * 1024 * 1024;

/** Text of one page (PDF page; 1 for formats without pages; a CSV row range or email part may use its own numbering, documented by the parser). */
export interface SourcePage {
  page: number;
  text: string;
}

/** A memory already stored (this job's or an earlier one's) or an approved article, for dedup. */
export interface DedupCandidate {
  id: string;
  kind: 'memory' | 'article';
  text: string;
}

export interface DedupResult {
  kept: MemoryDraft[];
  /** removed drafts with what they duplicate (a kept draft's key, or a candidate's id) */
  removed: { key: string; duplicate_of: { kind: 'draft' | 'memory' | 'article'; id: string }; reason: 'exact' | 'near' }[];
}

export interface PartnerRef {
  id: string;
  name: string;
  legal_name: string | null;
  account_number: string | null;
}

export interface SegmentRef {
  id: string;
  name: string;
}

/** An approved (live) article the synthesis compares against. */
export interface ArticleRef {
  id: string;
  collection: Collection;
  title: string;
  content: string;
  customer_id: string | null;
  segment_id: string | null;
  /** memory ids the article's current version was built from (for archive: all contradicted or superseded) */
  source_memory_ids: string[];
}

/** A stored memory handed to synthesis (EnrichedMemory with its database id). */
export interface StoredMemory extends EnrichedMemory {
  id: string;
}

/**
 * Per-customer payment behaviour mined from the organization's own ledger for an `onboarding`
 * extraction. Produced by the onboarding activity's SQL over a window
 * of settled history; consumed by onboardingMemories() (extraction/onboarding.ts), which turns each
 * field with enough evidence into one declarative memory scoped to the customer. Additive to the
 * contract above.
 */
export interface CustomerPaymentStats extends Omit<CustomerCashHabits, 'partner_id' | 'first_date' | 'last_date'> {
  /** ledger partner id (becomes the memory's customer_id) */
  customer_id: string;
  /** the partner's display name, used in the memory text */
  customer_name: string;
  /** first and last day (YYYY-MM-DD) of the history the figures cover (the cash-app ones: CustomerCashHabits) */
  window_start: string;
  window_end: string;
  /** invoices fully paid within the window that had a net due date (sample of avg_days_after_due) */
  paid_invoice_count: number;
  /**
   * mean over those invoices of (date of the payment that closed the invoice − net due date) in days,
   * negative = paid early; null when paid_invoice_count is 0
   */
  avg_days_after_due: number | null;
}

/**
 * Units of work a pipeline stage performed, counted where the stage does them: how its cost grows with
 * its input is measured in these, not in time. `comparisons`: a memory scored against a topic group or
 * an article, a name run compared with a partner name; `articleSplits`: an article split into statements.
 */
export interface WorkCounter {
  comparisons: number;
  articleSplits: number;
}

export function newWorkCounter(): WorkCounter {
  return { comparisons: 0, articleSplits: 0 };
}

/**
 * Bounds on what one extraction reads (KNOWLEDGE_MAX_* settings): a document past one fails its job
 * with an `error` that starts with the limit's code, so a client can tell it from a corrupt file.
 */
export interface ExtractionLimits {
  /** pages of a PDF */
  pdfPages: number;
  /** bytes a DOCX inflates to (all its zip entries together), declared or actual */
  docxInflatedBytes: number;
  /** memories one job extracts */
  memoriesPerJob: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = { pdfPages: 2000, docxInflatedBytes: 200 * 1024 * 1024, memoriesPerJob: 50_000 };

export const LIMIT_CODES = ['too_many_pages', 'docx_too_large', 'too_many_memories'] as const;
export type LimitCode = (typeof LIMIT_CODES)[number];

/** A document or job past one of the ExtractionLimits; the message starts with the code. */
export class ExtractionLimitError extends Error {
  constructor(
    readonly code: LimitCode,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ExtractionLimitError';
  }
}
