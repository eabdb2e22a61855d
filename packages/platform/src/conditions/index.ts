/**
 * Conditions of tags and customer segments: the language, tags inside conditions, the compiler to
 * one SQL statement over the ledger, the admin-owned reads the partners API needs, and the partner
 * summary it answers with.
 */
export * from './language.js';
export * from './tags.js';
export * from './compiler.js';
export * from './admin-reads.js';
export * from './partner-summary.js';
export * from './partner-detail.js';
export * from './collection-candidates.js';
export * from './partner-reads.js';
