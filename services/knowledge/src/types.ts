/**
 * Types and enumerations shared by the domain (with the extraction pipeline) and the store: the
 * collections, proposal and job states, deduction operations, and the pipeline's records the store
 * persists. Both layers import them from here, so neither imports the other's types.
 */

/**
 * The playbook's knowledge collections (spec 2.12), in the order statistics report them. Articles,
 * proposals and extraction jobs all target one of these; the database enforces the same list.
 */
export const COLLECTIONS = ['cash_application', 'collections', 'company', 'credit_risk', 'deductions', 'disputes', 'payments'] as const;
export type Collection = (typeof COLLECTIONS)[number];

export const PROPOSAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

export const PROPOSAL_ACTIONS = ['archive', 'create', 'revise'] as const;
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number];

/** An extraction job's states (spec 2.10), in the order a job passes them; `failed` ends any of them. */
export const JOB_STATUSES = ['pending', 'extracting', 'deduping', 'enriching', 'synthesizing', 'complete', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const EXTRACTION_TYPES = ['file', 'onboarding', 'synthesis'] as const;
export type ExtractionType = (typeof EXTRACTION_TYPES)[number];

/** The operations of rule 4.3.7 (deduction knowledge), in the spec's order. */
export const DEDUCTION_OPERATIONS = [
  'identify_document_customer',
  'classify_document_type',
  'parse_backup',
  'parse_remittance',
  'assign_deduction_reason_code',
  'assign_line_item_reason_codes',
  'match_inventory',
  'match_vendor',
  'match_claims_and_deductions',
  'generate_credit_memo',
  'generate_alerts',
] as const;
export type DeductionOperation = (typeof DEDUCTION_OPERATIONS)[number];

export const KNOWLEDGE_TYPES = ['declarative', 'document', 'procedural'] as const;
export type KnowledgeType = (typeof KNOWLEDGE_TYPES)[number];

/** One fact, rule or procedure, with its exact source excerpt. */
export interface MemoryDraft {
  /** stable within a job: sha256 of page, start offset and normalised text */
  key: string;
  /** the memory's text (may be lightly cleaned) */
  text: string;
  /** the exact excerpt of the page text it came from: pages[page].text.slice(start, end) === excerpt */
  excerpt: string;
  page: number;
  start: number;
  end: number;
  knowledge_type: KnowledgeType;
  /** sha256 hex of the normalised text (exact-duplicate detection) */
  text_hash: string;
}

/** Normalised values found in a memory's text. */
export interface NormalisedEntities {
  amounts: { text: string; currency: string | null; value: string }[];
  percentages: { text: string; value: string }[];
  day_counts: { text: string; days: number }[];
  dates: { text: string; date: string }[];
}

export interface EnrichedMemory extends MemoryDraft {
  customer_id: string | null;
  segment_id: string | null;
  collection: Collection;
  entities: NormalisedEntities;
}

export interface ProposalDraft {
  /** stable within a job (e.g. sha256 of action, target and sorted memory ids) */
  key: string;
  action: 'create' | 'revise' | 'archive';
  /** target article of revise and archive */
  article_id: string | null;
  collection: Collection;
  knowledge_type: KnowledgeType;
  customer_id: string | null;
  segment_id: string | null;
  /** extractive: key phrases of the sources, never invented text */
  title: string;
  description: string;
  /** the article body proposed (for revise: the merged content) */
  content: string;
  source_excerpts: { text: string; memory_id: string; page: number }[];
}
